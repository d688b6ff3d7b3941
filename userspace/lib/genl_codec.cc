#include "lib/genl_codec.h"

#include <array>
#include <cstring>
#include <limits>

#include <linux/chorus.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>

#include "lib/errors.h"

namespace chorus {

namespace {

constexpr std::array<const char*, CHORUS_A_MAX + 1> kAttrNames = {
    "CHORUS_A_UNSPEC",
    "CHORUS_A_PAD",
    "CHORUS_A_VOLUME_NAME",
    "CHORUS_A_BACKING_PATH",
    "CHORUS_A_SIZE_BYTES",
    "CHORUS_A_BLOCK_SIZE",
    "CHORUS_A_UUID",
    "CHORUS_A_MINOR",
    "CHORUS_A_DISK_NAME",
    "CHORUS_A_STATE",
    "CHORUS_A_EVENT",
    "CHORUS_A_OPEN_COUNT",
    "CHORUS_A_STATS",
    "CHORUS_A_NODE_ID",
    "CHORUS_A_ADDRESS",
    "CHORUS_A_PORT",
    "CHORUS_A_TRANSPORT",
    "CHORUS_A_NR_CONNS",
    "CHORUS_A_ROLE",
    "CHORUS_A_EPOCH",
    "CHORUS_A_PEERS",
    "CHORUS_A_PEER",
    "CHORUS_A_REQUEST_TIMEOUT_MS",
    "CHORUS_A_PING_INTERVAL_MS",
    "CHORUS_A_PING_TIMEOUT_MS",
    "CHORUS_A_RESYNC_RATE",
    "CHORUS_A_AUTO_DEGRADE",
    "CHORUS_A_INITIAL_SYNC",
    "CHORUS_A_REASON",
    "CHORUS_A_LEASE_DEADLINE_NS",
    "CHORUS_A_LEASE_NOW_NS",
    "CHORUS_A_LEASE_STATE",
    "CHORUS_A_LEASE_EXPIRIES",
    "CHORUS_A_HELD_IO",
    "CHORUS_A_DISKLESS",
    "CHORUS_A_DISK_TIMEOUT_MS",
    "CHORUS_A_DISK_ERROR",
    "CHORUS_A_DISK_FAILED_AT",
    "CHORUS_A_AUTH_SECRET",
    "CHORUS_A_AUTH_KEEP_PREVIOUS_S",
    "CHORUS_A_AUTH_DROP_PREVIOUS",
    "CHORUS_A_AUTH_CLEAR",
    "CHORUS_A_AUTH_KEY_ID",
    "CHORUS_A_AUTH_PREV_KEY_ID",
    "CHORUS_A_AUTH_PREV_REMAINING_S",
    "CHORUS_A_AUTH_FAILURES",
    "CHORUS_A_PAYLOAD_CRC",
    "CHORUS_A_DISK_IN_WRITESET",
    "CHORUS_A_DISK_HELD",
};

constexpr std::array<const char*, CHORUS_PEER_A_MAX + 1> kPeerAttrNames = {
    "CHORUS_PEER_A_UNSPEC",
    "CHORUS_PEER_A_PAD",
    "CHORUS_PEER_A_NODE_ID",
    "CHORUS_PEER_A_ADDRESS",
    "CHORUS_PEER_A_PORT",
    "CHORUS_PEER_A_TRANSPORT",
    "CHORUS_PEER_A_NR_CONNS",
    "CHORUS_PEER_A_CONN_STATE",
    "CHORUS_PEER_A_REPL_STATE",
    "CHORUS_PEER_A_IN_WRITESET",
    "CHORUS_PEER_A_ROLE",
    "CHORUS_PEER_A_DIRTY_BYTES",
    "CHORUS_PEER_A_SYNC_TOTAL_BYTES",
    "CHORUS_PEER_A_SYNC_DONE_BYTES",
    "CHORUS_PEER_A_SYNC_RATE",
    "CHORUS_PEER_A_WRITES_SENT",
    "CHORUS_PEER_A_BYTES_SENT",
    "CHORUS_PEER_A_HELD",
    "CHORUS_PEER_A_RECONNECTS",
    "CHORUS_PEER_A_RESYNCED_BYTES",
    "CHORUS_PEER_A_VERIFY_DONE_BYTES",
    "CHORUS_PEER_A_VERIFY_MISMATCHES",
    "CHORUS_PEER_A_VERIFY_RUNNING",
    "CHORUS_PEER_A_LAST_ERROR",
    "CHORUS_PEER_A_ACTIVE_TRANSPORT",
    "CHORUS_PEER_A_PATH",
    "CHORUS_PEER_A_DISK_FAILED",
    "CHORUS_PEER_A_AL_WAITING",
};

constexpr std::array<const char*, CHORUS_PATH_A_MAX + 1> kPathAttrNames = {
    "CHORUS_PATH_A_UNSPEC",    "CHORUS_PATH_A_PAD",        "CHORUS_PATH_A_TRANSPORT",
    "CHORUS_PATH_A_ACTIVE",    "CHORUS_PATH_A_SESSIONS",   "CHORUS_PATH_A_FAILURES",
    "CHORUS_PATH_A_MSGS_SENT", "CHORUS_PATH_A_BYTES_SENT", "CHORUS_PATH_A_LAST_ERROR",
};

constexpr std::array<const char*, CHORUS_CMD_MAX + 1> kCommandNames = {
    "UNSPEC",          "VOLUME_CREATE", "VOLUME_DESTROY",  "VOLUME_GET",   "EVENT",
    "LISTEN",          "UNLISTEN",      "PEER_ADD",        "PEER_DEL",     "PEER_CONNECT",
    "PEER_DISCONNECT", "SET_ROLE",      "WRITESET_REMOVE", "VERIFY_START", "VOLUME_SET",
    "LEASE_SET",       "LEASE_GET",     "DISK_ATTACH",     "AUTH_SET",     "AUTH_GET",
};

// A value of a small enum by name; "unknown(N)" for 0 and for values newer
// than the names known here (a header grown without this table is no crash).
template <size_t N>
std::string EnumName(const std::array<const char*, N>& names, uint32_t value) {
    if (value != 0 && value < N && names[value] != nullptr)
        return names[value];
    return "unknown(" + std::to_string(value) + ")";
}

NlMsgPtr NewGenlMessage(int family, uint8_t cmd, int flags) {
    NlMsgPtr msg(nlmsg_alloc());
    if (!msg)
        throw Error("out of memory allocating a netlink message", ENOMEM);
    if (genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd,
                    CHORUS_GENL_VERSION) == nullptr)
        throw Error("cannot build the generic netlink header", EMSGSIZE);
    return msg;
}

void Check(int rc, int type) {
    if (rc < 0)
        throw Error("cannot add " + AttrName(type) + " to the netlink message", EMSGSIZE);
}

void PutString(nl_msg* msg, int type, std::string_view value) {
    Check(nla_put_string(msg, type, std::string(value).c_str()), type);
}

void PutU32(nl_msg* msg, int type, uint32_t value) {
    Check(nla_put_u32(msg, type, value), type);
}

void PutU64(nl_msg* msg, int type, uint64_t value) {
    Check(nla_put_u64(msg, type, value), type);
}

// One attribute's payload, located inside the message being parsed.
using Payload = std::span<const uint8_t>;

// Calls fn(type, payload) for each attribute of a stream, in order, after
// checking its header and length.
template <typename Fn>
void ForEachAttribute(Payload stream, const char* where, Fn fn) {
    size_t off = 0;
    while (off < stream.size()) {
        if (stream.size() - off < NLA_HDRLEN)
            throw Error(std::string("truncated attribute header in ") + where);
        nlattr hdr;
        std::memcpy(&hdr, stream.data() + off, sizeof(hdr));
        if (hdr.nla_len < NLA_HDRLEN || hdr.nla_len > stream.size() - off)
            throw Error(std::string("truncated attribute (type ") +
                        std::to_string(hdr.nla_type & NLA_TYPE_MASK) + ", length " +
                        std::to_string(hdr.nla_len) + ") in " + where);
        fn(static_cast<size_t>(hdr.nla_type & NLA_TYPE_MASK),
           stream.subspan(off + NLA_HDRLEN, hdr.nla_len - NLA_HDRLEN));
        off += NLA_ALIGN(hdr.nla_len);
    }
}

// Splits an attribute stream into payloads indexed by type. Types above
// max_type are skipped; a later duplicate wins, as in the kernel's nla_parse.
template <size_t N>
void SplitAttributes(Payload stream, std::array<std::optional<Payload>, N>& out,
                     const char* where) {
    ForEachAttribute(stream, where, [&](size_t type, Payload p) {
        if (type < N)
            out[type] = p;
    });
}

template <typename T>
T GetScalar(const std::optional<Payload>& p, const std::string& name) {
    if (p->size() != sizeof(T))
        throw Error(name + " has " + std::to_string(p->size()) + " bytes, expected " +
                    std::to_string(sizeof(T)));
    T value;
    std::memcpy(&value, p->data(), sizeof(T));
    return value;
}

std::string GetString(const std::optional<Payload>& p, const std::string& name, size_t max) {
    if (p->empty() || p->back() != 0)
        throw Error(name + " is not a NUL-terminated string");
    std::string s(reinterpret_cast<const char*>(p->data()));
    if (s.empty())
        throw Error(name + " is empty");
    if (s.size() >= max)
        throw Error(name + " is longer than " + std::to_string(max - 1) + " bytes");
    return s;
}

// A string attribute that may be empty and is cut at its first NUL; for
// free text (reasons, errors) whose length the ABI does not bound.
std::string GetText(const std::optional<Payload>& p, const std::string& name) {
    if (p->empty() || p->back() != 0)
        throw Error(name + " is not a NUL-terminated string");
    return std::string(reinterpret_cast<const char*>(p->data()));
}

// Sets field from an optional attribute of type T (u8 into a bool).
template <typename T, typename F>
void GetOptional(const std::optional<Payload>& p, const std::string& name,
                 std::optional<F>& field) {
    if (p)
        field = static_cast<F>(GetScalar<T>(p, name));
}

PathInfo ParsePath(Payload nest) {
    std::array<std::optional<Payload>, CHORUS_PATH_A_MAX + 1> a;
    SplitAttributes(nest, a, "CHORUS_PEER_A_PATH");
    PathInfo path;
    auto u64 = [&](int type, std::optional<uint64_t>& field) {
        GetOptional<uint64_t>(a[type], PathAttrName(type), field);
    };
    GetOptional<uint32_t>(a[CHORUS_PATH_A_TRANSPORT], PathAttrName(CHORUS_PATH_A_TRANSPORT),
                          path.transport);
    GetOptional<uint8_t>(a[CHORUS_PATH_A_ACTIVE], PathAttrName(CHORUS_PATH_A_ACTIVE), path.active);
    u64(CHORUS_PATH_A_SESSIONS, path.sessions);
    u64(CHORUS_PATH_A_FAILURES, path.failures);
    u64(CHORUS_PATH_A_MSGS_SENT, path.msgs_sent);
    u64(CHORUS_PATH_A_BYTES_SENT, path.bytes_sent);
    if (a[CHORUS_PATH_A_LAST_ERROR]) {
        std::string text =
            GetText(a[CHORUS_PATH_A_LAST_ERROR], PathAttrName(CHORUS_PATH_A_LAST_ERROR));
        if (!text.empty())
            path.last_error = text;
    }
    return path;
}

PeerInfo ParsePeer(Payload nest) {
    std::array<std::optional<Payload>, CHORUS_PEER_A_MAX + 1> a;
    SplitAttributes(nest, a, "CHORUS_A_PEER");
    PeerInfo peer;
    auto u32 = [&](int type, std::optional<uint32_t>& field) {
        GetOptional<uint32_t>(a[type], PeerAttrName(type), field);
    };
    auto u64 = [&](int type, std::optional<uint64_t>& field) {
        GetOptional<uint64_t>(a[type], PeerAttrName(type), field);
    };
    auto flag = [&](int type, std::optional<bool>& field) {
        GetOptional<uint8_t>(a[type], PeerAttrName(type), field);
    };
    u32(CHORUS_PEER_A_NODE_ID, peer.node_id);
    if (a[CHORUS_PEER_A_ADDRESS])
        peer.address = GetString(a[CHORUS_PEER_A_ADDRESS], PeerAttrName(CHORUS_PEER_A_ADDRESS),
                                 CHORUS_ADDRESS_MAX);
    GetOptional<uint16_t>(a[CHORUS_PEER_A_PORT], PeerAttrName(CHORUS_PEER_A_PORT), peer.port);
    u32(CHORUS_PEER_A_TRANSPORT, peer.transport);
    u32(CHORUS_PEER_A_NR_CONNS, peer.nr_conns);
    u32(CHORUS_PEER_A_CONN_STATE, peer.conn_state);
    u32(CHORUS_PEER_A_REPL_STATE, peer.repl_state);
    flag(CHORUS_PEER_A_IN_WRITESET, peer.in_writeset);
    flag(CHORUS_PEER_A_DISK_FAILED, peer.disk_failed);
    u32(CHORUS_PEER_A_ROLE, peer.role);
    u64(CHORUS_PEER_A_DIRTY_BYTES, peer.dirty_bytes);
    u64(CHORUS_PEER_A_SYNC_TOTAL_BYTES, peer.sync_total_bytes);
    u64(CHORUS_PEER_A_SYNC_DONE_BYTES, peer.sync_done_bytes);
    u64(CHORUS_PEER_A_SYNC_RATE, peer.sync_rate);
    u64(CHORUS_PEER_A_WRITES_SENT, peer.writes_sent);
    u64(CHORUS_PEER_A_BYTES_SENT, peer.bytes_sent);
    u32(CHORUS_PEER_A_HELD, peer.held);
    u32(CHORUS_PEER_A_AL_WAITING, peer.al_waiting);
    u64(CHORUS_PEER_A_RECONNECTS, peer.reconnects);
    u64(CHORUS_PEER_A_RESYNCED_BYTES, peer.resynced_bytes);
    u64(CHORUS_PEER_A_VERIFY_DONE_BYTES, peer.verify_done_bytes);
    u64(CHORUS_PEER_A_VERIFY_MISMATCHES, peer.verify_mismatches);
    flag(CHORUS_PEER_A_VERIFY_RUNNING, peer.verify_running);
    if (a[CHORUS_PEER_A_LAST_ERROR]) {
        std::string text =
            GetText(a[CHORUS_PEER_A_LAST_ERROR], PeerAttrName(CHORUS_PEER_A_LAST_ERROR));
        if (!text.empty())
            peer.last_error = text;
    }
    u32(CHORUS_PEER_A_ACTIVE_TRANSPORT, peer.active_transport);
    // CHORUS_PEER_A_PATH is repeated, one per transport: SplitAttributes
    // keeps only the last, so collect them all in order.
    ForEachAttribute(nest, "CHORUS_A_PEER", [&](size_t type, Payload p) {
        if (type == CHORUS_PEER_A_PATH)
            peer.paths.push_back(ParsePath(p));
    });
    return peer;
}

// CHORUS_A_PEERS holds one CHORUS_A_PEER per peer. Any non-empty entry is
// taken as a peer whatever its type, so that a list numbered by index parses
// too; empty ones (padding) are skipped.
std::vector<PeerInfo> ParsePeers(Payload nest) {
    std::vector<PeerInfo> peers;
    ForEachAttribute(nest, "CHORUS_A_PEERS", [&](size_t, Payload entry) {
        if (!entry.empty())
            peers.push_back(ParsePeer(entry));
    });
    return peers;
}

LatencyHistogram ParseLatency(Payload nest, const char* where) {
    LatencyHistogram h;
    ForEachAttribute(nest, where, [&](size_t type, Payload p) {
        std::optional<Payload> value = p;
        if (type == CHORUS_LAT_A_SUM_NS)
            h.sum_ns = GetScalar<uint64_t>(value, std::string(where) + " CHORUS_LAT_A_SUM_NS");
        else if (type == CHORUS_LAT_A_BUCKET)
            h.buckets.push_back(
                GetScalar<uint64_t>(value, std::string(where) + " CHORUS_LAT_A_BUCKET"));
    });
    // The bounds are the index's: another number of buckets would be misread.
    if (h.buckets.size() != CHORUS_LAT_BUCKETS)
        throw Error(std::string(where) + " has " + std::to_string(h.buckets.size()) +
                    " buckets, expected " + std::to_string(CHORUS_LAT_BUCKETS));
    return h;
}

VolumeStats ParseStats(Payload nest) {
    std::array<std::optional<Payload>, CHORUS_STAT_MAX + 1> a;
    SplitAttributes(nest, a, "CHORUS_A_STATS");
    VolumeStats s;
    auto get = [&](int type, uint64_t& field) {
        if (a[type])
            field = GetScalar<uint64_t>(a[type], "stat counter " + std::to_string(type));
    };
    get(CHORUS_STAT_READS, s.reads);
    get(CHORUS_STAT_READ_BYTES, s.read_bytes);
    get(CHORUS_STAT_WRITES, s.writes);
    get(CHORUS_STAT_WRITE_BYTES, s.write_bytes);
    get(CHORUS_STAT_FLUSHES, s.flushes);
    get(CHORUS_STAT_FUA_WRITES, s.fua_writes);
    get(CHORUS_STAT_DISCARDS, s.discards);
    get(CHORUS_STAT_WRITE_ZEROES, s.write_zeroes);
    get(CHORUS_STAT_ERRORS, s.errors);
    get(CHORUS_STAT_STALE_EPOCH, s.stale_epoch);
    get(CHORUS_STAT_FORWARDED, s.forwarded);
    get(CHORUS_STAT_FORWARD_RESENT, s.forward_resent);
    get(CHORUS_STAT_FORWARD_EXPIRED, s.forward_expired);
    get(CHORUS_STAT_FORWARD_SERVED, s.forward_served);
    get(CHORUS_STAT_DEGRADED_READS, s.degraded_reads);
    get(CHORUS_STAT_PAYLOAD_CRC_CHECKED, s.payload_crc_checked);
    get(CHORUS_STAT_PAYLOAD_CRC_ERRORS, s.payload_crc_errors);
    if (a[CHORUS_STAT_READ_LATENCY])
        s.read_latency = ParseLatency(*a[CHORUS_STAT_READ_LATENCY], "CHORUS_STAT_READ_LATENCY");
    if (a[CHORUS_STAT_WRITE_LATENCY])
        s.write_latency = ParseLatency(*a[CHORUS_STAT_WRITE_LATENCY], "CHORUS_STAT_WRITE_LATENCY");
    return s;
}

// Returns the message's payload after checking the netlink header.
Payload CheckNetlinkHeader(std::span<const uint8_t> msg, nlmsghdr& hdr) {
    if (msg.size() < NLMSG_HDRLEN)
        throw Error("truncated netlink message (" + std::to_string(msg.size()) + " bytes)");
    std::memcpy(&hdr, msg.data(), sizeof(hdr));
    if (hdr.nlmsg_len < NLMSG_HDRLEN || hdr.nlmsg_len > msg.size())
        throw Error("truncated netlink message (header says " + std::to_string(hdr.nlmsg_len) +
                    " bytes, have " + std::to_string(msg.size()) + ")");
    return msg.subspan(NLMSG_HDRLEN, hdr.nlmsg_len - NLMSG_HDRLEN);
}

}  // namespace

