#include "lib/etcd_errors.h"

#include <array>
#include <utility>

namespace chorus {

namespace {

std::string DescribeAttempts(std::string_view call,
                             const std::vector<EtcdUnreachableError::Attempt>& attempts) {
    std::string text = "etcd unreachable (" + std::string(call) + "):";
    for (const auto& a : attempts) {
        text += " " + a.endpoint + ": ";
        if (a.failures == 0) {
            text += "not tried before the deadline;";
            continue;
        }
        text += a.reason;
        if (a.failures > 1)
            text += " (" + std::to_string(a.failures) + " attempts)";
        text += ";";
    }
    if (attempts.empty())
        text += " no endpoint configured;";
    text.pop_back();
    return text;
}

}  // namespace

std::string GrpcCodeName(int code) {
    static constexpr std::array<const char*, 17> kNames = {
        "OK",
        "Canceled",
        "Unknown",
        "InvalidArgument",
        "DeadlineExceeded",
        "NotFound",
        "AlreadyExists",
        "PermissionDenied",
        "ResourceExhausted",
        "FailedPrecondition",
        "Aborted",
        "OutOfRange",
        "Unimplemented",
        "Internal",
        "Unavailable",
        "DataLoss",
        "Unauthenticated",
    };
    if (code < 0 || code >= static_cast<int>(kNames.size()))
        return "code " + std::to_string(code);
    return kNames[static_cast<size_t>(code)];
}

EtcdUnreachableError::EtcdUnreachableError(std::string_view call, std::vector<Attempt> attempts)
    : EtcdError(DescribeAttempts(call, attempts)), attempts_(std::move(attempts)) {}

EtcdRequestError::EtcdRequestError(std::string endpoint, std::string_view call, int grpc_code,
                                   std::string message)
    : EtcdError("etcd " + endpoint + " refused " + std::string(call) + ": " + message + " (" +
                GrpcCodeName(grpc_code) + ")"),
      endpoint_(std::move(endpoint)),
      grpc_code_(grpc_code),
      message_(std::move(message)) {}

EtcdResponseError::EtcdResponseError(std::string detail)
    : EtcdError("malformed etcd response: " + detail), detail_(std::move(detail)) {}

EtcdResponseError::EtcdResponseError(std::string endpoint, std::string_view call,
                                     std::string detail)
    : EtcdError("etcd " + endpoint + ": malformed answer to " + std::string(call) + ": " + detail),
      endpoint_(std::move(endpoint)),
      detail_(std::move(detail)) {}

EtcdCompactedError::EtcdCompactedError(std::string endpoint, int64_t start_revision,
                                       int64_t compact_revision)
    : EtcdError("etcd " + endpoint + ": watch start revision " + std::to_string(start_revision) +
                " is compacted (oldest revision kept: " + std::to_string(compact_revision) + ")"),
      endpoint_(std::move(endpoint)),
      start_revision_(start_revision),
      compact_revision_(compact_revision) {}

}  // namespace chorus
