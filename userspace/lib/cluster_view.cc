#include "lib/cluster_view.h"

#include <algorithm>

#include "lib/store_value.h"

namespace chorus {

namespace {

using Json = nlohmann::json;

nlohmann::json Versioned(const EtcdKeyValue& kv) {
    return ParseVersioned(kv.key, kv.value);
}

template <typename T>
T Get(const EtcdKeyValue& kv, const nlohmann::json& j, const char* name) {
    return Field<T>(kv.key, j, name);
}

// The id at the end of /chorus/<kind>/<id>, checked against the value's.
uint32_t NodeIdOf(const EtcdKeyValue& kv, const Json& j) {
    int64_t id = Get<int64_t>(kv, j, "node_id");
    if (id < 1 || id > 32 || kv.key.substr(kv.key.rfind('/') + 1) != std::to_string(id))
        throw StoreValueError(kv.key, "node_id " + std::to_string(id) + " does not match the key");
    return static_cast<uint32_t>(id);
}

// What a key under /chorus/ is: its kind ("volumes") and name ("vol0").
std::pair<std::string, std::string> Split(const std::string& key) {
    std::string rest = key.substr(std::string("/chorus/").size());
    size_t slash = rest.find('/');
    if (slash == std::string::npos)
        return {rest, ""};
    return {rest.substr(0, slash), rest.substr(slash + 1)};
}

}  // namespace

std::string NodeStatusKey(uint32_t node_id) {
    return "/chorus/status/" + std::to_string(node_id);
}

NodeRecord DecodeNodeRecord(const EtcdKeyValue& kv) {
    Json j = Versioned(kv);
    NodeRecord n;
    n.node_id = NodeIdOf(kv, j);
    n.address = Get<std::string>(kv, j, "address");
    int64_t port = j.contains("port") ? Get<int64_t>(kv, j, "port") : 7788;
    if (port < 1 || port > 65535)
        throw StoreValueError(kv.key, "port " + std::to_string(port) + " is not in 1..65535");
    n.port = static_cast<uint16_t>(port);
    n.hostname = j.value("hostname", "");
    n.lease = kv.lease;
    return n;
}

NodeStatus DecodeNodeStatus(const EtcdKeyValue& kv) {
    Json j = Versioned(kv);
    NodeStatus s;
    s.node_id = NodeIdOf(kv, j);
    if (j.contains("pool") && !j["pool"].is_null()) {
        const Json& p = j["pool"];
        PoolStatus pool;
        pool.vg = Get<std::string>(kv, p, "vg");
        pool.size_bytes = Get<uint64_t>(kv, p, "size_bytes");
        pool.free_bytes = Get<uint64_t>(kv, p, "free_bytes");
        s.pool = pool;
    }
    s.pool_error = j.value("pool_error", "");
    if (j.contains("volumes") && j["volumes"].is_object())
        s.volumes = j["volumes"];
    if (j.contains("nvmet") && j["nvmet"].is_object())
        s.nvmet = j["nvmet"];
    s.nvmet_error = j.value("nvmet_error", "");
    if (j.contains("iscsi") && j["iscsi"].is_object())
        s.iscsi = j["iscsi"];
    s.iscsi_error = j.value("iscsi_error", "");
    return s;
}

std::string EncodeNodeStatus(const NodeStatus& status) {
    Json j{
        {"version", kStoreValueVersion}, {"node_id", status.node_id}, {"volumes", status.volumes}};
    if (status.pool)
        j["pool"] = {{"vg", status.pool->vg},
                     {"size_bytes", status.pool->size_bytes},
                     {"free_bytes", status.pool->free_bytes}};
    if (!status.pool_error.empty())
        j["pool_error"] = status.pool_error;
    if (!status.nvmet.empty())
        j["nvmet"] = status.nvmet;
    if (!status.nvmet_error.empty())
        j["nvmet_error"] = status.nvmet_error;
    if (!status.iscsi.empty())
        j["iscsi"] = status.iscsi;
    if (!status.iscsi_error.empty())
        j["iscsi_error"] = status.iscsi_error;
    return j.dump();
}

ClusterView ReadClusterView(EtcdClient& etcd) {
    EtcdRangeResult r = etcd.Range(EtcdKeys::Prefix("/chorus/"));
    ClusterView v;
    v.revision = r.revision;
    std::map<std::string, const EtcdKeyValue*> writesets, owners, moves, replaces;
    for (const EtcdKeyValue& kv : r.kvs) {
        auto [kind, name] = Split(kv.key);
        try {
            if (kind == "nodes") {
                NodeRecord n = DecodeNodeRecord(kv);
                v.nodes[n.node_id] = n;
            } else if (kind == "status") {
                NodeStatus s = DecodeNodeStatus(kv);
                v.status[s.node_id] = s;
            } else if (kind == "volumes") {
                v.volumes[name].spec = {DecodeVolumeSpec(kv.key, kv.value), kv.mod_revision};
            } else if (kind == "writeset") {
                writesets[name] = &kv;
            } else if (kind == "owner") {
                owners[name] = &kv;
            } else if (kind == "move") {
                moves[name] = &kv;
            } else if (kind == "replace") {
                replaces[name] = &kv;
            } else if (kind == "exports") {
                v.exports[name] = {DecodeExportSpec(kv.key, kv.value), kv.mod_revision};
            }
        } catch (const StoreValueError& e) {
            v.problems.push_back(e.what());
            if (kind == "volumes")
                v.damaged.push_back(name);
        }
    }
    for (auto& [name, state] : v.volumes) {
        try {
            if (auto it = writesets.find(name); it != writesets.end())
                state.writeset = Revisioned<WriteSet>{
                    DecodeWriteSet(it->second->key, it->second->value), it->second->mod_revision};
            if (auto it = owners.find(name); it != owners.end())
                state.owner = DecodeOwner(*it->second);
            if (auto it = moves.find(name); it != moves.end())
                state.move =
                    Revisioned<MoveRequest>{DecodeMoveRequest(it->second->key, it->second->value),
                                            it->second->mod_revision};
            if (auto it = replaces.find(name); it != replaces.end())
                state.replace = Revisioned<ReplaceRequest>{
                    DecodeReplaceRequest(it->second->key, it->second->value),
                    it->second->mod_revision};
        } catch (const StoreValueError& e) {
            v.problems.push_back(e.what());
            v.damaged.push_back(name);
        }
    }
    for (const std::string& name : v.damaged)
        v.volumes.erase(name);
    return v;
}

}  // namespace chorus