double LatencyHistogram::BoundSeconds(size_t i) {
    if (i + 1 >= CHORUS_LAT_BUCKETS)
        return std::numeric_limits<double>::infinity();
    return static_cast<double>(uint64_t{CHORUS_LAT_FIRST_US} << i) / 1e6;
}

std::string AttrName(int type) {
    if (type >= 0 && static_cast<size_t>(type) < kAttrNames.size() && kAttrNames[type] != nullptr)
        return kAttrNames[type];
    return "attribute " + std::to_string(type);
}

std::string VolumeStateName(uint32_t state) {
    switch (state) {
        case CHORUS_VOLUME_STATE_ONLINE:
            return "online";
        case CHORUS_VOLUME_STATE_FAILED:
            return "failed";
        default:
            return "unknown(" + std::to_string(state) + ")";
    }
}

std::string EventName(uint32_t event) {
    static constexpr std::array<const char*, __CHORUS_EVENT_MAX> kNames = {
        "unspec",     "created",      "destroyed",     "state",       "role",
        "peer-state", "writeset",     "resync",        "verify",      "stale-epoch",
        "peer-added", "peer-removed", "lease-expired", "auth-failed",
    };
    return EnumName(kNames, event);
}

std::string RoleName(uint32_t role) {
    static constexpr std::array<const char*, __CHORUS_ROLE_MAX> kNames = {"unspec", "owner",
                                                                          "replica"};
    return EnumName(kNames, role);
}

