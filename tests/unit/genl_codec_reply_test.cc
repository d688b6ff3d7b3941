// The generic netlink codec: replies with replication state (peers, paths,
// counters), the names of its enums, the lease and authentication commands.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <linux/chorus.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "genl_codec_test_util.h"
#include "lib/errors.h"
#include "lib/genl_client.h"
#include "lib/genl_codec.h"

namespace chorus {
namespace {

using namespace chorus::test;

// One peer nest as the kernel would fill it; full=false sends only some.
void PutPeer(nl_msg* m, int type, uint32_t node_id, bool full) {
    nlattr* nest = nla_nest_start(m, type);
    nla_put_u32(m, CHORUS_PEER_A_NODE_ID, node_id);
    nla_put_u32(m, CHORUS_PEER_A_CONN_STATE, CHORUS_CONN_CONNECTED);
    if (full) {
        nla_put_string(m, CHORUS_PEER_A_ADDRESS, "fd00::2");
        nla_put_u16(m, CHORUS_PEER_A_PORT, 7789);
        nla_put_u32(m, CHORUS_PEER_A_TRANSPORT, CHORUS_TRANSPORT_TCP);
        nla_put_u32(m, CHORUS_PEER_A_NR_CONNS, 2);
        nla_put_u32(m, CHORUS_PEER_A_REPL_STATE, CHORUS_REPL_SYNCING);
        nla_put_u8(m, CHORUS_PEER_A_IN_WRITESET, 1);
        nla_put_u32(m, CHORUS_PEER_A_ROLE, CHORUS_ROLE_REPLICA);
        nla_put_u64(m, CHORUS_PEER_A_DIRTY_BYTES, 3ull << 20);
        nla_put_u64(m, CHORUS_PEER_A_SYNC_TOTAL_BYTES, 4ull << 20);
        nla_put_u64(m, CHORUS_PEER_A_SYNC_DONE_BYTES, 1ull << 20);
        nla_put_u64(m, CHORUS_PEER_A_SYNC_RATE, 512 << 10);
        nla_put_u64(m, CHORUS_PEER_A_WRITES_SENT, 11);
        nla_put_u64(m, CHORUS_PEER_A_BYTES_SENT, 45056);
        nla_put_u32(m, CHORUS_PEER_A_HELD, 5);
        nla_put_u32(m, CHORUS_PEER_A_AL_WAITING, 2);
        nla_put_u64(m, CHORUS_PEER_A_RECONNECTS, 2);
        nla_put_u64(m, CHORUS_PEER_A_RESYNCED_BYTES, 1ull << 20);
        nla_put_u64(m, CHORUS_PEER_A_VERIFY_DONE_BYTES, 8192);
        nla_put_u64(m, CHORUS_PEER_A_VERIFY_MISMATCHES, 1);
        nla_put_u8(m, CHORUS_PEER_A_VERIFY_RUNNING, 1);
        nla_put_string(m, CHORUS_PEER_A_LAST_ERROR, "connection reset by peer");
        nla_put_u64(m, CHORUS_PEER_A_MAX + 1, 99);  // from a newer kernel
    }
    nla_nest_end(m, nest);
}

// A GET reply with every replication attribute and two peers.
NlMsgPtr MakeReplicatedReply(uint8_t cmd = CHORUS_CMD_VOLUME_GET, uint32_t event = 0) {
    ReplySpec spec;
    spec.cmd = cmd;
    spec.event = event;
    NlMsgPtr msg = MakeReply(spec);
    nl_msg* m = msg.get();
    nla_put_u32(m, CHORUS_A_NODE_ID, 1);
    nla_put_u32(m, CHORUS_A_ROLE, CHORUS_ROLE_OWNER);
    nla_put_u64(m, CHORUS_A_EPOCH, 7);
    nla_put_u32(m, CHORUS_A_REQUEST_TIMEOUT_MS, 10000);
    nla_put_u32(m, CHORUS_A_PING_INTERVAL_MS, 1000);
    nla_put_u32(m, CHORUS_A_PING_TIMEOUT_MS, 5000);
    nla_put_u64(m, CHORUS_A_RESYNC_RATE, 100ull << 20);
    nla_put_u8(m, CHORUS_A_AUTO_DEGRADE, 0);
    nla_put_u8(m, CHORUS_A_PAYLOAD_CRC, 1);
    nlattr* peers = nla_nest_start(m, CHORUS_A_PEERS);
    PutPeer(m, CHORUS_A_PEER, 2, true);
    PutPeer(m, CHORUS_A_PEER, 3, false);
    nla_nest_end(m, peers);
    return msg;
}

TEST(ParseVolume, ReplicationAttributes) {
    NlMsgPtr msg = MakeReplicatedReply();
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    EXPECT_EQ(v.node_id, 1u);
    EXPECT_EQ(v.role, static_cast<uint32_t>(CHORUS_ROLE_OWNER));
    EXPECT_EQ(v.epoch, 7u);
    EXPECT_EQ(v.request_timeout_ms, 10000u);
    EXPECT_EQ(v.ping_interval_ms, 1000u);
    EXPECT_EQ(v.ping_timeout_ms, 5000u);
    EXPECT_EQ(v.resync_rate, 100ull << 20);
    EXPECT_EQ(v.auto_degrade, false);
    EXPECT_EQ(v.payload_crc, true);
    EXPECT_FALSE(v.peer.has_value());
    EXPECT_FALSE(v.reason.has_value());
    ASSERT_EQ(v.peers.size(), 2u);

    const PeerInfo& p = v.peers[0];
    EXPECT_EQ(p.node_id, 2u);
    EXPECT_EQ(p.address, "fd00::2");
    EXPECT_EQ(p.port, 7789);
    EXPECT_EQ(p.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
    EXPECT_EQ(p.nr_conns, 2u);
    EXPECT_EQ(p.conn_state, static_cast<uint32_t>(CHORUS_CONN_CONNECTED));
    EXPECT_EQ(p.repl_state, static_cast<uint32_t>(CHORUS_REPL_SYNCING));
    EXPECT_EQ(p.in_writeset, true);
    EXPECT_EQ(p.role, static_cast<uint32_t>(CHORUS_ROLE_REPLICA));
    EXPECT_EQ(p.dirty_bytes, 3ull << 20);
    EXPECT_EQ(p.sync_total_bytes, 4ull << 20);
    EXPECT_EQ(p.sync_done_bytes, 1ull << 20);
    EXPECT_EQ(p.sync_rate, 512u << 10);
    EXPECT_EQ(p.writes_sent, 11u);
    EXPECT_EQ(p.bytes_sent, 45056u);
    EXPECT_EQ(p.held, 5u);
    EXPECT_EQ(p.al_waiting, 2u);
    EXPECT_EQ(p.reconnects, 2u);
    EXPECT_EQ(p.resynced_bytes, 1ull << 20);
    EXPECT_EQ(p.verify_done_bytes, 8192u);
    EXPECT_EQ(p.verify_mismatches, 1u);
    EXPECT_EQ(p.verify_running, true);
    EXPECT_EQ(p.last_error, "connection reset by peer");

    // The second peer sent only its id and connection state.
    const PeerInfo& q = v.peers[1];
    EXPECT_EQ(q.node_id, 3u);
    EXPECT_EQ(q.conn_state, static_cast<uint32_t>(CHORUS_CONN_CONNECTED));
    EXPECT_FALSE(q.address || q.port || q.transport || q.nr_conns || q.repl_state ||
                 q.in_writeset || q.role || q.dirty_bytes || q.sync_total_bytes ||
                 q.sync_done_bytes || q.sync_rate || q.writes_sent || q.bytes_sent || q.held ||
                 q.al_waiting || q.reconnects || q.resynced_bytes || q.verify_done_bytes ||
                 q.verify_mismatches || q.verify_running || q.last_error || q.active_transport);
    EXPECT_TRUE(q.paths.empty());
    EXPECT_TRUE(p.paths.empty());
}

// One CHORUS_PEER_A_PATH nest as the kernel would fill it.
void PutPath(nl_msg* m, uint32_t transport, bool active, uint64_t sessions, uint64_t failures,
             uint64_t msgs, uint64_t bytes, const char* last_error) {
    nlattr* nest = nla_nest_start(m, CHORUS_PEER_A_PATH);
    nla_put_u32(m, CHORUS_PATH_A_TRANSPORT, transport);
    nla_put_u8(m, CHORUS_PATH_A_ACTIVE, active ? 1 : 0);
    nla_put(m, CHORUS_PATH_A_PAD, 0, nullptr);  // as nla_put_u64_64bit may add
    nla_put_u64(m, CHORUS_PATH_A_SESSIONS, sessions);
    nla_put_u64(m, CHORUS_PATH_A_FAILURES, failures);
    nla_put_u64(m, CHORUS_PATH_A_MSGS_SENT, msgs);
    nla_put_u64(m, CHORUS_PATH_A_BYTES_SENT, bytes);
    nla_put_string(m, CHORUS_PATH_A_LAST_ERROR, last_error);
    nla_put_u32(m, CHORUS_PATH_A_MAX + 1, 7);  // from a newer kernel
    nla_nest_end(m, nest);
}

TEST(ParseVolume, PeerWithTwoPathsAndTheActiveTransport) {
    NlMsgPtr msg = MakeReply({});
    nl_msg* m = msg.get();
    nlattr* peers = nla_nest_start(m, CHORUS_A_PEERS);
    nlattr* peer = nla_nest_start(m, CHORUS_A_PEER);
    nla_put_u32(m, CHORUS_PEER_A_NODE_ID, 2);
    nla_put_u32(m, CHORUS_PEER_A_TRANSPORT, CHORUS_TRANSPORT_RDMA_TCP);
    PutPath(m, CHORUS_TRANSPORT_RDMA, false, 3, 1, 1200, 48ull << 20, "route resolution timed out");
    nla_put_u32(m, CHORUS_PEER_A_ACTIVE_TRANSPORT, CHORUS_TRANSPORT_TCP);
    PutPath(m, CHORUS_TRANSPORT_TCP, true, 1, 0, 5, 4096, "");
    nla_put_u64(m, CHORUS_PEER_A_MAX + 1, 99);  // from a newer kernel
    nla_nest_end(m, peer);
    PutPeer(m, CHORUS_A_PEER, 3, false);
    nla_nest_end(m, peers);

    VolumeInfo v = ParseVolumeMessage(Bytes(m));
    ASSERT_EQ(v.peers.size(), 2u);
    const PeerInfo& p = v.peers[0];
    EXPECT_EQ(p.node_id, 2u);
    EXPECT_EQ(p.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA_TCP));
    EXPECT_EQ(p.active_transport, static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
    ASSERT_EQ(p.paths.size(), 2u);  // both, in the kernel's order
    const PathInfo& rdma = p.paths[0];
    EXPECT_EQ(rdma.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA));
    EXPECT_EQ(rdma.active, false);
    EXPECT_EQ(rdma.sessions, 3u);
    EXPECT_EQ(rdma.failures, 1u);
    EXPECT_EQ(rdma.msgs_sent, 1200u);
    EXPECT_EQ(rdma.bytes_sent, 48ull << 20);
    EXPECT_EQ(rdma.last_error, "route resolution timed out");
    const PathInfo& tcp = p.paths[1];
    EXPECT_EQ(tcp.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
    EXPECT_EQ(tcp.active, true);
    EXPECT_EQ(tcp.sessions, 1u);
    EXPECT_EQ(tcp.failures, 0u);
    EXPECT_EQ(tcp.msgs_sent, 5u);
    EXPECT_EQ(tcp.bytes_sent, 4096u);
    EXPECT_FALSE(tcp.last_error.has_value());  // empty counts as absent

    // The next peer's paths are its own (none).
    EXPECT_EQ(v.peers[1].node_id, 3u);
    EXPECT_TRUE(v.peers[1].paths.empty());
    EXPECT_FALSE(v.peers[1].active_transport.has_value());
}

TEST(ParseVolume, NoSessionAndAPathWithOnlyItsTransport) {
    ReplySpec spec;
    spec.cmd = CHORUS_CMD_EVENT;
    spec.event = CHORUS_EVENT_PEER_STATE;
    NlMsgPtr msg = MakeReply(spec);
    nl_msg* m = msg.get();
    nlattr* peer = nla_nest_start(m, CHORUS_A_PEER);
    nla_put_u32(m, CHORUS_PEER_A_NODE_ID, 2);
    nla_put_u32(m, CHORUS_PEER_A_ACTIVE_TRANSPORT, CHORUS_TRANSPORT_UNSPEC);
    nlattr* path = nla_nest_start(m, CHORUS_PEER_A_PATH);
    nla_put_u32(m, CHORUS_PATH_A_TRANSPORT, CHORUS_TRANSPORT_RDMA);
    nla_nest_end(m, path);
    nla_nest_end(m, peer);
    VolumeInfo v = ParseVolumeMessage(Bytes(m));
    ASSERT_TRUE(v.peer.has_value());
    EXPECT_EQ(v.peer->active_transport, static_cast<uint32_t>(CHORUS_TRANSPORT_UNSPEC));
    ASSERT_EQ(v.peer->paths.size(), 1u);
    const PathInfo& p = v.peer->paths[0];
    EXPECT_EQ(p.transport, static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA));
    EXPECT_FALSE(p.active || p.sessions || p.failures || p.msgs_sent || p.bytes_sent ||
                 p.last_error);
}

TEST(ParseVolume, MalformedPaths) {
    auto parse_peer = [](const std::function<void(nl_msg*)>& fill) {
        NlMsgPtr msg = MakeReply({});
        nlattr* peer = nla_nest_start(msg.get(), CHORUS_A_PEER);
        fill(msg.get());
        nla_nest_end(msg.get(), peer);
        return ParseError(Bytes(msg.get()));
    };
    // A counter as u32 instead of u64.
    std::string error = parse_peer([](nl_msg* m) {
        nlattr* path = nla_nest_start(m, CHORUS_PEER_A_PATH);
        nla_put_u32(m, CHORUS_PATH_A_SESSIONS, 3);
        nla_nest_end(m, path);
    });
    EXPECT_EQ(error, "CHORUS_PATH_A_SESSIONS has 4 bytes, expected 8");
    // A last error without its NUL.
    error = parse_peer([](nl_msg* m) {
        nlattr* path = nla_nest_start(m, CHORUS_PEER_A_PATH);
        nla_put(m, CHORUS_PATH_A_LAST_ERROR, 3, "abc");
        nla_nest_end(m, path);
    });
    EXPECT_EQ(error, "CHORUS_PATH_A_LAST_ERROR is not a NUL-terminated string");
    // A path that is not an attribute stream.
    error = parse_peer([](nl_msg* m) {
        uint8_t junk[6] = {0xff, 0xff, 0, 0, 0, 0};
        nla_put(m, CHORUS_PEER_A_PATH, sizeof(junk), junk);
    });
    EXPECT_NE(error.find("in CHORUS_PEER_A_PATH"), std::string::npos) << error;
    // The active transport as u8.
    error = parse_peer([](nl_msg* m) { nla_put_u8(m, CHORUS_PEER_A_ACTIVE_TRANSPORT, 1); });
    EXPECT_EQ(error, "CHORUS_PEER_A_ACTIVE_TRANSPORT has 1 bytes, expected 4");
}

TEST(ParseVolume, ReplicationAttributesAreOptional) {
    // What a module without replication sends.
    NlMsgPtr msg = MakeReply({});
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    EXPECT_FALSE(v.node_id || v.role || v.epoch || v.request_timeout_ms || v.ping_interval_ms ||
                 v.ping_timeout_ms || v.resync_rate || v.auto_degrade || v.peer || v.reason);
    EXPECT_TRUE(v.peers.empty());
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->stale_epoch, 0u);
}

TEST(ParseVolume, StaleEpochCounter) {
    ReplySpec spec;
    spec.stats = false;
    NlMsgPtr msg = MakeReply(spec);
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_STATS);
    nla_put_u64(msg.get(), CHORUS_STAT_STALE_EPOCH, 12);
    nla_nest_end(msg.get(), nest);
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->stale_epoch, 12u);
    EXPECT_EQ(v.stats->reads, 0u);
}

