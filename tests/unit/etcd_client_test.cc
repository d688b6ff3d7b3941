// EtcdClient against a real etcd 3.4 (one member on loopback, see
// etcd_server.h): ranges, puts, deletes, transactions and leases.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "etcd_server.h"
#include "lib/etcd_client.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using R = EtcdCompare::Result;

class EtcdClientTest : public ::testing::Test {
protected:
    test::EtcdCluster etcd_;
    EtcdClient client_{etcd_.Options()};
};

std::vector<std::string> KeysOf(const std::vector<EtcdKeyValue>& kvs) {
    std::vector<std::string> keys;
    for (const auto& kv : kvs)
        keys.push_back(kv.key);
    return keys;
}

TEST_F(EtcdClientTest, PutRangePrefixAndDelete) {
    const std::string binary("v\0\xff\x01", 4);
    const int64_t first = client_.Put("a", "1");
    client_.Put("a/2", "2");
    client_.Put("a/1", binary);
    const int64_t last = client_.Put("b", "3");
    EXPECT_EQ(last, first + 3);

    EtcdRangeResult one = client_.Range(EtcdKeys::Key("a/1"));
    ASSERT_EQ(one.kvs.size(), 1u);
    EXPECT_EQ(one.kvs[0].value, binary);
    EXPECT_EQ(one.kvs[0].version, 1);
    EXPECT_EQ(one.kvs[0].create_revision, first + 2);
    EXPECT_EQ(one.revision, last);

    EtcdRangeResult prefix = client_.Range(EtcdKeys::Prefix("a/"));
    EXPECT_EQ(KeysOf(prefix.kvs), (std::vector<std::string>{"a/1", "a/2"}));
    EXPECT_EQ(prefix.count, 2);

    EXPECT_TRUE(client_.Range(EtcdKeys::Key("nothing")).kvs.empty());

    EtcdDeleteResult deleted = client_.DeleteRange(EtcdKeys::Prefix("a/"));
    EXPECT_EQ(deleted.deleted, 2);
    EXPECT_EQ(deleted.revision, last + 1);
    EXPECT_EQ(KeysOf(client_.Range(EtcdKeys::Prefix("")).kvs),
              (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(client_.DeleteRange(EtcdKeys::Key("a/1")).deleted, 0);
}

TEST_F(EtcdClientTest, OverwriteKeepsCreateRevisionAndCountsVersions) {
    const int64_t created = client_.Put("k", "1");
    const int64_t modified = client_.Put("k", "2");
    EtcdKeyValue kv = client_.Range(EtcdKeys::Key("k")).kvs.at(0);
    EXPECT_EQ(kv.create_revision, created);
    EXPECT_EQ(kv.mod_revision, modified);
    EXPECT_EQ(kv.version, 2);
    EXPECT_EQ(kv.value, "2");
}

TEST_F(EtcdClientTest, CreateIfAbsentWinsOnceAndLosesTheSecondTime) {
    const std::string key = "/chorus/owner/vol1";
    auto claim = [&](const std::string& node) {
        return client_.Txn({EtcdCompare::Absent(key)}, {EtcdOp::Put(key, node)},
                           {EtcdOp::Range(EtcdKeys::Key(key))});
    };
    EtcdTxnResult won = claim("node1");
    EXPECT_TRUE(won.succeeded);
    ASSERT_EQ(won.responses.size(), 1u);
    EXPECT_EQ(won.responses[0].kind, EtcdOp::Kind::kPut);

    EtcdTxnResult lost = claim("node2");
    EXPECT_FALSE(lost.succeeded);
    EXPECT_EQ(lost.revision, won.revision);  // nothing written
    ASSERT_EQ(lost.responses.size(), 1u);
    ASSERT_EQ(lost.responses[0].kvs.size(), 1u);
    EXPECT_EQ(lost.responses[0].kvs[0].value, "node1");
    EXPECT_EQ(lost.responses[0].kvs[0].create_revision, won.revision);
}

TEST_F(EtcdClientTest, TransactionComparesEachTarget) {
    const int64_t rev = client_.Put("k", "v");
    auto holds = [&](EtcdCompare c) { return client_.Txn({std::move(c)}, {}).succeeded; };
    EXPECT_TRUE(holds(EtcdCompare::Version("k", R::kEqual, 1)));
    EXPECT_FALSE(holds(EtcdCompare::Version("k", R::kGreater, 1)));
    EXPECT_TRUE(holds(EtcdCompare::CreateRevision("k", R::kEqual, rev)));
    EXPECT_TRUE(holds(EtcdCompare::ModRevision("k", R::kLess, rev + 1)));
    EXPECT_FALSE(holds(EtcdCompare::ModRevision("k", R::kNotEqual, rev)));
    EXPECT_TRUE(holds(EtcdCompare::Value("k", R::kEqual, "v")));
    EXPECT_FALSE(holds(EtcdCompare::Value("k", R::kEqual, "w")));
    EXPECT_TRUE(holds(EtcdCompare::Lease("k", R::kEqual, 0)));
    EXPECT_FALSE(holds(EtcdCompare::Absent("k")));

    // Both branches with several operations.
    EtcdTxnResult r = client_.Txn({EtcdCompare::Value("k", R::kEqual, "v")},
                                  {EtcdOp::Put("k2", "x"), EtcdOp::Delete(EtcdKeys::Key("k")),
                                   EtcdOp::Range(EtcdKeys::Prefix("k"))});
    EXPECT_TRUE(r.succeeded);
    ASSERT_EQ(r.responses.size(), 3u);
    EXPECT_EQ(r.responses[1].deleted, 1);
    EXPECT_EQ(KeysOf(r.responses[2].kvs), (std::vector<std::string>{"k2"}));
}

TEST_F(EtcdClientTest, RefusedRequestIsARequestErrorNamingTheEndpoint) {
    try {
        client_.Put("k", "v", /*lease=*/12345);
        FAIL() << "a put with an unknown lease succeeded";
    } catch (const EtcdRequestError& e) {
        EXPECT_EQ(e.grpc_code(), static_cast<int>(GrpcCode::kNotFound));
        EXPECT_EQ(e.endpoint(), etcd_.endpoint(0));
        EXPECT_NE(std::string(e.what()).find("lease not found"), std::string::npos) << e.what();
    }
    // Two puts of one key in one transaction: InvalidArgument.
    EXPECT_THROW(client_.Txn({}, {EtcdOp::Put("k", "1"), EtcdOp::Put("k", "2")}), EtcdRequestError);
}

TEST_F(EtcdClientTest, LeaseKeepAliveAndRevokeRemovesItsKeys) {
    EtcdLease lease = client_.LeaseGrant(30);
    EXPECT_NE(lease.id, 0);
    EXPECT_EQ(lease.ttl, 30);
    client_.Put("/chorus/node/1", "up", lease.id);
    EXPECT_EQ(client_.Range(EtcdKeys::Key("/chorus/node/1")).kvs.at(0).lease, lease.id);

    EtcdKeepAlive renewed = client_.LeaseKeepAliveOnce(lease.id);
    EXPECT_TRUE(renewed.alive);
    EXPECT_EQ(renewed.ttl, 30);

    EXPECT_TRUE(client_.LeaseRevoke(lease.id));
    EXPECT_TRUE(client_.Range(EtcdKeys::Key("/chorus/node/1")).kvs.empty());
    EtcdKeepAlive gone = client_.LeaseKeepAliveOnce(lease.id);
    EXPECT_FALSE(gone.alive);
    EXPECT_EQ(gone.ttl, 0);
    EXPECT_FALSE(client_.LeaseRevoke(lease.id));
}

// etcd raises a TTL below its minimum (1.5 election timeouts, in whole
// seconds: 1 s for this member's 100 ms, 2 s for the default 1 s) and
// checks for expired leases every 500 ms.
TEST_F(EtcdClientTest, LeaseNotKeptAliveExpiresAndTakesItsKeys) {
    EtcdLease lease = client_.LeaseGrant(1);
    ASSERT_GE(lease.ttl, 1);
    const Clock::time_point granted = Clock::now();
    client_.Put("/chorus/node/2", "up", lease.id);
    ASSERT_EQ(client_.Range(EtcdKeys::Key("/chorus/node/2")).kvs.size(), 1u);

    const Clock::time_point give_up =
        granted + std::chrono::seconds(lease.ttl) + milliseconds(3000);
    while (!client_.Range(EtcdKeys::Key("/chorus/node/2")).kvs.empty()) {
        ASSERT_LT(Clock::now(), give_up) << "lease of " << lease.ttl << " s did not expire";
        std::this_thread::sleep_for(milliseconds(50));
    }
    EXPECT_GE(Clock::now() - granted, std::chrono::seconds(lease.ttl) - milliseconds(100));
    EXPECT_FALSE(client_.LeaseKeepAliveOnce(lease.id).alive);
}

TEST_F(EtcdClientTest, CompactedRevisionCannotBeRead) {
    client_.Put("k", "1");
    const int64_t rev = client_.Put("k", "2");
    client_.Compact(rev);
    EXPECT_EQ(client_.Range(EtcdKeys::Key("k")).kvs.at(0).value, "2");
    try {
        client_.Compact(rev - 1);
        FAIL() << "compacted twice";
    } catch (const EtcdRequestError& e) {
        EXPECT_EQ(e.grpc_code(), static_cast<int>(GrpcCode::kOutOfRange));
    }
}

}  // namespace
}  // namespace chorus