std::string TransportName(uint32_t transport) {
    static constexpr std::array<const char*, __CHORUS_TRANSPORT_MAX> kNames = {"unspec", "tcp",
                                                                               "rdma", "rdma+tcp"};
    return EnumName(kNames, transport);
}

uint32_t ParseTransport(std::string_view name) {
    for (uint32_t t = 1; t < __CHORUS_TRANSPORT_MAX; t++)
        if (name == TransportName(t))
            return t;
    throw Error("transport '" + std::string(name) + "' is not tcp, rdma or rdma+tcp", EINVAL);
}

std::string ConnStateName(uint32_t state) {
    static constexpr std::array<const char*, __CHORUS_CONN_MAX> kNames = {
        "unspec", "disconnected", "connecting", "connected", "unreachable"};
    return EnumName(kNames, state);
}

std::string ReplStateName(uint32_t state) {
    static constexpr std::array<const char*, __CHORUS_REPL_MAX> kNames = {
        "unspec", "up-to-date", "out-of-date", "syncing", "diskless"};
    return EnumName(kNames, state);
}

std::string InitialSyncName(uint32_t initial_sync) {
    static constexpr std::array<const char*, __CHORUS_INITIAL_SYNC_MAX> kNames = {"unspec", "full",
                                                                                  "none"};
    return EnumName(kNames, initial_sync);
}

