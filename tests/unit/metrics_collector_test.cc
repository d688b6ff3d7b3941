// From the kernel's view of a volume (VolumeInfo) to Prometheus samples:
// the latency histograms' netlink decoding, the collector's exact output,
// its validity, and the documentation's table.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "exposition_check.h"
#include "lib/errors.h"
#include "lib/genl_codec.h"
#include "lib/metrics_collector.h"

namespace chorus {
namespace {

using test::CheckExposition;

// A VOLUME_GET reply with the attributes a volume always has and a stats
// nest holding a write latency histogram of nbuckets buckets.
NlMsgPtr ReplyWithLatency(int nbuckets) {
    NlMsgPtr msg(nlmsg_alloc());
    nl_msg* m = msg.get();
    genlmsg_put(m, 0, 1, 0x1d, 0, 0, CHORUS_CMD_VOLUME_GET, CHORUS_GENL_VERSION);
    nla_put_string(m, CHORUS_A_VOLUME_NAME, "vol0");
    nla_put_string(m, CHORUS_A_BACKING_PATH, "/dev/vdb");
    nla_put_u64(m, CHORUS_A_SIZE_BYTES, 1 << 20);
    nla_put_u32(m, CHORUS_A_BLOCK_SIZE, 4096);
    uint8_t uuid[CHORUS_UUID_LEN] = {1};
    nla_put(m, CHORUS_A_UUID, sizeof(uuid), uuid);
    nla_put_u32(m, CHORUS_A_MINOR, 0);
    nla_put_string(m, CHORUS_A_DISK_NAME, "chorus0");
    nla_put_u32(m, CHORUS_A_STATE, CHORUS_VOLUME_STATE_ONLINE);
    nlattr* stats = nla_nest_start(m, CHORUS_A_STATS);
    nla_put_u64(m, CHORUS_STAT_WRITES, 6);
    nlattr* lat = nla_nest_start(m, CHORUS_STAT_WRITE_LATENCY);
    nla_put_u64(m, CHORUS_LAT_A_SUM_NS, 1234567);
    for (int i = 0; i < nbuckets; i++)
        nla_put_u64(m, CHORUS_LAT_A_BUCKET, i == 3 ? 5 : i == nbuckets - 1 ? 1 : 0);
    nla_nest_end(m, lat);
    nla_nest_end(m, stats);
    return msg;
}

std::span<const uint8_t> Bytes(nl_msg* msg) {
    const nlmsghdr* nlh = nlmsg_hdr(msg);
    return {reinterpret_cast<const uint8_t*>(nlh), nlh->nlmsg_len};
}

TEST(LatencyCodec, HistogramsDecodeInBucketOrder) {
    NlMsgPtr msg = ReplyWithLatency(CHORUS_LAT_BUCKETS);
    VolumeInfo v = ParseVolumeMessage(Bytes(msg.get()));
    ASSERT_TRUE(v.stats.has_value());
    EXPECT_EQ(v.stats->writes, 6u);
    EXPECT_FALSE(v.stats->read_latency.has_value());  // as from an older module
    ASSERT_TRUE(v.stats->write_latency.has_value());
    const LatencyHistogram& h = *v.stats->write_latency;
    EXPECT_EQ(h.sum_ns, 1234567u);
    ASSERT_EQ(h.buckets.size(), static_cast<size_t>(CHORUS_LAT_BUCKETS));
    EXPECT_EQ(h.buckets[3], 5u);
    EXPECT_EQ(h.buckets.back(), 1u);
}

TEST(LatencyCodec, AnotherNumberOfBucketsIsRefused) {
    NlMsgPtr msg = ReplyWithLatency(CHORUS_LAT_BUCKETS - 1);
    try {
        ParseVolumeMessage(Bytes(msg.get()));
        ADD_FAILURE() << "parsed";
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "CHORUS_STAT_WRITE_LATENCY has 21 buckets, expected 22");
    }
}

TEST(LatencyCodec, BoundsAreMicrosecondPowersOfTwo) {
    EXPECT_DOUBLE_EQ(LatencyHistogram::BoundSeconds(0), 16e-6);
    EXPECT_DOUBLE_EQ(LatencyHistogram::BoundSeconds(6), 1024e-6);
    EXPECT_DOUBLE_EQ(LatencyHistogram::BoundSeconds(20), 16.777216);
    EXPECT_TRUE(std::isinf(LatencyHistogram::BoundSeconds(21)));
}

LatencyHistogram Histogram(std::vector<std::pair<size_t, uint64_t>> set, uint64_t sum_ns) {
    LatencyHistogram h;
    h.buckets.assign(CHORUS_LAT_BUCKETS, 0);
    for (auto [i, n] : set)
        h.buckets[i] = n;
    h.sum_ns = sum_ns;
    return h;
}

// An owner with one connected replica, the way the kernel reports it.
VolumeInfo Owner() {
    VolumeInfo v;
    v.name = "vol0";
    v.disk_name = "chorus0";
    v.uuid = ParseUuid("3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
    v.size_bytes = 64 << 20;
    v.state = CHORUS_VOLUME_STATE_ONLINE;
    v.open_count = 1;
    v.held_io = 0;
    v.role = CHORUS_ROLE_OWNER;
    v.epoch = 5;
    VolumeStats s;
    s.reads = 10;
    s.read_bytes = 40960;
    s.writes = 7;
    s.write_bytes = 28672;
    s.flushes = 2;
    s.errors = 1;
    s.read_latency = Histogram({{0, 4}, {2, 6}}, 350000);
    s.write_latency = Histogram({{5, 3}, {9, 3}, {21, 1}}, 20000000000);
    v.stats = s;
    PeerInfo p;
    p.node_id = 2;
    p.conn_state = CHORUS_CONN_CONNECTED;
    p.repl_state = CHORUS_REPL_SYNCING;
    p.in_writeset = true;
    p.active_transport = CHORUS_TRANSPORT_TCP;
    p.held = 3;
    p.al_waiting = 1;
    p.dirty_bytes = 1 << 20;
    p.sync_total_bytes = 4 << 20;
    p.sync_done_bytes = 3 << 20;
    p.sync_rate = 50 << 20;
    p.resynced_bytes = 3 << 20;
    p.verify_running = false;
    p.verify_done_bytes = 64 << 20;
    p.verify_mismatches = 0;
    p.writes_sent = 7;
    p.bytes_sent = 28672;
    p.reconnects = 1;
    v.peers.push_back(p);
    return v;
}

std::string Expected() {
    std::ifstream in(std::string(CHORUS_SOURCE_ROOT) + "/tests/unit/data/metrics.txt");
    std::stringstream buf;
    buf << in.rdbuf();
    return buf.str();
}

TEST(MetricsCollector, ExactTextOfAnOwnerWithAReplica) {
    NodeHealth node{"0.1.0", 1, true, CHORUS_LEASE_VALID, true};
    std::string text = MetricsCollector::Collect(node, {Owner()});
    EXPECT_EQ(text, Expected()) << text;
    EXPECT_EQ(CheckExposition(text), "");
}

TEST(MetricsCollector, NoKernelIsANodeWithoutVolumes) {
    NodeHealth node{"0.1.0", 3, false, std::nullopt, std::nullopt};
    EXPECT_EQ(MetricsCollector::Collect(node, {}),
              "# HELP chorus_build_info Always 1; chorusd's version and this node's id.\n"
              "# TYPE chorus_build_info gauge\n"
              "chorus_build_info{version=\"0.1.0\",node=\"3\"} 1\n"
              "# HELP chorus_kernel_up 1 if chorus.ko answered this scrape on netlink.\n"
              "# TYPE chorus_kernel_up gauge\n"
              "chorus_kernel_up 0\n");
}

// Two volumes, one of them from a module without histograms or peers: each
// family still appears once, with its samples together.
TEST(MetricsCollector, SeveralVolumesKeepFamiliesTogether) {
    VolumeInfo old = Owner();
    old.name = "old";
    old.stats->read_latency.reset();
    old.stats->write_latency.reset();
    old.peers.clear();
    old.role.reset();
    old.epoch.reset();
    VolumeInfo replica = Owner();
    replica.name = "r.1";
    replica.role = CHORUS_ROLE_REPLICA;
    replica.peers[0].node_id = 1;
    replica.peers[0].active_transport = CHORUS_TRANSPORT_UNSPEC;
    NodeHealth node{"0.1.0", 2, true, CHORUS_LEASE_DISARMED, std::nullopt};
    std::string text = MetricsCollector::Collect(node, {old, Owner(), replica});
    EXPECT_EQ(CheckExposition(text), "") << text;
    EXPECT_NE(text.find("chorus_volume_role{volume=\"r.1\",role=\"replica\"} 1\n"),
              std::string::npos);
    EXPECT_EQ(text.find("chorus_volume_role{volume=\"old\""), std::string::npos);
    EXPECT_EQ(text.find("chorus_volume_read_latency_seconds_count{volume=\"old\"}"),
              std::string::npos);
    EXPECT_NE(text.find("chorus_peer_active_transport{volume=\"r.1\",peer=\"1\","
                        "transport=\"tcp\"} 0\n"),
              std::string::npos);
}

// Documentation/metrics.rst has the one table: every family is in it.
TEST(MetricsCollector, EveryFamilyIsDocumented) {
    std::ifstream in(std::string(CHORUS_SOURCE_ROOT) + "/Documentation/metrics.rst");
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string doc = buf.str();
    ASSERT_FALSE(doc.empty());
    for (const std::string& name : MetricsCollector::FamilyNames())
        EXPECT_NE(doc.find("``" + name + "``"), std::string::npos) << name << " not documented";
}

}  // namespace
}  // namespace chorus
