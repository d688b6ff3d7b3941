#include "lib/etcd_failover.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "lib/errors.h"

namespace chorus {

namespace {

std::string CheckedEndpoint(std::string endpoint) {
    while (!endpoint.empty() && endpoint.back() == '/')
        endpoint.pop_back();
    size_t host = 0;
    for (std::string_view scheme : {"http://", "https://"})
        if (endpoint.compare(0, scheme.size(), scheme) == 0)
            host = scheme.size();
    if (host == 0 || endpoint.size() == host ||
        endpoint.find_first_of("/?# ", host) != std::string::npos)
        throw Error("etcd endpoint '" + endpoint + "' is not http(s)://host[:port]", EINVAL);
    return endpoint;
}

}  // namespace

EtcdEndpoints::EtcdEndpoints(std::vector<std::string> endpoints) {
    if (endpoints.empty())
        throw Error("no etcd endpoint given", EINVAL);
    for (auto& e : endpoints)
        endpoints_.push_back(CheckedEndpoint(std::move(e)));
}

EtcdAttempts::EtcdAttempts(const EtcdEndpoints& endpoints, std::string call, const LogFn& log)
    : endpoints_(endpoints), call_(std::move(call)), log_(log) {
    Clear();
}

void EtcdAttempts::Failed(size_t index, std::string reason) {
    if (log_)
        log_(Severity::kWarn, "etcd " + endpoints_[index] + ": " + call_ + " failed: " + reason);
    attempts_[index].reason = std::move(reason);
    ++attempts_[index].failures;
}

size_t EtcdAttempts::endpoints_failed() const {
    return static_cast<size_t>(std::count_if(attempts_.begin(), attempts_.end(),
                                             [](const auto& a) { return a.failures > 0; }));
}

void EtcdAttempts::Clear() {
    attempts_.clear();
    for (size_t i = 0; i < endpoints_.size(); ++i)
        attempts_.push_back({endpoints_[i], {}, 0});
}

EtcdUnreachableError EtcdAttempts::Unreachable() const {
    return EtcdUnreachableError(call_, attempts_);
}

bool IsUnavailableAnswer(long http_status, int grpc_code) {
    switch (static_cast<GrpcCode>(grpc_code)) {
        case GrpcCode::kUnavailable:
        case GrpcCode::kDeadlineExceeded:
        // The gateway of a member that is stopping: "grpc: the client
        // connection is closing".
        case GrpcCode::kCanceled:
            return true;
        case GrpcCode::kUnknown:
        case GrpcCode::kInternal:
            return http_status >= 500;
        default:
            return false;
    }
}

std::chrono::milliseconds EtcdBackoff::Next() {
    auto pause = next_;
    next_ = std::min(next_ * 2, kMax);
    return pause;
}

}  // namespace chorus
