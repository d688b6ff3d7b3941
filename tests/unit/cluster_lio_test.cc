// The cluster's LIO plan (lib/cluster_lio.h) from hand-made views, and what
// pruning and applying it do to a plain tree standing in for LIO's
// configfs: the same identity on every node, the ALUA state as the owner
// says, the order LIO needs, an owner change rewriting one state, a device
// that changes remaking its backstore (its LUN's link first), a node cut off
// showing unavailable, and nothing left once iSCSI is off.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "lib/cluster_lio.h"
#include "lib/configfs.h"
#include "test_util.h"

namespace chorus {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;
using test::WriteFile;

const char kNqn[] = "nqn.2026-11.org.chorus:db";
const char kIqn[] = "iqn.2026-11.org.chorus:db";
const std::string kTpg = std::string("target/iscsi/") + kIqn + "/tpgt_1";
const char kInitiator[] = "iqn.1993-08.org.debian:01:host4";
const char kUuid0[] = "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f";
const std::string kStore0 = std::string(kLioHba) + "/vol0";

Config NodeConfig(uint32_t id, bool iscsi = true) {
    const std::string ip = "10.99.0." + std::to_string(id);
    return ParseConfig("[node]\nid = " + std::to_string(id) +
                           "\n[cluster]\netcd = [\"http://10.99.0.1:2379\"]\n" +
                           (iscsi ? "[iscsi]\nportals = [\"" + ip + "\"]\n" : ""),
                       "node.conf");
}

VolumeState Volume(const std::string& name, std::vector<uint32_t> nodes,
                   std::optional<uint32_t> owner, const char* uuid) {
    VolumeState v;
    v.spec.value.name = name;
    v.spec.value.nodes = std::move(nodes);
    v.spec.value.replicas = static_cast<uint32_t>(v.spec.value.nodes.size());
    v.spec.value.size_bytes = 1 << 20;
    v.spec.value.uuid = ParseUuid(uuid);
    if (owner)
        v.owner = Ownership{*owner, 42, 7};
    return v;
}

// vol0 on nodes 1, 2 and 3, owned by 2; vol1 on nodes 1 and 3, no owner;
// both exported over iSCSI and NVMe/TCP to one initiator.
ClusterView View() {
    ClusterView v;
    v.volumes["vol0"] = Volume("vol0", {1, 2, 3}, 2, kUuid0);
    v.volumes["vol1"] =
        Volume("vol1", {3, 1}, std::nullopt, "11111111-2222-3333-4444-555555555555");
    ExportSpec e{kNqn, {}, false, {{1, "vol0"}, {2, "vol1"}}};
    e.protocols = {"iscsi", "nvme-tcp"};
    e.initiators = {kInitiator};
    v.exports[kNqn] = {e, 5};
    return v;
}

const std::map<std::string, std::string> kBoth = {{"vol0", "/dev/chorus0"},
                                                  {"vol1", "/dev/chorus1"}};

std::string Value(const ClusterLioPlan& p, const std::string& path) {
    for (const ConfigfsOp& op : p.ops)
        if (op.path == path && op.kind == ConfigfsOp::Kind::kWrite)
            return op.value;
    return "<absent>";
}

size_t IndexOf(const ClusterLioPlan& p, const std::string& path) {
    for (size_t i = 0; i < p.ops.size(); i++)
        if (p.ops[i].path == path)
            return i;
    return p.ops.size();
}

class ClusterLio : public testing::Test {
protected:
    void SetUp() override {
        root_ = tmp_ / "configfs";
        fs::create_directories(root_);
    }

    // Prune then apply, as chorusd does, then ShowAsLio().
    void Converge(const Config& cfg, const ClusterView& view,
                  const std::map<std::string, std::string>& devices, bool cut_off = false) {
        ConfigfsApplier a(root_, tmp_ / "lio-cluster.json");
        std::vector<ConfigfsOp> plan = PlanClusterLio(cfg, view, devices, cut_off).ops;
        a.Prune(plan);
        a.Apply(plan);
        ShowAsLio(cfg, view, devices);
    }