TEST(ParseVolume, ForwardingCounters) {
    ReplySpec spec;
    spec.stats = false;
    NlMsgPtr msg = MakeReply(spec);
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_STATS);
    nla_put_u64(msg.get(), CHORUS_STAT_FORWARDED, 40);
    nla_put_u64(msg.get(), CHORUS_STAT_FORWARD_RESENT, 3);
    nla_put_u64(msg.get(), CHORUS_STAT_FORWARD_EXPIRED, 2);
    nla_put_u64(msg.get(), CHORUS_STAT_FORWARD_SERVED, 17);
    nla_nest_end(msg.get(), nest);
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->forwarded, 40u);
    EXPECT_EQ(v.stats->forward_resent, 3u);
    EXPECT_EQ(v.stats->forward_expired, 2u);
    EXPECT_EQ(v.stats->forward_served, 17u);
    EXPECT_EQ(v.stats->errors, 0u);
}

TEST(ParseVolume, PayloadCrcCounters) {
    ReplySpec spec;
    spec.stats = false;
    NlMsgPtr msg = MakeReply(spec);
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_STATS);
    nla_put_u64(msg.get(), CHORUS_STAT_PAYLOAD_CRC_CHECKED, 900);
    nla_put_u64(msg.get(), CHORUS_STAT_PAYLOAD_CRC_ERRORS, 1);
    nla_nest_end(msg.get(), nest);
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->payload_crc_checked, 900u);
    EXPECT_EQ(v.stats->payload_crc_errors, 1u);
    EXPECT_FALSE(v.payload_crc.has_value());  // a reply without the tunable
}

