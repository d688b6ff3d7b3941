// FindUnsettled: which states of a volume chorusd's loop rechecks soon
// because the kernel or a hung watch may not tell it of their end.
#include <gtest/gtest.h>

#include <linux/chorus.h>

#include "chorusd/unsettled.h"

namespace chorus {
namespace {

using std::chrono::milliseconds;

constexpr uint32_t kSelf = 2;

PeerInfo Peer(uint32_t id, uint32_t conn_state, bool in_writeset) {
    PeerInfo p;
    p.node_id = id;
    p.conn_state = conn_state;
    p.repl_state = CHORUS_REPL_UP_TO_DATE;
    p.in_writeset = in_writeset;
    return p;
}

VolumeInfo Kernel(uint32_t role, std::vector<PeerInfo> peers) {
    VolumeInfo kv;
    kv.name = "vol0";
    kv.role = role;
    kv.peers = std::move(peers);
    return kv;
}

// vol0 on nodes 1 and 2, both members, owned by owner (0: no owner key).
ClusterView View(uint32_t owner) {
    ClusterView view;
    VolumeState vol;
    vol.spec.value.name = "vol0";
    vol.spec.value.nodes = {1, 2};
    vol.writeset = Revisioned<WriteSet>{WriteSet{{1, 2}, {}}, 10};
    if (owner != 0)
        vol.owner = Ownership{owner, 11, 99};
    view.volumes["vol0"] = vol;
    return view;
}

TEST(UnsettledTest, AHealthyVolumeIsSettledOnEitherSide) {
    EXPECT_FALSE(FindUnsettled(
        View(kSelf), {Kernel(CHORUS_ROLE_OWNER, {Peer(1, CHORUS_CONN_CONNECTED, true)})}, kSelf));
    EXPECT_FALSE(FindUnsettled(
        View(1), {Kernel(CHORUS_ROLE_REPLICA, {Peer(1, CHORUS_CONN_CONNECTED, true)})}, kSelf));
}

// Failover: the owner key may go while the watch stream hangs on the dead
// owner's etcd member.
TEST(UnsettledTest, AReplicaThatLostItsOwnerRechecksAt250ms) {
    auto u = FindUnsettled(
        View(1), {Kernel(CHORUS_ROLE_REPLICA, {Peer(1, CHORUS_CONN_UNREACHABLE, true)})}, kSelf);
    ASSERT_TRUE(u);
    EXPECT_EQ(u->recheck, milliseconds(250));
    EXPECT_NE(u->why.find("the owner, node 1, is not connected"), std::string::npos) << u->why;
    EXPECT_TRUE(FindUnsettled(View(0), {Kernel(CHORUS_ROLE_REPLICA, {})}, kSelf));
}

TEST(UnsettledTest, AReplicaOutOfDateHasNothingToBeQuickFor) {
    ClusterView view = View(1);
    view.volumes["vol0"].writeset->value = WriteSet{{1}, {2}};
    EXPECT_FALSE(FindUnsettled(
        view, {Kernel(CHORUS_ROLE_REPLICA, {Peer(1, CHORUS_CONN_UNREACHABLE, false)})}, kSelf));
}

// Writes held for a peer make it unreachable without an event.
TEST(UnsettledTest, AnOwnerWithAMemberNotConnectedRechecksAt250ms) {
    auto u = FindUnsettled(
        View(kSelf), {Kernel(CHORUS_ROLE_OWNER, {Peer(1, CHORUS_CONN_CONNECTING, true)})}, kSelf);
    ASSERT_TRUE(u);
    EXPECT_EQ(u->recheck, milliseconds(250));
    // Once out of the write set, in the store and the kernel, it waits for
    // its reconnection, which the kernel announces.
    ClusterView view = View(kSelf);
    view.volumes["vol0"].writeset->value = WriteSet{{kSelf}, {1}};
    EXPECT_FALSE(FindUnsettled(
        view, {Kernel(CHORUS_ROLE_OWNER, {Peer(1, CHORUS_CONN_UNREACHABLE, false)})}, kSelf));
}

TEST(UnsettledTest, AResyncIsRecheckedEverySecondForItsProgress) {
    PeerInfo p = Peer(1, CHORUS_CONN_CONNECTED, false);
    p.repl_state = CHORUS_REPL_SYNCING;
    p.sync_total_bytes = 1 << 20;
    ClusterView view = View(kSelf);
    view.volumes["vol0"].writeset->value = WriteSet{{kSelf}, {1}};
    auto u = FindUnsettled(view, {Kernel(CHORUS_ROLE_OWNER, {p})}, kSelf);
    ASSERT_TRUE(u);
    EXPECT_EQ(u->recheck, milliseconds(1000));
}

TEST(UnsettledTest, AMoveInProgressRechecksAt250ms) {
    ClusterView view = View(kSelf);
    view.volumes["vol0"].move = Revisioned<MoveRequest>{MoveRequest{1, 11}, 12};
    auto u = FindUnsettled(
        view, {Kernel(CHORUS_ROLE_OWNER, {Peer(1, CHORUS_CONN_CONNECTED, true)})}, kSelf);
    ASSERT_TRUE(u);
    EXPECT_EQ(u->recheck, milliseconds(250));
}

TEST(UnsettledTest, AVolumeNotInTheStoreIsNotThisLoopsToRecheck) {
    EXPECT_FALSE(FindUnsettled(ClusterView{}, {Kernel(CHORUS_ROLE_OWNER, {})}, kSelf));
}

}  // namespace
}  // namespace chorus
