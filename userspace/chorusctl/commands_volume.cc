// volume create, destroy, list, status, role, set and attach-disk: volumes in chorus.ko.
#include <cerrno>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <linux/chorus.h>

#include "chorusctl/args.h"
#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "chorusctl/output.h"
#include "lib/size.h"
#include "lib/uuid.h"
#include "lib/volume_validate.h"

namespace chorus {

namespace {

// Runs a request that opens backing exclusively. The kernel's extack names
// a device in use; without one, say it here.
template <typename Request>
VolumeInfo OpeningBacking(const std::string& backing, Request request) {
    try {
        return request();
    } catch (const NetlinkError& e) {
        if (e.errnum() == EBUSY && e.extack().empty())
            throw InUseError(backing);
        throw;
    }
}

class VolumeCreate : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_, "Volume name: 1..63 of [A-Za-z0-9._-], not starting '.'");
        cmd.add_option("--backing", backing_, "Absolute path of the backing block device")
            ->check(Check(CheckBackingPath, "PATH"));
        cmd.add_flag("--diskless", diskless_,
                     "Instead of --backing: no local replica, a diskless access point that "
                     "forwards every request to the owner; needs --size, --uuid and --node-id");
        shape_.AddTo(cmd);
        cmd.add_option("--node-id", node_id_,
                       "This node's id in the volume, 1..32: recorded in the metadata, or "
                       "checked against the one recorded")
            ->check(Check(CheckNodeIdArg, "N"));
        cmd.add_option("--epoch", epoch_,
                       "With --diskless: the highest epoch accepted so far (an owner below it "
                       "is refused); default 0")
            ->check(Check(CheckU64Arg, "E"));
    }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        // Validate everything before talking to the kernel.
        VolumeShape shape = shape_.Parse();
        CheckDiskless(shape);
        VolumeCreateRequest req;
        req.name = name_;
        req.backing_path = backing_;
        req.diskless = diskless_;
        if (!epoch_.empty())
            req.epoch = ParseDecimal(epoch_, UINT64_MAX);
        req.size_bytes = shape.size;
        req.block_size = shape.block_size;
        req.uuid = shape.uuid;
        if (!node_id_.empty())
            req.node_id = NodeIdOf(node_id_);
        VolumeInfo v = OpeningBacking(backing_, [&] { return Connect().Create(req); });
        if (global.json)
            PrintJson(VolumeToJson(v));
        else
            std::cout << CreatedLine(v) << std::endl;
        return kExitOk;
    }

private:
    // A diskless access point has no metadata to say what it is.
    void CheckDiskless(const VolumeShape& shape) const {
        if (!diskless_) {
            if (backing_.empty())
                throw UsageError(
                    "give --backing DEVICE, or --diskless for an access point "
                    "without a replica");
            if (!epoch_.empty())
                throw UsageError("--epoch: only a diskless volume is given its epoch");
            return;
        }
        if (!backing_.empty())
            throw UsageError(
                "--backing and --diskless exclude each other: a diskless access "
                "point has no backing device");
        if (!shape.size || !shape.uuid || node_id_.empty())
            throw UsageError(
                "--diskless needs --size, --uuid and --node-id: the volume's, as on "
                "its replicas");
    }

    static std::string CreatedLine(const VolumeInfo& v) {
        std::string line = "created volume " + v.name + ": " + DevicePath(v) + ", " +
                           FormatSize(v.size_bytes) + ", block size " +
                           std::to_string(v.block_size) + ", uuid " + FormatUuid(v.uuid);
        if (v.node_id.value_or(0) != 0)
            line += ", node id " + std::to_string(*v.node_id);
        if (v.role)
            line += ", " + RoleName(*v.role);
        if (v.epoch)
            line += " at epoch " + std::to_string(*v.epoch);
        return line;
    }

    std::string name_;
    std::string backing_;
    bool diskless_ = false;
    ShapeOptions shape_;
    std::string node_id_;
    std::string epoch_;
};