TEST(ParseVolume, EmptyPeerList) {
    NlMsgPtr msg = MakeReply({});
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_PEERS);
    nla_nest_end(msg.get(), nest);
    EXPECT_TRUE(ParseVolumeMessage(Bytes(msg.get())).peers.empty());
}

TEST(ParseVolume, PeerListSkipsPaddingAndTakesIndexedEntries) {
    NlMsgPtr msg = MakeReply({});
    nl_msg* m = msg.get();
    nlattr* nest = nla_nest_start(m, CHORUS_A_PEERS);
    nla_put(m, CHORUS_A_PAD, 0, nullptr);
    PutPeer(m, 1, 5, false);  // numbered by index instead of CHORUS_A_PEER
    PutPeer(m, CHORUS_A_PEER, 6, false);
    nla_nest_end(m, nest);
    VolumeInfo v = ParseVolumeMessage(Bytes(m));
    ASSERT_EQ(v.peers.size(), 2u);
    EXPECT_EQ(v.peers[0].node_id, 5u);
    EXPECT_EQ(v.peers[1].node_id, 6u);
}

TEST(ParseVolume, PeerEventCarriesPeerAndReason) {
    NlMsgPtr msg = MakeReplicatedReply(CHORUS_CMD_EVENT, CHORUS_EVENT_PEER_STATE);
    PutPeer(msg.get(), CHORUS_A_PEER, 2, false);
    nla_put_string(msg.get(), CHORUS_A_REASON, "ping timeout");
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    EXPECT_EQ(v.event, static_cast<uint32_t>(CHORUS_EVENT_PEER_STATE));
    EXPECT_EQ(EventName(v.event), "peer-state");
    ASSERT_TRUE(v.peer.has_value());
    EXPECT_EQ(v.peer->node_id, 2u);
    EXPECT_EQ(v.peer->conn_state, static_cast<uint32_t>(CHORUS_CONN_CONNECTED));
    EXPECT_EQ(v.reason, "ping timeout");
    EXPECT_EQ(v.peers.size(), 2u);
}

