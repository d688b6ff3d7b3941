// The export keys (/chorus/exports/<nqn>) against a real etcd 3.4 member:
// created once, changed and deleted only from the revision read, read back
// by ReadClusterView, and values chorus must refuse named with their key.
#include <gtest/gtest.h>

#include <string>

#include "etcd_server.h"
#include "lib/cluster_export.h"
#include "lib/cluster_view.h"
#include "lib/nqn.h"

namespace chorus {
namespace {

const char kNqn[] = "nqn.2026-11.org.chorus:db";

ExportSpec Spec() {
    return ExportSpec{kNqn, {"nqn.2014-08.org.nvmexpress:uuid:h1"}, false, {{1, "vol0"}}};
}

class ExportStoreTest : public ::testing::Test {
protected:
    test::EtcdCluster etcd_;
    EtcdClient client_{etcd_.Options()};
    ExportStore store_{client_};
};

TEST_F(ExportStoreTest, CreateOnceChangeFromTheRevisionReadDelete) {
    ASSERT_TRUE(store_.Create(Spec()));
    EXPECT_FALSE(store_.Create(Spec())) << "an export was created twice";
    auto got = store_.Get(kNqn);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->value, Spec());
    ExportSpec more = Spec();
    more.namespaces.push_back({2, "vol1"});
    ASSERT_TRUE(store_.Replace(more, got->mod_revision));
    EXPECT_FALSE(store_.Replace(Spec(), got->mod_revision)) << "a stale change was applied";
    EXPECT_FALSE(store_.Delete(kNqn, got->mod_revision)) << "a stale delete was applied";
    auto now = store_.Get(kNqn);
    ASSERT_TRUE(now);
    EXPECT_EQ(now->value, more);
    ClusterView view = ReadClusterView(client_);
    ASSERT_EQ(view.exports.count(kNqn), 1u);
    EXPECT_EQ(view.exports[kNqn].value, more);
    ASSERT_TRUE(store_.Delete(kNqn, now->mod_revision));
    EXPECT_FALSE(store_.Get(kNqn));
}

TEST_F(ExportStoreTest, BadValuesAreNamedAndNotUsed) {
    const std::string key = ExportKey(kNqn);
    struct Case {
        const char* value;
        const char* problem;
    } cases[] = {
        {R"({"version":1,"nqn":"nqn.other","hosts":[],"allow_any_host":true,"namespaces":[]})",
         "names subsystem 'nqn.other'"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":["h1"],"allow_any_host":false,"namespaces":[]})",
         "host NQN 'h1' does not start with 'nqn.'"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":["nqn.h"],"allow_any_host":true,"namespaces":[]})",
         "allow_any_host is set and hosts are listed"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":true,"namespaces":[{"nsid":0,"volume":"v"}]})",
         "nsid 0 is not in 1..1024"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":true,"namespaces":[{"nsid":1,"volume":"v"},{"nsid":1,"volume":"w"}]})",
         "nsid 1 is used twice"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":true,"namespaces":[{"nsid":1,"volume":"v"},{"nsid":2,"volume":"v"}]})",
         "volume v is exported twice"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"namespaces":[]})",
         "no 'allow_any_host'"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":true,"namespaces":[],"protocols":[]})",
         "no protocol: name at least one of iscsi, nvme-rdma, nvme-tcp"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":true,"namespaces":[],"protocols":["fc"]})",
         "unknown protocol 'fc'"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":true,"namespaces":[],"protocols":["iscsi","iscsi"]})",
         "protocol iscsi is named twice"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":false,"namespaces":[],"initiators":["iqn.2026-11.org.Host"]})",
         "initiator 'iqn.2026-11.org.Host' holds a character an iSCSI name may not"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":true,"namespaces":[],"initiators":["iqn.2026-11.org.host"]})",
         "allow_any_host is set and initiators are listed"},
        {R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],"allow_any_host":false,"namespaces":[],"initiators":["iqn.a","iqn.a"]})",
         "initiator iqn.a is listed twice"},
    };
    for (const Case& c : cases) {
        client_.Put(key, c.value);
        ClusterView view = ReadClusterView(client_);
        EXPECT_EQ(view.exports.count(kNqn), 0u) << c.value;
        ASSERT_EQ(view.problems.size(), 1u) << c.value;
        EXPECT_NE(view.problems[0].find("etcd key " + key + ": " + c.problem), std::string::npos)
            << view.problems[0];
    }
}

// A value written before iSCSI existed reads as NVMe-oF over both
// transports; protocols are kept sorted; an NQN that makes no IQN cannot
// be exported over iSCSI.
TEST_F(ExportStoreTest, ProtocolsAndInitiators) {
    const std::string key = ExportKey(kNqn);
    client_.Put(key, R"({"version":1,"nqn":"nqn.2026-11.org.chorus:db","hosts":[],)"
                     R"("allow_any_host":true,"namespaces":[]})");
    ClusterView view = ReadClusterView(client_);
    ASSERT_EQ(view.exports.count(kNqn), 1u);
    EXPECT_EQ(view.exports[kNqn].value.protocols,
              (std::vector<std::string>{"nvme-rdma", "nvme-tcp"}));
    EXPECT_TRUE(ExportsNvme(view.exports[kNqn].value));
    EXPECT_FALSE(ExportsBy(view.exports[kNqn].value, "iscsi"));

    ExportSpec s = Spec();
    s.protocols = {"iscsi", "nvme-tcp"};
    s.initiators = {"iqn.1993-08.org.debian:01:host4"};
    client_.Put(key, EncodeExportSpec(s));
    view = ReadClusterView(client_);
    EXPECT_EQ(view.exports[kNqn].value, s);
    EXPECT_EQ(IqnOf(kNqn), "iqn.2026-11.org.chorus:db");
    EXPECT_EQ(IqnOf("nqn.2026-11.org.Chorus:DB"), "iqn.2026-11.org.chorus:db");

    s.nqn = "nqn.2026-11.org.chorus:db_1";
    EXPECT_NE(ExportSpecProblem(s).find("cannot be exported over iSCSI: its target name "
                                        "'iqn.2026-11.org.chorus:db_1' holds a character"),
              std::string::npos)
        << ExportSpecProblem(s);
    s.protocols = {"nvme-tcp"};
    EXPECT_EQ(ExportSpecProblem(s), "");
}

TEST(ExportSpec, FreeNsidIsTheLowestUnused) {
    ExportSpec e = Spec();
    EXPECT_EQ(FreeNsid(e), 2u);
    e.namespaces = {{2, "a"}, {3, "b"}};
    EXPECT_EQ(FreeNsid(e), 1u);
    e.namespaces = {};
    EXPECT_EQ(FreeNsid(e), 1u);
}

}  // namespace
}  // namespace chorus
