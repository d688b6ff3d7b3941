// Building and parsing chorus generic netlink messages, apart from any
// socket so that both directions can be unit-tested with plain buffers.
#ifndef CHORUS_LIB_GENL_CODEC_H_
#define CHORUS_LIB_GENL_CODEC_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <linux/chorus.h>
#include <netlink/msg.h>

#include "lib/uuid.h"

namespace chorus {

struct NlMsgDeleter {
    void operator()(nl_msg* msg) const { nlmsg_free(msg); }
};
// An owned libnl message.
using NlMsgPtr = std::unique_ptr<nl_msg, NlMsgDeleter>;

// A latency histogram of the kernel (CHORUS_STAT_READ_LATENCY or
// _WRITE_LATENCY, enum chorus_lat_attr). buckets[i] counts the requests that
// took at most CHORUS_LAT_FIRST_US << i microseconds and more than
// buckets[i - 1] allows; the last has no upper bound. Not cumulative.
struct LatencyHistogram {
    uint64_t sum_ns = 0;
    std::vector<uint64_t> buckets;  // CHORUS_LAT_BUCKETS of them

    // The upper bound of bucket i in seconds; infinity for the last.
    static double BoundSeconds(size_t i);
};

// Per-volume counters (CHORUS_A_STATS). Counters the kernel does not send
// stay 0, so an older module with fewer counters still parses.
struct VolumeStats {
    uint64_t reads = 0;
    uint64_t read_bytes = 0;
    uint64_t writes = 0;
    uint64_t write_bytes = 0;
    uint64_t flushes = 0;
    uint64_t fua_writes = 0;
    uint64_t discards = 0;
    uint64_t write_zeroes = 0;
    uint64_t errors = 0;
    uint64_t stale_epoch = 0;
    uint64_t forwarded = 0;  // forwarding (Documentation/forwarding.md)
    uint64_t forward_resent = 0;
    uint64_t forward_expired = 0;
    uint64_t forward_served = 0;
    uint64_t degraded_reads = 0;       // owner's reads a replica served (its disk failed)
    uint64_t payload_crc_checked = 0;  // received payloads whose CRC-32C matched
    uint64_t payload_crc_errors = 0;   // ... and did not (each closed its session)
    // Absent when the module predates the histograms.
    std::optional<LatencyHistogram> read_latency;
    std::optional<LatencyHistogram> write_latency;
};

// One path of a peer (CHORUS_PEER_A_PATH, enum chorus_path_attr): a transport
// the peer may use and what happened on it. Every field is optional.
struct PathInfo {
    std::optional<uint32_t> transport;  // enum chorus_transport: tcp or rdma
    std::optional<bool> active;         // the current session uses this path
    std::optional<uint64_t> sessions;   // sessions established on it
    std::optional<uint64_t> failures;   // dial attempts on it that failed
    std::optional<uint64_t> msgs_sent;
    std::optional<uint64_t> bytes_sent;  // data bytes
    std::optional<std::string> last_error;
};

// One peer of a volume (CHORUS_A_PEER, enum chorus_peer_attr), as the kernel
// reports it in a volume's CHORUS_A_PEERS or in a peer event. Every field is
// optional: an older module, or an event about a peer being torn down, may
// leave any of them out.
struct PeerInfo {
    std::optional<uint32_t> node_id;
    std::optional<std::string> address;
    std::optional<uint16_t> port;
    std::optional<uint32_t> transport;  // enum chorus_transport
    std::optional<uint32_t> nr_conns;
    std::optional<uint32_t> conn_state;  // enum chorus_conn_state
    std::optional<uint32_t> repl_state;  // enum chorus_repl_state
    std::optional<bool> in_writeset;
    // The peer said in this session that its disk failed: its part of
    // every write is held until it leaves the write set.
    std::optional<bool> disk_failed;
    std::optional<uint32_t> role;  // enum chorus_role, from the peer's handshake
    std::optional<uint64_t> dirty_bytes;
    std::optional<uint64_t> sync_total_bytes;
    std::optional<uint64_t> sync_done_bytes;
    std::optional<uint64_t> sync_rate;  // bytes per second
    std::optional<uint64_t> writes_sent;
    std::optional<uint64_t> bytes_sent;
    std::optional<uint32_t> held;  // writes waiting for this peer
    // Of held: writes not sent yet, waiting for this member to store the
    // activity log (a new extent).
    std::optional<uint32_t> al_waiting;
    std::optional<uint64_t> reconnects;
    std::optional<uint64_t> resynced_bytes;
    std::optional<uint64_t> verify_done_bytes;
    std::optional<uint64_t> verify_mismatches;
    std::optional<bool> verify_running;
    std::optional<std::string> last_error;
    // enum chorus_transport of the session carrying the traffic now;
    // CHORUS_TRANSPORT_UNSPEC when there is no session.
    std::optional<uint32_t> active_transport;
    std::vector<PathInfo> paths;  // CHORUS_PEER_A_PATH, in the kernel's order
};

// A volume as the kernel describes it in a VOLUME_GET/CREATE reply or an
// EVENT notification.
struct VolumeInfo {
    std::string name;
    std::string backing_path;  // empty when diskless
    bool diskless = false;     // an access point without a local replica
    uint64_t size_bytes = 0;
    uint32_t block_size = 0;
    Uuid uuid{};
    uint32_t minor = 0;
    std::string disk_name;  // "chorus0"; the device node is /dev/<disk_name>
    uint32_t state = 0;     // enum chorus_volume_state
    uint32_t open_count = 0;
    std::optional<VolumeStats> stats;
    uint32_t event = 0;  // enum chorus_event, CHORUS_CMD_EVENT only
    // Requests held because the node's lease deadline passed.
    std::optional<uint32_t> held_io;

