#include "lib/etcd_client.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "lib/etcd_codec.h"

namespace chorus {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using Json = nlohmann::json;

std::string BodyExcerpt(const std::string& body) {
    constexpr size_t kMax = 80;
    return body.size() > kMax ? body.substr(0, kMax) + "..." : body;
}

milliseconds Until(Clock::time_point deadline) {
    return std::chrono::ceil<milliseconds>(deadline - Clock::now());
}

}  // namespace

// What one attempt on one endpoint came to: an answer, or why it is worth
// asking another endpoint. Refusals and malformed answers throw instead.
struct EtcdClient::Attempt {
    std::optional<Json> answer;
    std::string failure;
    bool tls_failure = false;
};

EtcdClient::EtcdClient(EtcdOptions options)
    : options_(std::move(options)), endpoints_(options_.endpoints), http_(options_.tls) {}

EtcdRangeResult EtcdClient::Range(const EtcdKeys& keys) {
    return CallAndDecode("kv/range", etcd::EncodeRange(keys), etcd::DecodeRange);
}

int64_t EtcdClient::Put(std::string_view key, std::string_view value, int64_t lease) {
    return CallAndDecode("kv/put", etcd::EncodePut(key, value, lease), etcd::DecodeHeaderRevision);
}

EtcdDeleteResult EtcdClient::DeleteRange(const EtcdKeys& keys) {
    return CallAndDecode("kv/deleterange", etcd::EncodeDeleteRange(keys), etcd::DecodeDeleteRange);
}

EtcdTxnResult EtcdClient::Txn(const std::vector<EtcdCompare>& compares,
                              const std::vector<EtcdOp>& success,
                              const std::vector<EtcdOp>& failure) {
    return CallAndDecode("kv/txn", etcd::EncodeTxn(compares, success, failure), etcd::DecodeTxn);
}

int64_t EtcdClient::Compact(int64_t revision) {
    return CallAndDecode("kv/compaction", etcd::EncodeCompaction(revision),
                         etcd::DecodeHeaderRevision);
}

EtcdLease EtcdClient::LeaseGrant(int64_t ttl_seconds) {
    return CallAndDecode("lease/grant", etcd::EncodeLeaseGrant(ttl_seconds),
                         etcd::DecodeLeaseGrant);
}

EtcdKeepAlive EtcdClient::LeaseKeepAliveOnce(int64_t lease_id) {
    return CallAndDecode("lease/keepalive", etcd::EncodeLeaseId(lease_id), etcd::DecodeKeepAlive);
}

bool EtcdClient::LeaseRevoke(int64_t lease_id) {
    try {
        Call("lease/revoke", etcd::EncodeLeaseId(lease_id));
        return true;
    } catch (const EtcdRequestError& e) {
        if (e.grpc_code() == static_cast<int>(GrpcCode::kNotFound))
            return false;
        throw;
    }
}

template <typename Result>
Result EtcdClient::CallAndDecode(std::string_view path, const Json& request,
                                 Result (*decode)(const Json&)) {
    Answer answer = Call(path, request);
    try {
        return decode(answer.json);
    } catch (const EtcdResponseError& e) {
        throw EtcdResponseError(answer.endpoint, path, e.detail());
    }
}

EtcdClient::Answer EtcdClient::Call(std::string_view path, const Json& request) {
    const std::string body = request.dump();
    const Clock::time_point deadline = Clock::now() + options_.call_timeout;
    EtcdAttempts attempts(endpoints_, std::string(path), options_.log);
    EtcdBackoff backoff;
    for (;;) {
        size_t tls_failures = 0;
        for (size_t n = 0; n < endpoints_.size(); ++n) {
            const size_t index = endpoints_.Nth(n);
            const milliseconds left = Until(deadline);
            if (left <= milliseconds(0))
                throw attempts.Unreachable();
            Attempt attempt = TryEndpoint(index, path, body, left);
            if (attempt.answer) {
                endpoints_.Prefer(index);
                return {std::move(*attempt.answer), endpoints_[index]};
            }
            tls_failures += attempt.tls_failure;
            attempts.Failed(index, std::move(attempt.failure));
        }
        // Every endpoint refused this client's TLS: certificates do not
        // change within a call, so say so now rather than at the deadline.
        if (tls_failures == endpoints_.size())
            throw attempts.Unreachable();
        const milliseconds pause = backoff.Next();
        if (Until(deadline) <= pause)
            throw attempts.Unreachable();
        std::this_thread::sleep_for(pause);
    }
}

EtcdClient::Attempt EtcdClient::TryEndpoint(size_t index, std::string_view path,
                                            const std::string& body, milliseconds time_left) {
    const std::string& endpoint = endpoints_[index];
    HttpReply reply = http_.Post(endpoint + "/v3/" + std::string(path), body,
                                 std::min(options_.connect_timeout, time_left),
                                 std::min(options_.attempt_timeout, time_left));
    if (!reply.answered)
        return {std::nullopt, std::move(reply.failure), reply.tls_failure};
    const std::string status = "HTTP " + std::to_string(reply.status);
    Json answer;
    std::optional<etcd::GatewayError> error;
    try {
        answer = etcd::ParseObject(reply.body);
        error = etcd::DecodeGatewayError(answer);
    } catch (const EtcdResponseError& e) {
        // Not the gateway's JSON: a proxy's or a server's own error page.
        if (reply.status == 200)
            throw EtcdResponseError(endpoint, path, e.detail());
        error = etcd::GatewayError{static_cast<int>(GrpcCode::kUnknown),
                                   status + ": " + BodyExcerpt(reply.body)};
    }
    if (!error && reply.status != 200)
        error =
            etcd::GatewayError{static_cast<int>(GrpcCode::kUnknown), status + " without a message"};
    if (!error)
        return {std::move(answer), {}};
    if (IsUnavailableAnswer(reply.status, error->code)) {
        return {std::nullopt,
                error->message + " (" + GrpcCodeName(error->code) + ", " + status + ")"};
    }
    throw EtcdRequestError(endpoint, path, error->code, error->message);
}

}  // namespace chorus