std::string PeerAttrName(int type) {
    if (type >= 0 && static_cast<size_t>(type) < kPeerAttrNames.size() &&
        kPeerAttrNames[type] != nullptr)
        return kPeerAttrNames[type];
    return "peer attribute " + std::to_string(type);
}

std::string PathAttrName(int type) {
    if (type >= 0 && static_cast<size_t>(type) < kPathAttrNames.size() &&
        kPathAttrNames[type] != nullptr)
        return kPathAttrNames[type];
    return "path attribute " + std::to_string(type);
}

std::string CommandName(int cmd) {
    if (cmd > 0 && static_cast<size_t>(cmd) < kCommandNames.size() && kCommandNames[cmd] != nullptr)
        return kCommandNames[cmd];
    return "command " + std::to_string(cmd);
}

NlMsgPtr BuildVolumeCreate(int family, const VolumeCreateRequest& req) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_VOLUME_CREATE, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, req.name);
    if (req.diskless)
        Check(nla_put_flag(msg.get(), CHORUS_A_DISKLESS), CHORUS_A_DISKLESS);
    else
        PutString(msg.get(), CHORUS_A_BACKING_PATH, req.backing_path);
    if (req.epoch)
        Check(nla_put_u64(msg.get(), CHORUS_A_EPOCH, *req.epoch), CHORUS_A_EPOCH);
    if (req.size_bytes)
        Check(nla_put_u64(msg.get(), CHORUS_A_SIZE_BYTES, *req.size_bytes), CHORUS_A_SIZE_BYTES);
    if (req.block_size)
        Check(nla_put_u32(msg.get(), CHORUS_A_BLOCK_SIZE, *req.block_size), CHORUS_A_BLOCK_SIZE);
    if (req.uuid)
        Check(nla_put(msg.get(), CHORUS_A_UUID, CHORUS_UUID_LEN, req.uuid->data()), CHORUS_A_UUID);
    if (req.node_id)
        PutU32(msg.get(), CHORUS_A_NODE_ID, *req.node_id);
    return msg;
}