TEST(ParseVolume, EmptyReasonAndLastErrorCountAsAbsent) {
    ReplySpec spec;
    spec.cmd = CHORUS_CMD_EVENT;
    spec.event = CHORUS_EVENT_PEER_REMOVED;
    NlMsgPtr msg = MakeReply(spec);
    nlattr* nest = nla_nest_start(msg.get(), CHORUS_A_PEER);
    nla_put_u32(msg.get(), CHORUS_PEER_A_NODE_ID, 4);
    nla_put_string(msg.get(), CHORUS_PEER_A_LAST_ERROR, "");
    nla_nest_end(msg.get(), nest);
    nla_put_string(msg.get(), CHORUS_A_REASON, "");
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    ASSERT_TRUE(v.peer.has_value());
    EXPECT_FALSE(v.peer->last_error.has_value());
    EXPECT_FALSE(v.reason.has_value());
}

TEST(ParseVolume, MalformedReplicationAttributes) {
    {
        // A port as u32 instead of u16.
        NlMsgPtr msg = MakeReply({});
        nlattr* peers = nla_nest_start(msg.get(), CHORUS_A_PEERS);
        nlattr* peer = nla_nest_start(msg.get(), CHORUS_A_PEER);
        nla_put_u32(msg.get(), CHORUS_PEER_A_PORT, 7788);
        nla_nest_end(msg.get(), peer);
        nla_nest_end(msg.get(), peers);
        EXPECT_EQ(ParseError(Bytes(msg.get())).rfind("CHORUS_PEER_A_PORT has 4 bytes", 0), 0u)
            << ParseError(Bytes(msg.get()));
    }
    {
        // An epoch as u32.
        NlMsgPtr msg = MakeReply({});
        nla_put_u32(msg.get(), CHORUS_A_EPOCH, 7);
        EXPECT_EQ(ParseError(Bytes(msg.get())).rfind("CHORUS_A_EPOCH has 4 bytes", 0), 0u);
    }
    {
        // A reason without its NUL.
        NlMsgPtr msg = MakeReply({});
        nla_put(msg.get(), CHORUS_A_REASON, 3, "abc");
        EXPECT_EQ(ParseError(Bytes(msg.get())), "CHORUS_A_REASON is not a NUL-terminated string");
    }
    {
        // A peer list whose entry is not an attribute stream.
        NlMsgPtr msg = MakeReply({});
        uint8_t junk[6] = {0xff, 0xff, 0, 0, 0, 0};
        nla_put(msg.get(), CHORUS_A_PEERS, sizeof(junk), junk);
        EXPECT_NE(ParseError(Bytes(msg.get())).find("in CHORUS_A_PEERS"), std::string::npos)
            << ParseError(Bytes(msg.get()));
    }
}

