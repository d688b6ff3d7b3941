// ClusterStore against a real etcd 3.4 member (etcd_server.h): the volume
// keys, owner elections whose epochs grow, write-set changes guarded by the
// owner key, and values that chorus must refuse to use.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "etcd_server.h"
#include "lib/cluster_store.h"

namespace chorus {
namespace {

VolumeSpec Spec(const std::string& name = "vol0") {
    VolumeSpec s;
    s.name = name;
    s.size_bytes = 1ull << 30;
    s.replicas = 2;
    s.nodes = {1, 2};
    s.transport = "rdma+tcp";
    s.uuid = ParseUuid("5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
    return s;
}

class ClusterStoreTest : public ::testing::Test {
protected:
    test::EtcdCluster etcd_;
    EtcdClient client_{etcd_.Options()};
    ClusterStore store_{client_};

    int64_t Lease() { return client_.LeaseGrant(30).id; }
};

TEST_F(ClusterStoreTest, CreateVolumeOnceAndReadItBack) {
    ASSERT_TRUE(store_.CreateVolume(Spec(), {{1, 2}, {}}));
    EXPECT_FALSE(store_.CreateVolume(Spec(), {{1}, {}})) << "a volume was created twice";
    auto spec = store_.GetVolume("vol0");
    ASSERT_TRUE(spec);
    EXPECT_EQ(spec->value.nodes, (std::vector<uint32_t>{1, 2}));
    EXPECT_EQ(spec->value.transport, "rdma+tcp");
    EXPECT_EQ(FormatUuid(spec->value.uuid), "5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d");
    auto ws = store_.GetWriteSet("vol0");
    ASSERT_TRUE(ws);
    EXPECT_EQ(ws->value.members, (std::vector<uint32_t>{1, 2}));
    EXPECT_FALSE(store_.GetVolume("nosuch"));
    EXPECT_FALSE(store_.GetOwner("vol0"));
}

TEST_F(ClusterStoreTest, OnlyOneNodeWinsAndEpochsGrow) {
    ASSERT_TRUE(store_.CreateVolume(Spec(), {{1, 2}, {}}));
    const int64_t l1 = Lease(), l2 = Lease();
    Ownership first, other;
    ASSERT_EQ(store_.TakeOwnership("vol0", 1, l1, &first), TakeRefusal::kNone);
    EXPECT_EQ(store_.TakeOwnership("vol0", 2, l2, &other), TakeRefusal::kOwned);
    auto owner = store_.GetOwner("vol0");
    ASSERT_TRUE(owner);
    EXPECT_EQ(owner->node_id, 1u);
    EXPECT_EQ(owner->epoch, first.epoch);
    EXPECT_EQ(owner->lease, l1);

    // The owner's session ends: its key goes, and the next epoch is higher.
    client_.LeaseRevoke(l1);
    EXPECT_FALSE(store_.GetOwner("vol0"));
    Ownership second;
    ASSERT_EQ(store_.TakeOwnership("vol0", 2, l2, &second), TakeRefusal::kNone);
    EXPECT_GT(second.epoch, first.epoch);
}

// A planned move: requested once, only of the current owner; bound to the
// target's session (forgotten if it ends); the owner's key given up only by
// it; the target's key a new, higher epoch; the request ended from its
// revision.
TEST_F(ClusterStoreTest, MoveIsRequestedOfTheOwnerAndBoundToTheTarget) {
    ASSERT_TRUE(store_.CreateVolume(Spec(), {{1, 2}, {}}));
    const int64_t l1 = Lease(), l2 = Lease();
    Ownership first, second;
    ASSERT_EQ(store_.TakeOwnership("vol0", 1, l1, &first), TakeRefusal::kNone);
    Ownership stale = first;
    stale.epoch--;
    EXPECT_FALSE(store_.RequestMove("vol0", stale, 2, l2)) << "a move of a stale owner";
    ASSERT_TRUE(store_.RequestMove("vol0", first, 2, l2));
    EXPECT_FALSE(store_.RequestMove("vol0", first, 2, l2)) << "two moves at once";
    auto kvs = client_.Range(EtcdKeys::Key(MoveKey("vol0"))).kvs;
    ASSERT_EQ(kvs.size(), 1u);
    EXPECT_EQ(kvs[0].lease, l2);
    MoveRequest m = DecodeMoveRequest(kvs[0].key, kvs[0].value);
    EXPECT_EQ(m.to, 2u);
    EXPECT_EQ(m.from_epoch, first.epoch);

    Ownership other = first;
    other.lease = l2;
    EXPECT_FALSE(store_.ReleaseOwnership("vol0", other)) << "released by another session";
    ASSERT_TRUE(store_.ReleaseOwnership("vol0", first));
    EXPECT_FALSE(store_.GetOwner("vol0"));
    ASSERT_EQ(store_.TakeOwnership("vol0", 2, l2, &second), TakeRefusal::kNone);
    EXPECT_GT(second.epoch, first.epoch);
    EXPECT_FALSE(store_.EndMove("vol0", kvs[0].mod_revision - 1));
    ASSERT_TRUE(store_.EndMove("vol0", kvs[0].mod_revision));

    // A move to a node whose session ends is forgotten with it.
    ASSERT_TRUE(store_.RequestMove("vol0", second, 1, l1));
    client_.LeaseRevoke(l1);
    EXPECT_TRUE(client_.Range(EtcdKeys::Key(MoveKey("vol0"))).kvs.empty());
    EXPECT_THROW(DecodeMoveRequest(MoveKey("vol0"), R"({"version":1,"to":40,"from_epoch":3})"),
                 StoreValueError);
}

// A disk replacement: requested once, only against the write set the
// caller checked; ended from its revision; deleted with the volume; a
// request naming no node in 1..32 is refused.
TEST_F(ClusterStoreTest, ReplaceIsRequestedAgainstTheWriteSetSeen) {
    ASSERT_TRUE(store_.CreateVolume(Spec(), {{1}, {2}}));
    auto ws = store_.GetWriteSet("vol0");
    ASSERT_TRUE(ws);
    EXPECT_FALSE(store_.RequestReplace("vol0", 2, ws->mod_revision - 1))
        << "a request against a write set that changed since";
    ASSERT_TRUE(store_.RequestReplace("vol0", 2, ws->mod_revision));
    EXPECT_FALSE(store_.RequestReplace("vol0", 2, ws->mod_revision)) << "two at once";
    auto kvs = client_.Range(EtcdKeys::Key(ReplaceKey("vol0"))).kvs;
    ASSERT_EQ(kvs.size(), 1u);
    EXPECT_EQ(DecodeReplaceRequest(kvs[0].key, kvs[0].value).node, 2u);
    EXPECT_FALSE(store_.EndReplace("vol0", kvs[0].mod_revision - 1));
    ASSERT_TRUE(store_.EndReplace("vol0", kvs[0].mod_revision));
    EXPECT_TRUE(client_.Range(EtcdKeys::Key(ReplaceKey("vol0"))).kvs.empty());

    ASSERT_TRUE(store_.RequestReplace("vol0", 2, ws->mod_revision));
    auto spec = store_.GetVolume("vol0");
    ASSERT_TRUE(store_.DeleteVolume("vol0", spec->mod_revision));
    EXPECT_TRUE(client_.Range(EtcdKeys::Key(ReplaceKey("vol0"))).kvs.empty());
    EXPECT_THROW(DecodeReplaceRequest(ReplaceKey("vol0"), R"({"version":1,"node":0})"),
                 StoreValueError);
    EXPECT_THROW(DecodeReplaceRequest(ReplaceKey("vol0"), R"({"version":1})"), StoreValueError);
}

TEST_F(ClusterStoreTest, RacingNodesElectExactlyOne) {
    for (uint32_t n = 1; n <= 3; n++)
        ASSERT_TRUE(store_.CreateVolume(Spec("r" + std::to_string(n)), {{1, 2, 3}, {}}));
    for (int round = 1; round <= 3; round++) {
        const std::string vol = "r" + std::to_string(round);
        std::vector<TakeRefusal> results(3);
        std::vector<std::thread> threads;
        for (uint32_t n = 1; n <= 3; n++)
            threads.emplace_back([&, n] {
                EtcdClient own(etcd_.Options());
                ClusterStore store(own);
                Ownership o;
                results[n - 1] = store.TakeOwnership(vol, n, own.LeaseGrant(30).id, &o);
            });
        for (auto& t : threads)
            t.join();
        int won = 0;
        for (TakeRefusal r : results) {
            EXPECT_TRUE(r == TakeRefusal::kNone || r == TakeRefusal::kOwned ||
                        r == TakeRefusal::kRaced);
            won += r == TakeRefusal::kNone;
        }
        EXPECT_EQ(won, 1) << vol;
    }
}

TEST_F(ClusterStoreTest, OnlyUpToDateMembersMayTakeOwnership) {
    ASSERT_TRUE(store_.CreateVolume(Spec(), {{1}, {2}}));
    Ownership o;
    EXPECT_EQ(store_.TakeOwnership("vol0", 2, Lease(), &o), TakeRefusal::kNotMember);
    EXPECT_EQ(store_.TakeOwnership("vol0", 3, Lease(), &o), TakeRefusal::kNotMember);
    EXPECT_EQ(store_.TakeOwnership("nosuch", 1, Lease(), &o), TakeRefusal::kNoVolume);
    EXPECT_FALSE(store_.GetOwner("vol0"));
}

TEST_F(ClusterStoreTest, WriteSetChangesNeedTheCurrentOwnerKey) {
    ASSERT_TRUE(store_.CreateVolume(Spec(), {{1, 2}, {}}));
    const int64_t l1 = Lease();
    Ownership mine;
    ASSERT_EQ(store_.TakeOwnership("vol0", 1, l1, &mine), TakeRefusal::kNone);
    auto ws = store_.GetWriteSet("vol0");
    ASSERT_TRUE(ws);

    // Node 2 unreachable: the owner records it out of date, once.
    ASSERT_TRUE(store_.ChangeWriteSet("vol0", mine, ws->mod_revision, {{1}, {2}}));
    EXPECT_FALSE(store_.ChangeWriteSet("vol0", mine, ws->mod_revision, {{1}, {2}}))
        << "a change on a stale write set was accepted";
    ws = store_.GetWriteSet("vol0");
    EXPECT_EQ(ws->value.out_of_date, (std::vector<uint32_t>{2}));

    // A stale owner (another epoch, or its lease gone) changes nothing.
    Ownership stale = mine;
    stale.epoch -= 1;
    EXPECT_FALSE(store_.ChangeWriteSet("vol0", stale, ws->mod_revision, {{1, 2}, {}}));
    client_.LeaseRevoke(l1);
    EXPECT_FALSE(store_.ChangeWriteSet("vol0", mine, ws->mod_revision, {{1, 2}, {}}));
    EXPECT_EQ(store_.GetWriteSet("vol0")->value.out_of_date, (std::vector<uint32_t>{2}));
}

TEST_F(ClusterStoreTest, GarbageAndFutureValuesAreRefusedByName) {
    struct Case {
        std::string value;
        std::string expect;
    };
    const std::vector<Case> cases = {
        {"not json", "not a JSON object"},
        {"[1,2]", "not a JSON object"},
        {R"({"name":"vol0"})", "no integer 'version'"},
        {R"({"version":2,"name":"vol0"})", "version 2 is not 1"},
        {R"({"version":1,"name":"other","size_bytes":4096,"replicas":1,"nodes":[1],)"
         R"("transport":"tcp","uuid":"5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"})",
         "names volume 'other'"},
        {R"({"version":1,"name":"vol0","size_bytes":100,"replicas":1,"nodes":[1],)"
         R"("transport":"tcp","uuid":"5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"})",
         "size_bytes 100"},
        {R"({"version":1,"name":"vol0","size_bytes":4096,"replicas":2,"nodes":[1,1],)"
         R"("transport":"tcp","uuid":"5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"})",
         "names node 1 twice"},
        {R"({"version":1,"name":"vol0","size_bytes":4096,"replicas":1,"nodes":[40],)"
         R"("transport":"tcp","uuid":"5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"})",
         "node 40, not in 1..32"},
        {R"({"version":1,"name":"vol0","size_bytes":4096,"replicas":1,"nodes":[1],)"
         R"("transport":"udp","uuid":"5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"})",
         "transport 'udp'"},
        {R"({"version":1,"name":"vol0","size_bytes":"big","replicas":1,"nodes":[1],)"
         R"("transport":"tcp","uuid":"x"})",
         "'size_bytes' has the wrong type"},
        {R"({"version":1,"name":"vol0","size_bytes":4096,"replicas":1,"nodes":[1],)"
         R"("transport":"tcp","uuid":"x"})",
         "uuid"},
    };
    for (const Case& c : cases) {
        client_.Put(VolumeSpecKey("vol0"), c.value);
        try {
            store_.GetVolume("vol0");
            ADD_FAILURE() << "accepted: " << c.value;
        } catch (const StoreValueError& e) {
            EXPECT_NE(std::string(e.what()).find("/chorus/volumes/vol0"), std::string::npos)
                << e.what();
            EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos)
                << e.what() << "\nexpected: " << c.expect;
        }
    }
    client_.Put(WriteSetKey("vol0"), R"({"version":1,"members":[1],"out_of_date":[1]})");
    EXPECT_THROW(store_.GetWriteSet("vol0"), StoreValueError);
    client_.Put(OwnerKey("vol0"), R"({"version":1,"node_id":0})");
    EXPECT_THROW(store_.GetOwner("vol0"), StoreValueError);
}

}  // namespace
}  // namespace chorus