class VolumeDestroy : public Command {
public:
    void AddOptions(CLI::App& cmd) override { AddVolumeName(cmd, name_); }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        Connect().Destroy(name_);
        if (global.json)
            PrintJson({{"name", name_}, {"destroyed", true}});
        else
            std::cout << "destroyed volume " << name_ << std::endl;
        return kExitOk;
    }

private:
    std::string name_;
};

// A new disk in place of a failed one, on a node that does not own the
// volume; the owner then copies every region to it.
class VolumeAttachDisk : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_);
        cmd.add_option("--backing", backing_,
                       "Absolute path of the new backing device, formatted for this volume "
                       "(chorusctl volume format with its --uuid, --size and --block-size)")
            ->required()
            ->check(Check(CheckBackingPath, "PATH"));
    }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        VolumeInfo v =
            OpeningBacking(backing_, [&] { return Connect().AttachDisk(name_, backing_); });
        if (global.json)
            PrintJson(VolumeToJson(v));
        else
            std::cout << "volume " << name_ << ": new disk " << backing_
                      << " attached; the owner copies every region to it" << std::endl;
        return kExitOk;
    }

private:
    std::string name_;
    std::string backing_;
};

class VolumeList : public Command {
public:
    void AddOptions(CLI::App&) override {}

    int Run(const GlobalOptions& global) override {
        std::vector<VolumeInfo> volumes = Connect().List();
        if (global.json) {
            nlohmann::json arr = nlohmann::json::array();
            for (const auto& v : volumes)
                arr.push_back(VolumeToJson(v));
            PrintJson(arr);
        } else {
            PrintVolumeTable(std::cout, volumes);
            std::cout.flush();
        }
        return kExitOk;
    }
};

class VolumeStatus : public Command {
public:
    void AddOptions(CLI::App& cmd) override { AddVolumeName(cmd, name_); }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        VolumeInfo v = Connect().Get(name_);
        if (global.json) {
            PrintJson(VolumeToJson(v));
        } else {
            PrintVolumeStatus(std::cout, v);
            std::cout.flush();
        }
        return kExitOk;
    }

private:
    std::string name_;
};

class VolumeRole : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_);
        cmd.add_option("ROLE", role_, "owner or replica")
            ->required()
            ->check(CLI::IsMember({"owner", "replica"}));
        cmd.add_option("--epoch", epoch_,
                       "The owner's epoch, higher than any accepted (required for owner)")
            ->check(Check(CheckU64Arg, "E"));
    }

    std::string Subject() const override { return name_ + " " + role_; }

    int Run(const GlobalOptions& global) override {
        SetRoleRequest req;
        req.volume = name_;
        req.role = role_ == "owner" ? CHORUS_ROLE_OWNER : CHORUS_ROLE_REPLICA;
        if (!epoch_.empty())
            req.epoch = ParseDecimal(epoch_, UINT64_MAX);
        if (req.role == CHORUS_ROLE_OWNER && !req.epoch)
            throw UsageError("volume role " + name_ +
                             " owner: --epoch E is required (higher than any epoch the volume "
                             "accepted; see volume status)");
        VolumeClient client = Connect();
        client.SetRole(req);
        std::string line = "volume " + name_ + " is now " + RoleName(req.role);
        if (req.epoch)
            line += " at epoch " + std::to_string(*req.epoch);
        return ReportVolume(global, client, name_, line);
    }

private:
    std::string name_;
    std::string role_;
    std::string epoch_;
};

