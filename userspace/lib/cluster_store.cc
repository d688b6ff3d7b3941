#include "lib/cluster_store.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "lib/store_value.h"

namespace chorus {

nlohmann::json ParseVersioned(const std::string& key, std::string_view value) {
    nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw StoreValueError(key, "not a JSON object");
    auto v = j.find("version");
    if (v == j.end() || !v->is_number_integer())
        throw StoreValueError(key, "no integer 'version'");
    if (v->get<int64_t>() != kStoreValueVersion)
        throw StoreValueError(key, "version " + v->dump() + " is not " +
                                       std::to_string(kStoreValueVersion) +
                                       " (written by a newer or older chorus?)");
    return j;
}

namespace {

constexpr int kVersion = kStoreValueVersion;
constexpr uint32_t kMaxNodeId = 32;

using Json = nlohmann::json;
using R = EtcdCompare::Result;

// Node ids 1..32, each once.
std::vector<uint32_t> NodeList(const std::string& key, const Json& j, const char* name) {
    std::vector<int64_t> raw = Field<std::vector<int64_t>>(key, j, name);
    std::set<int64_t> seen;
    std::vector<uint32_t> out;
    for (int64_t id : raw) {
        if (id < 1 || id > kMaxNodeId)
            throw StoreValueError(key, std::string("'") + name + "' names node " +
                                           std::to_string(id) + ", not in 1..32");
        if (!seen.insert(id).second)
            throw StoreValueError(
                key, std::string("'") + name + "' names node " + std::to_string(id) + " twice");
        out.push_back(static_cast<uint32_t>(id));
    }
    return out;
}

bool Contains(const std::vector<uint32_t>& v, uint32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

std::string VolumeSpecKey(std::string_view volume) {
    return "/chorus/volumes/" + std::string(volume);
}

std::string WriteSetKey(std::string_view volume) {
    return "/chorus/writeset/" + std::string(volume);
}

std::string OwnerKey(std::string_view volume) {
    return "/chorus/owner/" + std::string(volume);
}

std::string MoveKey(std::string_view volume) {
    return "/chorus/move/" + std::string(volume);
}

std::string ReplaceKey(std::string_view volume) {
    return "/chorus/replace/" + std::string(volume);
}

StoreValueError::StoreValueError(const std::string& key, const std::string& what)
    : Error("etcd key " + key + ": " + what) {}

std::string EncodeVolumeSpec(const VolumeSpec& spec) {
    return Json{{"version", kVersion},           {"name", spec.name},
                {"size_bytes", spec.size_bytes}, {"replicas", spec.replicas},
                {"nodes", spec.nodes},           {"transport", spec.transport},
                {"uuid", FormatUuid(spec.uuid)}}
        .dump();
}

VolumeSpec DecodeVolumeSpec(const std::string& key, std::string_view value) {
    Json j = ParseVersioned(key, value);
    VolumeSpec s;
    s.name = Field<std::string>(key, j, "name");
    if (key != VolumeSpecKey(s.name))
        throw StoreValueError(key, "names volume '" + s.name + "'");
    s.size_bytes = Field<uint64_t>(key, j, "size_bytes");
    if (s.size_bytes == 0 || s.size_bytes % 4096 != 0)
        throw StoreValueError(key, "size_bytes " + std::to_string(s.size_bytes) +
                                       " is not a positive multiple of 4096");
    int64_t replicas = Field<int64_t>(key, j, "replicas");
    if (replicas < 1 || replicas > 5)
        throw StoreValueError(key, "replicas " + std::to_string(replicas) + " is not in 1..5");
    s.replicas = static_cast<uint32_t>(replicas);
    s.nodes = NodeList(key, j, "nodes");
    if (s.nodes.size() != s.replicas)
        throw StoreValueError(key, std::to_string(s.nodes.size()) + " nodes for " +
                                       std::to_string(s.replicas) + " replicas");
    s.transport = Field<std::string>(key, j, "transport");
    if (s.transport != "tcp" && s.transport != "rdma" && s.transport != "rdma+tcp")
        throw StoreValueError(key, "transport '" + s.transport + "' is not tcp, rdma or rdma+tcp");
    try {
        s.uuid = ParseUuid(Field<std::string>(key, j, "uuid"));
    } catch (const StoreValueError&) {
        throw;
    } catch (const std::exception& e) {
        throw StoreValueError(key, std::string("uuid: ") + e.what());
    }
    return s;
}

std::string EncodeWriteSet(const WriteSet& ws) {
    return Json{{"version", kVersion}, {"members", ws.members}, {"out_of_date", ws.out_of_date}}
        .dump();
}

WriteSet DecodeWriteSet(const std::string& key, std::string_view value) {
    Json j = ParseVersioned(key, value);
    WriteSet ws;
    ws.members = NodeList(key, j, "members");
    ws.out_of_date = NodeList(key, j, "out_of_date");
    for (uint32_t id : ws.out_of_date)
        if (Contains(ws.members, id))
            throw StoreValueError(
                key, "node " + std::to_string(id) + " is both a member and out of date");
    return ws;
}

std::string EncodeMoveRequest(const MoveRequest& m) {
    return Json{{"version", kVersion}, {"to", m.to}, {"from_epoch", m.from_epoch}}.dump();
}

MoveRequest DecodeMoveRequest(const std::string& key, std::string_view value) {
    Json j = ParseVersioned(key, value);
    MoveRequest m;
    int64_t to = Field<int64_t>(key, j, "to");
    if (to < 1 || to > kMaxNodeId)
        throw StoreValueError(key, "'to' names node " + std::to_string(to) + ", not in 1..32");
    m.to = static_cast<uint32_t>(to);
    m.from_epoch = Field<int64_t>(key, j, "from_epoch");
    if (m.from_epoch < 1)
        throw StoreValueError(key,
                              "from_epoch " + std::to_string(m.from_epoch) + " is not positive");
    return m;
}

std::string EncodeReplaceRequest(const ReplaceRequest& r) {
    return Json{{"version", kVersion}, {"node", r.node}}.dump();
}

ReplaceRequest DecodeReplaceRequest(const std::string& key, std::string_view value) {
    Json j = ParseVersioned(key, value);
    int64_t node = Field<int64_t>(key, j, "node");
    if (node < 1 || node > kMaxNodeId)
        throw StoreValueError(key, "'node' is " + std::to_string(node) + ", not in 1..32");
    return ReplaceRequest{static_cast<uint32_t>(node)};
}

bool ClusterStore::CreateVolume(const VolumeSpec& spec, const WriteSet& initial) {
    const std::string spec_key = VolumeSpecKey(spec.name);
    const std::string ws_key = WriteSetKey(spec.name);
    EtcdTxnResult r = etcd_.Txn({EtcdCompare::Absent(spec_key), EtcdCompare::Absent(ws_key)},
                                {EtcdOp::Put(spec_key, EncodeVolumeSpec(spec)),
                                 EtcdOp::Put(ws_key, EncodeWriteSet(initial))});
    return r.succeeded;
}

std::optional<Revisioned<VolumeSpec>> ClusterStore::GetVolume(std::string_view name) {
    const std::string key = VolumeSpecKey(name);
    EtcdRangeResult r = etcd_.Range(EtcdKeys::Key(key));
    if (r.kvs.empty())
        return std::nullopt;
    return Revisioned<VolumeSpec>{DecodeVolumeSpec(key, r.kvs[0].value), r.kvs[0].mod_revision};
}

std::optional<Revisioned<WriteSet>> ClusterStore::GetWriteSet(std::string_view name) {
    const std::string key = WriteSetKey(name);
    EtcdRangeResult r = etcd_.Range(EtcdKeys::Key(key));
    if (r.kvs.empty())
        return std::nullopt;
    return Revisioned<WriteSet>{DecodeWriteSet(key, r.kvs[0].value), r.kvs[0].mod_revision};
}

Ownership DecodeOwner(const EtcdKeyValue& kv) {
    Json j = ParseVersioned(kv.key, kv.value);
    int64_t node = Field<int64_t>(kv.key, j, "node_id");
    if (node < 1 || node > kMaxNodeId)
        throw StoreValueError(kv.key, "node_id " + std::to_string(node) + " is not in 1..32");
    return Ownership{static_cast<uint32_t>(node), kv.create_revision, kv.lease};
}

std::optional<Ownership> ClusterStore::GetOwner(std::string_view name) {
    EtcdRangeResult r = etcd_.Range(EtcdKeys::Key(OwnerKey(name)));
    if (r.kvs.empty())
        return std::nullopt;
    return DecodeOwner(r.kvs[0]);
}

TakeRefusal ClusterStore::TakeOwnership(std::string_view name, uint32_t node_id, int64_t lease,
                                        Ownership* out) {
    const std::string owner_key = OwnerKey(name);
    std::optional<Revisioned<WriteSet>> ws = GetWriteSet(name);
    if (!ws)
        return TakeRefusal::kNoVolume;
    if (!Contains(ws->value.members, node_id))
        return TakeRefusal::kNotMember;
    const std::string record = Json{{"version", kVersion}, {"node_id", node_id}}.dump();
    EtcdTxnResult r = etcd_.Txn(
        {EtcdCompare::Absent(owner_key),
         EtcdCompare::ModRevision(WriteSetKey(name), R::kEqual, ws->mod_revision)},
        {EtcdOp::Put(owner_key, record, lease)}, {EtcdOp::Range(EtcdKeys::Key(owner_key))});
    if (r.succeeded) {
        // The put's revision is the key's create revision: the epoch.
        *out = Ownership{node_id, r.revision, lease};
        return TakeRefusal::kNone;
    }
    const std::vector<EtcdKeyValue>& kvs = r.responses.at(0).kvs;
    if (kvs.empty())
        return TakeRefusal::kRaced;
    // Our own key from an attempt that timed out and was applied: we won.
    if (kvs[0].lease == lease && kvs[0].value == record) {
        *out = Ownership{node_id, kvs[0].create_revision, lease};
        return TakeRefusal::kNone;
    }
    return TakeRefusal::kOwned;
}

bool ClusterStore::ChangeWriteSet(std::string_view name, const Ownership& mine,
                                  int64_t expected_mod_revision, const WriteSet& next) {
    const std::string owner_key = OwnerKey(name);
    EtcdTxnResult r =
        etcd_.Txn({EtcdCompare::CreateRevision(owner_key, R::kEqual, mine.epoch),
                   EtcdCompare::Lease(owner_key, R::kEqual, mine.lease),
                   EtcdCompare::ModRevision(WriteSetKey(name), R::kEqual, expected_mod_revision)},
                  {EtcdOp::Put(WriteSetKey(name), EncodeWriteSet(next))});
    return r.succeeded;
}

bool ClusterStore::RequestMove(std::string_view name, const Ownership& from, uint32_t to,
                               int64_t target_lease) {
    const std::string owner_key = OwnerKey(name);
    return etcd_
        .Txn({EtcdCompare::Absent(MoveKey(name)),
              EtcdCompare::CreateRevision(owner_key, R::kEqual, from.epoch),
              EtcdCompare::Lease(owner_key, R::kEqual, from.lease)},
             {EtcdOp::Put(MoveKey(name), EncodeMoveRequest({to, from.epoch}), target_lease)})
        .succeeded;
}

bool ClusterStore::ReleaseOwnership(std::string_view name, const Ownership& mine) {
    const std::string owner_key = OwnerKey(name);
    return etcd_
        .Txn({EtcdCompare::CreateRevision(owner_key, R::kEqual, mine.epoch),
              EtcdCompare::Lease(owner_key, R::kEqual, mine.lease)},
             {EtcdOp::Delete(EtcdKeys::Key(owner_key))})
        .succeeded;
}

bool ClusterStore::EndMove(std::string_view name, int64_t mod_revision) {
    return etcd_
        .Txn({EtcdCompare::ModRevision(MoveKey(name), R::kEqual, mod_revision)},
             {EtcdOp::Delete(EtcdKeys::Key(MoveKey(name)))})
        .succeeded;
}

bool ClusterStore::RequestReplace(std::string_view name, uint32_t node,
                                  int64_t writeset_mod_revision) {
    return etcd_
        .Txn({EtcdCompare::Absent(ReplaceKey(name)),
              EtcdCompare::ModRevision(WriteSetKey(name), R::kEqual, writeset_mod_revision)},
             {EtcdOp::Put(ReplaceKey(name), EncodeReplaceRequest({node}))})
        .succeeded;
}

bool ClusterStore::EndReplace(std::string_view name, int64_t mod_revision) {
    return etcd_
        .Txn({EtcdCompare::ModRevision(ReplaceKey(name), R::kEqual, mod_revision)},
             {EtcdOp::Delete(EtcdKeys::Key(ReplaceKey(name)))})
        .succeeded;
}

bool ClusterStore::DeleteVolume(std::string_view name, int64_t spec_mod_revision) {
    EtcdTxnResult r =
        etcd_.Txn({EtcdCompare::ModRevision(VolumeSpecKey(name), R::kEqual, spec_mod_revision)},
                  {EtcdOp::Delete(EtcdKeys::Key(VolumeSpecKey(name))),
                   EtcdOp::Delete(EtcdKeys::Key(WriteSetKey(name))),
                   EtcdOp::Delete(EtcdKeys::Key(OwnerKey(name))),
                   EtcdOp::Delete(EtcdKeys::Key(MoveKey(name))),
                   EtcdOp::Delete(EtcdKeys::Key(ReplaceKey(name)))});
    return r.succeeded;
}

}  // namespace chorus