    // What a plain tree does not do: show what was written as LIO shows it
    // (the device in the backstore's info, the unit serial with a title,
    // the access type as a word, the LUN's group as a table).
    void ShowAsLio(const Config& cfg, const ClusterView& view,
                   const std::map<std::string, std::string>& devices) {
        const std::string gp = "chorus_node" + std::to_string(cfg.node_id);
        for (const auto& [vol, dev] : devices) {
            const std::string dir = root_ + "/" + kLioHba + "/" + vol;
            if (!fs::exists(dir))
                continue;
            WriteFile(dir + "/info", "Status: ACTIVATED\n        iBlock device: x  UDEV PATH: " +
                                         ReadFile(dir + "/control").substr(10) + "  readonly: 0\n");
            WriteFile(dir + "/wwn/vpd_unit_serial",
                      "T10 VPD Unit Serial Number: " +
                          FormatUuid(view.volumes.at(vol).spec.value.uuid) + "\n");
            WriteFile(dir + "/alua/" + gp + "/alua_access_type", "Implicit\n");
        }
        for (const char* lun : {"lun_0", "lun_1"})
            if (Exists(kTpg + "/lun/" + lun + "/alua_tg_pt_gp"))
                WriteFile(root_ + "/" + kTpg + "/lun/" + lun + "/alua_tg_pt_gp",
                          "TG Port Alias: " + gp +
                              "\nTG Port Group ID: " + std::to_string(cfg.node_id) + "\n");
    }

    std::string Attr(const std::string& rel) { return ReadFile(root_ + "/" + rel); }
    bool Exists(const std::string& rel) { return fs::exists(root_ + "/" + rel); }

