// chorusctl: command-line control of chorus.ko volumes over generic netlink.
// Documentation/chorusctl.rst describes the commands and exit codes.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <string>

#include <linux/chorus.h>
#include <linux/fs.h>
#include <CLI/CLI.hpp>

#include "chorusctl/output.h"
#include "lib/errors.h"
#include "lib/fd.h"
#include "lib/genl_client.h"
#include "lib/meta.h"
#include "lib/size.h"
#include "lib/uuid.h"
#include "lib/volume_validate.h"

namespace chorus {
namespace {

// Documented in Documentation/chorusctl.rst; scripts depend on them.
enum ExitCode {
    kExitOk = 0,
    kExitFailed = 1,      // the operation failed (the kernel said no)
    kExitUsage = 2,       // bad command line
    kExitNoModule = 3,    // chorus.ko is not loaded
    kExitNotFound = 4,    // no such volume or peer
    kExitPermission = 5,  // permission denied
};

// A command-line problem found after CLI11 accepted the arguments.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Args {
    bool json = false;
    std::string name;
    std::string backing;
    std::string size;
    std::string block_size;
    std::string uuid;
    int count = 0;
    double timeout = 0;
    bool force = false;
    // Replication; strings checked by CLI11, parsed by the command.
    std::string node_id;
    std::string address;
    std::string port;
    std::string transport = "tcp";
    std::string conns;
    std::string initial_sync;
    std::string role;
    std::string epoch;
    std::string request_timeout_ms;
    std::string ping_interval_ms;
    std::string ping_timeout_ms;
    std::string resync_rate;
    std::string auto_degrade;
};

// CLI11 validator from a check returning "" when fine, else the reason.
CLI::Validator Check(std::string (*fn)(std::string_view), const char* desc) {
    return CLI::Validator([fn](std::string& s) { return fn(s); }, desc, "");
}

std::string CheckSize(std::string_view s) {
    try {
        if (ParseSize(s) == 0)
            return "size must not be zero";
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

std::string CheckBlockSizeArg(std::string_view s) {
    try {
        return CheckBlockSize(ParseSize(s));
    } catch (const Error& e) {
        return e.what();
    }
}

std::string CheckUuidArg(std::string_view s) {
    try {
        ParseUuid(s);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

// A number checked by check once it parsed as a decimal up to max.
std::string CheckNumberArg(std::string_view s, uint64_t max, std::string (*check)(uint64_t)) {
    try {
        uint64_t v = ParseDecimal(s, max);
        return check != nullptr ? check(v) : "";
    } catch (const Error& e) {
        return e.what();
    }
}

std::string CheckNodeIdArg(std::string_view s) {
    return CheckNumberArg(s, UINT64_MAX, CheckNodeId);
}

std::string CheckConnsArg(std::string_view s) {
    return CheckNumberArg(s, UINT64_MAX, CheckNrConns);
}

std::string CheckPortArg(std::string_view s) {
    return CheckNumberArg(s, UINT64_MAX, CheckPort);
}

std::string CheckU32Arg(std::string_view s) {
    return CheckNumberArg(s, UINT32_MAX, nullptr);
}

std::string CheckU64Arg(std::string_view s) {
    return CheckNumberArg(s, UINT64_MAX, nullptr);
}

std::string CheckTransportArg(std::string_view s) {
    try {
        ParseTransport(s);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

std::string CheckRateArg(std::string_view s) {
    try {
        ParseSize(s);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

// Arguments CLI11 has checked, as numbers.
uint32_t NodeIdOf(const std::string& s) {
    return static_cast<uint32_t>(ParseDecimal(s, CHORUS_NODE_ID_MAX));
}

uint16_t PortOf(const std::string& s) {
    return s.empty() ? CHORUS_DEFAULT_PORT : static_cast<uint16_t>(ParseDecimal(s, 65535));
}

// --size, --block-size and --uuid of create and format, parsed (CLI11 has
// checked each) and checked against each other.
struct VolumeShape {
    std::optional<uint64_t> size;
    std::optional<uint32_t> block_size;
    std::optional<Uuid> uuid;
};

VolumeShape ParseShape(const Args& a) {
    VolumeShape v;
    if (!a.block_size.empty())
        v.block_size = static_cast<uint32_t>(ParseSize(a.block_size));
    if (!a.size.empty()) {
        v.size = ParseSize(a.size);
        // A device's own block size is checked once it is known.
        uint32_t unit = v.block_size.value_or(512);
        if (*v.size % unit != 0)
            throw UsageError("--size: " + std::to_string(*v.size) +
                             " bytes is not a multiple of the block size (" + std::to_string(unit) +
                             ")");
    }
    if (!a.uuid.empty())
        v.uuid = ParseUuid(a.uuid);
    return v;
}

// The options create and format share.
void AddShapeOptions(CLI::App* cmd, Args& a) {
    cmd->add_option("--size", a.size, "Volume size (512, 4k, 64M, 1G, 1GiB); default: all")
        ->check(Check(CheckSize, "SIZE"));
    cmd->add_option("--block-size", a.block_size,
                    "Logical block size: 512, 1024, 2048 or 4096; default: the backing's")
        ->check(Check(CheckBlockSizeArg, "N"));
    cmd->add_option("--uuid", a.uuid, "Volume uuid; default: random")
        ->check(Check(CheckUuidArg, "UUID"));
}

// EBUSY opening a backing device exclusively, from chorusctl or the kernel.
Error InUseError(const std::string& path) {
    return Error("cannot open " + path +
                     ": in use (mounted, or held by a chorus volume or another program) (EBUSY)",
                 EBUSY);
}

VolumeClient Connect() {
    return VolumeClient(GenlSocket::Open());
}

void PrintJson(const nlohmann::json& j) {
    std::cout << j.dump(2) << std::endl;
}

// After a command changed a volume: with --json the volume as the kernel
// now reports it (as create prints it), else the one-line confirmation.
int ReportVolume(const Args& a, VolumeClient& client, const std::string& line) {
    if (a.json)
        PrintJson(VolumeToJson(client.Get(a.name)));
    else
        std::cout << line << std::endl;
    return kExitOk;
}

// A volume and one of its peers, named by two positionals.
void AddVolumePeerArgs(CLI::App* cmd, Args& a) {
    cmd->add_option("VOLUME", a.name, "Volume name")
        ->required()
        ->check(Check(CheckVolumeName, "VOLUME"));
    cmd->add_option("NODE_ID", a.node_id, "The peer's node id, 1..32")
        ->required()
        ->check(Check(CheckNodeIdArg, "NODE_ID"));
}

int CmdCreate(const Args& a) {
    // Validate everything before talking to the kernel.
    VolumeShape shape = ParseShape(a);
    VolumeCreateRequest req;
    req.name = a.name;
    req.backing_path = a.backing;
    req.size_bytes = shape.size;
    req.block_size = shape.block_size;
    req.uuid = shape.uuid;
    if (!a.node_id.empty())
        req.node_id = NodeIdOf(a.node_id);
    VolumeInfo v;
    try {
        v = Connect().Create(req);
    } catch (const NetlinkError& e) {
        // The kernel's extack names the device; without one, say it here.
        if (e.errnum() == EBUSY && e.extack().empty())
            throw InUseError(a.backing);
        throw;
    }
    if (a.json) {
        PrintJson(VolumeToJson(v));
    } else {
        std::cout << "created volume " << v.name << ": " << DevicePath(v) << ", "
                  << FormatSize(v.size_bytes) << ", block size " << v.block_size << ", uuid "
                  << FormatUuid(v.uuid);
        if (v.node_id.value_or(0) != 0)
            std::cout << ", node id " << *v.node_id;
        if (v.role)
            std::cout << ", " << RoleName(*v.role);
        if (v.epoch)
            std::cout << " at epoch " << *v.epoch;
        std::cout << std::endl;
    }
    return kExitOk;
}

int CmdDestroy(const Args& a) {
    Connect().Destroy(a.name);
    if (a.json)
        PrintJson({{"name", a.name}, {"destroyed", true}});
    else
        std::cout << "destroyed volume " << a.name << std::endl;
    return kExitOk;
}

int CmdList(const Args& a) {
    std::vector<VolumeInfo> volumes = Connect().List();
    if (a.json) {
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

int CmdStatus(const Args& a) {
    VolumeInfo v = Connect().Get(a.name);
    if (a.json) {
        PrintJson(VolumeToJson(v));
    } else {
        PrintVolumeStatus(std::cout, v);
        std::cout.flush();
    }
    return kExitOk;
}

int CmdListen(const Args& a) {
    ListenRequest req;
    req.address = a.address;
    req.port = PortOf(a.port);
    Connect().Listen(req);
    if (a.json)
        PrintJson({{"listening", true}, {"address", req.address}, {"port", req.port}});
    else
        std::cout << "listening on " << FormatEndpoint(req.address, req.port) << std::endl;
    return kExitOk;
}

int CmdUnlisten(const Args& a) {
    Connect().Unlisten();
    if (a.json)
        PrintJson({{"listening", false}});
    else
        std::cout << "stopped listening" << std::endl;
    return kExitOk;
}

int CmdPeerAdd(const Args& a) {
    PeerAddRequest req;
    req.volume = a.name;
    req.node_id = NodeIdOf(a.node_id);
    req.address = a.address;
    req.port = PortOf(a.port);
    req.transport = ParseTransport(a.transport);
    if (!a.conns.empty())
        req.nr_conns = static_cast<uint32_t>(ParseDecimal(a.conns, CHORUS_MAX_CONNS));
    if (!a.initial_sync.empty())
        req.initial_sync =
            a.initial_sync == "none" ? CHORUS_INITIAL_SYNC_NONE : CHORUS_INITIAL_SYNC_FULL;
    VolumeClient client = Connect();
    client.PeerAdd(req);
    std::string line = "added peer " + std::to_string(req.node_id) + " to volume " + a.name + ": " +
                       FormatEndpoint(req.address, req.port) + ", " + TransportName(req.transport);
    if (req.nr_conns)
        line += ", " + std::to_string(*req.nr_conns) +
                (*req.nr_conns == 1 ? " connection" : " connections");
    if (req.initial_sync)
        line += ", initial sync " + InitialSyncName(*req.initial_sync);
    return ReportVolume(a, client, line);
}

int CmdPeerDel(const Args& a) {
    const uint32_t id = NodeIdOf(a.node_id);
    VolumeClient client = Connect();
    client.PeerDel(a.name, id);
    return ReportVolume(a, client, "removed peer " + std::to_string(id) + " from volume " + a.name);
}

int CmdPeerConnect(const Args& a) {
    const uint32_t id = NodeIdOf(a.node_id);
    VolumeClient client = Connect();
    client.PeerConnect(a.name, id);
    return ReportVolume(a, client,
                        "connecting volume " + a.name + " to peer " + std::to_string(id));
}

int CmdPeerDisconnect(const Args& a) {
    const uint32_t id = NodeIdOf(a.node_id);
    VolumeClient client = Connect();
    client.PeerDisconnect(a.name, id);
    return ReportVolume(a, client,
                        "disconnected volume " + a.name + " from peer " + std::to_string(id));
}

int CmdSetRole(const Args& a) {
    SetRoleRequest req;
    req.volume = a.name;
    req.role = a.role == "owner" ? CHORUS_ROLE_OWNER : CHORUS_ROLE_REPLICA;
    if (!a.epoch.empty())
        req.epoch = ParseDecimal(a.epoch, UINT64_MAX);
    if (req.role == CHORUS_ROLE_OWNER && !req.epoch)
        throw UsageError("volume role " + a.name +
                         " owner: --epoch E is required (higher than any epoch the volume "
                         "accepted; see volume status)");
    VolumeClient client = Connect();
    client.SetRole(req);
    std::string line = "volume " + a.name + " is now " + RoleName(req.role);
    if (req.epoch)
        line += " at epoch " + std::to_string(*req.epoch);
    return ReportVolume(a, client, line);
}

int CmdWritesetRemove(const Args& a) {
    const uint32_t id = NodeIdOf(a.node_id);
    VolumeClient client = Connect();
    client.WritesetRemove(a.name, id);
    return ReportVolume(
        a, client,
        "removed peer " + std::to_string(id) + " from the write set of volume " + a.name);
}

int CmdVerify(const Args& a) {
    const uint32_t id = NodeIdOf(a.node_id);
    VolumeClient client = Connect();
    client.VerifyStart(a.name, id);
    return ReportVolume(
        a, client, "started verify of volume " + a.name + " against peer " + std::to_string(id));
}

int CmdVolumeSet(const Args& a) {
    VolumeSetRequest req;
    req.volume = a.name;
    std::string changes;
    auto note = [&](const std::string& what) { changes += (changes.empty() ? "" : ", ") + what; };
    auto ms = [&](const std::string& arg, std::optional<uint32_t>& field, const char* what) {
        if (arg.empty())
            return;
        field = static_cast<uint32_t>(ParseDecimal(arg, UINT32_MAX));
        note(std::string(what) + " " + std::to_string(*field) + " ms");
    };
    ms(a.request_timeout_ms, req.request_timeout_ms, "request timeout");
    ms(a.ping_interval_ms, req.ping_interval_ms, "ping interval");
    ms(a.ping_timeout_ms, req.ping_timeout_ms, "ping timeout");
    if (!a.resync_rate.empty()) {
        req.resync_rate = ParseSize(a.resync_rate);
        note("resync rate " +
             (*req.resync_rate == 0 ? std::string("unlimited") : FormatRate(*req.resync_rate)));
    }
    if (!a.auto_degrade.empty()) {
        req.auto_degrade = a.auto_degrade == "on";
        note("auto degrade " + a.auto_degrade);
    }
    if (req.empty())
        throw UsageError("volume set " + a.name +
                         ": nothing to change: give at least one of --request-timeout-ms, "
                         "--ping-interval-ms, --ping-timeout-ms, --resync-rate, --auto-degrade");
    VolumeClient client = Connect();
    client.Set(req);
    return ReportVolume(a, client, "updated volume " + a.name + ": " + changes);
}

int CmdEvents(const Args& a) {
    EventListener listener = EventListener::Open();
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> deadline;
    if (a.timeout > 0)
        deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(a.timeout));
    int seen = 0;
    while (a.count == 0 || seen < a.count) {
        std::optional<std::chrono::milliseconds> left;
        if (deadline) {
            left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
            if (left->count() <= 0)
                break;
        }
        std::optional<VolumeInfo> v;
        try {
            v = listener.Next(left);
        } catch (const Error& e) {
            // Lost or malformed events should not end a long-running
            // stream: report them once and go on. Anything else ends it.
            if (!IsRecoverableEventError(e))
                throw;
            std::cerr << "chorusctl: events: " << e.what() << std::endl;
            continue;
        }
        if (!v)
            break;  // timeout
        std::string time = NowIso8601();
        if (a.json) {
            nlohmann::json j = VolumeToJson(*v);  // with "peer" and "reason" if sent
            j["event"] = EventName(v->event);
            j["time"] = time;
            std::cout << j.dump() << std::endl;  // one object per line
        } else {
            std::cout << FormatEventLine(time, *v) << std::endl;
        }
        seen++;
    }
    return kExitOk;
}

// A backing device opened for format or inspect, with what the metadata
// layout needs to know of it.
struct Backing {
    Fd fd;
    uint64_t bytes = 0;
    uint32_t lbs = 512;
};

// format needs a block device and O_EXCL, which fails with EBUSY while it is
// mounted or held by a chorus volume. inspect reads only, so it neither
// claims the device nor refuses a regular file (an image of one).
Backing OpenBacking(const std::string& path, bool for_format) {
    int flags = (for_format ? O_RDWR | O_EXCL : O_RDONLY) | O_CLOEXEC;
    Backing b;
    b.fd.Reset(::open(path.c_str(), flags));
    if (!b.fd.valid()) {
        int err = errno;
        if (err == EBUSY)
            throw InUseError(path);
        throw Error("cannot open " + path + ": " + DescribeErrno(err), err);
    }
    struct stat st;
    if (::fstat(b.fd.get(), &st) < 0)
        throw Error("cannot stat " + path + ": " + DescribeErrno(errno), errno);
    if (!S_ISBLK(st.st_mode)) {
        if (for_format || !S_ISREG(st.st_mode))
            throw Error(path + " is not a block device (ENOTBLK)", ENOTBLK);
        b.bytes = static_cast<uint64_t>(st.st_size);
        return b;
    }
    int lbs = 0;
    if (::ioctl(b.fd.get(), BLKGETSIZE64, &b.bytes) < 0 || ::ioctl(b.fd.get(), BLKSSZGET, &lbs) < 0)
        throw Error("cannot get the size of " + path + ": " + DescribeErrno(errno), errno);
    b.lbs = static_cast<uint32_t>(lbs);
    // chorus.ko writes superblocks with bios, behind the page cache of the
    // block device: read and write around that cache so that nothing stale
    // is seen or kept.
    if (::fcntl(b.fd.get(), F_SETFL, O_DIRECT) < 0)
        throw Error("cannot use O_DIRECT on " + path + ": " + DescribeErrno(errno), errno);
    return b;
}

int CmdFormat(const Args& a) {
    VolumeShape shape = ParseShape(a);
    if (shape.uuid && IsNullUuid(*shape.uuid))
        throw UsageError("--uuid: the volume uuid must not be all zeroes");
    FormatOptions opt;
    opt.size = shape.size.value_or(0);
    opt.block_size = shape.block_size.value_or(0);
    opt.uuid = shape.uuid;
    opt.force = a.force;

    Backing b = OpenBacking(a.backing, true);
    Formatted f;
    try {
        f = FormatDevice(b.fd.get(), b.bytes, b.lbs, opt);
    } catch (const Error& e) {
        if (e.errnum() != EEXIST)
            throw;
        throw Error(std::string(e.what()) + "; --force formats it anyway, losing its state",
                    e.errnum());
    }
    if (a.json) {
        nlohmann::json j = MetaSuperToJson(f.super);
        j["backing"] = a.backing;
        j["device_logical_block_size"] = b.lbs;
        j["max_size_bytes"] = f.layout.max_data_bytes;
        PrintJson(j);
    } else {
        std::cout << "formatted " << a.backing << ": volume uuid "
                  << FormatUuid(f.super.volume_uuid) << ", " << FormatSize(f.layout.data_bytes)
                  << " of data, block size " << f.layout.block_size << ", metadata "
                  << FormatSize(f.layout.md_bytes) << " at the end" << std::endl;
    }
    return kExitOk;
}

int CmdInspect(const Args& a) {
    Backing b = OpenBacking(a.backing, false);
    MetaRead m = ReadMeta(b.fd.get(), b.bytes);
    if (m.state == MetaRead::State::kNotFormatted)
        throw Error("not formatted: no chorus metadata (run chorusctl volume format)", ENODATA);
    if (m.state == MetaRead::State::kCorrupt)
        throw Error("corrupt: " + m.Problems(), EUCLEAN);
    if (a.json) {
        nlohmann::json j = MetaSuperToJson(m.super);
        j["backing"] = a.backing;
        j["current_copy"] = m.current == 0 ? "A" : "B";
        nlohmann::json copies = nlohmann::json::object();
        for (int i = 0; i < 2; i++) {
            const DecodeResult& c = m.copies[i];
            nlohmann::json cj = {{"valid", c.ok()}};
            if (c.ok())
                cj["seq"] = c.super.seq;
            else
                cj["error"] = c.reason;
            copies[i == 0 ? "A" : "B"] = cj;
        }
        j["copies"] = copies;
        PrintJson(j);
    } else {
        PrintMetaInspect(std::cout, a.backing, m);
        std::cout.flush();
    }
    return kExitOk;
}

// names_object: ENOENT means that the volume or peer the command names does
// not exist.
int ExitCodeFor(const Error& e, bool names_object) {
    if (dynamic_cast<const ModuleNotLoadedError*>(&e) != nullptr)
        return kExitNoModule;
    // EPERM only: the module answers EACCES for a read-only backing
    // device, which is an ordinary failure, not a missing privilege.
    if (e.errnum() == EPERM)
        return kExitPermission;
    if (names_object && e.errnum() == ENOENT && dynamic_cast<const NetlinkError*>(&e) != nullptr)
        return kExitNotFound;
    return kExitFailed;
}

int Main(int argc, char** argv) {
    Args a;
    CLI::App app{"chorusctl - control chorus replicated block volumes", "chorusctl"};
    app.set_version_flag("--version", std::string("chorusctl ") + CHORUS_VERSION +
                                          " (netlink family '" CHORUS_GENL_NAME "' version " +
                                          std::to_string(CHORUS_GENL_VERSION) + ")");
    app.add_flag("--json", a.json, "Print machine-readable JSON instead of text");
    app.require_subcommand(1);
    app.fallthrough();  // so --json is accepted after the subcommand too

    CLI::App* volume =
        app.add_subcommand("volume", "Create, destroy, inspect and tune volumes; set roles");
    volume->require_subcommand(1);
    volume->fallthrough();

    CLI::App* create = volume->add_subcommand("create", "Create a volume on a backing device");
    create->add_option("NAME", a.name, "Volume name: 1..63 of [A-Za-z0-9._-], not starting '.'")
        ->required()
        ->check(Check(CheckVolumeName, "NAME"));
    create->add_option("--backing", a.backing, "Absolute path of the backing block device")
        ->required()
        ->check(Check(CheckBackingPath, "PATH"));
    AddShapeOptions(create, a);
    create
        ->add_option("--node-id", a.node_id,
                     "This node's id in the volume, 1..32: recorded in the metadata, or "
                     "checked against the one recorded")
        ->check(Check(CheckNodeIdArg, "N"));

    CLI::App* destroy = volume->add_subcommand("destroy", "Destroy a volume (alias: delete)");
    destroy->alias("delete");
    destroy->add_option("NAME", a.name, "Volume name")
        ->required()
        ->check(Check(CheckVolumeName, "NAME"));

    CLI::App* list = volume->add_subcommand("list", "List volumes");

    CLI::App* status = volume->add_subcommand("status", "Show a volume's attributes and counters");
    status->add_option("NAME", a.name, "Volume name")
        ->required()
        ->check(Check(CheckVolumeName, "NAME"));

    CLI::App* format =
        volume->add_subcommand("format", "Write fresh chorus metadata to a backing device");
    format->add_option("--backing", a.backing, "Absolute path of the backing block device")
        ->required()
        ->check(Check(CheckBackingPath, "PATH"));
    AddShapeOptions(format, a);
    format->add_flag("--force", a.force, "Format even if the device holds chorus metadata");

    CLI::App* inspect =
        volume->add_subcommand("inspect", "Show the chorus metadata of a backing device");
    inspect->add_option("--backing", a.backing, "Path of the backing block device")
        ->required()
        ->check(Check(CheckBackingPath, "PATH"));

    CLI::App* role = volume->add_subcommand(
        "role", "Make this node the volume's owner (at an epoch) or a replica");
    role->add_option("NAME", a.name, "Volume name")
        ->required()
        ->check(Check(CheckVolumeName, "NAME"));
    role->add_option("ROLE", a.role, "owner or replica")
        ->required()
        ->check(CLI::IsMember({"owner", "replica"}));
    role->add_option("--epoch", a.epoch,
                     "The owner's epoch, higher than any accepted (required for owner)")
        ->check(Check(CheckU64Arg, "E"));

    CLI::App* verify =
        volume->add_subcommand("verify", "Compare this replica with a peer's, region by region");
    AddVolumePeerArgs(verify, a);

    CLI::App* set = volume->add_subcommand("set", "Change a volume's replication tunables");
    set->add_option("NAME", a.name, "Volume name")
        ->required()
        ->check(Check(CheckVolumeName, "NAME"));
    set->add_option("--request-timeout-ms", a.request_timeout_ms,
                    "How long a peer may take to ack a write before it is unreachable")
        ->check(Check(CheckU32Arg, "MS"));
    set->add_option("--ping-interval-ms", a.ping_interval_ms, "Heartbeat period")
        ->check(Check(CheckU32Arg, "MS"));
    set->add_option("--ping-timeout-ms", a.ping_timeout_ms,
                    "Silence after which a peer is unreachable")
        ->check(Check(CheckU32Arg, "MS"));
    set->add_option("--resync-rate", a.resync_rate,
                    "Resync limit in bytes per second (10M, 1G); 0 for none")
        ->check(Check(CheckRateArg, "BYTES_PER_SEC"));
    set->add_option("--auto-degrade", a.auto_degrade,
                    "on: drop an unreachable peer from the write set without being told "
                    "(no fencing; standalone use only)")
        ->check(CLI::IsMember({"on", "off"}));

    CLI::App* listen = app.add_subcommand("listen", "Accept replication connections on an address");
    listen->add_option("ADDRESS", a.address, "IPv4 or IPv6 address literal")
        ->required()
        ->check(Check(CheckAddress, "ADDRESS"));
    listen->add_option("--port", a.port, "TCP port; default " + std::to_string(CHORUS_DEFAULT_PORT))
        ->check(Check(CheckPortArg, "N"));

    CLI::App* unlisten = app.add_subcommand(
        "unlisten", "Stop accepting replication connections (established ones stay)");

    CLI::App* peer = app.add_subcommand("peer", "Declare, forget, connect and disconnect peers");
    peer->require_subcommand(1);
    peer->fallthrough();

    CLI::App* peer_add = peer->add_subcommand("add", "Declare a peer of a volume");
    AddVolumePeerArgs(peer_add, a);
    peer_add->add_option("ADDRESS", a.address, "The peer's IPv4 or IPv6 address literal")
        ->required()
        ->check(Check(CheckAddress, "ADDRESS"));
    peer_add
        ->add_option("--port", a.port,
                     "The peer's TCP port; default " + std::to_string(CHORUS_DEFAULT_PORT))
        ->check(Check(CheckPortArg, "N"));
    peer_add
        ->add_option("--transport", a.transport,
                     "tcp (default), rdma, or rdma+tcp (RDMA with TCP fallback)")
        ->check(Check(CheckTransportArg, "{tcp,rdma,rdma+tcp}"));
    peer_add
        ->add_option("--conns", a.conns, "Connections to the peer, 1..8; default: the kernel's (2)")
        ->check(Check(CheckConnsArg, "N"));
    peer_add
        ->add_option("--initial-sync", a.initial_sync,
                     "What a peer new to the volume needs: full (default) or none (only if both "
                     "replicas were formatted together and never written apart)")
        ->check(CLI::IsMember({"full", "none"}));

    CLI::App* peer_del = peer->add_subcommand("del", "Forget a peer (refused while it holds I/O)");
    AddVolumePeerArgs(peer_del, a);
    CLI::App* peer_connect =
        peer->add_subcommand("connect", "Start connecting to a peer, retrying with back-off");
    AddVolumePeerArgs(peer_connect, a);
    CLI::App* peer_disconnect =
        peer->add_subcommand("disconnect", "Close the connections to a peer and stop");
    AddVolumePeerArgs(peer_disconnect, a);

    CLI::App* writeset = app.add_subcommand("writeset", "Change a volume's write set");
    writeset->require_subcommand(1);
    writeset->fallthrough();
    CLI::App* writeset_remove = writeset->add_subcommand(
        "remove", "Take a peer out of the write set: it is out of date, held I/O completes");
    AddVolumePeerArgs(writeset_remove, a);

    CLI::App* events = app.add_subcommand("events", "Print volume events as they happen");
    events->add_option("--count", a.count, "Exit after N events")
        ->check(CLI::Range(1, std::numeric_limits<int>::max()));
    events->add_option("--timeout", a.timeout, "Exit after SECS seconds (fractions allowed)")
        ->check(CLI::Validator(
            [](std::string& s) -> std::string {
                double v = 0;
                if (!CLI::detail::lexical_cast(s, v) || !(v > 0) || v > 1e9)
                    return "timeout '" + s + "' is not a positive number of seconds";
                return "";
            },
            "SECS", ""));

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);  // --help, --version
    } catch (const CLI::ParseError& e) {
        std::cerr << "chorusctl: " << e.what() << "\nRun with --help for more information."
                  << std::endl;
        return kExitUsage;
    }

    std::string what;
    bool names_object = false;
    int (*cmd)(const Args&) = nullptr;
    if (create->parsed()) {
        what = "volume create " + a.name;
        cmd = CmdCreate;
    } else if (destroy->parsed()) {
        what = "volume destroy " + a.name;
        names_object = true;
        cmd = CmdDestroy;
    } else if (list->parsed()) {
        what = "volume list";
        cmd = CmdList;
    } else if (status->parsed()) {
        what = "volume status " + a.name;
        names_object = true;
        cmd = CmdStatus;
    } else if (role->parsed()) {
        what = "volume role " + a.name + " " + a.role;
        names_object = true;
        cmd = CmdSetRole;
    } else if (verify->parsed()) {
        what = "volume verify " + a.name + " " + a.node_id;
        names_object = true;
        cmd = CmdVerify;
    } else if (set->parsed()) {
        what = "volume set " + a.name;
        names_object = true;
        cmd = CmdVolumeSet;
    } else if (listen->parsed()) {
        what = "listen " + a.address;
        cmd = CmdListen;
    } else if (unlisten->parsed()) {
        what = "unlisten";
        cmd = CmdUnlisten;
    } else if (peer_add->parsed()) {
        what = "peer add " + a.name + " " + a.node_id;
        names_object = true;
        cmd = CmdPeerAdd;
    } else if (peer_del->parsed()) {
        what = "peer del " + a.name + " " + a.node_id;
        names_object = true;
        cmd = CmdPeerDel;
    } else if (peer_connect->parsed()) {
        what = "peer connect " + a.name + " " + a.node_id;
        names_object = true;
        cmd = CmdPeerConnect;
    } else if (peer_disconnect->parsed()) {
        what = "peer disconnect " + a.name + " " + a.node_id;
        names_object = true;
        cmd = CmdPeerDisconnect;
    } else if (writeset_remove->parsed()) {
        what = "writeset remove " + a.name + " " + a.node_id;
        names_object = true;
        cmd = CmdWritesetRemove;
    } else if (format->parsed()) {
        what = "volume format " + a.backing;
        cmd = CmdFormat;
    } else if (inspect->parsed()) {
        what = "volume inspect " + a.backing;
        cmd = CmdInspect;
    } else if (events->parsed()) {
        what = "events";
        cmd = CmdEvents;
    } else {
        std::cerr << "chorusctl: no command given\nRun with --help for more information."
                  << std::endl;
        return kExitUsage;
    }

    try {
        return cmd(a);
    } catch (const UsageError& e) {
        std::cerr << "chorusctl: " << e.what() << std::endl;
        return kExitUsage;
    } catch (const Error& e) {
        std::cerr << "chorusctl: " << what << ": " << e.what() << std::endl;
        return ExitCodeFor(e, names_object);
    } catch (const std::exception& e) {
        std::cerr << "chorusctl: " << what << ": " << e.what() << std::endl;
        return kExitFailed;
    }
}

}  // namespace
}  // namespace chorus

int main(int argc, char** argv) {
    return chorus::Main(argc, argv);
}
