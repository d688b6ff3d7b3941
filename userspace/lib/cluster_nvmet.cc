#include "lib/cluster_nvmet.h"

#include <set>

namespace chorus {

namespace {

const char kModel[] = "chorus";

void Add(std::vector<ConfigfsOp>& ops, ConfigfsOp::Kind kind, std::string path,
         std::string value = "", std::string undo = "") {
    ops.push_back({kind, std::move(path), std::move(value), std::move(undo)});
}

std::string Subsys(const std::string& nqn) {
    return "nvmet/subsystems/" + nqn;
}

// The subsystem, its identity, its allowed hosts and the namespaces of
// volumes attached here. The identity is written before any port link
// (6.1 refuses a serial change once a host has seen the subsystem).
void PlanSubsystem(const Config& cfg, const ClusterView& view, const ExportSpec& spec,
                   const std::map<std::string, std::string>& devices, ClusterNvmetPlan& plan) {
    using K = ConfigfsOp::Kind;
    std::vector<ConfigfsOp>& ops = plan.ops;
    const std::string dir = Subsys(spec.nqn);
    Add(ops, K::kMkdir, dir);
    // Hosts are unlinked (pruned) before allow_any_host is set, and it is
    // cleared before hosts are linked: nvmet refuses both at once.
    Add(ops, K::kWrite, dir + "/attr_allow_any_host", spec.allow_any_host ? "1" : "0");
    Add(ops, K::kWrite, dir + "/attr_serial", DefaultSerial(spec.nqn));
    Add(ops, K::kWrite, dir + "/attr_model", kModel);
    // max before min when both rise past the old max would fail; nvmet
    // checks min < max on each write, so write the wider bound first.
    Add(ops, K::kWrite, dir + "/attr_cntlid_max", std::to_string(cfg.cntlid_max));
    Add(ops, K::kWrite, dir + "/attr_cntlid_min", std::to_string(cfg.cntlid_min));
    Add(ops, K::kEnsureDir, dir + "/allowed_hosts");
    for (const std::string& h : spec.hosts)
        Add(ops, K::kSymlink, dir + "/allowed_hosts/" + h, "nvmet/hosts/" + h);
    Add(ops, K::kEnsureDir, dir + "/namespaces");
    for (const ExportNamespace& ns : spec.namespaces) {
        NamespaceAccess a{spec.nqn, ns.nsid, ns.volume, 0, "", ""};
        auto vol = view.volumes.find(ns.volume);
        auto dev = devices.find(ns.volume);
        if (vol == view.volumes.end()) {
            a.why_not = "no volume " + ns.volume + " in the cluster";
        } else if (dev == devices.end()) {
            a.why_not = "volume " + ns.volume + " is not attached on this node";
        } else {
            a.ana_group = AnaGroupOf(vol->second);
            const std::string nsdir = dir + "/namespaces/" + std::to_string(ns.nsid);
            const std::string uuid = FormatUuid(vol->second.spec.value.uuid);
            Add(ops, K::kMkdir, nsdir);
            // device_path, uuid and nguid are refused while enabled: the
            // namespace is made again if one of them must change.
            for (auto [attr, value] :
                 {std::pair{"device_path", dev->second}, std::pair{"device_uuid", uuid},
                  std::pair{"device_nguid", uuid}})
                ops.push_back({K::kWrite, nsdir + "/" + attr, value, "", true});
            Add(ops, K::kWrite, nsdir + "/ana_grpid", std::to_string(a.ana_group));
            Add(ops, K::kWrite, nsdir + "/enable", "1", "0");
        }
        plan.namespaces.push_back(std::move(a));
    }
}

std::string GroupState(const Config& cfg, uint32_t group, bool cut_off) {
    if (cut_off)
        return "inaccessible";
    return group == cfg.node_id ? "optimized" : "non-optimized";
}

}  // namespace

uint32_t AnaGroupOf(const VolumeState& volume) {
    if (volume.owner)
        return volume.owner->node_id;
    if (volume.move)
        return volume.move->value.to;
    return volume.spec.value.nodes.at(0);
}

ClusterNvmetPlan PlanClusterNvmet(const Config& cfg, const ClusterView& view,
                                  const std::map<std::string, std::string>& devices, bool cut_off) {
    using K = ConfigfsOp::Kind;
    ClusterNvmetPlan plan;
    std::map<std::string, const ExportSpec*> exports;  // those reached over NVMe-oF
    for (const auto& [nqn, e] : view.exports)
        if (ExportsNvme(e.value))
            exports[nqn] = &e.value;
    if (exports.empty())
        return plan;
    std::vector<ConfigfsOp>& ops = plan.ops;
    Add(ops, K::kEnsureDir, "nvmet");
    Add(ops, K::kEnsureDir, "nvmet/subsystems");
    Add(ops, K::kEnsureDir, "nvmet/ports");
    Add(ops, K::kEnsureDir, "nvmet/hosts");
    std::set<std::string> hosts;
    for (const auto& [nqn, e] : exports)
        hosts.insert(e->hosts.begin(), e->hosts.end());
    for (const std::string& h : hosts)
        Add(ops, K::kMkdir, "nvmet/hosts/" + h);

    // One group per node that may own an exported volume, and this node's.
    std::set<uint32_t> groups = {cfg.node_id};
    for (const auto& [nqn, e] : exports) {
        PlanSubsystem(cfg, view, *e, devices, plan);
        for (const ExportNamespace& ns : e->namespaces)
            if (auto v = view.volumes.find(ns.volume); v != view.volumes.end())
                groups.insert(v->second.spec.value.nodes.begin(), v->second.spec.value.nodes.end());
    }
    for (NamespaceAccess& a : plan.namespaces)
        if (a.ana_group != 0)
            a.ana_state = GroupState(cfg, a.ana_group, cut_off);

    std::map<uint32_t, std::string> states;
    for (uint32_t g : groups)
        states[g] = GroupState(cfg, g, cut_off);
    for (const PortConfig& port : cfg.ports) {
        // A subsystem is linked to the ports of the transports it names.
        std::vector<std::string> nqns;
        for (const auto& [nqn, e] : exports)
            if (ExportsBy(*e, "nvme-" + port.transport))
                nqns.push_back(nqn);
        PlanPort(ops, port, states, nqns);
    }
    return plan;
}

}  // namespace chorus