NlMsgPtr BuildVolumeDestroy(int family, std::string_view name) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_VOLUME_DESTROY, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, name);
    return msg;
}

NlMsgPtr BuildDiskAttach(int family, std::string_view name, std::string_view backing_path) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_DISK_ATTACH, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, name);
    PutString(msg.get(), CHORUS_A_BACKING_PATH, backing_path);
    return msg;
}

NlMsgPtr BuildVolumeGet(int family, std::string_view name) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_VOLUME_GET, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, name);
    return msg;
}

NlMsgPtr BuildVolumeDump(int family) {
    return NewGenlMessage(family, CHORUS_CMD_VOLUME_GET, NLM_F_DUMP);
}

NlMsgPtr BuildListen(int family, const ListenRequest& req) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_LISTEN, 0);
    PutString(msg.get(), CHORUS_A_ADDRESS, req.address);
    Check(nla_put_u16(msg.get(), CHORUS_A_PORT, req.port), CHORUS_A_PORT);
    return msg;
}

NlMsgPtr BuildUnlisten(int family) {
    return NewGenlMessage(family, CHORUS_CMD_UNLISTEN, 0);
}

NlMsgPtr BuildPeerAdd(int family, const PeerAddRequest& req) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_PEER_ADD, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, req.volume);
    PutU32(msg.get(), CHORUS_A_NODE_ID, req.node_id);
    PutString(msg.get(), CHORUS_A_ADDRESS, req.address);
    Check(nla_put_u16(msg.get(), CHORUS_A_PORT, req.port), CHORUS_A_PORT);
    PutU32(msg.get(), CHORUS_A_TRANSPORT, req.transport);
    if (req.nr_conns)
        PutU32(msg.get(), CHORUS_A_NR_CONNS, *req.nr_conns);
    if (req.initial_sync)
        PutU32(msg.get(), CHORUS_A_INITIAL_SYNC, *req.initial_sync);
    if (req.diskless)
        Check(nla_put_flag(msg.get(), CHORUS_A_DISKLESS), CHORUS_A_DISKLESS);
    return msg;
}

NlMsgPtr BuildPeerCommand(int family, uint8_t cmd, std::string_view volume, uint32_t node_id) {
    switch (cmd) {
        case CHORUS_CMD_PEER_DEL:
        case CHORUS_CMD_PEER_CONNECT:
        case CHORUS_CMD_PEER_DISCONNECT:
        case CHORUS_CMD_WRITESET_REMOVE:
        case CHORUS_CMD_VERIFY_START:
            break;
        default:
            throw Error("command " + CommandName(cmd) + " is not a peer command", EINVAL);
    }
    NlMsgPtr msg = NewGenlMessage(family, cmd, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, volume);
    PutU32(msg.get(), CHORUS_A_NODE_ID, node_id);
    return msg;
}

NlMsgPtr BuildSetRole(int family, const SetRoleRequest& req) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_SET_ROLE, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, req.volume);
    PutU32(msg.get(), CHORUS_A_ROLE, req.role);
    if (req.epoch)
        PutU64(msg.get(), CHORUS_A_EPOCH, *req.epoch);
    return msg;
}

