// The pieces of volume placement that need neither etcd nor LVM: parsing
// LVM's JSON reports, the room a replica takes, and choosing nodes.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "lib/cluster_view.h"
#include "lib/lvm.h"
#include "lib/meta.h"
#include "lib/placement.h"
#include "lib/process.h"
#include "lib/replica_disk.h"

namespace chorus {
namespace {

TEST(LvmReportTest, ParsesVgsAndLvs) {
    auto vgs = ParseVgsReport(R"({"report":[{"vg":[{"vg_name":"pool","vg_size":"1069547520",
        "vg_free":"935329792","vg_extent_size":"4194304"}]}]})");
    ASSERT_EQ(1u, vgs.size());
    EXPECT_EQ("pool", vgs[0].vg);
    EXPECT_EQ(1069547520u, vgs[0].size_bytes);
    EXPECT_EQ(935329792u, vgs[0].free_bytes);
    EXPECT_EQ(4194304u, vgs[0].extent_bytes);

    auto lvs = ParseLvsReport(R"({"report":[{"lv":[{"lv_name":"chorus-vol0",
        "lv_path":"/dev/pool/chorus-vol0","lv_size":"134217728",
        "lv_tags":"chorus_uuid=5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d,other"},
        {"lv_name":"root","lv_path":"/dev/pool/root","lv_size":"4194304","lv_tags":""}]}]})");
    ASSERT_EQ(2u, lvs.size());
    EXPECT_TRUE(lvs[0].HasTag("chorus_uuid=5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"));
    EXPECT_TRUE(lvs[0].HasTag("other"));
    EXPECT_TRUE(lvs[1].tags.empty());
    EXPECT_EQ("chorus_uuid=5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
              ReplicaLvTag(ParseUuid("5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")));
    EXPECT_EQ("chorus-vol0", ReplicaLvName("vol0"));
}

TEST(ReplicaLvNameTest, AFailedDiskBelongsToItsVolume) {
    using Names = std::vector<std::string>;
    EXPECT_EQ(Names{"vol0"}, VolumesOfReplicaLv("chorus-vol0"));
    EXPECT_EQ(Names{"vol0"}, VolumesOfReplicaLv(ReplicaLvName("vol0")));
    // Either vol0's failed disk or the replica of a volume named
    // "vol0.failed": the logical volume's tag decides.
    EXPECT_EQ((Names{"vol0.failed", "vol0"}), VolumesOfReplicaLv(FailedReplicaLvName("vol0")));
    EXPECT_EQ(Names{".failed"}, VolumesOfReplicaLv("chorus-.failed"));
    EXPECT_TRUE(VolumesOfReplicaLv("chorus-").empty());
    EXPECT_TRUE(VolumesOfReplicaLv("root").empty());
    EXPECT_TRUE(VolumesOfReplicaLv("chorusvol0").empty());
}

TEST(LvmReportTest, RefusesReportsThatDoNotParse) {
    EXPECT_THROW(ParseVgsReport("  WARNING: something"), LvmError);
    EXPECT_THROW(ParseVgsReport(R"({"report":[]})"), LvmError);
    EXPECT_THROW(ParseVgsReport(R"({"report":[{"vg":[{"vg_name":"p","vg_size":"12x",
        "vg_free":"1","vg_extent_size":"1"}]}]})"),
                 LvmError);
}

TEST(DeviceBytesTest, TheDeviceHoldsTheDataAndItsMetadata) {
    for (uint64_t data : {4096ull, 1ull << 20, 64ull << 20, 10ull << 30, (1ull << 40) + 4096}) {
        uint64_t device = DeviceBytesFor(data);
        MetaLayout l = ComputeLayout(device, 512, data, 4096);
        EXPECT_EQ(data, l.data_bytes);
        // Not wasteful: one block less would not do.
        EXPECT_THROW(ComputeLayout(device - CHORUS_META_BLOCK, 512, data, 4096), Error) << data;
        EXPECT_EQ(0u, PoolBytesFor(data) % (4u << 20));
        EXPECT_GE(PoolBytesFor(data), device);
    }
    EXPECT_THROW(DeviceBytesFor(0), Error);
}

ClusterView ThreeNodes(uint64_t free1, uint64_t free2, uint64_t free3) {
    ClusterView v;
    uint64_t free[] = {free1, free2, free3};
    for (uint32_t id = 1; id <= 3; id++) {
        v.nodes[id] = NodeRecord{id, "10.99.0." + std::to_string(id), 7788, "vm", 1};
        NodeStatus s;
        s.node_id = id;
        s.pool = PoolStatus{"pool", 1ull << 30, free[id - 1]};
        v.status[id] = s;
    }
    return v;
}

TEST(PlacementTest, MostRoomFirstOneReplicaPerNode) {
    ClusterView v = ThreeNodes(100ull << 20, 900ull << 20, 500ull << 20);
    EXPECT_EQ((std::vector<uint32_t>{2, 3}), PlaceReplicas(v, 64ull << 20, 2, {}));
    EXPECT_EQ((std::vector<uint32_t>{2, 3, 1}), PlaceReplicas(v, 64ull << 20, 3, {}));
    // Node 1 has no room for 256 MiB: three replicas cannot be placed.
    try {
        PlaceReplicas(v, 256ull << 20, 3, {});
        FAIL() << "placed three replicas on two nodes with room";
    } catch (const Error& e) {
        EXPECT_EQ(ENOSPC, e.errnum());
        EXPECT_NE(std::string::npos, std::string(e.what()).find("node 1 has no room")) << e.what();
    }
}

TEST(PlacementTest, NodesAskedForAreCheckedAndKeptInOrder) {
    ClusterView v = ThreeNodes(900ull << 20, 900ull << 20, 8ull << 20);
    EXPECT_EQ((std::vector<uint32_t>{2, 1}), PlaceReplicas(v, 64ull << 20, 2, {2, 1}));
    auto errnum = [&](std::vector<uint32_t> nodes, uint32_t replicas) {
        try {
            PlaceReplicas(v, 64ull << 20, replicas, nodes);
        } catch (const Error& e) {
            return e.errnum();
        }
        return 0;
    };
    EXPECT_EQ(ENOENT, errnum({1, 7}, 2));  // not a member
    EXPECT_EQ(ENOSPC, errnum({1, 3}, 2));  // no room
    EXPECT_EQ(EINVAL, errnum({1, 1}, 2));  // twice
    EXPECT_EQ(EINVAL, errnum({1, 2}, 3));  // count
    v.status.erase(2);
    EXPECT_EQ(ENOSPC, errnum({1, 2}, 2));  // no pool reported
}

TEST(ProcessTest, CollectsOutputAndStatusAndKillsWhatHangs) {
    ProcessResult r = RunProcess({"sh", "-c", "echo out; echo err >&2; exit 3"});
    EXPECT_EQ(3, r.exit_status);
    EXPECT_EQ("out\n", r.out);
    EXPECT_EQ("err", r.err);
    r = RunProcess({"sleep", "10"}, std::chrono::milliseconds(200));
    EXPECT_FALSE(r.ok());
    EXPECT_NE(std::string::npos, r.err.find("killed after 200 ms"));
    EXPECT_THROW(RunProcess({"/nonexistent/program"}), Error);
}

}  // namespace
}  // namespace chorus
