// Ordering rules of the nvmet configfs plan (Linux 6.1 nvmet).
#include <gtest/gtest.h>

#include <string>

#include "lib/config.h"
#include "lib/nvmet_plan.h"

namespace chorus {
namespace {

using Kind = ConfigfsOp::Kind;

const char kConfig[] =
    "[node]\nid = 2\n"
    "[subsystem]\nnqn = \"nqn.2026-11.org.chorus:demo\"\nserial = \"SN42\"\n"
    "hosts = [\"nqn.2026-11.org.chorus:h1\", \"nqn.2026-11.org.chorus:h2\"]\n"
    "[port.tcp1]\ntransport = \"tcp\"\naddress = \"10.99.0.2\"\n"
    "[port.rdma1]\ntransport = \"rdma\"\naddress = \"10.99.0.2\"\nid = 5\n"
    "[ana]\ngroups = [1, 2, 3]\n"
    "[namespace.1]\ndevice = \"/dev/chorus/vol0\"\n"
    "uuid = \"3F1C4B6E-0D2A-4B8E-9C1F-2A3B4C5D6E7F\"\n"
    "[namespace.2]\ndevice = \"/dev/chorus/vol1\"\n"
    "uuid = \"11111111-2222-3333-4444-555555555555\"\n"
    "nguid = \"66666666-7777-8888-9999-aaaaaaaaaaaa\"\nana_group = 3\n";

const std::string kSubsys = "nvmet/subsystems/nqn.2026-11.org.chorus:demo";

class NvmetPlan : public testing::Test {
protected:
    void SetUp() override {
        cfg_ = ParseConfig(kConfig, "plan.conf");
        plan_ = PlanNvmetExport(cfg_);
    }

    // Index of the only op of kind on path; fails the test if absent.
    size_t Index(Kind kind, const std::string& path) const {
        size_t found = plan_.size();
        for (size_t i = 0; i < plan_.size(); i++) {
            if (plan_[i].kind == kind && plan_[i].path == path) {
                EXPECT_EQ(found, plan_.size()) << "twice: " << path;
                found = i;
            }
        }
        EXPECT_LT(found, plan_.size()) << "missing: " << path;
        return found;
    }

    const ConfigfsOp& Op(Kind kind, const std::string& path) const {
        return plan_.at(Index(kind, path));
    }

    // The first link of the subsystem into a port: from then on hosts see it.
    size_t FirstPortLink() const {
        for (size_t i = 0; i < plan_.size(); i++)
            if (plan_[i].kind == Kind::kSymlink && plan_[i].path.starts_with("nvmet/ports/"))
                return i;
        return plan_.size();
    }