NlMsgPtr BuildVolumeSet(int family, const VolumeSetRequest& req) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_VOLUME_SET, 0);
    PutString(msg.get(), CHORUS_A_VOLUME_NAME, req.volume);
    if (req.request_timeout_ms)
        PutU32(msg.get(), CHORUS_A_REQUEST_TIMEOUT_MS, *req.request_timeout_ms);
    if (req.ping_interval_ms)
        PutU32(msg.get(), CHORUS_A_PING_INTERVAL_MS, *req.ping_interval_ms);
    if (req.ping_timeout_ms)
        PutU32(msg.get(), CHORUS_A_PING_TIMEOUT_MS, *req.ping_timeout_ms);
    if (req.resync_rate)
        PutU64(msg.get(), CHORUS_A_RESYNC_RATE, *req.resync_rate);
    if (req.auto_degrade)
        Check(nla_put_u8(msg.get(), CHORUS_A_AUTO_DEGRADE, *req.auto_degrade ? 1 : 0),
              CHORUS_A_AUTO_DEGRADE);
    if (req.payload_crc)
        Check(nla_put_u8(msg.get(), CHORUS_A_PAYLOAD_CRC, *req.payload_crc ? 1 : 0),
              CHORUS_A_PAYLOAD_CRC);
    if (req.disk_timeout_ms)
        PutU32(msg.get(), CHORUS_A_DISK_TIMEOUT_MS, *req.disk_timeout_ms);
    return msg;
}

// The local disk's timeout, and why and when it failed if it did.
void ParseDiskHealth(const std::array<std::optional<Payload>, CHORUS_A_MAX + 1>& a, VolumeInfo& v) {
    GetOptional<uint32_t>(a[CHORUS_A_DISK_TIMEOUT_MS], AttrName(CHORUS_A_DISK_TIMEOUT_MS),
                          v.disk_timeout_ms);
    if (a[CHORUS_A_DISK_ERROR])
        v.disk_error = GetText(a[CHORUS_A_DISK_ERROR], AttrName(CHORUS_A_DISK_ERROR));
    GetOptional<uint64_t>(a[CHORUS_A_DISK_FAILED_AT], AttrName(CHORUS_A_DISK_FAILED_AT),
                          v.disk_failed_at);
    GetOptional<uint8_t>(a[CHORUS_A_DISK_IN_WRITESET], AttrName(CHORUS_A_DISK_IN_WRITESET),
                         v.disk_in_writeset);
    GetOptional<uint32_t>(a[CHORUS_A_DISK_HELD], AttrName(CHORUS_A_DISK_HELD), v.disk_held);
}

VolumeInfo ParseVolumeMessage(std::span<const uint8_t> msg) {
    nlmsghdr nlh;
    Payload payload = CheckNetlinkHeader(msg, nlh);
    if (nlh.nlmsg_type == NLMSG_ERROR) {
        NetlinkAck ack = ParseAckMessage(msg);
        throw NetlinkError(ack.errnum, ack.extack);
    }
    if (nlh.nlmsg_type < NLMSG_MIN_TYPE)
        throw Error("unexpected netlink control message type " + std::to_string(nlh.nlmsg_type));
    if (payload.size() < GENL_HDRLEN)
        throw Error("truncated generic netlink header");
    genlmsghdr ghdr;
    std::memcpy(&ghdr, payload.data(), sizeof(ghdr));
    if (ghdr.cmd != CHORUS_CMD_VOLUME_CREATE && ghdr.cmd != CHORUS_CMD_VOLUME_GET &&
        ghdr.cmd != CHORUS_CMD_EVENT && ghdr.cmd != CHORUS_CMD_DISK_ATTACH)
        throw Error("unexpected chorus command " + std::to_string(ghdr.cmd) +
                    " in a volume message");

    std::array<std::optional<Payload>, CHORUS_A_MAX + 1> a;
    SplitAttributes(payload.subspan(GENL_HDRLEN), a, "the volume message");

    // Everything a volume always has; open count and stats are optional so
    // that events about a volume being torn down need not carry them.
    static constexpr int kRequired[] = {
        CHORUS_A_VOLUME_NAME, CHORUS_A_SIZE_BYTES, CHORUS_A_BLOCK_SIZE, CHORUS_A_UUID,
        CHORUS_A_MINOR,       CHORUS_A_DISK_NAME,  CHORUS_A_STATE,
    };
    for (int type : kRequired)
        if (!a[type])
            throw Error("missing " + AttrName(type) + " in the volume message");
    if (ghdr.cmd == CHORUS_CMD_EVENT && !a[CHORUS_A_EVENT])
        throw Error("missing " + AttrName(CHORUS_A_EVENT) + " in the event message");

    VolumeInfo v;
    v.name =
        GetString(a[CHORUS_A_VOLUME_NAME], AttrName(CHORUS_A_VOLUME_NAME), CHORUS_VOLUME_NAME_MAX);
    // A diskless access point has no backing device; every other volume has one.
    v.diskless = a[CHORUS_A_DISKLESS].has_value();
    if (!v.diskless && !a[CHORUS_A_BACKING_PATH])
        throw Error("missing " + AttrName(CHORUS_A_BACKING_PATH) + " in the volume message");
    if (!v.diskless)
        v.backing_path = GetString(a[CHORUS_A_BACKING_PATH], AttrName(CHORUS_A_BACKING_PATH),
                                   CHORUS_BACKING_PATH_MAX);
    v.size_bytes = GetScalar<uint64_t>(a[CHORUS_A_SIZE_BYTES], AttrName(CHORUS_A_SIZE_BYTES));
    v.block_size = GetScalar<uint32_t>(a[CHORUS_A_BLOCK_SIZE], AttrName(CHORUS_A_BLOCK_SIZE));
    v.uuid = GetScalar<Uuid>(a[CHORUS_A_UUID], AttrName(CHORUS_A_UUID));
    v.minor = GetScalar<uint32_t>(a[CHORUS_A_MINOR], AttrName(CHORUS_A_MINOR));
    v.disk_name =
        GetString(a[CHORUS_A_DISK_NAME], AttrName(CHORUS_A_DISK_NAME), CHORUS_DISK_NAME_MAX);
    v.state = GetScalar<uint32_t>(a[CHORUS_A_STATE], AttrName(CHORUS_A_STATE));
    if (a[CHORUS_A_OPEN_COUNT])
        v.open_count = GetScalar<uint32_t>(a[CHORUS_A_OPEN_COUNT], AttrName(CHORUS_A_OPEN_COUNT));
    if (a[CHORUS_A_STATS])
        v.stats = ParseStats(*a[CHORUS_A_STATS]);
    if (a[CHORUS_A_EVENT])
        v.event = GetScalar<uint32_t>(a[CHORUS_A_EVENT], AttrName(CHORUS_A_EVENT));
    GetOptional<uint32_t>(a[CHORUS_A_HELD_IO], AttrName(CHORUS_A_HELD_IO), v.held_io);

    // Replication: all optional, so that an older module still parses.
    auto u32 = [&](int type, std::optional<uint32_t>& field) {
        GetOptional<uint32_t>(a[type], AttrName(type), field);
    };
    u32(CHORUS_A_NODE_ID, v.node_id);
    u32(CHORUS_A_ROLE, v.role);
    GetOptional<uint64_t>(a[CHORUS_A_EPOCH], AttrName(CHORUS_A_EPOCH), v.epoch);
    u32(CHORUS_A_REQUEST_TIMEOUT_MS, v.request_timeout_ms);
    u32(CHORUS_A_PING_INTERVAL_MS, v.ping_interval_ms);
    u32(CHORUS_A_PING_TIMEOUT_MS, v.ping_timeout_ms);
    GetOptional<uint64_t>(a[CHORUS_A_RESYNC_RATE], AttrName(CHORUS_A_RESYNC_RATE), v.resync_rate);
    GetOptional<uint8_t>(a[CHORUS_A_AUTO_DEGRADE], AttrName(CHORUS_A_AUTO_DEGRADE), v.auto_degrade);
    GetOptional<uint8_t>(a[CHORUS_A_PAYLOAD_CRC], AttrName(CHORUS_A_PAYLOAD_CRC), v.payload_crc);
    ParseDiskHealth(a, v);
    if (a[CHORUS_A_PEERS])
        v.peers = ParsePeers(*a[CHORUS_A_PEERS]);
    if (a[CHORUS_A_PEER])
        v.peer = ParsePeer(*a[CHORUS_A_PEER]);
    if (a[CHORUS_A_REASON]) {
        std::string text = GetText(a[CHORUS_A_REASON], AttrName(CHORUS_A_REASON));
        if (!text.empty())
            v.reason = text;
    }
    return v;
}

