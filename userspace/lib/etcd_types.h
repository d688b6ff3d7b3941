// The values the etcd v3 client sends and returns: key ranges, key-value
// pairs, transaction compares and operations, leases and watch events.
//
// Keys and values are opaque bytes (std::string may hold any byte, NUL
// included); the client base64-encodes them for the JSON gateway. Revisions
// and lease ids are etcd's int64 values.
#ifndef CHORUS_LIB_ETCD_TYPES_H_
#define CHORUS_LIB_ETCD_TYPES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace chorus {

// One key or every key of a prefix: etcd's [key, range_end) pair.
struct EtcdKeys {
    std::string key;
    std::string range_end;  // empty: key alone

    static EtcdKeys Key(std::string key) { return {std::move(key), {}}; }
    // Every key that starts with prefix; an empty prefix means every key.
    static EtcdKeys Prefix(std::string prefix);
};

struct EtcdKeyValue {
    std::string key;
    std::string value;
    int64_t create_revision = 0;
    int64_t mod_revision = 0;
    int64_t version = 0;  // number of puts since creation; 0 once deleted
    int64_t lease = 0;    // 0: not bound to a lease
};

struct EtcdRangeResult {
    int64_t revision = 0;  // the store's revision the range was read at
    std::vector<EtcdKeyValue> kvs;
    int64_t count = 0;  // keys in the range (may exceed kvs.size() with a limit)
    bool more = false;
};

struct EtcdDeleteResult {
    int64_t revision = 0;
    int64_t deleted = 0;
};

// One condition of a transaction: compares one attribute of key with a
// number or a value. A key that does not exist has create_revision,
// mod_revision, version and lease 0, which is how "create if absent" is
// written: CreateRevision(key, kEqual, 0).
struct EtcdCompare {
    enum class Target { kVersion, kCreateRevision, kModRevision, kValue, kLease };
    enum class Result { kEqual, kNotEqual, kLess, kGreater };

    std::string key;
    Target target = Target::kVersion;
    Result result = Result::kEqual;
    int64_t number = 0;  // for every target but kValue
    std::string value;   // for kValue

    static EtcdCompare Version(std::string key, Result r, int64_t n);
    static EtcdCompare CreateRevision(std::string key, Result r, int64_t n);
    static EtcdCompare ModRevision(std::string key, Result r, int64_t n);
    static EtcdCompare Lease(std::string key, Result r, int64_t lease_id);
    static EtcdCompare Value(std::string key, Result r, std::string value);
    // CreateRevision(key, kEqual, 0).
    static EtcdCompare Absent(std::string key);
};

// One operation of a transaction's success or failure branch.
struct EtcdOp {
    enum class Kind { kPut, kDelete, kRange };

    Kind kind = Kind::kRange;
    EtcdKeys keys;      // kPut uses keys.key only
    std::string value;  // kPut
    int64_t lease = 0;  // kPut; 0: none

    static EtcdOp Put(std::string key, std::string value, int64_t lease = 0);
    static EtcdOp Delete(EtcdKeys keys);
    static EtcdOp Range(EtcdKeys keys);
};

// What one EtcdOp of the branch that ran returned, in the same order.
struct EtcdOpResult {
    EtcdOp::Kind kind = EtcdOp::Kind::kRange;
    std::vector<EtcdKeyValue> kvs;  // kRange
    int64_t deleted = 0;            // kDelete
};

struct EtcdTxnResult {
    bool succeeded = false;  // every compare held: the success branch ran
    int64_t revision = 0;    // the store's revision after the transaction
    std::vector<EtcdOpResult> responses;
};

struct EtcdLease {
    int64_t id = 0;
    int64_t ttl = 0;  // seconds, as granted: etcd may raise a small request
};

// The answer to one keepalive. etcd answers a keepalive of a lease it no
// longer has (expired or revoked) without a TTL: alive is then false, and
// every key bound to the lease is already gone.
struct EtcdKeepAlive {
    bool alive = false;
    int64_t ttl = 0;  // seconds left after the renewal; 0 when !alive
};

struct EtcdEvent {
    enum class Type { kPut, kDelete };

    Type type = Type::kPut;
    // For kDelete only key and mod_revision (the deletion's revision) are set.
    EtcdKeyValue kv;
};

}  // namespace chorus

#endif  // CHORUS_LIB_ETCD_TYPES_H_
