// Failover between etcd endpoints, against real etcd 3.4 members and ports
// where nothing answers: every failed attempt logged with its endpoint,
// the final error naming each endpoint within the call's deadline, and a
// three-member cluster that loses its leader.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <mutex>
#include <string>

#include "etcd_server.h"
#include "lib/etcd_client.h"
#include "lib/etcd_failover.h"
#include "lib/etcd_watch.h"
#include "lib/fd.h"
#include "test_util.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string Loopback(int port) {
    return "http://127.0.0.1:" + std::to_string(port);
}

// A port that accepts connections (the kernel completes the handshake) and
// never answers: a hung member.
class SilentListener {
public:
    SilentListener() : sock_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof(addr);
        if (::bind(sock_.get(), reinterpret_cast<sockaddr*>(&addr), len) < 0 ||
            ::listen(sock_.get(), 16) < 0 ||
            ::getsockname(sock_.get(), reinterpret_cast<sockaddr*>(&addr), &len) < 0)
            throw std::runtime_error("cannot listen on loopback");
        port_ = ntohs(addr.sin_port);
    }
    std::string endpoint() const { return Loopback(port_); }

private:
    Fd sock_;
    int port_ = 0;
};

// Collects what the client logs.
class LogSink {
public:
    LogFn Fn() {
        return [this](Severity level, const std::string& msg) {
            std::lock_guard<std::mutex> lock(mutex_);
            EXPECT_EQ(level, Severity::kWarn);
            lines_.push_back(msg);
        };
    }
    std::vector<std::string> lines() {
        std::lock_guard<std::mutex> lock(mutex_);
        return lines_;
    }

private:
    std::mutex mutex_;
    std::vector<std::string> lines_;
};

bool Contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(EtcdFailover, DeadFirstEndpointIsLoggedAndTheSecondAnswers) {
    test::EtcdCluster etcd;
    const std::string dead = Loopback(test::UnusedPort());
    LogSink log;
    EtcdOptions options = etcd.Options();
    options.endpoints = {dead, etcd.endpoint(0)};
    options.log = log.Fn();
    EtcdClient client(options);

    client.Put("k", "v");
    ASSERT_EQ(log.lines().size(), 1u);
    EXPECT_TRUE(Contains(log.lines()[0], "etcd " + dead + ": kv/put failed")) << log.lines()[0];

    // The endpoint that answered is tried first from now on.
    EXPECT_EQ(client.Range(EtcdKeys::Key("k")).kvs.at(0).value, "v");
    EXPECT_EQ(log.lines().size(), 1u);
}

TEST(EtcdFailover, AllEndpointsDeadNamesEachOneWithinTheDeadline) {
    const std::string dead1 = Loopback(test::UnusedPort());
    const std::string dead2 = Loopback(test::UnusedPort());
    LogSink log;
    EtcdOptions options;
    options.endpoints = {dead1, dead2};
    options.call_timeout = milliseconds(600);
    options.log = log.Fn();
    EtcdClient client(options);

    const Clock::time_point start = Clock::now();
    try {
        client.Range(EtcdKeys::Key("k"));
        FAIL() << "a range with no etcd succeeded";
    } catch (const EtcdUnreachableError& e) {
        const milliseconds took = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
        EXPECT_LE(took, milliseconds(600 + 300));
        const std::string what = e.what();
        EXPECT_TRUE(Contains(what, "kv/range")) << what;
        EXPECT_TRUE(Contains(what, dead1 + ": ")) << what;
        EXPECT_TRUE(Contains(what, dead2 + ": ")) << what;
        ASSERT_EQ(e.attempts().size(), 2u);
        for (const auto& a : e.attempts()) {
            EXPECT_GE(a.failures, 1);
            EXPECT_TRUE(Contains(a.reason, "onnect")) << a.reason;  // "Couldn't connect"
        }
    }
    EXPECT_GE(log.lines().size(), 2u);
}