namespace {

// The attributes of the reply to a GET command that answers with one
// message (LEASE_GET, AUTH_GET), each of required present; an error
// message becomes NetlinkError. what names the message ("lease"), article
// goes before it ("a").
using Attributes = std::array<std::optional<Payload>, CHORUS_A_MAX + 1>;
Attributes ParseGetReply(std::span<const uint8_t> msg, uint8_t cmd, const std::string& what,
                         const std::string& article, std::span<const int> required) {
    nlmsghdr nlh;
    Payload payload = CheckNetlinkHeader(msg, nlh);
    if (nlh.nlmsg_type == NLMSG_ERROR) {
        NetlinkAck ack = ParseAckMessage(msg);
        throw NetlinkError(ack.errnum, ack.extack);
    }
    if (nlh.nlmsg_type < NLMSG_MIN_TYPE || payload.size() < GENL_HDRLEN)
        throw Error("malformed " + what + " message");
    genlmsghdr ghdr;
    std::memcpy(&ghdr, payload.data(), sizeof(ghdr));
    if (ghdr.cmd != cmd)
        throw Error("unexpected chorus command " + std::to_string(ghdr.cmd) + " in " + article +
                    " " + what + " message");
    Attributes a;
    const std::string where = "the " + what + " message";
    SplitAttributes(payload.subspan(GENL_HDRLEN), a, where.c_str());
    for (int type : required)
        if (!a[type])
            throw Error("missing " + AttrName(type) + " in the " + what + " message");
    return a;
}

}  // namespace

NlMsgPtr BuildLeaseSet(int family, uint64_t deadline_ns) {
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_LEASE_SET, 0);
    PutU64(msg.get(), CHORUS_A_LEASE_DEADLINE_NS, deadline_ns);
    return msg;
}

NlMsgPtr BuildLeaseGet(int family) {
    return NewGenlMessage(family, CHORUS_CMD_LEASE_GET, 0);
}

LeaseInfo ParseLeaseMessage(std::span<const uint8_t> msg) {
    static constexpr int kRequired[] = {CHORUS_A_LEASE_STATE, CHORUS_A_LEASE_DEADLINE_NS,
                                        CHORUS_A_LEASE_NOW_NS, CHORUS_A_LEASE_EXPIRIES};
    const Attributes a = ParseGetReply(msg, CHORUS_CMD_LEASE_GET, "lease", "a", kRequired);
    LeaseInfo lease;
    lease.state = GetScalar<uint32_t>(a[CHORUS_A_LEASE_STATE], AttrName(CHORUS_A_LEASE_STATE));
    lease.deadline_ns =
        GetScalar<uint64_t>(a[CHORUS_A_LEASE_DEADLINE_NS], AttrName(CHORUS_A_LEASE_DEADLINE_NS));
    lease.now_ns = GetScalar<uint64_t>(a[CHORUS_A_LEASE_NOW_NS], AttrName(CHORUS_A_LEASE_NOW_NS));
    lease.expiries =
        GetScalar<uint64_t>(a[CHORUS_A_LEASE_EXPIRIES], AttrName(CHORUS_A_LEASE_EXPIRIES));
    return lease;
}

