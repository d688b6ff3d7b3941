// A client of etcd's v3 API over its JSON gateway (etcd 3.4: POST
// /v3/kv/range and friends), with failover between the members of a
// cluster. Documentation/etcd.md says why the gateway and not gRPC.
//
// Every call tries the endpoints in turn, starting with the one that last
// answered, until one gives an answer, and goes round again after a short
// pause until the call's deadline. An endpoint that refuses the connection,
// times out, answers HTTP 5xx or says it cannot serve now (gRPC
// Unavailable: no leader, leader changed) is a failed attempt, logged with
// the endpoint; when the deadline comes the call throws
// EtcdUnreachableError naming every endpoint and its last failure. An
// answer that refuses the request throws EtcdRequestError at once, and one
// that makes no sense EtcdResponseError.
//
// A mutation whose attempt timed out may have been applied before the
// client moved on and sent it again: write transactions so that a repeat
// is harmless or recognisable (Documentation/etcd.md).
//
// Not thread-safe: one client per thread (they are cheap).
#ifndef CHORUS_LIB_ETCD_CLIENT_H_
#define CHORUS_LIB_ETCD_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/etcd_curl.h"
#include "lib/etcd_errors.h"
#include "lib/etcd_failover.h"
#include "lib/etcd_types.h"
#include "lib/severity.h"

namespace chorus {

struct EtcdOptions {
    // "http://host:port" or "https://host:port", one per member.
    std::vector<std::string> endpoints;
    // For the https endpoints: the CA to trust, this client's certificate.
    EtcdTls tls;
    // The TCP connect to one endpoint.
    std::chrono::milliseconds connect_timeout{1000};
    // One request to one endpoint, connect included.
    std::chrono::milliseconds attempt_timeout{2000};
    // A whole call: every attempt and the pauses between rounds.
    std::chrono::milliseconds call_timeout{5000};
    // Where failed attempts are reported (Severity::kWarn); may be empty.
    LogFn log;
};

class EtcdClient {
public:
    // Throws chorus::Error if an endpoint is not "http(s)://host[:port]".
    explicit EtcdClient(EtcdOptions options);

    const EtcdOptions& options() const { return options_; }

    EtcdRangeResult Range(const EtcdKeys& keys);
    // Returns the revision of the put.
    int64_t Put(std::string_view key, std::string_view value, int64_t lease = 0);
    EtcdDeleteResult DeleteRange(const EtcdKeys& keys);
    // Runs success if every compare holds, else failure. A compare that
    // does not hold is an answer, not an error: succeeded is false.
    EtcdTxnResult Txn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
                      const std::vector<EtcdOp>& failure = {});
    // Drops the history before revision (watches and ranges can no longer
    // start before it). Returns the store's revision.
    int64_t Compact(int64_t revision);

    // The TTL granted may be longer than asked: etcd raises a TTL below its
    // minimum (1.5 election timeouts, rounded up to a second).
    EtcdLease LeaseGrant(int64_t ttl_seconds);
    // Renews the lease once. alive is false when etcd no longer has it
    // (expired or revoked): the keys bound to it are gone.
    EtcdKeepAlive LeaseKeepAliveOnce(int64_t lease_id);
    // Revokes the lease and deletes its keys. Returns false if etcd did not
    // have it (already expired or revoked).
    bool LeaseRevoke(int64_t lease_id);

private:
    struct Answer {
        nlohmann::json json;
        std::string endpoint;  // the one that gave it
    };
    struct Attempt;

    // POSTs request to /v3/<path> with failover; returns the first answer.
    Answer Call(std::string_view path, const nlohmann::json& request);
    Attempt TryEndpoint(size_t index, std::string_view path, const std::string& body,
                        std::chrono::milliseconds time_left);
    // Call, then decode the answer: a malformed one throws
    // EtcdResponseError naming the endpoint.
    template <typename Result>
    Result CallAndDecode(std::string_view path, const nlohmann::json& request,
                         Result (*decode)(const nlohmann::json&));

    EtcdOptions options_;
    EtcdEndpoints endpoints_;
    HttpPoster http_;
};

}  // namespace chorus

#endif  // CHORUS_LIB_ETCD_CLIENT_H_
