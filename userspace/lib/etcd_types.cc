#include "lib/etcd_types.h"

namespace chorus {

EtcdKeys EtcdKeys::Prefix(std::string prefix) {
    // etcd's rule: the end of a prefix is the prefix with its last byte that
    // is not 0xff incremented and what follows it dropped; "\0" (every key
    // from key on) when there is no such byte. etcd refuses an empty key, so
    // every key is ["\0", "\0").
    if (prefix.empty())
        return {std::string(1, '\0'), std::string(1, '\0')};
    std::string end = prefix;
    while (!end.empty() && static_cast<unsigned char>(end.back()) == 0xff)
        end.pop_back();
    if (end.empty())
        return {std::move(prefix), std::string(1, '\0')};
    end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
    return {std::move(prefix), std::move(end)};
}

EtcdCompare EtcdCompare::Version(std::string key, Result r, int64_t n) {
    return {std::move(key), Target::kVersion, r, n, {}};
}

EtcdCompare EtcdCompare::CreateRevision(std::string key, Result r, int64_t n) {
    return {std::move(key), Target::kCreateRevision, r, n, {}};
}

EtcdCompare EtcdCompare::ModRevision(std::string key, Result r, int64_t n) {
    return {std::move(key), Target::kModRevision, r, n, {}};
}

EtcdCompare EtcdCompare::Lease(std::string key, Result r, int64_t lease_id) {
    return {std::move(key), Target::kLease, r, lease_id, {}};
}

EtcdCompare EtcdCompare::Value(std::string key, Result r, std::string value) {
    return {std::move(key), Target::kValue, r, 0, std::move(value)};
}

EtcdCompare EtcdCompare::Absent(std::string key) {
    return CreateRevision(std::move(key), Result::kEqual, 0);
}

EtcdOp EtcdOp::Put(std::string key, std::string value, int64_t lease) {
    return {Kind::kPut, EtcdKeys::Key(std::move(key)), std::move(value), lease};
}

EtcdOp EtcdOp::Delete(EtcdKeys keys) {
    return {Kind::kDelete, std::move(keys), {}, 0};
}

EtcdOp EtcdOp::Range(EtcdKeys keys) {
    return {Kind::kRange, std::move(keys), {}, 0};
}

}  // namespace chorus