    // Replication; absent when the module predates it.
    std::optional<uint32_t> node_id;
    std::optional<uint32_t> role;   // enum chorus_role
    std::optional<uint64_t> epoch;  // the highest epoch accepted
    std::optional<uint32_t> request_timeout_ms;
    std::optional<uint32_t> ping_interval_ms;
    std::optional<uint32_t> ping_timeout_ms;
    std::optional<uint64_t> resync_rate;  // bytes per second, 0 for no limit
    std::optional<bool> auto_degrade;
    std::optional<bool> payload_crc;  // this node sends payload CRC-32Cs
    // The local disk: how long it may complete nothing (0: no limit), and
    // once it failed (state CHORUS_VOLUME_STATE_FAILED) why and when
    // (seconds since the epoch).
    std::optional<uint32_t> disk_timeout_ms;
    std::optional<std::string> disk_error;
    std::optional<uint64_t> disk_failed_at;
    // Whether the local disk is in this node's write set: false once a failed
    // disk left it (WRITESET_REMOVE with the own id). Until then an owner holds
    // every write whose local part failed; disk_held counts them. Absent from
    // a module that predates the hold.
    std::optional<bool> disk_in_writeset;
    std::optional<uint32_t> disk_held;
    std::vector<PeerInfo> peers;  // CHORUS_A_PEERS, in the kernel's order

    // Peer events only: the peer concerned and why.
    std::optional<PeerInfo> peer;
    std::optional<std::string> reason;
};

struct VolumeCreateRequest {
    std::string name;
    std::string backing_path;
    std::optional<uint64_t> size_bytes;  // default: the backing device's size
    std::optional<uint32_t> block_size;  // default: the backing device's block size
    std::optional<Uuid> uuid;            // default: random, chosen by the kernel
    std::optional<uint32_t> node_id;     // default: the one in the metadata
    // A diskless access point: no backing_path; size, uuid and node_id
    // required; epoch is the highest the node accepted so far.
    bool diskless = false;
    std::optional<uint64_t> epoch;
};

// CHORUS_CMD_LISTEN.
struct ListenRequest {
    std::string address;  // IPv4 or IPv6 literal
    uint16_t port = CHORUS_DEFAULT_PORT;
};

// CHORUS_CMD_PEER_ADD.
struct PeerAddRequest {
    std::string volume;
    uint32_t node_id = 0;
    std::string address;
    uint16_t port = CHORUS_DEFAULT_PORT;
    uint32_t transport = CHORUS_TRANSPORT_TCP;  // enum chorus_transport
    std::optional<uint32_t> nr_conns;           // default: the kernel's (2)
    std::optional<uint32_t> initial_sync;       // enum chorus_initial_sync; default: full
    bool diskless = false;                      // the peer is a diskless access point
};

// CHORUS_CMD_SET_ROLE.
struct SetRoleRequest {
    std::string volume;
    uint32_t role = 0;              // enum chorus_role
    std::optional<uint64_t> epoch;  // an owner needs one
};

// CHORUS_CMD_VOLUME_SET: only what is given is sent.
struct VolumeSetRequest {
    std::string volume;
    std::optional<uint32_t> request_timeout_ms;
    std::optional<uint32_t> ping_interval_ms;
    std::optional<uint32_t> ping_timeout_ms;
    std::optional<uint64_t> resync_rate;
    std::optional<bool> auto_degrade;
    std::optional<bool> payload_crc;
    std::optional<uint32_t> disk_timeout_ms;  // 0: no limit

