#include "lib/etcd_codec.h"

#include <charconv>
#include <limits>
#include <utility>

#include "lib/etcd_base64.h"
#include "lib/etcd_errors.h"

namespace chorus::etcd {

namespace {

// A short, printable rendering of a bad value for an error message.
std::string Excerpt(const Json& value) {
    std::string text = value.dump(-1, ' ', true, Json::error_handler_t::replace);
    constexpr size_t kMax = 60;
    if (text.size() > kMax)
        text = text.substr(0, kMax) + "...";
    return text;
}

// Read access to the members of one JSON object of an answer. Absent
// members read as their zero value, as protobuf's JSON mapping leaves them
// out; a member of the wrong type throws EtcdResponseError with its path.
class Fields {
public:
    Fields(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
        if (!object_.is_object())
            throw EtcdResponseError((path_.empty() ? "the answer" : "'" + path_ + "'") +
                                    " is not a JSON object: " + Excerpt(object_));
    }

    bool Has(const char* name) const { return Find(name) != nullptr; }

    int64_t Int64(const char* name) const {
        const Json* v = Find(name);
        if (v == nullptr)
            return 0;
        if (v->is_number_unsigned() &&
            v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
            Bad(name, *v, "an int64");
        if (v->is_number_integer())
            return v->get<int64_t>();
        if (!v->is_string())
            Bad(name, *v, "an int64");
        const std::string& s = v->get_ref<const std::string&>();
        int64_t n = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size())
            Bad(name, *v, "an int64");
        return n;
    }

    bool Bool(const char* name) const {
        const Json* v = Find(name);
        if (v == nullptr)
            return false;
        if (!v->is_boolean())
            Bad(name, *v, "a boolean");
        return v->get<bool>();
    }

    std::string Text(const char* name) const {
        const Json* v = Find(name);
        if (v == nullptr)
            return {};
        if (!v->is_string())
            Bad(name, *v, "a string");
        return v->get<std::string>();
    }

    // A bytes field: base64 text.
    std::string Bytes(const char* name) const {
        std::optional<std::string> bytes = Base64Decode(Text(name));
        if (!bytes)
            Bad(name, *Find(name), "base64");
        return std::move(*bytes);
    }

    // A protobuf enum: its name, or its number.
    std::string Enum(const char* name, std::initializer_list<const char*> names) const {
        const Json* v = Find(name);
        if (v == nullptr)
            return *names.begin();
        if (v->is_number_unsigned() && v->get<uint64_t>() < names.size())
            return *(names.begin() + v->get<uint64_t>());
        if (v->is_string()) {
            for (const char* known : names)
                if (v->get_ref<const std::string&>() == known)
                    return known;
        }
        Bad(name, *v, "a known enum value");
    }

    Fields Object(const char* name) const {
        const Json* v = Find(name);
        return Fields(v == nullptr ? EmptyObject() : *v, Path(name));
    }

    std::vector<Fields> Objects(const char* name) const {
        std::vector<Fields> out;
        const Json* v = Find(name);
        if (v == nullptr)
            return out;
        if (!v->is_array())
            Bad(name, *v, "an array");
        for (size_t i = 0; i < v->size(); ++i)
            out.emplace_back((*v)[i], Path(name) + "[" + std::to_string(i) + "]");
        return out;
    }

private:
    static const Json& EmptyObject() {
        static const Json empty = Json::object();
        return empty;
    }

    // A null member is what some encoders write for an unset one.
    const Json* Find(const char* name) const {
        auto it = object_.find(name);
        return it == object_.end() || it->is_null() ? nullptr : &*it;
    }

    std::string Path(const char* name) const { return path_.empty() ? name : path_ + "." + name; }

    [[noreturn]] void Bad(const char* name, const Json& value, const char* expected) const {
        throw EtcdResponseError("field '" + Path(name) + "' is not " + expected + ": " +
                                Excerpt(value));
    }

