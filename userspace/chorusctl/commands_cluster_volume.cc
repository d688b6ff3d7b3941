// cluster volume create, delete, list, status and move: volumes managed by the
// cluster, from any node. create writes the spec and the first write set;
// the chorusd of each node named makes its replica, and the first node
// takes ownership. delete removes the keys; each chorusd detaches and
// removes its replica (Documentation/cluster.md).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "chorusctl/args.h"
#include "chorusctl/cluster_access.h"
#include "chorusctl/cluster_lookup.h"
#include "chorusctl/cluster_output.h"
#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "lib/cluster_view.h"
#include "lib/meta.h"
#include "lib/placement.h"
#include "lib/size.h"
#include "lib/volume_validate.h"

namespace chorus {

namespace {

// "1,2,3" -> {1, 2, 3}; CLI11 has checked each with CheckNodeIdArg.
std::vector<uint32_t> ParseNodeList(const std::vector<std::string>& items) {
    std::vector<uint32_t> ids;
    for (const std::string& s : items)
        ids.push_back(NodeIdOf(s));
    return ids;
}

// Every replica attached (its node reports the volume) and an owner.
bool Ready(const ClusterView& view, const std::string& name) {
    auto it = view.volumes.find(name);
    if (it == view.volumes.end() || !it->second.owner)
        return false;
    for (uint32_t id : it->second.spec.value.nodes) {
        auto st = view.status.find(id);
        if (st == view.status.end() || !st->second.volumes.contains(name))
            return false;
    }
    return true;
}

class ClusterVolumeCreate : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_);
        cmd.add_option("--size", size_, "Volume size (e.g. 10G), a multiple of 4 KiB")
            ->required()
            ->check(Check(CheckSize, "SIZE"));
        cmd.add_option("--replicas", replicas_, "Replicas, 1..5; default 2, or as many as --nodes")
            ->check(CLI::Range(1, 5));
        cmd.add_option("--nodes", nodes_, "The nodes that hold replicas; the first becomes owner")
            ->delimiter(',')
            ->check(Check(CheckNodeIdArg, "ID"));
        cmd.add_option("--transport", transport_, "tcp, rdma or rdma+tcp")
            ->check(Check(CheckTransportArg, "T"))
            ->capture_default_str();
        cmd.add_option("--wait", wait_s_,
                       "Seconds to wait for every replica and an owner; 0 returns at once")
            ->check(CLI::Range(0, 3600))
            ->capture_default_str();
        access_.AddOptions(cmd);
    }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        VolumeSpec spec;
        spec.name = name_;
        spec.size_bytes = ParseSize(size_);
        if (spec.size_bytes % 4096 != 0)
            throw UsageError("--size " + size_ + " is not a multiple of 4 KiB");
        spec.replicas = replicas_ ? *replicas_ : nodes_.empty() ? 2 : nodes_.size();
        spec.transport = transport_;
        spec.uuid = RandomUuid();
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        if (view.volumes.count(name_) > 0)
            throw Error("volume " + name_ + " exists already", EEXIST);
        spec.nodes = PlaceReplicas(view, spec.size_bytes, spec.replicas, ParseNodeList(nodes_));
        // Only the first node is up to date at first: the others are
        // synced from it and join the write set when they are.
        WriteSet ws{{spec.nodes[0]}, {spec.nodes.begin() + 1, spec.nodes.end()}};
        if (!ClusterStore(*etcd).CreateVolume(spec, ws))
            throw Error("volume " + name_ + " exists already", EEXIST);
        if (wait_s_ > 0) {
            view = WaitFor(*etcd, std::chrono::seconds(wait_s_),
                           [&](const ClusterView& v) { return Ready(v, name_); });
            if (!Ready(view, name_))
                std::cerr << "chorusctl: volume " << name_ << " is created, but not every "
                          << "replica is attached after " << wait_s_ << " s: see 'chorusctl "
                          << "cluster volume status " << name_ << "'" << std::endl;
        }
        return Report(global, view, spec);
    }

