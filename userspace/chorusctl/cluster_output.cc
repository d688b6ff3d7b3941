#include "chorusctl/cluster_output.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <vector>

#include "chorusctl/output.h"
#include "lib/access_strategy.h"
#include "lib/size.h"
#include "lib/uuid.h"

namespace chorus {

namespace {

using Json = nlohmann::json;

std::string JoinIds(const std::vector<uint32_t>& ids) {
    std::string s;
    for (uint32_t id : ids)
        s += (s.empty() ? "" : ",") + std::to_string(id);
    return s.empty() ? "-" : s;
}

// Columns padded to their widest cell.
void PrintTable(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
    std::vector<size_t> width;
    for (const auto& row : rows)
        for (size_t i = 0; i < row.size(); i++) {
            width.resize(std::max(width.size(), row.size()));
            width[i] = std::max(width[i], row[i].size());
        }
    for (const auto& row : rows) {
        std::string line;
        for (size_t i = 0; i < row.size(); i++)
            line +=
                row[i] + (i + 1 < row.size() ? std::string(width[i] - row[i].size() + 2, ' ') : "");
        out << line << '\n';
    }
}

// What node id reports of volume name, or null.
const Json* Reported(const ClusterView& view, uint32_t id, const std::string& name) {
    auto st = view.status.find(id);
    if (st == view.status.end() || !st->second.volumes.contains(name))
        return nullptr;
    return &st->second.volumes[name];
}

// The owner's view of a replica's peer state, or null.
const Json* OwnerSees(const ClusterView& view, const VolumeState& v, uint32_t id) {
    if (!v.owner)
        return nullptr;
    const Json* o = Reported(view, v.owner->node_id, v.spec.value.name);
    if (o == nullptr || !o->contains("peers") || !(*o)["peers"].contains(std::to_string(id)))
        return nullptr;
    return &(*o)["peers"][std::to_string(id)];
}

Json ReplicaToJson(const ClusterView& view, const VolumeState& v, uint32_t id) {
    Json r{{"node_id", id}, {"member", view.nodes.count(id) > 0}};
    if (v.writeset) {
        const WriteSet& ws = v.writeset->value;
        bool in = std::count(ws.members.begin(), ws.members.end(), id) > 0;
        r["write_set"] = in ? "member" : "out-of-date";
    }
    if (const Json* rep = Reported(view, id, v.spec.value.name)) {
        r["role"] = rep->value("role", "");
        r["epoch"] = rep->value("epoch", 0);
        r["device"] = rep->value("device", "");
        r["held_io"] = rep->value("held_io", 0);
        r["open_count"] = rep->value("open_count", 0);
        r["disk"] = rep->value("state", "") == "failed" ? "failed" : "ok";
        if (rep->contains("disk_error"))
            r["disk_error"] = rep->value("disk_error", "");
    }
    if (const Json* p = OwnerSees(view, v, id)) {
        r["conn_state"] = p->value("conn_state", "");
        r["repl_state"] = p->value("repl_state", "");
        uint64_t total = p->value("sync_total_bytes", 0ull);
        uint64_t done = p->value("sync_done_bytes", 0ull);
        r["sync_done_bytes"] = done;
        r["sync_total_bytes"] = total;
        if (total > 0)
            r["sync_percent"] = FormatPercent(done, total);
    }
    return r;
}

// A diskless access point of v: where it is attached, and whether the
// owner has a session with it.
Json DisklessToJson(const ClusterView& view, const VolumeState& v, uint32_t id) {
    Json d{{"node_id", id}};
    if (const Json* rep = Reported(view, id, v.spec.value.name))
        d["device"] = rep->value("device", "");
    if (const Json* p = OwnerSees(view, v, id))
        d["conn_state"] = p->value("conn_state", "");
    return d;
}

}  // namespace

std::string VolumeHealth(const VolumeState& v) {
    if (!v.owner)
        return "no owner";
    if (v.writeset && !v.writeset->value.out_of_date.empty())
        return "degraded";
    return "healthy";
}

VolumeHealthCount CountHealth(const ClusterView& view) {
    VolumeHealthCount c;
    for (const auto& [name, v] : view.volumes) {
        std::string h = VolumeHealth(v);
        (h == "healthy" ? c.healthy : h == "degraded" ? c.degraded : c.ownerless)++;
    }
    return c;
}

Json NodeToJson(const ClusterView& view, const NodeRecord& rec) {
    Json j{{"node_id", rec.node_id},
           {"address", rec.address},
           {"port", rec.port},
           {"hostname", rec.hostname}};
    auto st = view.status.find(rec.node_id);
    if (st != view.status.end()) {
        if (st->second.pool)
            j["pool"] = {{"vg", st->second.pool->vg},
                         {"size_bytes", st->second.pool->size_bytes},
                         {"free_bytes", st->second.pool->free_bytes}};
        if (!st->second.pool_error.empty())
            j["pool_error"] = st->second.pool_error;
        j["volumes"] = st->second.volumes.size();
    }
    return j;
}

void PrintNodeTable(std::ostream& out, const ClusterView& view) {
    std::vector<std::vector<std::string>> rows{
        {"ID", "ADDRESS", "HOSTNAME", "POOL", "SIZE", "FREE", "VOLUMES"}};
    for (const auto& [id, rec] : view.nodes) {
        std::vector<std::string> row{
            std::to_string(id),
            rec.address.empty() ? "-" : FormatEndpoint(rec.address, rec.port),
            rec.hostname,
            "-",
            "-",
            "-",
            "-"};
        auto st = view.status.find(id);
        if (st != view.status.end()) {
            if (st->second.pool) {
                row[3] = st->second.pool->vg;
                row[4] = FormatSize(st->second.pool->size_bytes);
                row[5] = FormatSize(st->second.pool->free_bytes);
            } else if (!st->second.pool_error.empty()) {
                row[3] = "error";
            }
            row[6] = std::to_string(st->second.volumes.size());
        }
        rows.push_back(row);
    }
    PrintTable(out, rows);
}

Json ClusterVolumeToJson(const ClusterView& view, const VolumeState& v) {
    const VolumeSpec& s = v.spec.value;
    Json j{{"name", s.name},           {"size_bytes", s.size_bytes}, {"replicas", s.replicas},
           {"nodes", s.nodes},         {"transport", s.transport},   {"uuid", FormatUuid(s.uuid)},
           {"health", VolumeHealth(v)}};
    if (v.owner)
        j["owner"] = {{"node_id", v.owner->node_id}, {"epoch", v.owner->epoch}};
    if (v.writeset)
        j["write_set"] = {{"members", v.writeset->value.members},
                          {"out_of_date", v.writeset->value.out_of_date}};
    if (v.move)
        j["move"] = {{"to", v.move->value.to}, {"from_epoch", v.move->value.from_epoch}};
    if (v.replace)
        j["replace_disk"] = {{"node", v.replace->value.node}};
    Json replicas = Json::array();
    for (uint32_t id : s.nodes)
        replicas.push_back(ReplicaToJson(view, v, id));
    j["replica_states"] = replicas;
    Json diskless = Json::array();
    for (uint32_t id : DisklessNodes(view, s.name))
        diskless.push_back(DisklessToJson(view, v, id));
    j["diskless_access_points"] = diskless;
    return j;
}

void PrintClusterVolumeTable(std::ostream& out, const ClusterView& view) {
    std::vector<std::vector<std::string>> rows{
        {"NAME", "SIZE", "NODES", "TRANSPORT", "OWNER", "EPOCH", "HEALTH"}};
    for (const auto& [name, v] : view.volumes)
        rows.push_back({name, FormatSize(v.spec.value.size_bytes), JoinIds(v.spec.value.nodes),
                        v.spec.value.transport, v.owner ? std::to_string(v.owner->node_id) : "-",
                        v.owner ? std::to_string(v.owner->epoch) : "-", VolumeHealth(v)});
    PrintTable(out, rows);
}

void PrintClusterVolumeStatus(std::ostream& out, const ClusterView& view, const VolumeState& v) {
    const VolumeSpec& s = v.spec.value;
    out << "name: " << s.name << '\n'
        << "size: " << FormatSize(s.size_bytes) << '\n'
        << "uuid: " << FormatUuid(s.uuid) << '\n'
        << "transport: " << s.transport << '\n'
        << "health: " << VolumeHealth(v) << '\n'
        << "owner: " << (v.owner ? "node " + std::to_string(v.owner->node_id) : "none") << '\n'
        << "epoch: " << (v.owner ? std::to_string(v.owner->epoch) : "-") << '\n';
    if (v.move)
        out << "move: to node " << v.move->value.to << " (requested at epoch "
            << v.move->value.from_epoch << ")\n";
    if (v.replace)
        out << "replace disk: node " << v.replace->value.node << " (requested)\n";
    if (v.writeset)
        out << "write set: " << JoinIds(v.writeset->value.members)
            << " (out of date: " << JoinIds(v.writeset->value.out_of_date) << ")\n";
    for (uint32_t id : s.nodes) {
        Json r = ReplicaToJson(view, v, id);
        out << "replica on node " << id << ":\n";
        for (auto& [k, val] : r.items())
            if (k != "node_id")
                out << "  " << k << ": " << (val.is_string() ? val.get<std::string>() : val.dump())
                    << '\n';
    }
    for (uint32_t id : DisklessNodes(view, s.name)) {
        Json d = DisklessToJson(view, v, id);
        out << "diskless access point on node " << id << ": " << d.value("device", "not attached")
            << ", " << d.value("conn_state", "no session with the owner") << '\n';
    }
}

}  // namespace chorus
