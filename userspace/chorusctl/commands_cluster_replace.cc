// cluster volume replace-disk: a node's replica, out of date (its disk
// failed), gets a new disk. The request is a key in the store; that node's
// chorusd detaches the volume, removes its logical volume, makes and formats
// a new one and attaches it; the owner finds the new disk and copies every
// region to it; the node is back in the write set once in sync
// (Documentation/cluster.md, "Replacing a disk").
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>

#include "chorusctl/args.h"
#include "chorusctl/cluster_access.h"
#include "chorusctl/cluster_lookup.h"
#include "chorusctl/cluster_output.h"
#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "lib/cluster_view.h"

namespace chorus {

namespace {

bool Contains(const std::vector<uint32_t>& v, uint32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// Why node may not have its disk replaced now; empty if it may.
void CheckReplaceable(const VolumeState& v, uint32_t node, int* err, std::string* why) {
    const std::string n = "node " + std::to_string(node);
    const std::string& name = v.spec.value.name;
    *err = 0;
    if (!Contains(v.spec.value.nodes, node)) {
        *err = EINVAL;
        *why = n + " holds no replica of " + name;
    } else if (v.replace) {
        *err = EBUSY;
        *why = "a disk replacement of " + name + " on node " +
               std::to_string(v.replace->value.node) + " is under way";
    } else if (!v.writeset) {
        *err = EIO;
        *why = name + " has no write set in the store";
    } else if (Contains(v.writeset->value.members, node)) {
        *err = EBUSY;
        *why = n + " is an up-to-date member of " + name +
               "'s write set: its copy is good (a failed disk leaves the write set by itself)";
    } else if (v.writeset->value.members.empty()) {
        *err = EIO;
        *why = name + " has no up-to-date replica to copy from";
    } else if (v.owner && v.owner->node_id == node) {
        *err = EAGAIN;
        *why = n + " owns " + name + ": it hands the volume over first, then try again";
    }
}

// The owner's progress copying to node, as "37.5%", or "" if not known.
std::string Progress(const ClusterView& view, const VolumeState& v, uint32_t node) {
    nlohmann::json j = ClusterVolumeToJson(view, v);
    for (const auto& r : j.value("replica_states", nlohmann::json::array()))
        if (r.value("node_id", 0u) == node && r.contains("sync_percent"))
            return r["sync_percent"].get<std::string>();
    return "";
}

class ClusterVolumeReplaceDisk : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_);
        cmd.add_option("--node", node_, "The node whose replica gets a new disk")
            ->required()
            ->check(Check(CheckNodeIdArg, "ID"));
        cmd.add_option("--wait", wait_s_,
                       "Seconds to wait until the node is back in the write set; 0 returns at "
                       "once")
            ->check(CLI::Range(0, 86400))
            ->capture_default_str();
        access_.AddOptions(cmd);
    }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        const uint32_t node = NodeIdOf(node_);
        auto etcd = access_.Connect();
        ClusterView view = ReadClusterView(*etcd);
        const VolumeState& v = FindVolume(view, name_);
        int err = 0;
        std::string why;
        CheckReplaceable(v, node, &err, &why);
        if (err)
            throw Error(why, err);
        auto start = std::chrono::steady_clock::now();
        if (!ClusterStore(*etcd).RequestReplace(name_, node, v.writeset->mod_revision))
            throw Error("volume " + name_ + " changed meanwhile: look again", EAGAIN);
        if (wait_s_ == 0)
            return Report(global, view, -1);
        std::string shown;
        auto back = [&](const ClusterView& now) {
            auto it = now.volumes.find(name_);
            if (it == now.volumes.end() || !it->second.writeset)
                return false;
            std::string p = Progress(now, it->second, node);
            if (!global.json && !p.empty() && p != shown)
                std::cerr << "copying " << name_ << " to node " << node << ": " << p << std::endl;
            shown = p.empty() ? shown : p;
            return !it->second.replace && Contains(it->second.writeset->value.members, node);
        };
        view = WaitFor(*etcd, std::chrono::seconds(wait_s_), back);
        if (!back(view))
            throw Error("the replacement is under way, but node " + node_ +
                            " is not back in the write set of " + name_ + " after " +
                            std::to_string(wait_s_) + " s: see 'chorusctl cluster volume status " +
                            name_ + "'",
                        ETIMEDOUT);
        auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
        return Report(global, view, ms);
    }

private:
    // ms: how long it took until the node was back; -1 not waited for.
    int Report(const GlobalOptions& global, const ClusterView& view, int64_t ms) {
        if (global.json) {
            nlohmann::json j = ClusterVolumeToJson(view, FindVolume(view, name_));
            j["replaced_node"] = NodeIdOf(node_);
            if (ms >= 0)
                j["replace_ms"] = ms;
            PrintJson(j);
        } else if (ms < 0) {
            std::cout << "disk replacement of " << name_ << " on node " << node_
                      << " requested: see 'chorusctl cluster volume status " << name_ << "'"
                      << std::endl;
        } else {
            std::cout << "node " << node_ << " has a new disk for " << name_
                      << ", copied in full and back in the write set in " << ms << " ms"
                      << std::endl;
        }
        return kExitOk;
    }

    std::string name_, node_;
    int wait_s_ = 600;
    ClusterAccess access_;
};

}  // namespace

std::unique_ptr<Command> NewClusterVolumeReplaceDisk() {
    return std::make_unique<ClusterVolumeReplaceDisk>();
}

}  // namespace chorus
