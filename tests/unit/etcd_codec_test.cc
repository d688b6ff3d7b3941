// The etcd gateway's JSON, without a server: base64, prefix ranges, the
// requests built, real answers of etcd 3.4 decoded, and bad answers turned
// into EtcdResponseError rather than crashes.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "lib/etcd_base64.h"
#include "lib/etcd_codec.h"
#include "lib/etcd_errors.h"

namespace chorus {
namespace {

using etcd::Json;

// Answers as etcd 3.4.23 wrote them (keys "a/1", "a/2"; values "x", "").
constexpr const char* kRangeAnswer =
    R"({"header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952",)"
    R"("revision":"7","raft_term":"2"},"kvs":[{"key":"YS8x","create_revision":"3",)"
    R"("mod_revision":"5","version":"2","value":"eA==","lease":"2324035603092219921"},)"
    R"({"key":"YS8y","create_revision":"6","mod_revision":"6","version":"1"}],"count":"2"})";
constexpr const char* kWatchEvents =
    R"({"result":{"header":{"revision":"11"},"events":[{"kv":{"key":"dy9h",)"
    R"("create_revision":"9","mod_revision":"9","version":"1","value":"MQ=="}},)"
    R"({"type":"DELETE","kv":{"key":"dy9h","mod_revision":"11"}}]}})";

EtcdRangeResult RangeOf(const std::string& text) {
    return etcd::DecodeRange(etcd::ParseObject(text));
}

TEST(EtcdBase64, KnownVectors) {
    const std::pair<const char*, const char*> vectors[] = {
        {"", ""},
        {"f", "Zg=="},
        {"fo", "Zm8="},
        {"foo", "Zm9v"},
        {"foob", "Zm9vYg=="},
        {"fooba", "Zm9vYmE="},
        {"foobar", "Zm9vYmFy"},
    };
    for (const auto& [plain, encoded] : vectors) {
        EXPECT_EQ(Base64Encode(plain), encoded);
        EXPECT_EQ(Base64Decode(encoded), std::string(plain));
    }
}

TEST(EtcdBase64, EveryByteRoundTrips) {
    std::string all;
    for (int i = 0; i < 256; ++i)
        all += static_cast<char>(i);
    for (size_t len = 0; len <= all.size(); len += 37)
        EXPECT_EQ(Base64Decode(Base64Encode(all.substr(0, len))), all.substr(0, len));
}

TEST(EtcdBase64, RejectsMalformedText) {
    for (const char* bad : {"Zg=", "Z===", "====", "Zm9v!A==", "=Zm9", "Zg==Zg==", "Zm 9"})
        EXPECT_EQ(Base64Decode(bad), std::nullopt) << bad;
}

TEST(EtcdKeys, PrefixEndIsThePrefixPlusOne) {
    EXPECT_EQ(EtcdKeys::Prefix("a/").range_end, "a0");
    EXPECT_EQ(EtcdKeys::Prefix("a\xff").range_end, "b");
    EXPECT_EQ(EtcdKeys::Prefix("\xff\xff").range_end, std::string(1, '\0'));
    EXPECT_EQ(EtcdKeys::Prefix("").key, std::string(1, '\0'));  // every key
    EXPECT_EQ(EtcdKeys::Prefix("").range_end, std::string(1, '\0'));
    EXPECT_EQ(EtcdKeys::Key("a").range_end, "");
}

TEST(EtcdCodec, EncodesACreateIfAbsentTransaction) {
    Json txn = etcd::EncodeTxn({EtcdCompare::Absent("k")}, {EtcdOp::Put("k", "v", 42)},
                               {EtcdOp::Range(EtcdKeys::Key("k"))});
    EXPECT_EQ(txn, Json::parse(R"({
        "compare": [{"key": "aw==", "target": "CREATE", "result": "EQUAL",
                     "create_revision": "0"}],
        "success": [{"request_put": {"key": "aw==", "value": "dg==", "lease": "42"}}],
        "failure": [{"request_range": {"key": "aw=="}}]})"));
}

TEST(EtcdCodec, EncodesEveryCompareTarget) {
    using R = EtcdCompare::Result;
    Json txn = etcd::EncodeTxn(
        {EtcdCompare::Version("k", R::kGreater, 1), EtcdCompare::ModRevision("k", R::kLess, 9),
         EtcdCompare::Lease("k", R::kNotEqual, 7), EtcdCompare::Value("k", R::kEqual, "v")},
        {}, {});
    EXPECT_EQ(txn["compare"][0]["target"], "VERSION");
    EXPECT_EQ(txn["compare"][0]["version"], "1");
    EXPECT_EQ(txn["compare"][0]["result"], "GREATER");
    EXPECT_EQ(txn["compare"][1]["mod_revision"], "9");
    EXPECT_EQ(txn["compare"][1]["result"], "LESS");
    EXPECT_EQ(txn["compare"][2]["lease"], "7");
    EXPECT_EQ(txn["compare"][2]["result"], "NOT_EQUAL");
    EXPECT_EQ(txn["compare"][3]["value"], "dg==");
}

TEST(EtcdCodec, EncodesAWatchFromARevision) {
    EXPECT_EQ(etcd::EncodeWatchCreate(EtcdKeys::Prefix("w/"), 12),
              Json::parse(R"({"create_request": {"key": "dy8=", "range_end": "dzA=",
                                                  "start_revision": "12"}})"));
    EXPECT_FALSE(etcd::EncodeWatchCreate(EtcdKeys::Key("w"), 0)["create_request"].contains(
        "start_revision"));
}

TEST(EtcdCodec, DecodesARangeWithOmittedFields) {
    EtcdRangeResult r = RangeOf(kRangeAnswer);
    EXPECT_EQ(r.revision, 7);
    EXPECT_EQ(r.count, 2);
    ASSERT_EQ(r.kvs.size(), 2u);
    EXPECT_EQ(r.kvs[0].key, "a/1");
    EXPECT_EQ(r.kvs[0].value, "x");
    EXPECT_EQ(r.kvs[0].create_revision, 3);
    EXPECT_EQ(r.kvs[0].mod_revision, 5);
    EXPECT_EQ(r.kvs[0].version, 2);
    EXPECT_EQ(r.kvs[0].lease, 2324035603092219921);
    EXPECT_EQ(r.kvs[1].value, "");  // an empty value is left out
    EXPECT_EQ(r.kvs[1].lease, 0);
    EtcdRangeResult empty = RangeOf(R"({"header":{"revision":"7"}})");
    EXPECT_TRUE(empty.kvs.empty());
    EXPECT_EQ(empty.count, 0);
}

TEST(EtcdCodec, Int64FieldsAreParsedStrictly) {
    auto revision = [](const std::string& value) {
        return etcd::DecodeHeaderRevision(
            etcd::ParseObject(R"({"header":{"revision":)" + value + "}}"));
    };
    EXPECT_EQ(revision(R"("9223372036854775807")"), INT64_MAX);
    EXPECT_EQ(revision(R"("-5")"), -5);
    EXPECT_EQ(revision("12"), 12);  // a JSON number is accepted too
    for (const char* bad : {R"("9223372036854775808")", R"("12x")", R"("")", R"(" 1")", R"("0x10")",
                            "1.5", "18446744073709551615", "true", "[]"})
        EXPECT_THROW(revision(bad), EtcdResponseError) << bad;
}

TEST(EtcdCodec, DecodesTransactions) {
    EtcdTxnResult won = etcd::DecodeTxn(
        etcd::ParseObject(R"({"header":{"revision":"7"},"succeeded":true,)"
                          R"("responses":[{"response_put":{"header":{"revision":"7"}}},)"
                          R"({"response_delete_range":{"deleted":"2"}},{"response_range":{}}]})"));
    EXPECT_TRUE(won.succeeded);
    EXPECT_EQ(won.revision, 7);
    ASSERT_EQ(won.responses.size(), 3u);
    EXPECT_EQ(won.responses[0].kind, EtcdOp::Kind::kPut);
    EXPECT_EQ(won.responses[1].deleted, 2);
    EXPECT_EQ(won.responses[2].kind, EtcdOp::Kind::kRange);
    // A failed compare with an empty failure branch: "succeeded" and
    // "responses" are both left out.
    EtcdTxnResult lost = etcd::DecodeTxn(etcd::ParseObject(R"({"header":{"revision":"8"}})"));
    EXPECT_FALSE(lost.succeeded);
    EXPECT_TRUE(lost.responses.empty());
    EXPECT_THROW(etcd::DecodeTxn(etcd::ParseObject(R"({"responses":[{"response_what":{}}]})")),
                 EtcdResponseError);
}

TEST(EtcdCodec, DecodesLeases) {
    EtcdLease lease = etcd::DecodeLeaseGrant(
        etcd::ParseObject(R"({"header":{},"ID":"2324035603092219914","TTL":"2"})"));
    EXPECT_EQ(lease.id, 2324035603092219914);
    EXPECT_EQ(lease.ttl, 2);
    EXPECT_THROW(etcd::DecodeLeaseGrant(etcd::ParseObject(R"({"TTL":"2"})")), EtcdResponseError);
    EtcdKeepAlive alive =
        etcd::DecodeKeepAlive(etcd::ParseObject(R"({"result":{"ID":"1","TTL":"5"}})"));
    EXPECT_TRUE(alive.alive);
    EXPECT_EQ(alive.ttl, 5);
    // etcd's answer for a lease it no longer has: no TTL.
    EXPECT_FALSE(
        etcd::DecodeKeepAlive(etcd::ParseObject(R"({"result":{"header":{},"ID":"1"}})")).alive);
}

TEST(EtcdCodec, DecodesWatchMessages) {
    etcd::WatchMessage created =
        etcd::DecodeWatchMessage(etcd::ParseObject(R"({"result":{"header":{"revision":"8"},)"
                                                   R"("created":true}})"));
    EXPECT_TRUE(created.created);
    EXPECT_EQ(created.revision, 8);
    etcd::WatchMessage m = etcd::DecodeWatchMessage(etcd::ParseObject(kWatchEvents));
    ASSERT_EQ(m.events.size(), 2u);
    EXPECT_EQ(m.events[0].type, EtcdEvent::Type::kPut);
    EXPECT_EQ(m.events[0].kv.key, "w/a");
    EXPECT_EQ(m.events[0].kv.value, "1");
    EXPECT_EQ(m.events[1].type, EtcdEvent::Type::kDelete);
    EXPECT_EQ(m.events[1].kv.mod_revision, 11);
    etcd::WatchMessage compacted = etcd::DecodeWatchMessage(
        etcd::ParseObject(R"({"result":{"header":{},"canceled":true,"compact_revision":"10"}})"));
    EXPECT_TRUE(compacted.canceled);
    EXPECT_EQ(compacted.compact_revision, 10);
}

TEST(EtcdCodec, DecodesBothShapesOfGatewayErrors) {
    auto unary = etcd::DecodeGatewayError(
        etcd::ParseObject(R"({"error":"etcdserver: requested lease not found",)"
                          R"("message":"etcdserver: requested lease not found","code":5})"));
    ASSERT_TRUE(unary);
    EXPECT_EQ(unary->code, 5);
    EXPECT_EQ(unary->message, "etcdserver: requested lease not found");
    auto stream = etcd::DecodeGatewayError(etcd::ParseObject(
        R"({"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader",)"
        R"("http_status":"Service Unavailable"}})"));
    ASSERT_TRUE(stream);
    EXPECT_EQ(stream->code, 14);
    EXPECT_EQ(stream->message, "etcdserver: no leader");
    EXPECT_FALSE(etcd::DecodeGatewayError(etcd::ParseObject(kRangeAnswer)));
}

TEST(EtcdCodec, MalformedAnswersAreErrorsThatNameTheField) {
    const std::pair<const char*, const char*> cases[] = {
        {"", "not JSON"},
        {"{\"header\":", "not JSON"},
        {"[1,2]", "not a JSON object"},
        {R"({"header":"7"})", "'header'"},
        {R"({"kvs":{}})", "'kvs'"},
        {R"({"kvs":[7]})", "'kvs[0]'"},
        {R"({"kvs":[{"key":"@@@@"}]})", "'kvs[0].key'"},
        {R"({"kvs":[{"key":"YQ==","version":"one"}]})", "'kvs[0].version'"},
        {R"({"more":"yes"})", "'more'"},
    };
    for (const auto& [text, expected] : cases) {
        try {
            RangeOf(text);
            ADD_FAILURE() << "accepted " << text;
        } catch (const EtcdResponseError& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(etcd::DecodeWatchMessage(etcd::ParseObject(R"({"result":{"events":[)"
                                                            R"({"type":"PATCH"}]}})")),
                 EtcdResponseError);
    EXPECT_THROW(etcd::DecodeKeepAlive(etcd::ParseObject("{}")), EtcdResponseError);
}

// Every prefix of real answers, and answers with random bytes changed:
// each decodes or throws EtcdResponseError, nothing else.
TEST(EtcdCodec, DamagedAnswersNeverEscapeAsOtherErrors) {
    std::mt19937 rng(20240601);
    for (const std::string answer : {kRangeAnswer, kWatchEvents}) {
        std::vector<std::string> damaged;
        for (size_t len = 0; len < answer.size(); ++len)
            damaged.push_back(answer.substr(0, len));
        for (int i = 0; i < 500; ++i) {
            std::string text = answer;
            text[rng() % text.size()] = static_cast<char>(rng() % 256);
            damaged.push_back(text);
        }
        for (const std::string& text : damaged) {
            try {
                Json json = etcd::ParseObject(text);
                etcd::DecodeGatewayError(json);
                if (json.contains("result"))
                    etcd::DecodeWatchMessage(json);
                else
                    etcd::DecodeRange(json);
            } catch (const EtcdResponseError&) {
            } catch (const std::exception& e) {
                ADD_FAILURE() << "'" << text << "' threw " << e.what();
            }
        }
    }
}

}  // namespace
}  // namespace chorus