TEST(EtcdFailover, HungEndpointTimesOutAndTheNextAnswers) {
    test::EtcdCluster etcd;
    SilentListener hung;
    LogSink log;
    EtcdOptions options = etcd.Options();
    options.endpoints = {hung.endpoint(), etcd.endpoint(0)};
    options.attempt_timeout = milliseconds(300);
    options.log = log.Fn();
    EtcdClient client(options);

    const Clock::time_point start = Clock::now();
    client.Put("k", "v");
    const auto took = Clock::now() - start;
    EXPECT_GE(took, milliseconds(300));
    EXPECT_LT(took, milliseconds(1500));
    ASSERT_EQ(log.lines().size(), 1u);
    EXPECT_TRUE(Contains(log.lines()[0], hung.endpoint())) << log.lines()[0];
    EXPECT_TRUE(Contains(log.lines()[0], "imed out")) << log.lines()[0];
}

// chorusctl's attempt time: --etcd-timeout, else $CHORUS_ETCD_TIMEOUT_MS,
// else 2000 ms. A hung first member costs one attempt before the live
// second answers.
TEST(EtcdFailover, ChorusctlsAttemptTimeoutFromItsOptionOrTheEnvironment) {
    test::EtcdCluster etcd;
    SilentListener hung;
    const std::string list = std::string(CHORUSCTL) + " cluster node list --etcd " +
                             hung.endpoint() + "," + etcd.endpoint(0);
    std::string out;
    auto timed = [&](const std::string& cmd) {
        const Clock::time_point start = Clock::now();
        EXPECT_EQ(test::RunShell(cmd, out), 0) << cmd << ": " << out;
        return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    };
    EXPECT_GE(timed(list), milliseconds(2000));
    EXPECT_LT(timed(list + " --etcd-timeout 300"), milliseconds(1500));
    EXPECT_LT(timed("CHORUS_ETCD_TIMEOUT_MS=300 " + list), milliseconds(1500));
    // The option before the environment.
    EXPECT_LT(timed("CHORUS_ETCD_TIMEOUT_MS=9000 " + list + " --etcd-timeout 300"),
              milliseconds(1500));

    EXPECT_EQ(test::RunShell("CHORUS_ETCD_TIMEOUT_MS=2s " + list, out), 2);
    EXPECT_TRUE(Contains(out,
                         "CHORUS_ETCD_TIMEOUT_MS: '2s' is not a number of milliseconds in "
                         "100..30000"))
        << out;
    EXPECT_EQ(test::RunShell(list + " --etcd-timeout 50", out), 2);
    EXPECT_TRUE(Contains(out, "--etcd-timeout")) << out;
}

TEST(EtcdFailover, WatchStartsOnTheLiveEndpoint) {
    test::EtcdCluster etcd;
    const std::string dead = Loopback(test::UnusedPort());
    LogSink log;
    EtcdOptions options = etcd.Options();
    options.endpoints = {dead, etcd.endpoint(0)};
    options.log = log.Fn();
    EtcdClient client(etcd.Options());

    EtcdWatch watch(options, EtcdKeys::Prefix("w/"), client.Put("w/a", "1"));
    std::vector<EtcdEvent> events = watch.Next(milliseconds(3000));
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].kv.key, "w/a");
    EXPECT_EQ(watch.endpoint(), etcd.endpoint(0));
    ASSERT_EQ(log.lines().size(), 1u);
    EXPECT_TRUE(Contains(log.lines()[0], "etcd " + dead + ": watch failed")) << log.lines()[0];
}

