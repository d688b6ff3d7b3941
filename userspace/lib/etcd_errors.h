// The errors of the etcd client. Every one is a chorus::Error; the
// subclasses tell apart "no etcd member could be reached" (retry later, or
// another way), "etcd answered and refused" (a bug or a state the caller
// must handle), "the answer made no sense" and "the watch start revision is
// gone". A transaction whose compares fail is not an error: Txn returns
// succeeded = false.
#ifndef CHORUS_LIB_ETCD_ERRORS_H_
#define CHORUS_LIB_ETCD_ERRORS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/errors.h"

namespace chorus {

// The gRPC status codes etcd's gateway reports in an error's "code".
enum class GrpcCode {
    kOk = 0,
    kCanceled = 1,
    kUnknown = 2,
    kInvalidArgument = 3,
    kDeadlineExceeded = 4,
    kNotFound = 5,
    kAlreadyExists = 6,
    kPermissionDenied = 7,
    kResourceExhausted = 8,
    kFailedPrecondition = 9,
    kAborted = 10,
    kOutOfRange = 11,
    kUnimplemented = 12,
    kInternal = 13,
    kUnavailable = 14,
    kDataLoss = 15,
    kUnauthenticated = 16,
};

// "Unavailable" for 14; "code N" for a number gRPC does not define.
std::string GrpcCodeName(int code);

class EtcdError : public Error {
public:
    using Error::Error;
};

// No endpoint answered the call before its deadline: each one refused the
// connection, timed out, or said it could not serve (no leader, HTTP 5xx).
class EtcdUnreachableError : public EtcdError {
public:
    struct Attempt {
        std::string endpoint;
        std::string reason;  // why the last attempt on it failed
        int failures = 0;    // 0: not tried before the deadline
    };

    // call names what was asked, e.g. "kv/range" or "watch".
    EtcdUnreachableError(std::string_view call, std::vector<Attempt> attempts);

    const std::vector<Attempt>& attempts() const { return attempts_; }

private:
    std::vector<Attempt> attempts_;
};

// An etcd member answered and refused the request: a bad argument, a lease
// it does not know, a compacted revision, no permission.
class EtcdRequestError : public EtcdError {
public:
    EtcdRequestError(std::string endpoint, std::string_view call, int grpc_code,
                     std::string message);

    const std::string& endpoint() const { return endpoint_; }
    int grpc_code() const { return grpc_code_; }
    // etcd's own text, e.g. "etcdserver: requested lease not found".
    const std::string& message() const { return message_; }

private:
    std::string endpoint_;
    int grpc_code_;
    std::string message_;
};

// An answer that is not what etcd's gateway sends: not JSON, a field of the
// wrong type, bad base64. The codec throws it with no endpoint; the client
// adds the endpoint and the call.
class EtcdResponseError : public EtcdError {
public:
    explicit EtcdResponseError(std::string detail);
    EtcdResponseError(std::string endpoint, std::string_view call, std::string detail);

    const std::string& endpoint() const { return endpoint_; }
    const std::string& detail() const { return detail_; }

private:
    std::string endpoint_;
    std::string detail_;
};

// A watch asked for revisions etcd has compacted away. The caller re-reads
// the keys (a range returns the current state and revision R) and watches
// again from R + 1.
class EtcdCompactedError : public EtcdError {
public:
    EtcdCompactedError(std::string endpoint, int64_t start_revision, int64_t compact_revision);

    const std::string& endpoint() const { return endpoint_; }
    int64_t start_revision() const { return start_revision_; }
    // The oldest revision etcd still has.
    int64_t compact_revision() const { return compact_revision_; }

private:
    std::string endpoint_;
    int64_t start_revision_;
    int64_t compact_revision_;
};

}  // namespace chorus

#endif  // CHORUS_LIB_ETCD_ERRORS_H_