    bool empty() const {
        return !request_timeout_ms && !ping_interval_ms && !ping_timeout_ms && !resync_rate &&
               !auto_degrade && !payload_crc && !disk_timeout_ms;
    }
};

// The node's lease deadline (CHORUS_CMD_LEASE_GET). Times are
// CLOCK_BOOTTIME nanoseconds.
struct LeaseInfo {
    uint32_t state = 0;        // enum chorus_lease_state
    uint64_t deadline_ns = 0;  // 0: disarmed
    uint64_t now_ns = 0;       // the kernel's clock when it answered
    uint64_t expiries = 0;     // deadlines that passed since the module was loaded
};

// CHORUS_CMD_AUTH_SET: exactly one of a new secret, drop_previous, clear.
struct AuthSetRequest {
    std::span<const uint8_t> secret;  // empty: not a new secret
    uint32_t keep_previous_s = 0;     // with a secret: keep the replaced one this long
    bool drop_previous = false;
    bool clear = false;
};

// The reply to CHORUS_CMD_AUTH_GET: ids only, never a secret.
struct AuthInfo {
    uint64_t key_id = 0;       // the current secret; 0: none (authentication off)
    uint64_t prev_key_id = 0;  // the previous one still accepted; 0: none
    uint32_t prev_remaining_s = 0;
    uint64_t failures = 0;  // connections refused since the module was loaded
};

// Request builders. family is the resolved generic netlink family id. The
// socket layer fills in port id, sequence number and NLM_F_ACK when sending.
NlMsgPtr BuildVolumeCreate(int family, const VolumeCreateRequest& req);
NlMsgPtr BuildVolumeDestroy(int family, std::string_view name);
NlMsgPtr BuildVolumeGet(int family, std::string_view name);
// CHORUS_CMD_DISK_ATTACH: a new backing device for a volume whose disk failed.
NlMsgPtr BuildDiskAttach(int family, std::string_view name, std::string_view backing_path);
NlMsgPtr BuildVolumeDump(int family);
NlMsgPtr BuildListen(int family, const ListenRequest& req);
NlMsgPtr BuildUnlisten(int family);
NlMsgPtr BuildPeerAdd(int family, const PeerAddRequest& req);
// CHORUS_CMD_PEER_DEL, _PEER_CONNECT, _PEER_DISCONNECT, _WRITESET_REMOVE and
// _VERIFY_START: a volume name and a peer's node id. Throws chorus::Error
// for any other command.
NlMsgPtr BuildPeerCommand(int family, uint8_t cmd, std::string_view volume, uint32_t node_id);
NlMsgPtr BuildSetRole(int family, const SetRoleRequest& req);
NlMsgPtr BuildVolumeSet(int family, const VolumeSetRequest& req);
// CHORUS_CMD_LEASE_SET; 0 disarms the lease.
NlMsgPtr BuildLeaseSet(int family, uint64_t deadline_ns);
NlMsgPtr BuildLeaseGet(int family);
// Throws chorus::Error for a request that is not exactly one thing.
NlMsgPtr BuildAuthSet(int family, const AuthSetRequest& req);
NlMsgPtr BuildAuthGet(int family);
// Parses the reply to CHORUS_CMD_AUTH_GET; throws like ParseVolumeMessage.
AuthInfo ParseAuthMessage(std::span<const uint8_t> msg);
// Parses the reply to CHORUS_CMD_LEASE_GET; throws like ParseVolumeMessage.
LeaseInfo ParseLeaseMessage(std::span<const uint8_t> msg);

// Parses one netlink message (starting with its nlmsghdr) carrying a volume:
// a CREATE/GET reply or an EVENT. Validates the message and attribute
// lengths and that every attribute a volume always has is present; unknown
// attributes are ignored (the ABI only ever appends). Throws chorus::Error
// describing what is wrong, or NetlinkError if the message is an error ack.
VolumeInfo ParseVolumeMessage(std::span<const uint8_t> msg);

// The contents of an NLMSG_ERROR message: errnum is the positive errno (0 for
// a plain ACK); extack is NLMSGERR_ATTR_MSG if the kernel sent one, else a
// description of NLMSGERR_ATTR_MISS_TYPE if present, else empty.
struct NetlinkAck {
    int errnum = 0;
    std::string extack;
};
// Throws chorus::Error if msg is not a well-formed NLMSG_ERROR message.
NetlinkAck ParseAckMessage(std::span<const uint8_t> msg);

// "CHORUS_A_SIZE_BYTES" for diagnostics; "attribute N" if unknown.
std::string AttrName(int type);
// "online", "failed", "unknown(N)".
std::string VolumeStateName(uint32_t state);
// "created", "destroyed", "state", "role", "peer-state", "writeset",
// "resync", "verify", "stale-epoch", "peer-added", "peer-removed",
// "lease-expired", "unknown(N)".
std::string EventName(uint32_t event);
// "disarmed", "valid", "expired", "unknown(N)".
std::string LeaseStateName(uint32_t state);
// "owner", "replica", "unknown(N)".
std::string RoleName(uint32_t role);
// "tcp", "rdma", "rdma+tcp", "unknown(N)".
std::string TransportName(uint32_t transport);
// The enum chorus_transport value TransportName gives this name; throws
// chorus::Error listing the names for anything else.
uint32_t ParseTransport(std::string_view name);
// "disconnected", "connecting", "connected", "unreachable", "unknown(N)".
std::string ConnStateName(uint32_t state);
// "up-to-date", "out-of-date", "syncing", "unknown(N)".
std::string ReplStateName(uint32_t state);
// "full", "none", "unknown(N)".
std::string InitialSyncName(uint32_t initial_sync);
// "CHORUS_PEER_A_NODE_ID"; "peer attribute N" if unknown.
std::string PeerAttrName(int type);
// "CHORUS_PATH_A_SESSIONS"; "path attribute N" if unknown.
std::string PathAttrName(int type);
// The CHORUS_CMD_* name of a command for messages: "PEER_ADD"; "command N".
std::string CommandName(int cmd);

}  // namespace chorus

#endif  // CHORUS_LIB_GENL_CODEC_H_