TEST(EtcdFailover, WatchWithEveryEndpointDeadReportsItAndKeepsTrying) {
    const std::string dead = Loopback(test::UnusedPort());
    EtcdOptions options;
    options.endpoints = {dead};
    EtcdWatch watch(options, EtcdKeys::Prefix("w/"), 1);
    EXPECT_THROW(watch.Next(milliseconds(1000)), EtcdUnreachableError);
    // The next round waits for its back-off, then fails again.
    bool failed_again = false;
    for (int i = 0; i < 5 && !failed_again; ++i) {
        try {
            watch.Next(milliseconds(1000));
        } catch (const EtcdUnreachableError& e) {
            failed_again = true;
            EXPECT_TRUE(Contains(e.what(), dead)) << e.what();
        }
    }
    EXPECT_TRUE(failed_again);
    EXPECT_EQ(watch.next_revision(), 1);
}

// Three members; the leader is the first endpoint of the client and of the
// watch, and is killed. Calls go to the other two once they have elected a
// new leader; the watch resumes there without losing an event.
TEST(EtcdFailover, ThreeMemberClusterLosesItsLeader) {
    test::EtcdCluster etcd(3);
    const int leader = etcd.Leader();
    ASSERT_GE(leader, 0);
    EtcdOptions options = etcd.Options();
    options.endpoints = {etcd.endpoint(leader), etcd.endpoint((leader + 1) % 3),
                         etcd.endpoint((leader + 2) % 3)};
    LogSink log;
    options.log = log.Fn();
    EtcdClient client(options);
    EtcdLease lease = client.LeaseGrant(10);
    const int64_t first = client.Put("w/1", "a", lease.id);
    EtcdWatch watch(options, EtcdKeys::Prefix("w/"), first);
    ASSERT_EQ(watch.Next(milliseconds(3000)).size(), 1u);
    ASSERT_EQ(watch.endpoint(), etcd.endpoint(leader));

    etcd.Kill(leader);
    const int64_t second = client.Put("w/2", "b");
    EXPECT_TRUE(client.LeaseKeepAliveOnce(lease.id).alive);
    EXPECT_EQ(client.Range(EtcdKeys::Prefix("w/")).kvs.size(), 2u);
    EtcdTxnResult txn =
        client.Txn({EtcdCompare::Absent("w/3")}, {EtcdOp::Put("w/3", "c", lease.id)});
    EXPECT_TRUE(txn.succeeded);

    std::vector<int64_t> revisions;
    const Clock::time_point deadline = Clock::now() + milliseconds(8000);
    while (revisions.size() < 2 && Clock::now() < deadline) {
        for (const EtcdEvent& e : watch.Next(milliseconds(500)))
            revisions.push_back(e.kv.mod_revision);
    }
    EXPECT_EQ(revisions, (std::vector<int64_t>{second, txn.revision}));
    EXPECT_NE(watch.endpoint(), etcd.endpoint(leader));
    EXPECT_FALSE(log.lines().empty());
    EXPECT_TRUE(Contains(log.lines()[0], etcd.endpoint(leader))) << log.lines()[0];
}

// Which answers send the call to the next endpoint. Canceled is what the
// gateway of a member being stopped answers ("grpc: the client connection
// is closing"); chorusd once died of it in a keepalive while every member
// restarted (tools/bench/etcd-idle).
TEST(EtcdFailover, AnswersThatMeanAskAnotherMember) {
    auto code = [](GrpcCode c) { return static_cast<int>(c); };
    EXPECT_TRUE(IsUnavailableAnswer(503, code(GrpcCode::kUnavailable)));
    EXPECT_TRUE(IsUnavailableAnswer(504, code(GrpcCode::kDeadlineExceeded)));
    EXPECT_TRUE(IsUnavailableAnswer(499, code(GrpcCode::kCanceled)));
    EXPECT_TRUE(IsUnavailableAnswer(500, code(GrpcCode::kUnknown)));
    EXPECT_FALSE(IsUnavailableAnswer(200, code(GrpcCode::kUnknown)));
    EXPECT_FALSE(IsUnavailableAnswer(404, code(GrpcCode::kNotFound)));
    EXPECT_FALSE(IsUnavailableAnswer(400, code(GrpcCode::kInvalidArgument)));
}

}  // namespace
}  // namespace chorus