TEST(Names, ReplicationEnums) {
    EXPECT_EQ(EventName(CHORUS_EVENT_VOLUME_STATE), "state");
    EXPECT_EQ(EventName(CHORUS_EVENT_ROLE), "role");
    EXPECT_EQ(EventName(CHORUS_EVENT_PEER_STATE), "peer-state");
    EXPECT_EQ(EventName(CHORUS_EVENT_WRITESET), "writeset");
    EXPECT_EQ(EventName(CHORUS_EVENT_RESYNC), "resync");
    EXPECT_EQ(EventName(CHORUS_EVENT_VERIFY), "verify");
    EXPECT_EQ(EventName(CHORUS_EVENT_STALE_EPOCH), "stale-epoch");
    EXPECT_EQ(EventName(CHORUS_EVENT_PEER_ADDED), "peer-added");
    EXPECT_EQ(EventName(CHORUS_EVENT_PEER_REMOVED), "peer-removed");
    EXPECT_EQ(EventName(0), "unknown(0)");
    EXPECT_EQ(EventName(__CHORUS_EVENT_MAX), "unknown(" + std::to_string(__CHORUS_EVENT_MAX) + ")");
    EXPECT_EQ(RoleName(CHORUS_ROLE_OWNER), "owner");
    EXPECT_EQ(RoleName(CHORUS_ROLE_REPLICA), "replica");
    EXPECT_EQ(RoleName(9), "unknown(9)");
    EXPECT_EQ(TransportName(CHORUS_TRANSPORT_TCP), "tcp");
    EXPECT_EQ(TransportName(CHORUS_TRANSPORT_RDMA), "rdma");
    EXPECT_EQ(TransportName(CHORUS_TRANSPORT_RDMA_TCP), "rdma+tcp");
    EXPECT_EQ(TransportName(CHORUS_TRANSPORT_UNSPEC), "unknown(0)");
    EXPECT_EQ(TransportName(__CHORUS_TRANSPORT_MAX),
              "unknown(" + std::to_string(__CHORUS_TRANSPORT_MAX) + ")");
    EXPECT_EQ(ConnStateName(CHORUS_CONN_DISCONNECTED), "disconnected");
    EXPECT_EQ(ConnStateName(CHORUS_CONN_CONNECTING), "connecting");
    EXPECT_EQ(ConnStateName(CHORUS_CONN_CONNECTED), "connected");
    EXPECT_EQ(ConnStateName(CHORUS_CONN_UNREACHABLE), "unreachable");
    EXPECT_EQ(ReplStateName(CHORUS_REPL_UP_TO_DATE), "up-to-date");
    EXPECT_EQ(ReplStateName(CHORUS_REPL_OUT_OF_DATE), "out-of-date");
    EXPECT_EQ(ReplStateName(CHORUS_REPL_SYNCING), "syncing");
    EXPECT_EQ(InitialSyncName(CHORUS_INITIAL_SYNC_FULL), "full");
    EXPECT_EQ(InitialSyncName(CHORUS_INITIAL_SYNC_NONE), "none");
    EXPECT_EQ(PeerAttrName(CHORUS_PEER_A_LAST_ERROR), "CHORUS_PEER_A_LAST_ERROR");
    EXPECT_EQ(PeerAttrName(CHORUS_PEER_A_MAX + 1),
              "peer attribute " + std::to_string(CHORUS_PEER_A_MAX + 1));
    EXPECT_EQ(PeerAttrName(CHORUS_PEER_A_PATH), "CHORUS_PEER_A_PATH");
    EXPECT_EQ(PathAttrName(CHORUS_PATH_A_BYTES_SENT), "CHORUS_PATH_A_BYTES_SENT");
    EXPECT_EQ(PathAttrName(CHORUS_PATH_A_MAX + 1),
              "path attribute " + std::to_string(CHORUS_PATH_A_MAX + 1));
    EXPECT_EQ(CommandName(CHORUS_CMD_WRITESET_REMOVE), "WRITESET_REMOVE");
    EXPECT_EQ(CommandName(CHORUS_CMD_MAX + 1), "command " + std::to_string(CHORUS_CMD_MAX + 1));
}