    test::TempDir tmp_;
    std::string root_;
};

TEST_F(ClusterLio, SameIdentityOnEveryNodeOwnGroupByTheOwner) {
    ClusterLioPlan p1 = PlanClusterLio(NodeConfig(1), View(), kBoth, false);
    ClusterLioPlan p2 = PlanClusterLio(NodeConfig(2), View(), kBoth, false);
    for (const char* attr : {"/wwn/vpd_unit_serial", "/wwn/vendor_id", "/wwn/product_id"})
        EXPECT_EQ(Value(p1, kStore0 + attr), Value(p2, kStore0 + attr)) << attr;
    EXPECT_EQ(Value(p1, kStore0 + "/wwn/vpd_unit_serial"), kUuid0);
    EXPECT_EQ(Value(p1, kStore0 + "/control"), "udev_path=/dev/chorus0");
    // Each node's own group, by its id; optimized on the owner only.
    EXPECT_EQ(Value(p1, kStore0 + "/alua/chorus_node1/tg_pt_gp_id"), "1");
    EXPECT_EQ(Value(p2, kStore0 + "/alua/chorus_node2/tg_pt_gp_id"), "2");
    EXPECT_EQ(Value(p2, kStore0 + "/alua/chorus_node2/alua_access_state"), "0");
    EXPECT_EQ(Value(p1, kStore0 + "/alua/chorus_node1/alua_access_state"), "1");
    EXPECT_EQ(Value(p1, kStore0 + "/alua/chorus_node1/alua_access_type"), "1");  // implicit
    EXPECT_EQ(Value(p1, kTpg + "/lun/lun_0/alua_tg_pt_gp"), "chorus_node1");
    // vol1 has no owner: its first node (3) holds the optimized path.
    EXPECT_EQ(Value(p1, std::string(kLioHba) + "/vol1/alua/chorus_node1/alua_access_state"), "1");
    ASSERT_EQ(p2.luns.size(), 2u);
    EXPECT_EQ(p2.luns[0].alua_state, "active/optimized");
    EXPECT_EQ(p2.luns[1].lun, 1u);
    EXPECT_EQ(p1.luns[0].alua_state, "active/non-optimized");
    // Demo mode off, CHAP not asked for, the node's portal.
    EXPECT_EQ(Value(p1, kTpg + "/attrib/generate_node_acls"), "0");
    EXPECT_EQ(Value(p1, kTpg + "/attrib/authentication"), "0");
    EXPECT_LT(IndexOf(p1, kTpg + "/np/10.99.0.1:3260"), p1.ops.size());
}

// LIO's order: identity before the device is enabled, the state after;
// the LUN's group once it links to the device; the target enabled last.
TEST_F(ClusterLio, OpsInTheOrderLioNeeds) {
    ClusterLioPlan p = PlanClusterLio(NodeConfig(1), View(), kBoth, false);
    const std::string gp = kStore0 + "/alua/chorus_node1";
    EXPECT_LT(IndexOf(p, kStore0 + "/control"), IndexOf(p, kStore0 + "/enable"));
    EXPECT_LT(IndexOf(p, kStore0 + "/wwn/vpd_unit_serial"), IndexOf(p, kStore0 + "/enable"));
    EXPECT_LT(IndexOf(p, kStore0 + "/enable"), IndexOf(p, gp + "/alua_access_state"));
    EXPECT_LT(IndexOf(p, gp + "/tg_pt_gp_id"), IndexOf(p, gp + "/alua_access_state"));
    EXPECT_LT(IndexOf(p, gp + "/alua_access_type"), IndexOf(p, gp + "/alua_access_state"));
    EXPECT_LT(IndexOf(p, kTpg + "/lun/lun_0/vol0"), IndexOf(p, kTpg + "/lun/lun_0/alua_tg_pt_gp"));
    const std::string mapped = kTpg + "/acls/" + kInitiator + "/lun_0/lun";
    EXPECT_LT(IndexOf(p, kTpg + "/lun/lun_0/vol0"), IndexOf(p, mapped));
    EXPECT_EQ(IndexOf(p, kTpg + "/enable"), p.ops.size() - 1);
}

TEST_F(ClusterLio, AppliesALunOnlyWhereTheVolumeIs) {
    Converge(NodeConfig(1), View(), {{"vol0", "/dev/chorus0"}});
    EXPECT_EQ(Attr(kStore0 + "/control"), "udev_path=/dev/chorus0");
    EXPECT_TRUE(fs::is_symlink(root_ + "/" + kTpg + "/lun/lun_0/vol0"));
    EXPECT_TRUE(fs::is_symlink(root_ + "/" + kTpg + "/acls/" + kInitiator + "/lun_0/lun"));
    EXPECT_FALSE(Exists(kTpg + "/lun/lun_1"));
    EXPECT_FALSE(Exists(std::string(kLioHba) + "/vol1"));
    EXPECT_EQ(Attr(kTpg + "/enable"), "1");
    ClusterLioPlan p = PlanClusterLio(NodeConfig(1), View(), {{"vol0", "/dev/chorus0"}}, false);
    ASSERT_EQ(p.luns.size(), 2u);
    EXPECT_EQ(p.luns[1].why_not, "volume vol1 is not attached on this node");
}

TEST_F(ClusterLio, OwnerChangeRewritesTheStateOnly) {
    Config n1 = NodeConfig(1);
    Converge(n1, View(), kBoth);
    ClusterView moved = View();
    moved.volumes["vol0"].owner = Ownership{1, 50, 8};
    ConfigfsApplier a(root_, tmp_ / "lio-cluster.json");
    auto plan = PlanClusterLio(n1, moved, kBoth, false).ops;
    EXPECT_EQ(a.Prune(plan).undone, 0);
    EXPECT_EQ(a.Apply(plan).changed, 1);
    EXPECT_EQ(Attr(kStore0 + "/alua/chorus_node1/alua_access_state"), "0");
}

// /dev/chorus0 became /dev/chorus5: the backstore is made again; the
// LUN's link to it goes first (configfs refuses to remove a linked object)
// and with it the ACL's mapped LUN (LIO forgets it with the LUN's link);
// both are made again. vol1's backstore is left alone.
TEST_F(ClusterLio, ADeviceThatChangedRemakesItsBackstore) {
    Config n1 = NodeConfig(1);
    Converge(n1, View(), kBoth);
    ConfigfsApplier a(root_, tmp_ / "lio-cluster.json");
    EXPECT_EQ(a.Prune(PlanClusterLio(n1, View(), kBoth, false).ops).undone, 0);
    const std::map<std::string, std::string> moved = {{"vol0", "/dev/chorus5"},
                                                      {"vol1", "/dev/chorus1"}};
    auto plan = PlanClusterLio(n1, View(), moved, false).ops;
    const std::string mapped = root_ + "/" + kTpg + "/acls/" + kInitiator + "/lun_0/lun";
    TeardownResult pruned = a.Prune(plan);
    EXPECT_EQ(pruned.failed, 0);
    EXPECT_FALSE(Exists(kStore0));
    EXPECT_FALSE(fs::is_symlink(root_ + "/" + kTpg + "/lun/lun_0/vol0"));
    EXPECT_FALSE(fs::is_symlink(mapped)) << "the mapped LUN was not made again";
    EXPECT_TRUE(Exists(kTpg + "/lun/lun_0"));
    EXPECT_TRUE(fs::is_symlink(root_ + "/" + kTpg + "/lun/lun_1/vol1")) << "vol1 was remade";
    EXPECT_TRUE(fs::is_symlink(root_ + "/" + kTpg + "/acls/" + kInitiator + "/lun_1/lun"));
    a.Apply(plan);
    EXPECT_EQ(Attr(kStore0 + "/control"), "udev_path=/dev/chorus5");
    EXPECT_TRUE(fs::is_symlink(root_ + "/" + kTpg + "/lun/lun_0/vol0"));
    EXPECT_TRUE(fs::is_symlink(mapped));
}

// NQNs differing in case only make one target name (chorusctl refuses
// that; a value written to etcd by hand need not): the first in NQN order
// keeps it on every node, the other is served by no node over iSCSI and
// says why.
TEST_F(ClusterLio, TwoNqnsOneIqnTheFirstKeepsIt) {
    ClusterView v = View();
    ExportSpec upper = v.exports[kNqn].value;
    upper.nqn = "nqn.2026-11.org.chorus:DB";
    upper.namespaces = {{1, "vol1"}};
    v.exports[upper.nqn] = {upper, 6};
    ClusterLioPlan p = PlanClusterLio(NodeConfig(1), v, kBoth, false);
    ASSERT_EQ(p.luns.size(), 3u);
    EXPECT_EQ(p.luns[0].nqn, upper.nqn);  // "DB" < "db"
    EXPECT_EQ(p.luns[0].alua_state, "active/non-optimized");
    EXPECT_EQ(p.luns[1].why_not,
              "its iSCSI target name " + std::string(kIqn) + " is " + upper.nqn + "'s");
    Converge(NodeConfig(1), v, kBoth);
    EXPECT_TRUE(fs::is_symlink(root_ + "/" + kTpg + "/lun/lun_0/vol1"));
    EXPECT_FALSE(Exists(kTpg + "/lun/lun_1"));
}

// CHAP turned off: the credentials are cleared ("NULL"), not left behind.
TEST_F(ClusterLio, ChapTurnedOffClearsTheCredentials) {
    const LioChap chap{"lab", "chorus-lab-chap"};
    ConfigfsApplier a(root_, tmp_ / "lio-cluster.json");
    auto on = PlanClusterLio(NodeConfig(1), View(), kBoth, false, chap).ops;
    a.Prune(on);
    a.Apply(on);
    const std::string auth = kTpg + "/acls/" + kInitiator + "/auth/";
    EXPECT_EQ(Attr(auth + "password"), "chorus-lab-chap");
    const std::string state = ReadFile(tmp_ / "lio-cluster.json");
    EXPECT_EQ(state.find("chorus-lab-chap"), std::string::npos)
        << "the secret is in the state file";
    EXPECT_NE(state.find("NULL"), std::string::npos) << "nothing would clear the credentials";
    auto off = PlanClusterLio(NodeConfig(1), View(), kBoth, false).ops;
    a.Prune(off);
    a.Apply(off);
    // On configfs auth/ stays with the ACL; a plain tree removes the
    // directory the plan no longer asks for.
    EXPECT_TRUE(!Exists(auth + "password") || Attr(auth + "password") == "NULL");
    EXPECT_EQ(Attr(kTpg + "/attrib/authentication"), "0");
}

TEST_F(ClusterLio, CutOffMakesEveryGroupUnavailable) {
    Config n2 = NodeConfig(2);
    Converge(n2, View(), kBoth, true);
    EXPECT_EQ(Attr(kStore0 + "/alua/chorus_node2/alua_access_state"), "3");
    EXPECT_EQ(PlanClusterLio(n2, View(), kBoth, true).luns[0].alua_state, "unavailable");
    Converge(n2, View(), kBoth, false);
    EXPECT_EQ(Attr(kStore0 + "/alua/chorus_node2/alua_access_state"), "0");
}

// Any initiator: LIO's dynamic ACLs (writable), no ACL of our own.
TEST_F(ClusterLio, AllowAnyHostIsDemoModeWritable) {
    ClusterView any = View();
    any.exports[kNqn].value.initiators = {};
    any.exports[kNqn].value.allow_any_host = true;
    ClusterLioPlan p = PlanClusterLio(NodeConfig(1), any, kBoth, false);
    EXPECT_EQ(Value(p, kTpg + "/attrib/generate_node_acls"), "1");
    EXPECT_EQ(Value(p, kTpg + "/attrib/demo_mode_write_protect"), "0");
    EXPECT_EQ(IndexOf(p, kTpg + "/acls/" + kInitiator), p.ops.size());
}

// CHAP: required once every ACL has the credentials; the secret never
// described in the clear.
TEST_F(ClusterLio, ChapCredentialsBeforeAuthenticationTheSecretHidden) {
    const LioChap chap{"lab", "chorus-lab-chap"};
    ClusterLioPlan p = PlanClusterLio(NodeConfig(1), View(), kBoth, false, chap);
    const std::string acl = kTpg + "/acls/" + kInitiator;
    EXPECT_EQ(Value(p, acl + "/auth/userid"), "lab");
    EXPECT_EQ(Value(p, acl + "/auth/password"), "chorus-lab-chap");
    EXPECT_EQ(Value(p, kTpg + "/attrib/authentication"), "1");
    EXPECT_LT(IndexOf(p, acl + "/auth/password"), IndexOf(p, kTpg + "/attrib/authentication"));
    const ConfigfsOp& pw = p.ops[IndexOf(p, acl + "/auth/password")];
    EXPECT_TRUE(pw.secret);
    EXPECT_EQ(DescribeOp(pw).find("chorus-lab-chap"), std::string::npos) << DescribeOp(pw);
    EXPECT_EQ(IndexOf(p, kTpg + "/auth/userid"), p.ops.size());  // no dynamic ACLs
    ClusterView any = View();
    any.exports[kNqn].value.initiators = {};
    any.exports[kNqn].value.allow_any_host = true;
    p = PlanClusterLio(NodeConfig(1), any, kBoth, false, chap);
    EXPECT_EQ(Value(p, kTpg + "/auth/userid"), "lab");
    EXPECT_EQ(
        Value(PlanClusterLio(NodeConfig(1), View(), kBoth, false), kTpg + "/attrib/authentication"),
        "0");
}

TEST_F(ClusterLio, WithoutPortalsOrIscsiNothingIsMade) {
    ClusterLioPlan p = PlanClusterLio(NodeConfig(1, false), View(), kBoth, false);
    EXPECT_TRUE(p.ops.empty());
    ASSERT_EQ(p.luns.size(), 2u);
    EXPECT_EQ(p.luns[0].why_not, "this node has no [iscsi] portals in its config");
    ClusterView nvme = View();
    nvme.exports[kNqn].value.protocols = {"nvme-tcp"};
    p = PlanClusterLio(NodeConfig(1), nvme, kBoth, false);
    EXPECT_TRUE(p.ops.empty());
    EXPECT_TRUE(p.luns.empty());
}

TEST_F(ClusterLio, IscsiTurnedOffLeavesNothingBehind) {
    Config n1 = NodeConfig(1);
    Converge(n1, View(), kBoth);
    EXPECT_TRUE(Exists(kTpg));
    ClusterView nvme = View();
    nvme.exports[kNqn].value.protocols = {"nvme-tcp"};
    Converge(n1, nvme, kBoth);
    EXPECT_FALSE(Exists("target/iscsi"));
    EXPECT_FALSE(Exists(kLioHba));
    EXPECT_FALSE(fs::exists(tmp_ / "lio-cluster.json"));
}

}  // namespace
}  // namespace chorus