NlMsgPtr BuildAuthSet(int family, const AuthSetRequest& req) {
    int given = !req.secret.empty() + req.drop_previous + req.clear;
    if (given != 1)
        throw Error(
            "an AUTH_SET request sets a secret, drops the previous one or clears them: "
            "exactly one",
            EINVAL);
    if (req.keep_previous_s && req.secret.empty())
        throw Error("keeping the previous secret goes with a new one", EINVAL);
    NlMsgPtr msg = NewGenlMessage(family, CHORUS_CMD_AUTH_SET, 0);
    if (!req.secret.empty())
        Check(nla_put(msg.get(), CHORUS_A_AUTH_SECRET, static_cast<int>(req.secret.size()),
                      req.secret.data()),
              CHORUS_A_AUTH_SECRET);
    if (req.keep_previous_s)
        PutU32(msg.get(), CHORUS_A_AUTH_KEEP_PREVIOUS_S, req.keep_previous_s);
    if (req.drop_previous)
        Check(nla_put_flag(msg.get(), CHORUS_A_AUTH_DROP_PREVIOUS), CHORUS_A_AUTH_DROP_PREVIOUS);
    if (req.clear)
        Check(nla_put_flag(msg.get(), CHORUS_A_AUTH_CLEAR), CHORUS_A_AUTH_CLEAR);
    return msg;
}

NlMsgPtr BuildAuthGet(int family) {
    return NewGenlMessage(family, CHORUS_CMD_AUTH_GET, 0);
}

AuthInfo ParseAuthMessage(std::span<const uint8_t> msg) {
    static constexpr int kRequired[] = {CHORUS_A_AUTH_KEY_ID, CHORUS_A_AUTH_PREV_KEY_ID,
                                        CHORUS_A_AUTH_PREV_REMAINING_S, CHORUS_A_AUTH_FAILURES};
    const Attributes a = ParseGetReply(msg, CHORUS_CMD_AUTH_GET, "auth", "an", kRequired);
    AuthInfo auth;
    auth.key_id = GetScalar<uint64_t>(a[CHORUS_A_AUTH_KEY_ID], AttrName(CHORUS_A_AUTH_KEY_ID));
    auth.prev_key_id =
        GetScalar<uint64_t>(a[CHORUS_A_AUTH_PREV_KEY_ID], AttrName(CHORUS_A_AUTH_PREV_KEY_ID));
    auth.prev_remaining_s = GetScalar<uint32_t>(a[CHORUS_A_AUTH_PREV_REMAINING_S],
                                                AttrName(CHORUS_A_AUTH_PREV_REMAINING_S));
    auth.failures =
        GetScalar<uint64_t>(a[CHORUS_A_AUTH_FAILURES], AttrName(CHORUS_A_AUTH_FAILURES));
    return auth;
}

std::string LeaseStateName(uint32_t state) {
    static constexpr std::array<const char*, __CHORUS_LEASE_MAX> kNames = {"unspec", "disarmed",
                                                                           "valid", "expired"};
    return EnumName(kNames, state);
}

NetlinkAck ParseAckMessage(std::span<const uint8_t> msg) {
    nlmsghdr nlh;
    Payload payload = CheckNetlinkHeader(msg, nlh);
    if (nlh.nlmsg_type != NLMSG_ERROR)
        throw Error("not a netlink error message (type " + std::to_string(nlh.nlmsg_type) + ")");
    if (payload.size() < sizeof(nlmsgerr))
        throw Error("truncated netlink error message");
    nlmsgerr err;
    std::memcpy(&err, payload.data(), sizeof(err));
    NetlinkAck ack;
    ack.errnum = -err.error;
    if (!(nlh.nlmsg_flags & NLM_F_ACK_TLVS))
        return ack;

    // The TLVs follow the echoed request: only its header when the ack was
    // capped (NETLINK_CAP_ACK), the whole request otherwise.
    size_t echoed = sizeof(nlmsgerr);
    if (!(nlh.nlmsg_flags & NLM_F_CAPPED) && err.msg.nlmsg_len > NLMSG_HDRLEN)
        echoed += err.msg.nlmsg_len - NLMSG_HDRLEN;
    echoed = NLMSG_ALIGN(echoed);
    if (echoed > payload.size())
        throw Error("truncated netlink error message (echoed request)");

    std::array<std::optional<Payload>, NLMSGERR_ATTR_MAX + 1> a;
    SplitAttributes(payload.subspan(echoed), a, "the extended ack");
    if (a[NLMSGERR_ATTR_MSG] && !a[NLMSGERR_ATTR_MSG]->empty()) {
        const Payload& p = *a[NLMSGERR_ATTR_MSG];
        // Up to the first NUL; tolerate a missing terminator.
        size_t n = 0;
        while (n < p.size() && p[n] != 0)
            n++;
        ack.extack.assign(reinterpret_cast<const char*>(p.data()), n);
    } else if (a[NLMSGERR_ATTR_MISS_TYPE] && a[NLMSGERR_ATTR_MISS_TYPE]->size() == 4) {
        uint32_t type;
        std::memcpy(&type, a[NLMSGERR_ATTR_MISS_TYPE]->data(), sizeof(type));
        ack.extack = "missing required attribute " + AttrName(static_cast<int>(type));
    }
    return ack;
}

}  // namespace chorus