TEST(Names, ParseTransport) {
    EXPECT_EQ(ParseTransport("tcp"), static_cast<uint32_t>(CHORUS_TRANSPORT_TCP));
    EXPECT_EQ(ParseTransport("rdma"), static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA));
    EXPECT_EQ(ParseTransport("rdma+tcp"), static_cast<uint32_t>(CHORUS_TRANSPORT_RDMA_TCP));
    for (const char* bad :
         {"udp", "", "RDMA", "tcp+rdma", "rdma-tcp", "rdma+tcp ", "unspec", "unknown(0)", "3"}) {
        try {
            ParseTransport(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.what(),
                      "transport '" + std::string(bad) + "' is not tcp, rdma or rdma+tcp");
            EXPECT_EQ(e.errnum(), EINVAL);
        }
    }
}

// Every number the header defines has a name here: a table that fell behind
// <linux/chorus.h> shows up as a fallback name.
TEST(Names, TablesCoverTheHeader) {
    for (int t = 0; t <= CHORUS_A_MAX; t++)
        EXPECT_EQ(AttrName(t).rfind("CHORUS_A_", 0), 0u) << t;
    for (int t = 0; t <= CHORUS_PEER_A_MAX; t++)
        EXPECT_EQ(PeerAttrName(t).rfind("CHORUS_PEER_A_", 0), 0u) << t;
    for (int c = 1; c <= CHORUS_CMD_MAX; c++)
        EXPECT_EQ(CommandName(c).find("command "), std::string::npos) << c;
    for (uint32_t e = 1; e < __CHORUS_EVENT_MAX; e++)
        EXPECT_EQ(EventName(e).find("unknown"), std::string::npos) << e;
    for (uint32_t r = 1; r < __CHORUS_ROLE_MAX; r++)
        EXPECT_EQ(RoleName(r).find("unknown"), std::string::npos) << r;
    for (int t = 0; t <= CHORUS_PATH_A_MAX; t++)
        EXPECT_EQ(PathAttrName(t).rfind("CHORUS_PATH_A_", 0), 0u) << t;
    for (uint32_t t = 1; t < __CHORUS_TRANSPORT_MAX; t++) {
        EXPECT_EQ(TransportName(t).find("unknown"), std::string::npos) << t;
        EXPECT_EQ(ParseTransport(TransportName(t)), t);
    }
    for (uint32_t s = 1; s < __CHORUS_CONN_MAX; s++)
        EXPECT_EQ(ConnStateName(s).find("unknown"), std::string::npos) << s;
    for (uint32_t s = 1; s < __CHORUS_REPL_MAX; s++)
        EXPECT_EQ(ReplStateName(s).find("unknown"), std::string::npos) << s;
    for (uint32_t s = 1; s < __CHORUS_INITIAL_SYNC_MAX; s++)
        EXPECT_EQ(InitialSyncName(s).find("unknown"), std::string::npos) << s;
}

