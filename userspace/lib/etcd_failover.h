// What the etcd client and watch share about several endpoints: the list
// and which one to try first, the record of failed attempts that ends up in
// the log and in EtcdUnreachableError, and the pause between rounds.
#ifndef CHORUS_LIB_ETCD_FAILOVER_H_
#define CHORUS_LIB_ETCD_FAILOVER_H_

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "lib/etcd_errors.h"
#include "lib/severity.h"

namespace chorus {

// The endpoints, "http(s)://host:port", in the order given. Calls start with
// the preferred one, the last that answered, so a healthy cluster costs
// one attempt per call however many members are down.
class EtcdEndpoints {
public:
    // Throws chorus::Error if the list is empty or an endpoint is not
    // "http(s)://host[:port]" (a trailing '/' is dropped).
    explicit EtcdEndpoints(std::vector<std::string> endpoints);

    size_t size() const { return endpoints_.size(); }
    const std::string& operator[](size_t index) const { return endpoints_[index]; }

    // The index of the n-th endpoint to try, counting from the preferred.
    size_t Nth(size_t n) const { return (preferred_ + n) % endpoints_.size(); }
    void Prefer(size_t index) { preferred_ = index; }

private:
    std::vector<std::string> endpoints_;
    size_t preferred_ = 0;
};

// The failed attempts of one call (or of one round of a watch), logged as
// they happen and turned into EtcdUnreachableError at the end.
class EtcdAttempts {
public:
    // endpoints and log must outlive it.
    EtcdAttempts(const EtcdEndpoints& endpoints, std::string call, const LogFn& log);

    // Logs "etcd <endpoint>: <call> failed: <reason>" as a warning.
    void Failed(size_t index, std::string reason);
    // Endpoints that failed at least once.
    size_t endpoints_failed() const;
    void Clear();
    EtcdUnreachableError Unreachable() const;

private:
    const EtcdEndpoints& endpoints_;
    std::string call_;
    const LogFn& log_;
    std::vector<EtcdUnreachableError::Attempt> attempts_;  // one per endpoint
};

// Whether an etcd answer means "this member cannot serve now, ask another":
// gRPC Unavailable (no leader, leader changed, request timed out),
// DeadlineExceeded, Canceled (a member shutting down), or an HTTP 5xx that
// is not a definite refusal (etcd's gateway reports its own timeout as 500
// with code Unknown).
bool IsUnavailableAnswer(long http_status, int grpc_code);

// The pause between two rounds over every endpoint: 50 ms, doubling, at
// most 1 s, so a cluster in the middle of an election is not hammered and
// a cluster that comes back is found quickly.
class EtcdBackoff {
public:
    std::chrono::milliseconds Next();
    void Reset() { next_ = kFirst; }

private:
    static constexpr std::chrono::milliseconds kFirst{50};
    static constexpr std::chrono::milliseconds kMax{1000};
    std::chrono::milliseconds next_ = kFirst;
};

}  // namespace chorus

#endif  // CHORUS_LIB_ETCD_FAILOVER_H_