// volume set: only the tunables given are sent, and the confirmation names
// each of them.
class VolumeSet : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        AddVolumeName(cmd, name_);
        cmd.add_option("--request-timeout-ms", request_timeout_ms_,
                       "How long a peer may take to ack a write before it is unreachable")
            ->check(Check(CheckU32Arg, "MS"));
        cmd.add_option("--ping-interval-ms", ping_interval_ms_, "Heartbeat period")
            ->check(Check(CheckU32Arg, "MS"));
        cmd.add_option("--ping-timeout-ms", ping_timeout_ms_,
                       "Silence after which a peer is unreachable")
            ->check(Check(CheckU32Arg, "MS"));
        cmd.add_option("--resync-rate", resync_rate_,
                       "Resync limit in bytes per second (10M, 1G); 0 for none")
            ->check(Check(CheckRateArg, "BYTES_PER_SEC"));
        cmd.add_option("--auto-degrade", auto_degrade_,
                       "on: drop an unreachable peer from the write set without being told "
                       "(no fencing; standalone use only)")
            ->check(CLI::IsMember({"on", "off"}));
        cmd.add_option("--payload-crc", payload_crc_,
                       "on: send the CRC-32C of every replicated and forwarded payload, which "
                       "the receiver checks (default off)")
            ->check(CLI::IsMember({"on", "off"}));
        cmd.add_option("--disk-timeout-ms", disk_timeout_ms_,
                       "How long the local disk may complete nothing before it is failed and "
                       "detached (0: no limit; else 1000..600000; default 5000)")
            ->check(Check(CheckU32Arg, "MS"));
    }

    std::string Subject() const override { return name_; }

    int Run(const GlobalOptions& global) override {
        VolumeSetRequest req;
        req.volume = name_;
        std::string changes;
        Millis(request_timeout_ms_, req.request_timeout_ms, "request timeout", changes);
        Millis(ping_interval_ms_, req.ping_interval_ms, "ping interval", changes);
        Millis(ping_timeout_ms_, req.ping_timeout_ms, "ping timeout", changes);
        if (!resync_rate_.empty()) {
            req.resync_rate = ParseSize(resync_rate_);
            Note("resync rate " + (*req.resync_rate == 0 ? std::string("unlimited")
                                                         : FormatRate(*req.resync_rate)),
                 changes);
        }
        if (!auto_degrade_.empty()) {
            req.auto_degrade = auto_degrade_ == "on";
            Note("auto degrade " + auto_degrade_, changes);
        }
        if (!payload_crc_.empty()) {
            req.payload_crc = payload_crc_ == "on";
            Note("payload crc " + payload_crc_, changes);
        }
        Millis(disk_timeout_ms_, req.disk_timeout_ms, "disk timeout", changes);
        if (req.empty())
            throw UsageError("volume set " + name_ +
                             ": nothing to change: give at least one of --request-timeout-ms, "
                             "--ping-interval-ms, --ping-timeout-ms, --resync-rate, "
                             "--auto-degrade, --payload-crc, --disk-timeout-ms");
        VolumeClient client = Connect();
        client.Set(req);
        return ReportVolume(global, client, name_, "updated volume " + name_ + ": " + changes);
    }

private:
    // Appends one change to the comma-separated list of changes.
    static void Note(const std::string& change, std::string& changes) {
        changes += (changes.empty() ? "" : ", ") + change;
    }

    // A duration in milliseconds, if given.
    static void Millis(const std::string& arg, std::optional<uint32_t>& field, const char* what,
                       std::string& changes) {
        if (arg.empty())
            return;
        field = static_cast<uint32_t>(ParseDecimal(arg, UINT32_MAX));
        Note(std::string(what) + " " + std::to_string(*field) + " ms", changes);
    }

    std::string name_;
    std::string request_timeout_ms_;
    std::string ping_interval_ms_;
    std::string ping_timeout_ms_;
    std::string resync_rate_;
    std::string auto_degrade_;
    std::string payload_crc_;
    std::string disk_timeout_ms_;
};

}  // namespace

std::unique_ptr<Command> NewVolumeCreate() {
    return std::make_unique<VolumeCreate>();
}

std::unique_ptr<Command> NewVolumeDestroy() {
    return std::make_unique<VolumeDestroy>();
}

std::unique_ptr<Command> NewVolumeList() {
    return std::make_unique<VolumeList>();
}

std::unique_ptr<Command> NewVolumeStatus() {
    return std::make_unique<VolumeStatus>();
}

std::unique_ptr<Command> NewVolumeRole() {
    return std::make_unique<VolumeRole>();
}

std::unique_ptr<Command> NewVolumeSet() {
    return std::make_unique<VolumeSet>();
}

std::unique_ptr<Command> NewVolumeAttachDisk() {
    return std::make_unique<VolumeAttachDisk>();
}

}  // namespace chorus