    Config cfg_;
    std::vector<ConfigfsOp> plan_;
};

TEST_F(NvmetPlan, SubsystemIdentityBeforeAnyPortLink) {
    size_t first_link = FirstPortLink();
    ASSERT_LT(first_link, plan_.size());
    size_t mk = Index(Kind::kMkdir, kSubsys);
    for (const char* attr : {"attr_allow_any_host", "attr_serial", "attr_model", "attr_cntlid_min",
                             "attr_cntlid_max"}) {
        size_t i = Index(Kind::kWrite, kSubsys + "/" + attr);
        EXPECT_GT(i, mk) << attr;
        EXPECT_LT(i, first_link) << attr;
    }
    EXPECT_EQ(Op(Kind::kWrite, kSubsys + "/attr_serial").value, "SN42");
    EXPECT_EQ(Op(Kind::kWrite, kSubsys + "/attr_model").value, "chorus");
    EXPECT_EQ(Op(Kind::kWrite, kSubsys + "/attr_allow_any_host").value, "0");
    EXPECT_EQ(Op(Kind::kWrite, kSubsys + "/attr_cntlid_min").value, "2001");
    EXPECT_EQ(Op(Kind::kWrite, kSubsys + "/attr_cntlid_max").value, "4000");
    // cntlid_min first: the kernel rejects a max at or below the current min.
    EXPECT_LT(Index(Kind::kWrite, kSubsys + "/attr_cntlid_min"),
              Index(Kind::kWrite, kSubsys + "/attr_cntlid_max"));
}

// Only the listed hosts: each a host object linked into allowed_hosts, after
// allow_any_host is cleared (nvmet refuses a link while it is set) and
// before any port shows the subsystem.
TEST_F(NvmetPlan, ListedHostsAllowedBeforeAnyPortLink) {
    size_t any = Index(Kind::kWrite, kSubsys + "/attr_allow_any_host");
    for (const char* h : {"nqn.2026-11.org.chorus:h1", "nqn.2026-11.org.chorus:h2"}) {
        size_t host = Index(Kind::kMkdir, std::string("nvmet/hosts/") + h);
        EXPECT_GT(host, Index(Kind::kEnsureDir, "nvmet/hosts"));
        size_t link = Index(Kind::kSymlink, kSubsys + "/allowed_hosts/" + h);
        EXPECT_EQ(plan_[link].value, std::string("nvmet/hosts/") + h);
        EXPECT_GT(link, host);
        EXPECT_GT(link, any);
        EXPECT_GT(link, Index(Kind::kEnsureDir, kSubsys + "/allowed_hosts"));
        EXPECT_LT(link, FirstPortLink());
    }
}

TEST(NvmetPlanAnyHost, NoHostObjectsNoLinks) {
    Config c = ParseConfig(
        "[node]\nid = 1\n[subsystem]\nnqn = \"nqn.x:y\"\nallow_any_host = true\n[port.p]\n"
        "transport = \"tcp\"\naddress = \"10.99.0.1\"\n",
        "any.conf");
    for (const auto& op : PlanNvmetExport(c)) {
        EXPECT_FALSE(op.path.starts_with("nvmet/hosts/")) << op.path;
        EXPECT_FALSE(op.path.find("/allowed_hosts/") != std::string::npos) << op.path;
        if (op.path.ends_with("/attr_allow_any_host")) {
            EXPECT_EQ(op.value, "1");
        }
    }
}

TEST_F(NvmetPlan, NamespaceIdentityBeforeEnable) {
    for (const char* nsid : {"1", "2"}) {
        const std::string ns = kSubsys + "/namespaces/" + nsid;
        size_t mk = Index(Kind::kMkdir, ns);
        EXPECT_GT(mk, Index(Kind::kEnsureDir, kSubsys + "/namespaces"));
        size_t enable = Index(Kind::kWrite, ns + "/enable");
        for (const char* attr : {"device_path", "device_uuid", "device_nguid", "ana_grpid"}) {
            size_t i = Index(Kind::kWrite, ns + "/" + attr);
            EXPECT_GT(i, mk) << ns << " " << attr;
            EXPECT_LT(i, enable) << ns << " " << attr;
        }
        EXPECT_EQ(Op(Kind::kWrite, ns + "/enable").value, "1");
        EXPECT_EQ(Op(Kind::kWrite, ns + "/enable").undo, "0");
        // Namespaces are complete before any port exposes the subsystem.
        EXPECT_LT(enable, FirstPortLink());
    }
    const std::string ns1 = kSubsys + "/namespaces/1";
    EXPECT_EQ(Op(Kind::kWrite, ns1 + "/device_path").value, "/dev/chorus/vol0");
    EXPECT_EQ(Op(Kind::kWrite, ns1 + "/device_uuid").value, "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
    EXPECT_EQ(Op(Kind::kWrite, ns1 + "/device_nguid").value,
              "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
    EXPECT_EQ(Op(Kind::kWrite, ns1 + "/ana_grpid").value, "2");
    const std::string ns2 = kSubsys + "/namespaces/2";
    EXPECT_EQ(Op(Kind::kWrite, ns2 + "/device_nguid").value,
              "66666666-7777-8888-9999-aaaaaaaaaaaa");
    EXPECT_EQ(Op(Kind::kWrite, ns2 + "/ana_grpid").value, "3");
}

TEST_F(NvmetPlan, PortAddressAndAnaStatesBeforeLink) {
    for (const auto& [id, trtype] : {std::pair{"1", "tcp"}, std::pair{"5", "rdma"}}) {
        const std::string port = std::string("nvmet/ports/") + id;
        size_t mk = Index(Kind::kMkdir, port);
        size_t link = Index(Kind::kSymlink, port + "/subsystems/nqn.2026-11.org.chorus:demo");
        EXPECT_EQ(plan_[link].value, kSubsys);
        EXPECT_GT(link, Index(Kind::kEnsureDir, port + "/subsystems"));
        for (const char* attr : {"addr_trtype", "addr_adrfam", "addr_traddr", "addr_trsvcid"}) {
            size_t i = Index(Kind::kWrite, port + "/" + attr);
            EXPECT_GT(i, mk);
            EXPECT_LT(i, link);
        }
        EXPECT_EQ(Op(Kind::kWrite, port + "/addr_trtype").value, trtype);
        EXPECT_EQ(Op(Kind::kWrite, port + "/addr_adrfam").value, "ipv4");
        EXPECT_EQ(Op(Kind::kWrite, port + "/addr_traddr").value, "10.99.0.2");
        EXPECT_EQ(Op(Kind::kWrite, port + "/addr_trsvcid").value, "4420");

        // Group 1 is nvmet's default group: ensured, never mkdir'ed.
        EXPECT_LT(Index(Kind::kEnsureDir, port + "/ana_groups/1"), link);
        for (const char* g : {"2", "3"}) {
            size_t gm = Index(Kind::kMkdir, port + "/ana_groups/" + g);
            EXPECT_GT(gm, mk);
            EXPECT_LT(gm, Index(Kind::kWrite, port + "/ana_groups/" + g + "/ana_state"));
        }
        for (const auto& [g, state] : {std::pair{"1", "non-optimized"}, std::pair{"2", "optimized"},
                                       std::pair{"3", "non-optimized"}}) {
            const ConfigfsOp& op = Op(Kind::kWrite, port + "/ana_groups/" + g + "/ana_state");
            EXPECT_EQ(op.value, state) << g;
            EXPECT_LT(Index(Kind::kWrite, port + "/ana_groups/" + g + "/ana_state"), link);
        }
    }
    for (const auto& op : plan_) {
        EXPECT_FALSE(op.kind == Kind::kMkdir && op.path.ends_with("/ana_groups/1")) << op.path;
    }
}

TEST_F(NvmetPlan, SubsystemCreatedFirstAndPortsInConfigOrder) {
    // Only the host objects, which the subsystem links to, come before it.
    size_t subsys = Index(Kind::kMkdir, kSubsys);
    for (size_t i = 0; i < subsys; i++)
        EXPECT_FALSE(plan_[i].kind == Kind::kMkdir && !plan_[i].path.starts_with("nvmet/hosts/"))
            << plan_[i].path;
    EXPECT_LT(Index(Kind::kEnsureDir, "nvmet/subsystems"), Index(Kind::kMkdir, kSubsys));
    EXPECT_LT(Index(Kind::kMkdir, "nvmet/ports/1"), Index(Kind::kMkdir, "nvmet/ports/5"));
    // Only enable has something to undo; the rest goes away with its object.
    for (const auto& op : plan_) {
        if (op.kind == Kind::kWrite && !op.path.ends_with("/enable")) {
            EXPECT_EQ(op.undo, "") << op.path;
        }
    }
}

TEST_F(NvmetPlan, Describe) {
    EXPECT_EQ(DescribeOp(Op(Kind::kMkdir, "nvmet/ports/1")), "mkdir nvmet/ports/1");
    EXPECT_EQ(DescribeOp(Op(Kind::kWrite, kSubsys + "/namespaces/1/enable")),
              "write " + kSubsys + "/namespaces/1/enable = 1 (teardown: 0)");
}

TEST(NvmetPlanIpv6, AdrfamFollowsAddress) {
    Config c = ParseConfig(
        "[node]\nid = 1\n[subsystem]\nnqn = \"nqn.x:y\"\nallow_any_host = "
        "true\n[port.p]\ntransport = \"tcp\"\n"
        "address = \"fd00::1\"\n",
        "v6.conf");
    bool seen = false;
    for (const auto& op : PlanNvmetExport(c)) {
        if (op.path == "nvmet/ports/1/addr_adrfam") {
            EXPECT_EQ(op.value, "ipv6");
            seen = true;
        }
        // Group 1 = node 1 is optimized.
        if (op.path == "nvmet/ports/1/ana_groups/1/ana_state") {
            EXPECT_EQ(op.value, "optimized");
        }
    }
    EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace chorus
