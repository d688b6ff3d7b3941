// ReadClusterView and DeleteVolume against a real etcd 3.4 member: one
// consistent read of nodes, statuses and volumes; damaged values named and
// their volumes kept apart so that nothing acts on them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "etcd_server.h"
#include "lib/cluster_view.h"

namespace chorus {
namespace {

VolumeSpec Spec(const std::string& name, std::vector<uint32_t> nodes) {
    VolumeSpec s;
    s.name = name;
    s.size_bytes = 64ull << 20;
    s.replicas = static_cast<uint32_t>(nodes.size());
    s.nodes = nodes;
    s.uuid = ParseUuid("5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
    return s;
}

class ClusterViewTest : public ::testing::Test {
protected:
    test::EtcdCluster etcd_;
    EtcdClient client_{etcd_.Options()};
    ClusterStore store_{client_};
};

TEST_F(ClusterViewTest, ReadsEverythingAtOneRevision) {
    int64_t lease = client_.LeaseGrant(30).id;
    client_.Put("/chorus/nodes/1",
                R"({"version":1,"node_id":1,"address":"10.99.0.1","port":7790,"hostname":"a"})",
                lease);
    NodeStatus st;
    st.node_id = 1;
    st.pool = PoolStatus{"pool", 1ull << 30, 512ull << 20};
    st.volumes["vol0"] = {{"role", "owner"}};
    client_.Put(NodeStatusKey(1), EncodeNodeStatus(st), lease);
    ASSERT_TRUE(store_.CreateVolume(Spec("vol0", {1, 2}), {{1}, {2}}));
    Ownership won;
    ASSERT_EQ(TakeRefusal::kNone, store_.TakeOwnership("vol0", 1, lease, &won));
    auto ws = store_.GetWriteSet("vol0");
    ASSERT_TRUE(ws && store_.RequestReplace("vol0", 2, ws->mod_revision));

    ClusterView v = ReadClusterView(client_);
    EXPECT_TRUE(v.problems.empty());
    ASSERT_EQ(1u, v.nodes.size());
    EXPECT_EQ("10.99.0.1", v.nodes[1].address);
    EXPECT_EQ(7790, v.nodes[1].port);
    EXPECT_EQ(lease, v.nodes[1].lease);
    ASSERT_TRUE(v.status[1].pool);
    EXPECT_EQ(512ull << 20, v.status[1].pool->free_bytes);
    EXPECT_EQ("owner", v.status[1].volumes["vol0"]["role"]);
    ASSERT_EQ(1u, v.volumes.count("vol0"));
    const VolumeState& vol = v.volumes["vol0"];
    ASSERT_TRUE(vol.writeset && vol.owner);
    EXPECT_EQ(std::vector<uint32_t>{2}, vol.writeset->value.out_of_date);
    EXPECT_EQ(won.epoch, vol.owner->epoch);
    ASSERT_TRUE(vol.replace);
    EXPECT_EQ(2u, vol.replace->value.node);
    EXPECT_GE(v.revision, won.epoch);
}

TEST_F(ClusterViewTest, DamagedValuesAreNamedAndTheirVolumesSetApart) {
    ASSERT_TRUE(store_.CreateVolume(Spec("good", {1}), {{1}, {}}));
    ASSERT_TRUE(store_.CreateVolume(Spec("badws", {1}), {{1}, {}}));
    ASSERT_TRUE(store_.CreateVolume(Spec("badmove", {1}), {{1}, {}}));
    ASSERT_TRUE(store_.CreateVolume(Spec("badreplace", {1}), {{1}, {}}));
    client_.Put("/chorus/writeset/badws", R"({"version":1,"members":[1],"out_of_date":[1]})");
    client_.Put("/chorus/move/badmove", R"({"version":1,"to":40,"from_epoch":3})");
    client_.Put("/chorus/replace/badreplace", R"({"version":1,"node":"two"})");
    client_.Put("/chorus/volumes/future", R"({"version":2,"name":"future"})");
    client_.Put("/chorus/nodes/3", "garbage");
    client_.Put("/chorus/nodes/4", R"({"version":1,"node_id":5,"address":""})");

    ClusterView v = ReadClusterView(client_);
    EXPECT_EQ(1u, v.volumes.size());
    EXPECT_EQ(1u, v.volumes.count("good"));
    EXPECT_TRUE(v.nodes.empty());
    std::sort(v.damaged.begin(), v.damaged.end());
    EXPECT_EQ((std::vector<std::string>{"badmove", "badreplace", "badws", "future"}), v.damaged);
    ASSERT_EQ(6u, v.problems.size());
    std::string all;
    for (const auto& p : v.problems)
        all += p + "\n";
    for (const char* key :
         {"/chorus/writeset/badws", "/chorus/move/badmove", "/chorus/replace/badreplace",
          "/chorus/volumes/future", "/chorus/nodes/3", "/chorus/nodes/4"})
        EXPECT_NE(std::string::npos, all.find(key)) << key << " not named in:\n" << all;
}

TEST_F(ClusterViewTest, DeleteRemovesEveryKeyOnlyIfTheSpecIsUnchanged) {
    ASSERT_TRUE(store_.CreateVolume(Spec("vol0", {1}), {{1}, {}}));
    Ownership won;
    int64_t lease = client_.LeaseGrant(30).id;
    ASSERT_EQ(TakeRefusal::kNone, store_.TakeOwnership("vol0", 1, lease, &won));
    auto spec = store_.GetVolume("vol0");
    ASSERT_TRUE(spec);
    EXPECT_FALSE(store_.DeleteVolume("vol0", spec->mod_revision - 1));
    EXPECT_TRUE(store_.GetVolume("vol0"));
    EXPECT_TRUE(store_.DeleteVolume("vol0", spec->mod_revision));
    EXPECT_FALSE(store_.GetVolume("vol0"));
    EXPECT_FALSE(store_.GetWriteSet("vol0"));
    EXPECT_FALSE(store_.GetOwner("vol0"));
    EXPECT_FALSE(store_.DeleteVolume("vol0", spec->mod_revision));
}

}  // namespace
}  // namespace chorus