TEST(GenlCodec, LeaseSetCarriesTheDeadline) {
    Parsed p = ParseRequest(BuildLeaseSet(kFamily, 123456789012345ull));
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_LEASE_SET);
    ASSERT_NE(p.tb[CHORUS_A_LEASE_DEADLINE_NS], nullptr);
    EXPECT_EQ(nla_get_u64(p.tb[CHORUS_A_LEASE_DEADLINE_NS]), 123456789012345ull);
    Parsed get = ParseRequest(BuildLeaseGet(kFamily));
    EXPECT_EQ(get.ghdr.cmd, CHORUS_CMD_LEASE_GET);
}

NlMsgPtr MakeLeaseReply(int omit) {
    NlMsgPtr msg(nlmsg_alloc());
    genlmsg_put(msg.get(), 0, 42, kFamily, 0, 0, CHORUS_CMD_LEASE_GET, CHORUS_GENL_VERSION);
    if (omit != CHORUS_A_LEASE_STATE)
        nla_put_u32(msg.get(), CHORUS_A_LEASE_STATE, CHORUS_LEASE_EXPIRED);
    if (omit != CHORUS_A_LEASE_DEADLINE_NS)
        nla_put_u64(msg.get(), CHORUS_A_LEASE_DEADLINE_NS, 5000000000ull);
    if (omit != CHORUS_A_LEASE_NOW_NS)
        nla_put_u64(msg.get(), CHORUS_A_LEASE_NOW_NS, 7500000000ull);
    if (omit != CHORUS_A_LEASE_EXPIRIES)
        nla_put_u64(msg.get(), CHORUS_A_LEASE_EXPIRIES, 3);
    return msg;
}