private:
    int Report(const GlobalOptions& global, const ClusterView& view, const VolumeSpec& spec) {
        auto it = view.volumes.find(spec.name);
        if (global.json) {
            PrintJson(it != view.volumes.end() ? ClusterVolumeToJson(view, it->second)
                                               : nlohmann::json{{"name", spec.name}});
            return kExitOk;
        }
        std::cout << "created volume " << spec.name << ": " << FormatSize(spec.size_bytes)
                  << ", replicas on nodes";
        for (uint32_t id : spec.nodes)
            std::cout << ' ' << id;
        if (it != view.volumes.end() && it->second.owner)
            std::cout << ", owner node " << it->second.owner->node_id << " at epoch "
                      << it->second.owner->epoch;
        std::cout << std::endl;
        return kExitOk;
    }

    std::string name_, size_, transport_ = "tcp";
    std::optional<uint32_t> replicas_;
    std::vector<std::string> nodes_;
    int wait_s_ = 60;
    ClusterAccess access_;
};

class ClusterVolumeDelete : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_);
        cmd.add_flag("--force", force_, "Delete even if the volume is open on some node");
        cmd.add_option("--wait", wait_s_, "Seconds to wait for every replica to be removed")
            ->check(CLI::Range(0, 3600))
            ->capture_default_str();
        access_.AddOptions(cmd);
    }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        const VolumeState& v = FindVolume(view, name_);
        for (const auto& [id, st] : view.status)
            if (st.volumes.contains(name_) && st.volumes[name_].value("open_count", 0) > 0 &&
                !force_)
                throw Error("volume " + name_ + " is open on node " + std::to_string(id) +
                                " (mounted or in use): close it first, or --force",
                            EBUSY);
        if (!ClusterStore(*etcd).DeleteVolume(name_, v.spec.mod_revision))
            throw Error("volume " + name_ + " changed meanwhile: look again", EAGAIN);
        auto gone = [&](const ClusterView& now) {
            for (const auto& [id, st] : now.status)
                if (st.volumes.contains(name_))
                    return false;
            return true;
        };
        if (wait_s_ > 0 && !gone(WaitFor(*etcd, std::chrono::seconds(wait_s_), gone)))
            std::cerr << "chorusctl: volume " << name_ << " is deleted from the cluster, but "
                      << "some node still has it attached after " << wait_s_ << " s" << std::endl;
        if (global.json)
            PrintJson({{"name", name_}, {"deleted", true}});
        else
            std::cout << "deleted volume " << name_ << std::endl;
        return kExitOk;
    }

private:
    std::string name_;
    bool force_ = false;
    int wait_s_ = 60;
    ClusterAccess access_;
};

class ClusterVolumeList : public Command {
public:
    void AddOptions(CLI::App& cmd) override { access_.AddOptions(cmd); }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        if (global.json) {
            nlohmann::json all = nlohmann::json::array();
            for (const auto& [name, v] : view.volumes)
                all.push_back(ClusterVolumeToJson(view, v));
            PrintJson(all);
        } else {
            PrintClusterVolumeTable(std::cout, view);
        }
        return kExitOk;
    }

private:
    ClusterAccess access_;
};

class ClusterVolumeStatus : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_);
        access_.AddOptions(cmd);
    }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        const VolumeState& v = FindVolume(view, name_);
        if (global.json)
            PrintJson(ClusterVolumeToJson(view, v));
        else
            PrintClusterVolumeStatus(std::cout, view, v);
        return kExitOk;
    }

private:
    std::string name_;
    ClusterAccess access_;
};

