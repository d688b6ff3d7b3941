#include "chorusd/export_tender.h"

#include <algorithm>

#include "lib/errors.h"
#include "lib/peer_secret.h"

namespace chorus {

ExportTender::ExportTender(const Config& cfg, const Logger& log, const std::string& configfs,
                           const std::string& nvmet_state_file, const std::string& lio_state_file)
    : cfg_(cfg),
      log_(log),
      nvmet_("nvmet", log, configfs, nvmet_state_file),
      lio_("iscsi", log, configfs, lio_state_file) {}

void ExportTender::Tend(const ClusterView& view, const std::vector<VolumeInfo>& attached) {
    std::map<std::string, std::string> devices;
    for (const VolumeInfo& v : attached)
        devices[v.name] = "/dev/" + v.disk_name;
    last_view_ = view;
    last_devices_ = devices;
    Converge(view, false);
}

void ExportTender::CutOff() {
    if (!last_view_ || last_view_->exports.empty())
        return;
    Converge(*last_view_, true);
}

void ExportTender::Converge(const ClusterView& view, bool cut_off) {
    const std::string exports = std::to_string(view.exports.size()) + " exports";
    ClusterNvmetPlan nvmet = PlanClusterNvmet(cfg_, view, last_devices_, cut_off);
    namespaces_ = nvmet.namespaces;
    nvmet_.Converge(nvmet.ops, std::to_string(namespaces_.size()) + " namespaces in " + exports);
    if (!ReadChap() && !chap_) {
        lio_.Fail(chap_error_);
        return;
    }
    ClusterLioPlan lio = PlanClusterLio(cfg_, view, last_devices_, cut_off, chap_);
    luns_ = lio.luns;
    lio_.Converge(lio.ops, std::to_string(luns_.size()) + " LUNs in " + exports);
}

bool ExportTender::ReadChap() {
    if (!cfg_.iscsi || cfg_.iscsi->chap_secret_file.empty())
        return true;
    try {
        SecretBytes s = ReadChapSecret(cfg_.iscsi->chap_secret_file);
        chap_ = LioChap{cfg_.iscsi->chap_user, std::string(s.bytes().begin(), s.bytes().end())};
        if (!chap_error_.empty())
            log_.Info("iscsi: the CHAP secret file is readable again");
        chap_error_.clear();
        return true;
    } catch (const Error& e) {
        if (chap_error_ != e.what())
            log_.Error(std::string("iscsi: ") + e.what() +
                       (chap_ ? " (the secret read last stays in use)" : ""));
        chap_error_ = e.what();
        return false;
    }
}

const std::string& ExportTender::iscsi_error() const {
    return lio_.error().empty() ? chap_error_ : lio_.error();
}

std::optional<std::chrono::steady_clock::time_point> ExportTender::ReapplyDue() const {
    std::optional<std::chrono::steady_clock::time_point> a = nvmet_.ReapplyDue();
    std::optional<std::chrono::steady_clock::time_point> b = lio_.ReapplyDue();
    if (a && b)
        return std::min(*a, *b);
    return a ? a : b;
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

nlohmann::json ExportTender::IscsiStatus() const {
    nlohmann::json j = nlohmann::json::object();
    for (const LunAccess& a : luns_) {
        nlohmann::json lun = {{"volume", a.volume}, {"lun", a.lun}};
        if (!a.alua_state.empty())
            lun["alua_state"] = a.alua_state;
        else
            lun["not_exported"] = a.why_not;
        j[a.nqn][std::to_string(a.nsid)] = lun;
    }
    return j;
}

}  // namespace chorus
