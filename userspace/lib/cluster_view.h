// The whole cluster as the store has it at one revision: members, what
// each node reports, and every volume's spec, write set and owner. chorusd
// reconciles from it and chorusctl prints it. One range read, so that what
// is decided from it is decided from one consistent moment.
#ifndef CHORUS_LIB_CLUSTER_VIEW_H_
#define CHORUS_LIB_CLUSTER_VIEW_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/cluster_export.h"
#include "lib/cluster_store.h"
#include "lib/etcd_client.h"

namespace chorus {

// /chorus/nodes/<id>: a node whose chorusd has a live session.
struct NodeRecord {
    uint32_t node_id = 0;
    std::string address;  // replication; empty if the node holds no replicas
    uint16_t port = 0;
    std::string hostname;
    int64_t lease = 0;
};

// /chorus/status/<id>: what a node's chorusd last saw of its pool and its
// kernel, bound to its session like the node record.
struct PoolStatus {
    std::string vg;
    uint64_t size_bytes = 0;
    uint64_t free_bytes = 0;
};

struct NodeStatus {
    uint32_t node_id = 0;
    std::optional<PoolStatus> pool;  // none: the node has no pool
    std::string pool_error;          // why the pool could not be read, if so
    // Per volume, what the kernel says (role, epoch, peers...), as
    // Documentation/cluster.md describes; kept as JSON for printing.
    nlohmann::json volumes = nlohmann::json::object();
    // Per exported subsystem and nsid, what this node's nvmet shows
    // ({"<nqn>": {"<nsid>": {"volume": …, "ana_group": G, "ana_state": …}}},
    // or "not_exported": why), as Documentation/access.md describes.
    nlohmann::json nvmet = nlohmann::json::object();
    std::string nvmet_error;  // why the export could not be applied, if so
    // The same for LIO (Documentation/iscsi.md): {"<nqn>": {"<nsid>":
    // {"volume": …, "lun": L, "alua_state": …}}}, or "not_exported": why.
    nlohmann::json iscsi = nlohmann::json::object();
    std::string iscsi_error;
};

std::string NodeStatusKey(uint32_t node_id);  // /chorus/status/<id>
NodeRecord DecodeNodeRecord(const EtcdKeyValue& kv);
NodeStatus DecodeNodeStatus(const EtcdKeyValue& kv);
std::string EncodeNodeStatus(const NodeStatus& status);

struct VolumeState {
    Revisioned<VolumeSpec> spec;
    std::optional<Revisioned<WriteSet>> writeset;
    std::optional<Ownership> owner;
    std::optional<Revisioned<MoveRequest>> move;        // a planned owner change
    std::optional<Revisioned<ReplaceRequest>> replace;  // a disk to replace
};

struct ClusterView {
    int64_t revision = 0;
    std::map<uint32_t, NodeRecord> nodes;
    std::map<uint32_t, NodeStatus> status;
    std::map<std::string, VolumeState> volumes;             // every volume whose spec decodes
    std::map<std::string, Revisioned<ExportSpec>> exports;  // by NQN, every one that decodes
    // Keys that did not decode, each "etcd key K: why": nothing acts on them.
    std::vector<std::string> problems;
    // Volumes with a problem in one of their keys: left alone.
    std::vector<std::string> damaged;
};

// Reads everything under /chorus/ at one revision. Throws EtcdError.
ClusterView ReadClusterView(EtcdClient& etcd);

}  // namespace chorus

#endif  // CHORUS_LIB_CLUSTER_VIEW_H_