class ClusterVolumeMove : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_);
        cmd.add_option("--to", to_, "The node to own the volume: one holding an up-to-date replica")
            ->required()
            ->check(Check(CheckNodeIdArg, "ID"));
        cmd.add_option("--wait", wait_s_, "Seconds to wait for the new owner; 0 returns at once")
            ->check(CLI::Range(0, 3600))
            ->capture_default_str();
        access_.AddOptions(cmd);
    }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        const uint32_t to = NodeIdOf(to_);
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        const VolumeState& v = FindVolume(view, name_);
        const std::string node = "node " + std::to_string(to);
        if (!v.owner)
            throw Error("volume " + name_ + " has no owner now: an election is under way", EAGAIN);
        const Ownership from = *v.owner;
        if (from.node_id == to)
            return Report(global, view, from, 0);
        if (std::find(v.spec.value.nodes.begin(), v.spec.value.nodes.end(), to) ==
            v.spec.value.nodes.end())
            throw Error(node + " holds no replica of " + name_, EINVAL);
        auto rec = view.nodes.find(to);
        if (rec == view.nodes.end())
            throw Error(node + " is not a member of the cluster (no live chorusd)", EHOSTDOWN);
        if (!v.writeset ||
            std::find(v.writeset->value.members.begin(), v.writeset->value.members.end(), to) ==
                v.writeset->value.members.end())
            throw Error(node + " is out of date: it can own " + name_ + " once its resync is done",
                        EAGAIN);
        if (v.move)
            throw Error("a move of " + name_ + " to node " + std::to_string(v.move->value.to) +
                            " is under way",
                        EBUSY);
        auto start = std::chrono::steady_clock::now();
        if (!ClusterStore(*etcd).RequestMove(name_, from, to, rec->second.lease))
            throw Error("volume " + name_ + " changed meanwhile: look again", EAGAIN);
        if (wait_s_ == 0)
            return Report(global, view, from, -1);
        auto moved = [&](const ClusterView& now) {
            auto it = now.volumes.find(name_);
            return it != now.volumes.end() && it->second.owner && it->second.owner->node_id == to;
        };
        view = WaitFor(*etcd, std::chrono::seconds(wait_s_), moved);
        if (!moved(view))
            throw Error("the move is requested, but " + node + " does not own " + name_ +
                            " after " + std::to_string(wait_s_) +
                            " s (the owner hands over once the target is connected and up to "
                            "date; see 'chorusctl cluster volume status " +
                            name_ + "')",
                        ETIMEDOUT);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
        return Report(global, view, from, ms);
    }

private:
    // ms: how long the move took; 0 nothing to do; -1 not waited for.
    int Report(const GlobalOptions& global, const ClusterView& view, const Ownership& from,
               int64_t ms) {
        const VolumeState& v = view.volumes.at(name_);
        if (global.json) {
            nlohmann::json j = ClusterVolumeToJson(view, v);
            j["moved_from"] = from.node_id;
            if (ms >= 0)
                j["move_ms"] = ms;
            PrintJson(j);
        } else if (ms == 0) {
            std::cout << "node " << from.node_id << " owns " << name_ << " already" << std::endl;
        } else if (ms < 0) {
            std::cout << "move of " << name_ << " from node " << from.node_id << " to node " << to_
                      << " requested" << std::endl;
        } else {
            std::cout << "moved " << name_ << " from node " << from.node_id << " (epoch "
                      << from.epoch << ") to node " << v.owner->node_id << " (epoch "
                      << v.owner->epoch << ") in " << ms << " ms" << std::endl;
        }
        return kExitOk;
    }

    std::string name_, to_;
    int wait_s_ = 60;
    ClusterAccess access_;
};

}  // namespace

std::unique_ptr<Command> NewClusterVolumeMove() {
    return std::make_unique<ClusterVolumeMove>();
}
std::unique_ptr<Command> NewClusterVolumeCreate() {
    return std::make_unique<ClusterVolumeCreate>();
}
std::unique_ptr<Command> NewClusterVolumeDelete() {
    return std::make_unique<ClusterVolumeDelete>();
}
std::unique_ptr<Command> NewClusterVolumeList() {
    return std::make_unique<ClusterVolumeList>();
}
std::unique_ptr<Command> NewClusterVolumeStatus() {
    return std::make_unique<ClusterVolumeStatus>();
}

}  // namespace chorus