TEST(GenlCodec, ParsesTheLeaseAndNamesWhatIsMissing) {
    NlMsgPtr reply = MakeLeaseReply(0);
    LeaseInfo lease = ParseLeaseMessage(Bytes(reply.get()));
    EXPECT_EQ(lease.state, static_cast<uint32_t>(CHORUS_LEASE_EXPIRED));
    EXPECT_EQ(lease.deadline_ns, 5000000000ull);
    EXPECT_EQ(lease.now_ns, 7500000000ull);
    EXPECT_EQ(lease.expiries, 3u);
    EXPECT_EQ(LeaseStateName(CHORUS_LEASE_VALID), "valid");
    EXPECT_EQ(LeaseStateName(99), "unknown(99)");

    NlMsgPtr partial = MakeLeaseReply(CHORUS_A_LEASE_NOW_NS);
    try {
        ParseLeaseMessage(Bytes(partial.get()));
        FAIL() << "a lease reply without its clock was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("CHORUS_A_LEASE_NOW_NS"), std::string::npos)
            << e.what();
    }
    NlMsgPtr volume = MakeReply({});
    EXPECT_THROW(ParseLeaseMessage(Bytes(volume.get())), Error);
}

TEST(GenlCodec, AuthSetCarriesOneThing) {
    const uint8_t secret[20] = {1, 2, 3, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
    AuthSetRequest req;
    req.secret = secret;
    req.keep_previous_s = 600;
    Parsed p = ParseRequest(BuildAuthSet(kFamily, req));
    EXPECT_EQ(p.ghdr.cmd, CHORUS_CMD_AUTH_SET);
    ASSERT_NE(p.tb[CHORUS_A_AUTH_SECRET], nullptr);
    ASSERT_EQ(nla_len(p.tb[CHORUS_A_AUTH_SECRET]), 20);
    EXPECT_EQ(std::memcmp(nla_data(p.tb[CHORUS_A_AUTH_SECRET]), secret, 20), 0);
    ASSERT_NE(p.tb[CHORUS_A_AUTH_KEEP_PREVIOUS_S], nullptr);
    EXPECT_EQ(nla_get_u32(p.tb[CHORUS_A_AUTH_KEEP_PREVIOUS_S]), 600u);
    EXPECT_EQ(p.tb[CHORUS_A_AUTH_CLEAR], nullptr);

    AuthSetRequest drop;
    drop.drop_previous = true;
    p = ParseRequest(BuildAuthSet(kFamily, drop));
    EXPECT_NE(p.tb[CHORUS_A_AUTH_DROP_PREVIOUS], nullptr);
    EXPECT_EQ(p.tb[CHORUS_A_AUTH_SECRET], nullptr);

    AuthSetRequest none;
    EXPECT_THROW(BuildAuthSet(kFamily, none), Error);
    AuthSetRequest two = req;
    two.clear = true;
    EXPECT_THROW(BuildAuthSet(kFamily, two), Error);
    AuthSetRequest keep_alone;
    keep_alone.clear = true;
    keep_alone.keep_previous_s = 5;
    EXPECT_THROW(BuildAuthSet(kFamily, keep_alone), Error);
    EXPECT_EQ(ParseRequest(BuildAuthGet(kFamily)).ghdr.cmd, CHORUS_CMD_AUTH_GET);
}

TEST(GenlCodec, ParsesTheAuthReply) {
    NlMsgPtr msg(nlmsg_alloc());
    genlmsg_put(msg.get(), 0, 42, kFamily, 0, 0, CHORUS_CMD_AUTH_GET, CHORUS_GENL_VERSION);
    nla_put_u64(msg.get(), CHORUS_A_AUTH_KEY_ID, 0x1122334455667788ull);
    nla_put_u64(msg.get(), CHORUS_A_AUTH_PREV_KEY_ID, 7);
    nla_put_u32(msg.get(), CHORUS_A_AUTH_PREV_REMAINING_S, 30);
    nla_put_u64(msg.get(), CHORUS_A_AUTH_FAILURES, 4);
    AuthInfo auth = ParseAuthMessage(Bytes(msg.get()));
    EXPECT_EQ(auth.key_id, 0x1122334455667788ull);
    EXPECT_EQ(auth.prev_key_id, 7u);
    EXPECT_EQ(auth.prev_remaining_s, 30u);
    EXPECT_EQ(auth.failures, 4u);
    EXPECT_EQ(EventName(CHORUS_EVENT_AUTH_FAILED), "auth-failed");

    NlMsgPtr partial(nlmsg_alloc());
    genlmsg_put(partial.get(), 0, 42, kFamily, 0, 0, CHORUS_CMD_AUTH_GET, CHORUS_GENL_VERSION);
    nla_put_u64(partial.get(), CHORUS_A_AUTH_KEY_ID, 1);
    try {
        ParseAuthMessage(Bytes(partial.get()));
        FAIL() << "an auth reply without its failure count was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("CHORUS_A_AUTH_PREV_KEY_ID"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace chorus
