// listen and unlisten, peer add, and the commands on one peer of a volume:
// peer del, connect and disconnect, writeset remove and volume verify.
#include <iostream>
#include <string>

#include <linux/chorus.h>

#include "chorusctl/args.h"
#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "chorusctl/output.h"
#include "lib/volume_validate.h"

namespace chorus {

namespace {

class Listen : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        cmd.add_option("ADDRESS", address_, "IPv4 or IPv6 address literal")
            ->required()
            ->check(Check(CheckAddress, "ADDRESS"));
        cmd.add_option("--port", port_, "TCP port; default " + std::to_string(CHORUS_DEFAULT_PORT))
            ->check(Check(CheckPortArg, "N"));
    }

    std::string Subject() const override { return address_; }

    int Run(const GlobalOptions& global) override {
        ListenRequest req;
        req.address = address_;
        req.port = PortOf(port_);
        Connect().Listen(req);
        if (global.json)
            PrintJson({{"listening", true}, {"address", req.address}, {"port", req.port}});
        else
            std::cout << "listening on " << FormatEndpoint(req.address, req.port) << std::endl;
        return kExitOk;
    }

private:
    std::string address_;
    std::string port_;
};

class Unlisten : public Command {
public:
    void AddOptions(CLI::App&) override {}

    int Run(const GlobalOptions& global) override {
        Connect().Unlisten();
        if (global.json)
            PrintJson({{"listening", false}});
        else
            std::cout << "stopped listening" << std::endl;
        return kExitOk;
    }
};

class PeerAdd : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        peer_.AddTo(cmd);
        cmd.add_option("ADDRESS", address_, "The peer's IPv4 or IPv6 address literal")
            ->required()
            ->check(Check(CheckAddress, "ADDRESS"));
        cmd.add_option("--port", port_,
                       "The peer's TCP port; default " + std::to_string(CHORUS_DEFAULT_PORT))
            ->check(Check(CheckPortArg, "N"));
        cmd.add_option("--transport", transport_,
                       "tcp (default), rdma, or rdma+tcp (RDMA with TCP fallback)")
            ->check(Check(CheckTransportArg, "{tcp,rdma,rdma+tcp}"));
        cmd.add_option("--conns", conns_,
                       "Connections to the peer, 1..8; default: the kernel's (2)")
            ->check(Check(CheckConnsArg, "N"));
        cmd.add_option("--initial-sync", initial_sync_,
                       "What a peer new to the volume needs: full (default) or none (only if "
                       "both replicas were formatted together and never written apart)")
            ->check(CLI::IsMember({"full", "none"}));
        cmd.add_flag("--diskless", diskless_,
                     "The peer is a diskless access point: it has no replica, is never in the "
                     "write set and only forwards to the owner");
    }

    // The address is left out: the peer is known by its node id.
    std::string Subject() const override { return peer_.Subject(); }

    int Run(const GlobalOptions& global) override {
        PeerAddRequest req = Request();
        VolumeClient client = Connect();
        client.PeerAdd(req);
        return ReportVolume(global, client, peer_.volume, AddedLine(req));
    }

private:
    PeerAddRequest Request() const {
        PeerAddRequest req;
        req.volume = peer_.volume;
        req.node_id = peer_.NodeId();
        req.address = address_;
        req.port = PortOf(port_);
        req.transport = ParseTransport(transport_);
        if (!conns_.empty())
            req.nr_conns = static_cast<uint32_t>(ParseDecimal(conns_, CHORUS_MAX_CONNS));
        if (!initial_sync_.empty())
            req.initial_sync =
                initial_sync_ == "none" ? CHORUS_INITIAL_SYNC_NONE : CHORUS_INITIAL_SYNC_FULL;
        req.diskless = diskless_;
        return req;
    }

    static std::string AddedLine(const PeerAddRequest& req) {
        std::string line = "added peer " + std::to_string(req.node_id) + " to volume " +
                           req.volume + ": " + FormatEndpoint(req.address, req.port) + ", " +
                           TransportName(req.transport);
        if (req.nr_conns)
            line += ", " + std::to_string(*req.nr_conns) +
                    (*req.nr_conns == 1 ? " connection" : " connections");
        if (req.initial_sync)
            line += ", initial sync " + InitialSyncName(*req.initial_sync);
        if (req.diskless)
            line += ", diskless";
        return line;
    }

    VolumePeerArgs peer_;
    std::string address_;
    std::string port_;
    std::string transport_ = "tcp";
    std::string conns_;
    std::string initial_sync_;
    bool diskless_ = false;
};

// A request about one peer of a volume that the kernel answers with nothing
// but success: these commands differ only in the request and in the line
// that confirms it.
class PeerRequest : public Command {
public:
    using Send = void (VolumeClient::*)(std::string_view volume, uint32_t node_id);
    using Confirmation = std::string (*)(const std::string& volume, const std::string& node_id);

    PeerRequest(Send send, Confirmation confirmation) : send_(send), confirmation_(confirmation) {}

    void AddOptions(CLI::App& cmd) override { peer_.AddTo(cmd); }

    std::string Subject() const override { return peer_.Subject(); }

    int Run(const GlobalOptions& global) override {
        const uint32_t id = peer_.NodeId();
        VolumeClient client = Connect();
        (client.*send_)(peer_.volume, id);
        return ReportVolume(global, client, peer_.volume,
                            confirmation_(peer_.volume, std::to_string(id)));
    }

private:
    VolumePeerArgs peer_;
    Send send_;
    Confirmation confirmation_;
};

}  // namespace

std::unique_ptr<Command> NewListen() {
    return std::make_unique<Listen>();
}

std::unique_ptr<Command> NewUnlisten() {
    return std::make_unique<Unlisten>();
}

std::unique_ptr<Command> NewPeerAdd() {
    return std::make_unique<PeerAdd>();
}

std::unique_ptr<Command> NewPeerDel() {
    auto confirmation = [](const std::string& volume, const std::string& id) {
        return "removed peer " + id + " from volume " + volume;
    };
    return std::make_unique<PeerRequest>(&VolumeClient::PeerDel, confirmation);
}

std::unique_ptr<Command> NewPeerConnect() {
    auto confirmation = [](const std::string& volume, const std::string& id) {
        return "connecting volume " + volume + " to peer " + id;
    };
    return std::make_unique<PeerRequest>(&VolumeClient::PeerConnect, confirmation);
}

std::unique_ptr<Command> NewPeerDisconnect() {
    auto confirmation = [](const std::string& volume, const std::string& id) {
        return "disconnected volume " + volume + " from peer " + id;
    };
    return std::make_unique<PeerRequest>(&VolumeClient::PeerDisconnect, confirmation);
}

std::unique_ptr<Command> NewWritesetRemove() {
    auto confirmation = [](const std::string& volume, const std::string& id) {
        return "removed node " + id + " from the write set of volume " + volume;
    };
    return std::make_unique<PeerRequest>(&VolumeClient::WritesetRemove, confirmation);
}

// A volume command, but about a peer like the rest here.
std::unique_ptr<Command> NewVolumeVerify() {
    auto confirmation = [](const std::string& volume, const std::string& id) {
        return "started verify of volume " + volume + " against peer " + id;
    };
    return std::make_unique<PeerRequest>(&VolumeClient::VerifyStart, confirmation);
}

}  // namespace chorus
