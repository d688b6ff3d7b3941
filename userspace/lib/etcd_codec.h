// The JSON of etcd's v3 gateway (etcd 3.4: POST /v3/<service>/<method>),
// apart from HTTP: requests are built here and answers decoded here, so
// every rule about the wire format lives in one file and is tested without
// a server.
//
// The gateway writes protobuf's JSON mapping: bytes fields in base64, int64
// fields as decimal strings, and it leaves out every field that has its zero
// value (an absent "kvs" is no keys, an absent "succeeded" is false). The
// decoders accept exactly that, and a JSON number where an int64 string is
// expected; anything else throws EtcdResponseError naming the field, never
// crashes.
#ifndef CHORUS_LIB_ETCD_CODEC_H_
#define CHORUS_LIB_ETCD_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/etcd_types.h"

namespace chorus::etcd {

using Json = nlohmann::json;

// Requests.
Json EncodeRange(const EtcdKeys& keys);
Json EncodePut(std::string_view key, std::string_view value, int64_t lease);
Json EncodeDeleteRange(const EtcdKeys& keys);
Json EncodeTxn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
               const std::vector<EtcdOp>& failure);
Json EncodeLeaseGrant(int64_t ttl_seconds);
// The body of lease keepalive and lease revoke.
Json EncodeLeaseId(int64_t lease_id);
Json EncodeCompaction(int64_t revision);
// start_revision 0: from the next change on.
Json EncodeWatchCreate(const EtcdKeys& keys, int64_t start_revision);

// Parses one answer. Throws EtcdResponseError if text is not one JSON
// object.
Json ParseObject(std::string_view text);

// An error the gateway reported instead of an answer, in either of its two
// shapes: {"error": "...", "message": "...", "code": N} for unary calls and
// {"error": {"grpc_code": N, "message": "..."}} inside streams.
struct GatewayError {
    int code = 0;  // gRPC code
    std::string message;
};
std::optional<GatewayError> DecodeGatewayError(const Json& answer);

// Answers. Each throws EtcdResponseError on a field of the wrong type.
int64_t DecodeHeaderRevision(const Json& answer);
EtcdRangeResult DecodeRange(const Json& answer);
EtcdDeleteResult DecodeDeleteRange(const Json& answer);
EtcdTxnResult DecodeTxn(const Json& answer);
EtcdLease DecodeLeaseGrant(const Json& answer);
// The keepalive answer is a stream message: {"result": {...}}.
EtcdKeepAlive DecodeKeepAlive(const Json& answer);

// One message of a watch stream, {"result": {...}} (or a GatewayError).
struct WatchMessage {
    int64_t revision = 0;  // the header's
    bool created = false;
    bool canceled = false;
    int64_t compact_revision = 0;  // set when canceled because of compaction
    std::string cancel_reason;
    std::vector<EtcdEvent> events;
};
WatchMessage DecodeWatchMessage(const Json& message);

}  // namespace chorus::etcd

#endif  // CHORUS_LIB_ETCD_CODEC_H_
