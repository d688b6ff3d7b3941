// The access strategies (lib/access_strategy.h) on hand-made views: the
// assignments Documentation/access.md documents for 3 subsystems x 4
// namespaces on 3 nodes, after a node is lost and after it returns.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "lib/access_strategy.h"

namespace chorus {
namespace {

// 3 subsystems s1..s3, each with 4 namespaces of volumes <s>v1..<s>v4,
// every volume on nodes 1..3, all members, owned by owner(volume).
template <typename OwnerOf>
ClusterView View(const std::string& strategy, OwnerOf owner,
                 std::vector<uint32_t> live = {1, 2, 3}) {
    ClusterView v;
    for (uint32_t id : live)
        v.nodes[id] = NodeRecord{id, "10.99.0." + std::to_string(id), 7788, "", 1};
    for (int s = 1; s <= 3; s++) {
        ExportSpec e;
        e.nqn = "nqn.2026-11.org.chorus:s" + std::to_string(s);
        e.allow_any_host = true;
        e.strategy = strategy;
        for (uint32_t n = 1; n <= 4; n++) {
            const std::string name = "s" + std::to_string(s) + "v" + std::to_string(n);
            VolumeState vol;
            vol.spec.value.name = name;
            vol.spec.value.nodes = {1, 2, 3};
            vol.writeset = Revisioned<WriteSet>{{live, {}}, 1};
            vol.owner = Ownership{owner(name), 10, 1};
            v.volumes[name] = vol;
            e.namespaces.push_back({n, name});
        }
        v.exports[e.nqn] = {e, 1};
    }
    return v;
}

// "s1v1" -> node, for every volume; and how many each node got.
std::map<uint32_t, int> Count(const std::map<std::string, AccessPoint>& a) {
    std::map<uint32_t, int> c;
    for (const auto& [vol, ap] : a)
        c[ap.node_id]++;
    return c;
}

int Moves(const ClusterView& v, const std::map<std::string, AccessPoint>& a) {
    int n = 0;
    for (const auto& [vol, ap] : a)
        n += v.volumes.at(vol).owner->node_id != ap.node_id;
    return n;
}

TEST(AccessStrategy, BalanceSpreadsEachSubsystemAndTheCluster) {
    ClusterView v = View("balance", [](const std::string&) { return 1u; });
    auto a = AssignAccessPoints(v);
    ASSERT_EQ(a.size(), 12u);
    EXPECT_EQ(Count(a), (std::map<uint32_t, int>{{1, 4}, {2, 4}, {3, 4}}));
    for (int s = 1; s <= 3; s++) {
        std::map<uint32_t, int> per;
        for (int n = 1; n <= 4; n++)
            per[a.at("s" + std::to_string(s) + "v" + std::to_string(n)).node_id]++;
        EXPECT_EQ(per.size(), 3u) << "subsystem " << s << " does not use every node";
    }
    // The documented assignment, volume by volume.
    std::map<std::string, uint32_t> want = {{"s1v1", 1}, {"s1v2", 2}, {"s1v3", 3}, {"s1v4", 1},
                                            {"s2v1", 1}, {"s2v2", 2}, {"s2v3", 3}, {"s2v4", 2},
                                            {"s3v1", 1}, {"s3v2", 3}, {"s3v3", 2}, {"s3v4", 3}};
    for (const auto& [vol, node] : want)
        EXPECT_EQ(a.at(vol).node_id, node) << vol;
    // Balanced already: nothing moves.
    ClusterView settled = View("balance", [&](const std::string& n) { return want.at(n); });
    EXPECT_EQ(Moves(settled, AssignAccessPoints(settled)), 0);
}

TEST(AccessStrategy, BalanceAfterANodeIsLostAndWhenItReturns) {
    // Node 3 is gone: its volumes failed over to node 1.
    auto owner = [](const std::string& n) { return n.back() == '3' || n.back() == '4' ? 1u : 2u; };
    ClusterView lost = View("balance", owner, {1, 2});
    auto a = AssignAccessPoints(lost);
    EXPECT_EQ(Count(a), (std::map<uint32_t, int>{{1, 6}, {2, 6}}));
    EXPECT_EQ(Moves(lost, a), 0) << "2 + 2 per subsystem is even already";
    // Node 3 is back and up to date: each subsystem gives it one volume,
    // and one more moves so that the cluster is even too (4 would keep each
    // subsystem even, 5 evens the cluster: the tie goes to the node with
    // fewer volumes before the current owner).
    ClusterView back = View("balance", owner);
    auto b = AssignAccessPoints(back);
    EXPECT_EQ(Count(b), (std::map<uint32_t, int>{{1, 4}, {2, 4}, {3, 4}}));
    EXPECT_EQ(Moves(back, b), 5);
}

TEST(AccessStrategy, InheritGivesASubsystemOneAccessPoint) {
    // s1 mostly on 2, s2 split, s3 on 3.
    auto owner = [](const std::string& n) -> uint32_t {
        if (n.rfind("s1", 0) == 0)
            return n == "s1v1" ? 1 : 2;
        if (n.rfind("s2", 0) == 0)
            return n.back() <= '2' ? 1 : 3;
        return 3;
    };
    ClusterView v = View("inherit", owner);
    auto a = AssignAccessPoints(v);
    for (int n = 1; n <= 4; n++) {
        EXPECT_EQ(a.at("s1v" + std::to_string(n)).node_id, 2u);
        EXPECT_EQ(a.at("s2v" + std::to_string(n)).node_id, 1u) << "tie: fewest so far, lowest id";
        EXPECT_EQ(a.at("s3v" + std::to_string(n)).node_id, 3u);
    }
    EXPECT_EQ(a.at("s1v1").strategy, "inherit");
    EXPECT_EQ(a.at("s1v1").nqn, "nqn.2026-11.org.chorus:s1");
}

TEST(AccessStrategy, NoneAndVolumesNoNodeCanOwnAreLeftAlone) {
    ClusterView v = View("none", [](const std::string&) { return 1u; });
    EXPECT_TRUE(AssignAccessPoints(v).empty());
    ClusterView w = View("balance", [](const std::string&) { return 1u; });
    w.volumes["s1v2"].writeset->value.members = {5};  // no live member
    auto a = AssignAccessPoints(w);
    EXPECT_EQ(a.count("s1v2"), 0u);
    EXPECT_EQ(a.size(), 11u);
    EXPECT_EQ(StrategyProblem("balance"), "");
    EXPECT_EQ(StrategyProblem("spread"), "strategy 'spread' is not balance, inherit or none");
}

// Diskless access points: an exported 2-replica volume gets the lowest live
// node without a replica, so that three nodes serve it; none for a volume
// with three replicas, one in no export, or when no such node is live.
TEST(AccessStrategy, DisklessNodesMakeThreeAccessPoints) {
    ClusterView v = View("none", [](const std::string&) { return 1u; }, {1, 2, 3, 4});
    v.volumes["s1v1"].spec.value.nodes = {2, 4};
    EXPECT_EQ(DisklessNodes(v, "s1v1"), (std::vector<uint32_t>{1}));
    v.volumes["s1v1"].spec.value.nodes = {2};
    EXPECT_EQ(DisklessNodes(v, "s1v1"), (std::vector<uint32_t>{1, 3}));
    EXPECT_TRUE(DisklessNodes(v, "s1v2").empty());  // three replicas
    EXPECT_TRUE(DisklessNodes(v, "nosuch").empty());
    VolumeState lone = v.volumes["s1v1"];
    lone.spec.value.name = "lone";
    v.volumes["lone"] = lone;  // in no export
    EXPECT_TRUE(DisklessNodes(v, "lone").empty());
    v.nodes.erase(1);
    v.nodes.erase(3);
    v.volumes["s1v1"].spec.value.nodes = {2, 4};
    EXPECT_TRUE(DisklessNodes(v, "s1v1").empty());  // no live node without a replica
}

}  // namespace
}  // namespace chorus
