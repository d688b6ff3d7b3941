// ClusterSession against a real etcd 3.4 member (etcd_server.h): the lease
// and the membership key, the kernel deadline a keepalive earns, adoption
// after a restart, a duplicate node id, a lost lease and an unreachable
// store.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "etcd_server.h"
#include "lib/cluster_session.h"

namespace chorus {
namespace {

using std::chrono::milliseconds;

class ClusterSessionTest : public ::testing::Test {
protected:
    ClusterSessionTest() {
        dir_ = std::filesystem::temp_directory_path() /
               ("chorus-session-" + std::to_string(getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    ~ClusterSessionTest() override { std::filesystem::remove_all(dir_); }

    SessionOptions Options(uint32_t node_id = 1, const std::string& state = "state.json") {
        SessionOptions o;
        o.node_id = node_id;
        o.ttl = std::chrono::seconds(3);
        o.margin = milliseconds(500);
        o.state_file = (dir_ / state).string();
        o.register_wait = milliseconds(300);
        o.address = "10.99.0.1";
        return o;
    }

    static std::function<bool()> Arm(bool arm) {
        return [arm] { return arm; };
    }

    test::EtcdCluster etcd_;
    EtcdClient client_{etcd_.Options()};
    std::filesystem::path dir_;
};

TEST_F(ClusterSessionTest, RegistersTheNodeBoundToItsLeaseAndEarnsADeadline) {
    ClusterSession s(client_, Options(), {});
    s.Start(Arm(true));
    EXPECT_FALSE(s.adopted());
    EXPECT_TRUE(s.arms_kernel());
    EXPECT_GE(s.ttl_seconds(), 3);

    EtcdRangeResult r = client_.Range(EtcdKeys::Key(NodeKey(1)));
    ASSERT_EQ(r.kvs.size(), 1u);
    EXPECT_EQ(r.kvs[0].lease, s.lease_id());
    nlohmann::json record = nlohmann::json::parse(r.kvs[0].value);
    EXPECT_EQ(record.at("version"), 1);
    EXPECT_EQ(record.at("node_id"), 1);
    EXPECT_EQ(record.at("address"), "10.99.0.1");

    const uint64_t before = BoottimeNs();
    std::optional<uint64_t> deadline = s.KeepAlive();
    const uint64_t after = BoottimeNs();
    ASSERT_TRUE(deadline);
    const uint64_t span = static_cast<uint64_t>(s.ttl_seconds()) * 1000000000u - 500000000u;
    EXPECT_GE(*deadline, before + span);
    EXPECT_LE(*deadline, after + span);
}

TEST_F(ClusterSessionTest, ARestartAdoptsTheLeaseAndKeepsWhetherItArms) {
    ClusterSession first(client_, Options(), {});
    first.Start(Arm(true));
    ClusterSession second(client_, Options(), {});
    bool asked = false;
    second.Start([&] {
        asked = true;
        return false;
    });
    EXPECT_TRUE(second.adopted());
    EXPECT_FALSE(asked) << "an adopted session must not be asked again";
    EXPECT_TRUE(second.arms_kernel());
    EXPECT_EQ(second.lease_id(), first.lease_id());

    // A session that may not arm stays so across a restart.
    client_.LeaseRevoke(second.lease_id());
    ClusterSession third(client_, Options(), {});
    third.Start(Arm(false));
    EXPECT_FALSE(third.adopted());
    EXPECT_FALSE(third.arms_kernel());
    ClusterSession fourth(client_, Options(), {});
    fourth.Start(Arm(true));
    EXPECT_TRUE(fourth.adopted());
    EXPECT_FALSE(fourth.arms_kernel());
}

TEST_F(ClusterSessionTest, AnotherLiveHolderOfTheNodeIdIsRefused) {
    ClusterSession first(client_, Options(2, "a.json"), {});
    first.Start(Arm(true));
    ClusterSession second(client_, Options(2, "b.json"), {});
    try {
        second.Start(Arm(true));
        FAIL() << "a second chorusd with node id 2 was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("node id 2 is registered by another live chorusd"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find(std::to_string(first.lease_id())), std::string::npos)
            << e.what();
    }
    // The first one's key is untouched.
    EXPECT_EQ(client_.Range(EtcdKeys::Key(NodeKey(2))).kvs.at(0).lease, first.lease_id());
}

TEST_F(ClusterSessionTest, AKeyLeftByACrashedHolderIsTakenOnceItsLeaseExpires) {
    EtcdLease old = client_.LeaseGrant(2);
    client_.Put(NodeKey(3), "{}", old.id);
    SessionOptions o = Options(3);
    o.register_wait = milliseconds(8000);
    ClusterSession s(client_, o, {});
    s.Start(Arm(true));
    EXPECT_EQ(client_.Range(EtcdKeys::Key(NodeKey(3))).kvs.at(0).lease, s.lease_id());
}

TEST_F(ClusterSessionTest, ALostLeaseEarnsNoDeadlineEverAgain) {
    ClusterSession s(client_, Options(), {});
    s.Start(Arm(true));
    ASSERT_TRUE(s.KeepAlive());
    client_.LeaseRevoke(s.lease_id());
    EXPECT_FALSE(s.KeepAlive());
    EXPECT_TRUE(s.lost());
    EXPECT_TRUE(client_.Range(EtcdKeys::Key(NodeKey(1))).kvs.empty());
    EXPECT_FALSE(s.KeepAlive());
}

TEST_F(ClusterSessionTest, AnUnreachableStoreEarnsNoDeadlineButLosesNothingYet) {
    ClusterSession s(client_, Options(), {});
    s.Start(Arm(true));
    etcd_.Kill(0);
    EXPECT_FALSE(s.KeepAlive());
    EXPECT_FALSE(s.lost());
    etcd_.Restart(0);
    EXPECT_TRUE(s.KeepAlive());
}

TEST_F(ClusterSessionTest, ADamagedStateFileIsIgnoredWithAWarning) {
    { std::ofstream(dir_ / "state.json") << "{not json"; }
    std::vector<std::string> lines;
    ClusterSession s(client_, Options(),
                     [&](Severity, const std::string& m) { lines.push_back(m); });
    s.Start(Arm(true));
    EXPECT_FALSE(s.adopted());
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines[0].find("ignored"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace chorus
