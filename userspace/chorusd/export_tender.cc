#include "chorusd/export_tender.h"

namespace chorus {

namespace {

// A plan unchanged is applied again this often (a hand-made change put right).
constexpr auto kReapplyPeriod = std::chrono::seconds(10);

}  // namespace

ExportTender::ExportTender(const Config& cfg, const Logger& log, const std::string& configfs,
                           const std::string& state_file)
    : cfg_(cfg),
      log_(log),
      applier_(configfs, state_file, [&log](Severity s, const std::string& m) { log.Log(s, m); }) {}

void ExportTender::Tend(const ClusterView& view, const std::vector<VolumeInfo>& attached) {
    std::map<std::string, std::string> devices;
    for (const VolumeInfo& v : attached)
        devices[v.name] = "/dev/" + v.disk_name;
    last_view_ = view;
    last_devices_ = devices;
    Converge(PlanClusterNvmet(cfg_, view, devices, false));
}

void ExportTender::CutOff() {
    if (!last_view_ || last_view_->exports.empty())
        return;
    Converge(PlanClusterNvmet(cfg_, *last_view_, last_devices_, true));
}

void ExportTender::Converge(const ClusterNvmetPlan& plan) {
    namespaces_ = plan.namespaces;
    auto now = std::chrono::steady_clock::now();
    if (error_.empty() && plan.ops == applied_ && now - applied_at_ < kReapplyPeriod)
        return;
    applied_at_ = now;
    try {
        TeardownResult pruned = applier_.Prune(plan.ops);
        ApplyResult r = applier_.Apply(plan.ops);
        if (pruned.undone > 0 || r.changed > 0)
            log_.Info("nvmet: " + std::to_string(r.changed) + " changes applied, " +
                      std::to_string(pruned.undone) + " undone (" +
                      std::to_string(plan.namespaces.size()) + " namespaces in " +
                      std::to_string(last_view_ ? last_view_->exports.size() : 0) + " exports)");
        if (pruned.failed > 0)
            throw Error(std::to_string(pruned.failed) +
                            " changes no longer wanted could not be undone (see the log)",
                        EBUSY);
        applied_ = plan.ops;
        if (!error_.empty())
            log_.Info("nvmet: the export is applied again");
        error_.clear();
    } catch (const Error& e) {
        if (error_ != e.what())
            log_.Error(std::string("nvmet: ") + e.what());
        error_ = e.what();
        applied_.clear();
    }
}

std::optional<std::chrono::steady_clock::time_point> ExportTender::ReapplyDue() const {
    if (applied_.empty())
        return std::nullopt;
    return applied_at_ + kReapplyPeriod;
}

nlohmann::json ExportTender::Status() const {
    nlohmann::json j = nlohmann::json::object();
    for (const NamespaceAccess& a : namespaces_) {
        nlohmann::json ns = {{"volume", a.volume}};
        if (a.ana_group != 0) {
            ns["ana_group"] = a.ana_group;
            ns["ana_state"] = a.ana_state;
        } else {
            ns["not_exported"] = a.why_not;
        }
        j[a.nqn][std::to_string(a.nsid)] = ns;
    }
    return j;
}

}  // namespace chorus