    const Json& object_;
    std::string path_;
};

std::string Int64Text(int64_t n) {
    return std::to_string(n);
}

Json KeysJson(const EtcdKeys& keys) {
    Json j = {{"key", Base64Encode(keys.key)}};
    if (!keys.range_end.empty())
        j["range_end"] = Base64Encode(keys.range_end);
    return j;
}

Json OpJson(const EtcdOp& op) {
    switch (op.kind) {
        case EtcdOp::Kind::kPut:
            return {{"request_put", EncodePut(op.keys.key, op.value, op.lease)}};
        case EtcdOp::Kind::kDelete:
            return {{"request_delete_range", EncodeDeleteRange(op.keys)}};
        case EtcdOp::Kind::kRange:
            break;
    }
    return {{"request_range", EncodeRange(op.keys)}};
}

Json CompareJson(const EtcdCompare& c) {
    static constexpr const char* kResults[] = {"EQUAL", "NOT_EQUAL", "LESS", "GREATER"};
    Json j = {{"key", Base64Encode(c.key)}, {"result", kResults[static_cast<int>(c.result)]}};
    switch (c.target) {
        case EtcdCompare::Target::kVersion:
            j["target"] = "VERSION";
            j["version"] = Int64Text(c.number);
            break;
        case EtcdCompare::Target::kCreateRevision:
            j["target"] = "CREATE";
            j["create_revision"] = Int64Text(c.number);
            break;
        case EtcdCompare::Target::kModRevision:
            j["target"] = "MOD";
            j["mod_revision"] = Int64Text(c.number);
            break;
        case EtcdCompare::Target::kValue:
            j["target"] = "VALUE";
            j["value"] = Base64Encode(c.value);
            break;
        case EtcdCompare::Target::kLease:
            j["target"] = "LEASE";
            j["lease"] = Int64Text(c.number);
            break;
    }
    return j;
}

EtcdKeyValue DecodeKeyValue(const Fields& f) {
    EtcdKeyValue kv;
    kv.key = f.Bytes("key");
    kv.value = f.Bytes("value");
    kv.create_revision = f.Int64("create_revision");
    kv.mod_revision = f.Int64("mod_revision");
    kv.version = f.Int64("version");
    kv.lease = f.Int64("lease");
    return kv;
}

std::vector<EtcdKeyValue> DecodeKeyValues(const Fields& f) {
    std::vector<EtcdKeyValue> kvs;
    for (const Fields& kv : f.Objects("kvs"))
        kvs.push_back(DecodeKeyValue(kv));
    return kvs;
}

EtcdOpResult DecodeOpResult(const Fields& f) {
    EtcdOpResult r;
    if (f.Has("response_range")) {
        r.kind = EtcdOp::Kind::kRange;
        r.kvs = DecodeKeyValues(f.Object("response_range"));
    } else if (f.Has("response_put")) {
        r.kind = EtcdOp::Kind::kPut;
        f.Object("response_put");  // checks the type
    } else if (f.Has("response_delete_range")) {
        r.kind = EtcdOp::Kind::kDelete;
        r.deleted = f.Object("response_delete_range").Int64("deleted");
    } else {
        throw EtcdResponseError("a transaction response has no known operation");
    }
    return r;
}

EtcdEvent DecodeEvent(const Fields& f) {
    EtcdEvent e;
    const bool put = f.Enum("type", {"PUT", "DELETE"}) == "PUT";
    e.type = put ? EtcdEvent::Type::kPut : EtcdEvent::Type::kDelete;
    e.kv = DecodeKeyValue(f.Object("kv"));
    return e;
}

// The object inside a stream message's "result".
Fields StreamResult(const Json& message) {
    Fields outer(message, "");
    if (!outer.Has("result"))
        throw EtcdResponseError("a stream message has no 'result'");
    return outer.Object("result");
}

}  // namespace

Json EncodeRange(const EtcdKeys& keys) {
    return KeysJson(keys);
}

Json EncodePut(std::string_view key, std::string_view value, int64_t lease) {
    Json j = {{"key", Base64Encode(key)}, {"value", Base64Encode(value)}};
    if (lease != 0)
        j["lease"] = Int64Text(lease);
    return j;
}

Json EncodeDeleteRange(const EtcdKeys& keys) {
    return KeysJson(keys);
}

Json EncodeTxn(const std::vector<EtcdCompare>& compares, const std::vector<EtcdOp>& success,
               const std::vector<EtcdOp>& failure) {
    Json j = {{"compare", Json::array()}, {"success", Json::array()}, {"failure", Json::array()}};
    for (const auto& c : compares)
        j["compare"].push_back(CompareJson(c));
    for (const auto& op : success)
        j["success"].push_back(OpJson(op));
    for (const auto& op : failure)
        j["failure"].push_back(OpJson(op));
    return j;
}

Json EncodeLeaseGrant(int64_t ttl_seconds) {
    return {{"TTL", Int64Text(ttl_seconds)}};
}

Json EncodeLeaseId(int64_t lease_id) {
    return {{"ID", Int64Text(lease_id)}};
}

Json EncodeCompaction(int64_t revision) {
    // physical: answer once the old revisions are really gone, so a watch
    // or range right after sees the compaction.
    return {{"revision", Int64Text(revision)}, {"physical", true}};
}

Json EncodeWatchCreate(const EtcdKeys& keys, int64_t start_revision) {
    Json create = KeysJson(keys);
    if (start_revision != 0)
        create["start_revision"] = Int64Text(start_revision);
    return {{"create_request", std::move(create)}};
}

Json ParseObject(std::string_view text) {
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        std::string start(text.substr(0, 60));
        throw EtcdResponseError("not JSON: '" + start + (text.size() > 60 ? "...'" : "'"));
    }
    Fields check(j, "");  // throws unless an object
    return j;
}

