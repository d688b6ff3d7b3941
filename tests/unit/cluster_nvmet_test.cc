// The cluster's nvmet plan (lib/cluster_nvmet.h) from hand-made views, and
// what pruning and applying it do to a plain tree as the store changes:
// namespaces come and go, an owner change re-points ana_grpid, a device
// that changes remakes its namespace, a node cut off shows every group
// inaccessible, and an empty store leaves nothing behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "lib/cluster_nvmet.h"
#include "lib/configfs.h"
#include "test_util.h"

namespace chorus {
namespace {

namespace fs = std::filesystem;
using test::ReadFile;

const char kNqn[] = "nqn.2026-11.org.chorus:db";
const std::string kSubsys = std::string("nvmet/subsystems/") + kNqn;
const char kHost[] = "nqn.2014-08.org.nvmexpress:uuid:host4";

Config NodeConfig(uint32_t id) {
    return ParseConfig("[node]\nid = " + std::to_string(id) +
                           "\n[cluster]\netcd = [\"http://10.99.0.1:2379\"]\n"
                           "[port.tcp]\ntransport = \"tcp\"\naddress = \"10.99.0." +
                           std::to_string(id) +
                           "\"\n[port.rdma]\ntransport = \"rdma\"\naddress = \"10.99.0." +
                           std::to_string(id) + "\"\n",
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

// vol0 on nodes 1, 2 and 3, owned by 2; vol1 on nodes 1 and 3, no owner.
ClusterView View() {
    ClusterView v;
    v.volumes["vol0"] = Volume("vol0", {1, 2, 3}, 2, "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
    v.volumes["vol1"] =
        Volume("vol1", {3, 1}, std::nullopt, "11111111-2222-3333-4444-555555555555");
    ExportSpec e{kNqn, {kHost}, false, {{1, "vol0"}, {2, "vol1"}}};
    v.exports[kNqn] = {e, 5};
    return v;
}

const std::map<std::string, std::string> kBoth = {{"vol0", "/dev/chorus0"},
                                                  {"vol1", "/dev/chorus1"}};

class ClusterNvmet : public testing::Test {
protected:
    void SetUp() override {
        root_ = tmp_ / "configfs";
        fs::create_directories(root_);
    }

    // Prune then apply, as chorusd does.
    void Converge(const Config& cfg, const ClusterView& view,
                  const std::map<std::string, std::string>& devices, bool cut_off = false) {
        ConfigfsApplier a(root_, tmp_ / "nvmet-cluster.json");
        std::vector<ConfigfsOp> plan = PlanClusterNvmet(cfg, view, devices, cut_off).ops;
        a.Prune(plan);
        a.Apply(plan);
    }

    std::string Attr(const std::string& rel) { return ReadFile(root_ + "/" + rel); }
    bool Exists(const std::string& rel) { return fs::exists(root_ + "/" + rel); }

    test::TempDir tmp_;
    std::string root_;
};

TEST_F(ClusterNvmet, SameIdentityOnEveryNodeOwnGroupOptimized) {
    Config n1 = NodeConfig(1), n2 = NodeConfig(2);
    ClusterNvmetPlan p1 = PlanClusterNvmet(n1, View(), kBoth, false);
    ClusterNvmetPlan p2 = PlanClusterNvmet(n2, View(), kBoth, false);
    auto value = [](const ClusterNvmetPlan& p, const std::string& path) {
        for (const ConfigfsOp& op : p.ops)
            if (op.path == path && op.kind == ConfigfsOp::Kind::kWrite)
                return op.value;
        return std::string("<absent>");
    };
    for (const char* attr : {"/attr_serial", "/attr_model", "/namespaces/1/device_uuid",
                             "/namespaces/1/device_nguid", "/namespaces/1/ana_grpid"})
        EXPECT_EQ(value(p1, kSubsys + attr), value(p2, kSubsys + attr)) << attr;
    EXPECT_EQ(value(p1, kSubsys + "/namespaces/1/ana_grpid"), "2");  // the owner's
    EXPECT_EQ(value(p1, kSubsys + "/namespaces/2/ana_grpid"), "3");  // no owner: first node
    EXPECT_EQ(value(p1, kSubsys + "/attr_cntlid_max"), "2000");
    EXPECT_EQ(value(p2, kSubsys + "/attr_cntlid_min"), "2001");
    EXPECT_EQ(value(p1, kSubsys + "/attr_allow_any_host"), "0");
    EXPECT_EQ(value(p2, "nvmet/ports/1/ana_groups/2/ana_state"), "optimized");
    EXPECT_EQ(value(p2, "nvmet/ports/2/ana_groups/1/ana_state"), "non-optimized");
    EXPECT_EQ(value(p2, "nvmet/ports/1/ana_groups/3/ana_state"), "non-optimized");
    ASSERT_EQ(p2.namespaces.size(), 2u);
    EXPECT_EQ(p2.namespaces[0].ana_state, "optimized");
    EXPECT_EQ(p1.namespaces[0].ana_state, "non-optimized");
}

TEST_F(ClusterNvmet, AppliesInOrderAndANamespaceOnlyWhereTheVolumeIs) {
    Converge(NodeConfig(1), View(), {{"vol0", "/dev/chorus0"}});
    EXPECT_EQ(Attr(kSubsys + "/namespaces/1/device_path"), "/dev/chorus0");
    EXPECT_EQ(Attr(kSubsys + "/namespaces/1/enable"), "1");
    EXPECT_FALSE(Exists(kSubsys + "/namespaces/2"));
    EXPECT_TRUE(fs::is_symlink(root_ + "/" + kSubsys + "/allowed_hosts/" + kHost));
    EXPECT_TRUE(fs::is_symlink(root_ + "/nvmet/ports/2/subsystems/" + kNqn));
    EXPECT_EQ(Attr("nvmet/ports/2/addr_trtype"), "rdma");
    ClusterNvmetPlan p = PlanClusterNvmet(NodeConfig(1), View(), {{"vol0", "/dev/chorus0"}}, false);
    ASSERT_EQ(p.namespaces.size(), 2u);
    EXPECT_EQ(p.namespaces[1].ana_group, 0u);
    EXPECT_EQ(p.namespaces[1].why_not, "volume vol1 is not attached on this node");
    // Every group's state is written before the subsystem is linked.
    size_t link = 0, last_state = 0;
    for (size_t i = 0; i < p.ops.size(); i++) {
        if (p.ops[i].path.find("/ana_state") != std::string::npos &&
            p.ops[i].path.find("ports/1/") != std::string::npos)
            last_state = i;
        if (p.ops[i].kind == ConfigfsOp::Kind::kSymlink &&
            p.ops[i].path.find("ports/1/") != std::string::npos)
            link = i;
    }
    EXPECT_LT(last_state, link);
}

TEST_F(ClusterNvmet, OwnerChangeRepointsTheGroupOnly) {
    Config n1 = NodeConfig(1);
    Converge(n1, View(), kBoth);
    ClusterView moved = View();
    moved.volumes["vol0"].owner = Ownership{1, 50, 8};
    ConfigfsApplier a(root_, tmp_ / "nvmet-cluster.json");
    auto plan = PlanClusterNvmet(n1, moved, kBoth, false).ops;
    EXPECT_EQ(a.Prune(plan).undone, 0);
    EXPECT_EQ(a.Apply(plan).changed, 1);
    EXPECT_EQ(Attr(kSubsys + "/namespaces/1/ana_grpid"), "1");
}

TEST_F(ClusterNvmet, RemovedNamespaceAndHostArePruned) {
    Config n1 = NodeConfig(1);
    Converge(n1, View(), kBoth);
    ClusterView less = View();
    less.exports[kNqn].value.namespaces = {{2, "vol1"}};
    less.exports[kNqn].value.hosts = {};
    less.exports[kNqn].value.allow_any_host = true;
    Converge(n1, less, kBoth);
    EXPECT_FALSE(Exists(kSubsys + "/namespaces/1"));
    EXPECT_TRUE(Exists(kSubsys + "/namespaces/2/enable"));
    EXPECT_FALSE(fs::is_symlink(root_ + "/" + kSubsys + "/allowed_hosts/" + kHost));
    EXPECT_FALSE(Exists(std::string("nvmet/hosts/") + kHost));
    EXPECT_EQ(Attr(kSubsys + "/attr_allow_any_host"), "1");
}

TEST_F(ClusterNvmet, ADeviceThatChangedRemakesItsNamespace) {
    Config n1 = NodeConfig(1);
    Converge(n1, View(), kBoth);
    Converge(n1, View(), {{"vol0", "/dev/chorus5"}, {"vol1", "/dev/chorus1"}});
    EXPECT_EQ(Attr(kSubsys + "/namespaces/1/device_path"), "/dev/chorus5");
    EXPECT_EQ(Attr(kSubsys + "/namespaces/1/enable"), "1");
    EXPECT_EQ(Attr(kSubsys + "/namespaces/2/device_path"), "/dev/chorus1");
}

TEST_F(ClusterNvmet, CutOffMakesEveryGroupInaccessible) {
    Config n2 = NodeConfig(2);
    Converge(n2, View(), kBoth, true);
    for (const char* g : {"1", "2", "3"})
        EXPECT_EQ(Attr(std::string("nvmet/ports/1/ana_groups/") + g + "/ana_state"), "inaccessible")
            << "group " << g;
    Converge(n2, View(), kBoth, false);
    EXPECT_EQ(Attr("nvmet/ports/1/ana_groups/2/ana_state"), "optimized");
}

// A subsystem is linked to the ports of the transports it names; one
// reached by iSCSI alone has nothing in nvmet.
TEST_F(ClusterNvmet, ProtocolsChooseThePorts) {
    Config n1 = NodeConfig(1);
    ClusterView tcp = View();
    tcp.exports[kNqn].value.protocols = {"nvme-tcp"};
    Converge(n1, tcp, kBoth);
    EXPECT_TRUE(fs::is_symlink(root_ + "/nvmet/ports/1/subsystems/" + kNqn));
    EXPECT_FALSE(fs::exists(root_ + "/nvmet/ports/2/subsystems/" + kNqn));
    ClusterView iscsi = View();
    iscsi.exports[kNqn].value.protocols = {"iscsi"};
    EXPECT_TRUE(PlanClusterNvmet(n1, iscsi, kBoth, false).ops.empty());
    Converge(n1, iscsi, kBoth);
    EXPECT_FALSE(Exists("nvmet"));
}

TEST_F(ClusterNvmet, NoExportsLeaveNothingBehind) {
    Config n1 = NodeConfig(1);
    Converge(n1, View(), kBoth);
    EXPECT_TRUE(Exists(kSubsys));
    Converge(n1, ClusterView{}, kBoth);
    EXPECT_FALSE(Exists("nvmet"));
    EXPECT_FALSE(fs::exists(tmp_ / "nvmet-cluster.json"));
}

}  // namespace
}  // namespace chorus
