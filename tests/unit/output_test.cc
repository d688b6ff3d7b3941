// How chorusctl prints volumes, peers and events (chorusctl/output.cc), for
// people and for --json, with and without the replication attributes.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <linux/chorus.h>

#include "chorusctl/output.h"
#include "lib/genl_codec.h"
#include "lib/uuid.h"

namespace chorus {
namespace {

// A volume as a module without replication reports it.
VolumeInfo PlainVolume() {
    VolumeInfo v;
    v.name = "vol0";
    v.backing_path = "/dev/vdb";
    v.size_bytes = 64ull << 20;
    v.block_size = 4096;
    v.uuid = ParseUuid("3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
    v.minor = 0;
    v.disk_name = "chorus0";
    v.state = CHORUS_VOLUME_STATE_ONLINE;
    v.stats = VolumeStats{};
    return v;
}

PeerInfo SyncingPeer() {
    PeerInfo p;
    p.node_id = 2;
    p.address = "fd00::2";
    p.port = 7789;
    p.transport = CHORUS_TRANSPORT_TCP;
    p.nr_conns = 2;
    p.conn_state = CHORUS_CONN_CONNECTED;
    p.repl_state = CHORUS_REPL_SYNCING;
    p.in_writeset = true;
    p.role = CHORUS_ROLE_REPLICA;
    p.dirty_bytes = 3ull << 20;
    p.sync_total_bytes = 4ull << 20;
    p.sync_done_bytes = 1ull << 20;
    p.sync_rate = 512 << 10;
    p.held = 0;
    p.reconnects = 1;
    p.verify_done_bytes = 16ull << 20;
    p.verify_mismatches = 2;
    p.verify_running = true;
    p.last_error = "connection reset by peer";
    return p;
}

// A peer on RDMA with TCP fallback whose traffic has fallen back to TCP.
PeerInfo FallbackPeer() {
    PeerInfo p;
    p.node_id = 4;
    p.address = "10.0.0.4";
    p.port = CHORUS_DEFAULT_PORT;
    p.transport = CHORUS_TRANSPORT_RDMA_TCP;
    p.nr_conns = 2;
    p.conn_state = CHORUS_CONN_CONNECTED;
    p.active_transport = CHORUS_TRANSPORT_TCP;
    PathInfo rdma;
    rdma.transport = CHORUS_TRANSPORT_RDMA;
    rdma.active = false;
    rdma.sessions = 3;
    rdma.failures = 1;
    rdma.msgs_sent = 1200;
    rdma.bytes_sent = 48ull << 20;
    rdma.last_error = "route resolution timed out";
    PathInfo tcp;
    tcp.transport = CHORUS_TRANSPORT_TCP;
    tcp.active = true;
    tcp.sessions = 1;
    tcp.failures = 0;
    tcp.msgs_sent = 5;
    tcp.bytes_sent = 4096;
    p.paths = {rdma, tcp};
    return p;
}

// The same volume from a module with replication, owner with two peers.
VolumeInfo ReplicatedVolume() {
    VolumeInfo v = PlainVolume();
    v.node_id = 1;
    v.role = CHORUS_ROLE_OWNER;
    v.epoch = 7;
    v.request_timeout_ms = 10000;
    v.ping_interval_ms = 1000;
    v.ping_timeout_ms = 5000;
    v.resync_rate = 100ull << 20;
    v.auto_degrade = false;
    v.stats->stale_epoch = 3;
    v.stats->forwarded = 11;
    v.stats->forward_served = 5;
    v.peers.push_back(SyncingPeer());
    PeerInfo q;
    q.node_id = 3;
    q.address = "10.0.0.3";
    q.port = CHORUS_DEFAULT_PORT;
    q.conn_state = CHORUS_CONN_UNREACHABLE;
    q.repl_state = CHORUS_REPL_OUT_OF_DATE;
    q.in_writeset = false;
    q.held = 4;
    q.al_waiting = 3;
    v.peers.push_back(q);
    return v;
}

std::string Status(const VolumeInfo& v) {
    std::ostringstream out;
    PrintVolumeStatus(out, v);
    return out.str();
}

std::string Table(const std::vector<VolumeInfo>& vs) {
    std::ostringstream out;
    PrintVolumeTable(out, vs);
    return out.str();
}

bool Has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(Output, Helpers) {
    EXPECT_EQ(FormatEndpoint("10.0.0.2", 7788), "10.0.0.2:7788");
    EXPECT_EQ(FormatEndpoint("fd00::2", 7788), "[fd00::2]:7788");
    EXPECT_EQ(FormatRate(10ull << 20), "10.00 MiB/s");
    EXPECT_EQ(FormatPercent(0, 0), "0.0%");
    EXPECT_EQ(FormatPercent(1, 4), "25.0%");
    EXPECT_EQ(FormatPercent(9999, 10000), "99.9%");
    EXPECT_EQ(FormatPercent(10000, 10000), "100.0%");
    EXPECT_EQ(FormatPercent(20000, 10000), "100.0%");
    EXPECT_EQ(FormatPercent(UINT64_MAX / 2, UINT64_MAX), "49.9%");
}

TEST(Output, JsonWithoutReplicationHasNoReplicationKeys) {
    nlohmann::json j = VolumeToJson(PlainVolume());
    for (const char* key : {"node_id", "role", "epoch", "request_timeout_ms", "ping_interval_ms",
                            "ping_timeout_ms", "resync_rate", "auto_degrade", "peer", "reason"})
        EXPECT_FALSE(j.contains(key)) << key;
    EXPECT_EQ(j["peers"], nlohmann::json::array());
    EXPECT_EQ(j["stats"]["stale_epoch"], 0);
    EXPECT_EQ(j["name"], "vol0");
}

TEST(Output, JsonWithReplication) {
    nlohmann::json j = VolumeToJson(ReplicatedVolume());
    EXPECT_EQ(j["node_id"], 1);
    EXPECT_EQ(j["role"], "owner");
    EXPECT_EQ(j["epoch"], 7);
    EXPECT_EQ(j["request_timeout_ms"], 10000);
    EXPECT_EQ(j["ping_interval_ms"], 1000);
    EXPECT_EQ(j["ping_timeout_ms"], 5000);
    EXPECT_EQ(j["resync_rate"], 100ull << 20);
    EXPECT_EQ(j["auto_degrade"], false);
    EXPECT_EQ(j["stats"]["stale_epoch"], 3);
    EXPECT_EQ(j["stats"]["forwarded"], 11);
    EXPECT_EQ(j["stats"]["forward_resent"], 0);
    EXPECT_EQ(j["stats"]["forward_expired"], 0);
    EXPECT_EQ(j["stats"]["forward_served"], 5);
    ASSERT_EQ(j["peers"].size(), 2u);
    const nlohmann::json& p = j["peers"][0];
    EXPECT_EQ(p["node_id"], 2);
    EXPECT_EQ(p["address"], "fd00::2");
    EXPECT_EQ(p["port"], 7789);
    EXPECT_EQ(p["transport"], "tcp");
    EXPECT_EQ(p["nr_conns"], 2);
    EXPECT_EQ(p["conn_state"], "connected");
    EXPECT_EQ(p["repl_state"], "syncing");
    EXPECT_EQ(p["in_writeset"], true);
    EXPECT_EQ(p["role"], "replica");
    EXPECT_EQ(p["dirty_bytes"], 3ull << 20);
    EXPECT_EQ(p["sync_total_bytes"], 4ull << 20);
    EXPECT_EQ(p["sync_done_bytes"], 1ull << 20);
    EXPECT_DOUBLE_EQ(p["sync_percent"].get<double>(), 25.0);
    EXPECT_EQ(p["sync_rate"], 512 << 10);
    EXPECT_EQ(p["held"], 0);
    EXPECT_EQ(p["reconnects"], 1);
    EXPECT_EQ(p["verify_done_bytes"], 16ull << 20);
    EXPECT_EQ(p["verify_mismatches"], 2);
    EXPECT_EQ(p["verify_running"], true);
    EXPECT_EQ(p["last_error"], "connection reset by peer");
    EXPECT_FALSE(p.contains("writes_sent"));  // not sent, not invented
    const nlohmann::json& q = j["peers"][1];
    EXPECT_EQ(q["conn_state"], "unreachable");
    EXPECT_EQ(q["repl_state"], "out-of-date");
    EXPECT_EQ(q["held"], 4);
    EXPECT_EQ(q["al_waiting"], 3);
    EXPECT_FALSE(q.contains("sync_percent"));
    EXPECT_FALSE(q.contains("transport"));
    // A module without paths: no active transport, and an empty array.
    EXPECT_FALSE(p.contains("active_transport"));
    EXPECT_EQ(p["paths"], nlohmann::json::array());
}

TEST(Output, JsonActiveTransportAndPaths) {
    nlohmann::json p = PeerToJson(FallbackPeer());
    EXPECT_EQ(p["transport"], "rdma+tcp");
    EXPECT_EQ(p["active_transport"], "tcp");
    ASSERT_EQ(p["paths"].size(), 2u);
    EXPECT_EQ(p["paths"][0], nlohmann::json::parse(R"({"transport": "rdma", "active": false,
        "sessions": 3, "failures": 1, "msgs_sent": 1200, "bytes_sent": 50331648,
        "last_error": "route resolution timed out"})"));
    EXPECT_EQ(p["paths"][1], nlohmann::json::parse(R"({"transport": "tcp", "active": true,
        "sessions": 1, "failures": 0, "msgs_sent": 5, "bytes_sent": 4096})"));

    PeerInfo none = FallbackPeer();
    none.active_transport = CHORUS_TRANSPORT_UNSPEC;
    none.paths[1] = PathInfo{};  // a path the kernel said nothing of
    nlohmann::json q = PeerToJson(none);
    EXPECT_EQ(q["active_transport"], "none");
    EXPECT_EQ(q["paths"][1], nlohmann::json::object());

    VolumeInfo v = ReplicatedVolume();
    v.peers.push_back(FallbackPeer());
    EXPECT_EQ(VolumeToJson(v)["peers"][2]["active_transport"], "tcp");
}

TEST(Output, StatusWithoutReplicationIsUnchanged) {
    std::string s = Status(PlainVolume());
    EXPECT_TRUE(Has(s, "name:         vol0\n")) << s;
    EXPECT_TRUE(Has(s, "  stale epoch:  0\n")) << s;
    for (const char* absent : {"node id", "role", "\nepoch:", "tunables", "peers"})
        EXPECT_FALSE(Has(s, absent)) << absent << "\n" << s;
}

TEST(Output, StatusWithReplication) {
    std::string s = Status(ReplicatedVolume());
    for (const char* line : {
             "node id:      1\n",
             "role:         owner\n",
             "epoch:        7\n",
             "tunables:\n",
             "  request timeout:  10000 ms\n",
             "  ping interval:    1000 ms\n",
             "  ping timeout:     5000 ms\n",
             "  resync rate:      100.00 MiB/s (104857600 bytes/s)\n",
             "  auto degrade:     off\n",
             "  stale epoch:  3\n",
             "peers:\n",
             "  node 2:\n",
             "    address:          [fd00::2]:7789\n",
             "    transport:        tcp, 2 connections\n",
             "    connection:       connected\n",
             "    replica:          syncing\n",
             "    in write set:     yes\n",
             "    peer role:        replica\n",
             "    held writes:      0\n",
             "    dirty:            3.00 MiB (3145728 bytes)\n",
             "    resync:           1.00 MiB of 4.00 MiB (25.0%), 512.00 KiB/s\n",
             "    verify:           running, 16.00 MiB compared (25.0%), 2 mismatches\n",
             "    reconnects:       1\n",
             "    last error:       connection reset by peer\n",
             "  node 3:\n",
             "    address:          10.0.0.3:7788\n",
             "    connection:       unreachable\n",
             "    replica:          out-of-date\n",
             "    in write set:     no\n",
             "    held writes:      4 (3 waiting for it to store the activity log)\n",
         })
        EXPECT_TRUE(Has(s, line)) << "missing: " << line << "in:\n" << s;
    // Node 3 is not syncing and never verified.
    EXPECT_EQ(s.find("resync:"), s.rfind("resync:")) << s;
    EXPECT_EQ(s.find("verify:"), s.rfind("verify:")) << s;
}

TEST(Output, StatusShowsTheActiveTransportAndOneLinePerPath) {
    VolumeInfo v = ReplicatedVolume();
    v.peers.push_back(FallbackPeer());
    std::string s = Status(v);
    std::string node4 = s.substr(s.find("  node 4:\n"));
    EXPECT_EQ(node4,
              "  node 4:\n"
              "    address:          10.0.0.4:7788\n"
              "    transport:        rdma+tcp, 2 connections\n"
              "    active transport: tcp\n"
              "    connection:       connected\n"
              "    path rdma  idle    sessions 3 failures 1 msgs 1200 bytes 48.00 MiB\n"
              "      last error: route resolution timed out\n"
              "    path tcp   active  sessions 1 failures 0 msgs 5 bytes 4.00 KiB\n")
        << s;
    // The peers without paths show neither.
    EXPECT_EQ(s.find("    path "), s.find("    path rdma")) << s;
    EXPECT_EQ(s.find("active transport"), s.rfind("active transport")) << s;

    v.peers[2].active_transport = CHORUS_TRANSPORT_UNSPEC;
    v.peers[2].paths = {PathInfo{}};
    s = Status(v);
    EXPECT_TRUE(Has(s, "    active transport: none\n")) << s;
    EXPECT_TRUE(Has(s, "    path ?\n")) << s;
}

TEST(Output, StatusOfAnOwnerWithoutPeersAndAnUnlimitedRate) {
    VolumeInfo v = ReplicatedVolume();
    v.peers.clear();
    v.resync_rate = 0;
    std::string s = Status(v);
    EXPECT_TRUE(Has(s, "peers:        none\n")) << s;
    EXPECT_TRUE(Has(s, "  resync rate:      unlimited\n")) << s;
}

TEST(Output, NodeIdZeroMeansNone) {
    VolumeInfo v = ReplicatedVolume();
    v.node_id = 0;
    v.peers.clear();
    EXPECT_TRUE(Has(Status(v), "node id:      none\n")) << Status(v);
    EXPECT_TRUE(Has(Table({v}), "/dev/vdb  -     owner  7      -")) << Table({v});
    EXPECT_EQ(VolumeToJson(v)["node_id"], 0);
}

TEST(Output, TableColumns) {
    std::string t = Table({PlainVolume(), ReplicatedVolume()});
    std::istringstream lines(t);
    std::string header, plain, replicated;
    std::getline(lines, header);
    std::getline(lines, plain);
    std::getline(lines, replicated);
    EXPECT_EQ(header.rfind("NAME", 0), 0u);
    EXPECT_TRUE(Has(header, "BACKING")) << t;
    EXPECT_TRUE(Has(header, "  NODE  ROLE   EPOCH  PEERS")) << t;
    EXPECT_TRUE(Has(plain, "/dev/vdb  -     -      -      -")) << t;
    EXPECT_TRUE(
        Has(replicated, "1     owner  7      2:connected/syncing(25.0%),3:unreachable/out-of-date"))
        << t;
    EXPECT_NE(replicated.back(), ' ');
}

TEST(Output, EventLines) {
    VolumeInfo v = ReplicatedVolume();
    v.event = CHORUS_EVENT_ROLE;
    EXPECT_EQ(FormatEventLine("T", v),
              "T role vol0 /dev/chorus0 size=67108864 state=online role=owner epoch=7");

    v.event = CHORUS_EVENT_PEER_STATE;
    PeerInfo p;
    p.node_id = 3;
    p.conn_state = CHORUS_CONN_UNREACHABLE;
    v.peer = p;
    v.reason = "ping timeout after 5000 ms";
    EXPECT_EQ(FormatEventLine("T", v),
              "T peer-state vol0 /dev/chorus0 size=67108864 state=online peer=3 conn=unreachable "
              "reason=\"ping timeout after 5000 ms\"");

    v.event = CHORUS_EVENT_RESYNC;
    v.peer = SyncingPeer();
    v.reason.reset();
    EXPECT_EQ(FormatEventLine("T", v),
              "T resync vol0 /dev/chorus0 size=67108864 state=online peer=2 conn=connected "
              "repl=syncing writeset=yes sync_done=1048576 sync_total=4194304 sync_percent=25.0% "
              "sync_rate=524288");

    v.event = CHORUS_EVENT_VERIFY;
    EXPECT_TRUE(Has(FormatEventLine("T", v), " verify=running verify_done=16777216 mismatches=2"));

    // A peer event without a node id, and a reason that needs quoting.
    v.event = CHORUS_EVENT_PEER_REMOVED;
    v.peer = PeerInfo{};
    v.reason = "said \"bye\"";
    EXPECT_TRUE(Has(FormatEventLine("T", v), " peer=? reason=\"said \\\"bye\\\"\""))
        << FormatEventLine("T", v);

    // The events of a module without replication look as before.
    VolumeInfo plain = PlainVolume();
    plain.event = CHORUS_EVENT_VOLUME_CREATED;
    EXPECT_EQ(FormatEventLine("T", plain),
              "T created vol0 /dev/chorus0 size=67108864 state=online");
}

TEST(Output, EventJsonCarriesPeerAndReason) {
    VolumeInfo v = ReplicatedVolume();
    v.event = CHORUS_EVENT_WRITESET;
    PeerInfo p;
    p.node_id = 3;
    p.in_writeset = false;
    v.peer = p;
    v.reason = "removed by WRITESET_REMOVE";
    nlohmann::json j = VolumeToJson(v);
    EXPECT_EQ(j["peer"]["node_id"], 3);
    EXPECT_EQ(j["peer"]["in_writeset"], false);
    EXPECT_EQ(j["reason"], "removed by WRITESET_REMOVE");
}

}  // namespace
}  // namespace chorus
