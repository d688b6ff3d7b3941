#include "lib/nvmet_plan.h"

namespace chorus {

namespace {

class PlanBuilder {
public:
    void Mkdir(const std::string& path) {
        ops_.push_back({ConfigfsOp::Kind::kMkdir, path, "", ""});
    }
    void Ensure(const std::string& path) {
        ops_.push_back({ConfigfsOp::Kind::kEnsureDir, path, "", ""});
    }
    void Write(const std::string& path, const std::string& value, const std::string& undo = "") {
        ops_.push_back({ConfigfsOp::Kind::kWrite, path, value, undo});
    }
    void Symlink(const std::string& path, const std::string& target) {
        ops_.push_back({ConfigfsOp::Kind::kSymlink, path, target, ""});
    }
    std::vector<ConfigfsOp> Take() { return std::move(ops_); }

private:
    std::vector<ConfigfsOp> ops_;
};

}  // namespace

std::string AnaStateFor(const Config& cfg, uint32_t group) {
    // Group N belongs to node N: the owner's paths are the optimized ones.
    return group == cfg.node_id ? "optimized" : "non-optimized";
}

std::vector<ConfigfsOp> PlanNvmetExport(const Config& cfg) {
    PlanBuilder b;
    // Present as soon as nvmet is loaded; created here only for plain trees.
    b.Ensure("nvmet");
    b.Ensure("nvmet/subsystems");
    b.Ensure("nvmet/ports");
    b.Ensure("nvmet/hosts");
    for (const std::string& host : cfg.hosts)
        b.Mkdir("nvmet/hosts/" + host);

    // Identity first: 6.1 refuses serial/model changes once a host has seen
    // the subsystem, and every node must present the same identity.
    const std::string subsys = "nvmet/subsystems/" + cfg.nqn;
    b.Mkdir(subsys);
    b.Write(subsys + "/attr_allow_any_host", cfg.allow_any_host ? "1" : "0");
    b.Write(subsys + "/attr_serial", cfg.serial);
    b.Write(subsys + "/attr_model", cfg.model);
    b.Write(subsys + "/attr_cntlid_min", std::to_string(cfg.cntlid_min));
    b.Write(subsys + "/attr_cntlid_max", std::to_string(cfg.cntlid_max));
    // Only the listed hosts: nvmet refuses any other host NQN at connect.
    b.Ensure(subsys + "/allowed_hosts");
    for (const std::string& host : cfg.hosts)
        b.Symlink(subsys + "/allowed_hosts/" + host, "nvmet/hosts/" + host);

    b.Ensure(subsys + "/namespaces");
    for (const NamespaceConfig& ns : cfg.namespaces) {
        const std::string dir = subsys + "/namespaces/" + std::to_string(ns.nsid);
        b.Mkdir(dir);
        b.Write(dir + "/device_path", ns.device);
        // uuid/nguid are refused (EBUSY) once the namespace is enabled, and
        // must match on every node for multipath to merge the paths.
        b.Write(dir + "/device_uuid", FormatUuid(ns.uuid));
        b.Write(dir + "/device_nguid", FormatUuid(ns.nguid));
        b.Write(dir + "/ana_grpid", std::to_string(ns.ana_group));
        b.Write(dir + "/enable", "1", "0");
    }

    std::map<uint32_t, std::string> states;
    for (uint32_t g : cfg.ana_groups)
        states[g] = AnaStateFor(cfg, g);
    std::vector<ConfigfsOp> ops = b.Take();
    for (const PortConfig& port : cfg.ports)
        PlanPort(ops, port, states, {cfg.nqn});
    return ops;
}

void PlanPort(std::vector<ConfigfsOp>& ops, const PortConfig& port,
              const std::map<uint32_t, std::string>& group_states,
              const std::vector<std::string>& nqns) {
    using K = ConfigfsOp::Kind;
    const std::string dir = "nvmet/ports/" + std::to_string(port.id);
    auto add = [&ops](K kind, std::string path, std::string value = "") {
        ops.push_back({kind, std::move(path), std::move(value), ""});
    };
    add(K::kMkdir, dir);
    add(K::kWrite, dir + "/addr_trtype", port.transport);
    add(K::kWrite, dir + "/addr_adrfam", port.adrfam);
    add(K::kWrite, dir + "/addr_traddr", port.address);
    add(K::kWrite, dir + "/addr_trsvcid", std::to_string(port.service));
    add(K::kEnsureDir, dir + "/ana_groups");
    add(K::kEnsureDir, dir + "/ana_groups/1");  // nvmet's own, made with the port
    for (const auto& [group, state] : group_states) {
        const std::string g = dir + "/ana_groups/" + std::to_string(group);
        if (group != 1)
            add(K::kMkdir, g);
        add(K::kWrite, g + "/ana_state", state);
    }
    add(K::kEnsureDir, dir + "/subsystems");
    for (const std::string& nqn : nqns)
        add(K::kSymlink, dir + "/subsystems/" + nqn, "nvmet/subsystems/" + nqn);
}

std::string DescribeOp(const ConfigfsOp& op) {
    switch (op.kind) {
        case ConfigfsOp::Kind::kMkdir:
            return "mkdir " + op.path;
        case ConfigfsOp::Kind::kEnsureDir:
            return "ensure-dir " + op.path;
        case ConfigfsOp::Kind::kWrite:
            return "write " + op.path + " = " + (op.secret ? "<secret>" : op.value) +
                   (op.undo.empty() ? "" : " (teardown: " + op.undo + ")");
        case ConfigfsOp::Kind::kSymlink:
            return "symlink " + op.path + " -> " + op.value;
    }
    return "?";
}

}  // namespace chorus