std::optional<GatewayError> DecodeGatewayError(const Json& answer) {
    Fields f(answer, "");
    if (!f.Has("error"))
        return std::nullopt;
    const Json& error = answer["error"];
    GatewayError e;
    if (error.is_object()) {
        Fields inner(error, "error");
        e.code = static_cast<int>(inner.Int64("grpc_code"));
        e.message = inner.Text("message");
    } else {
        e.code = static_cast<int>(f.Int64("code"));
        e.message = f.Text("message");
        if (e.message.empty())
            e.message = f.Text("error");
    }
    if (e.code == 0)
        e.code = 2;  // an error without a code: gRPC's Unknown
    return e;
}

int64_t DecodeHeaderRevision(const Json& answer) {
    return Fields(answer, "").Object("header").Int64("revision");
}

EtcdRangeResult DecodeRange(const Json& answer) {
    Fields f(answer, "");
    EtcdRangeResult r;
    r.revision = f.Object("header").Int64("revision");
    r.kvs = DecodeKeyValues(f);
    r.count = f.Int64("count");
    r.more = f.Bool("more");
    return r;
}

EtcdDeleteResult DecodeDeleteRange(const Json& answer) {
    Fields f(answer, "");
    return {f.Object("header").Int64("revision"), f.Int64("deleted")};
}

EtcdTxnResult DecodeTxn(const Json& answer) {
    Fields f(answer, "");
    EtcdTxnResult r;
    r.succeeded = f.Bool("succeeded");
    r.revision = f.Object("header").Int64("revision");
    for (const Fields& op : f.Objects("responses"))
        r.responses.push_back(DecodeOpResult(op));
    return r;
}

EtcdLease DecodeLeaseGrant(const Json& answer) {
    Fields f(answer, "");
    EtcdLease lease{f.Int64("ID"), f.Int64("TTL")};
    if (lease.id == 0 || lease.ttl <= 0)
        throw EtcdResponseError("lease grant without an ID or a TTL");
    return lease;
}

EtcdKeepAlive DecodeKeepAlive(const Json& answer) {
    int64_t ttl = StreamResult(answer).Int64("TTL");
    if (ttl <= 0)
        return {false, 0};
    return {true, ttl};
}

WatchMessage DecodeWatchMessage(const Json& message) {
    Fields f = StreamResult(message);
    WatchMessage m;
    m.revision = f.Object("header").Int64("revision");
    m.created = f.Bool("created");
    m.canceled = f.Bool("canceled");
    m.compact_revision = f.Int64("compact_revision");
    m.cancel_reason = f.Text("cancel_reason");
    for (const Fields& e : f.Objects("events"))
        m.events.push_back(DecodeEvent(e));
    return m;
}

}  // namespace chorus::etcd
