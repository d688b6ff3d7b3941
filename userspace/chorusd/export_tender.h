// Makes this node's nvmet and LIO show the cluster's exports
// (lib/cluster_nvmet.h, lib/cluster_lio.h; Documentation/access.md and
// iscsi.md), each tree kept by a ConfigfsConverger with a state file of its
// own, so that one target missing (LIO not loaded) never stops the other.
#ifndef CHORUS_CHORUSD_EXPORT_TENDER_H_
#define CHORUS_CHORUSD_EXPORT_TENDER_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chorusd/configfs_converger.h"
#include "chorusd/log.h"
#include "lib/cluster_lio.h"
#include "lib/cluster_nvmet.h"
#include "lib/cluster_view.h"
#include "lib/config.h"
#include "lib/genl_codec.h"

namespace chorus {

class ExportTender {
public:
    // cfg, log outlive the tender; configfs is the configfs root,
    // nvmet_state_file and lio_state_file the records of each export.
    ExportTender(const Config& cfg, const Logger& log, const std::string& configfs,
                 const std::string& nvmet_state_file, const std::string& lio_state_file);

    // One pass of a live session: the exports of view, with the namespaces
    // of the volumes attached here.
    void Tend(const ClusterView& view, const std::vector<VolumeInfo>& attached);
    // The session is lost: every ANA group of every port inaccessible and
    // every ALUA group unavailable, so hosts use the other nodes' paths. A
    // no-op if nothing is exported.
    void CutOff();

    // For /chorus/status/<id>: see NodeStatus::nvmet and NodeStatus::iscsi.
    nlohmann::json Status() const;
    nlohmann::json IscsiStatus() const;
    const std::string& error() const { return nvmet_.error(); }
    const std::string& iscsi_error() const;
    // When an applied plan is due to be applied again (a change made by
    // hand put right); nothing if there is none.
    std::optional<std::chrono::steady_clock::time_point> ReapplyDue() const;

private:
    void Converge(const ClusterView& view, bool cut_off);
    // Reads the CHAP secret into chap_ (every pass: a new secret takes
    // effect without a restart); false, chap_error_ set, if it cannot.
    bool ReadChap();

    const Config& cfg_;
    const Logger& log_;
    ConfigfsConverger nvmet_;
    ConfigfsConverger lio_;
    std::optional<ClusterView> last_view_;
    std::map<std::string, std::string> last_devices_;
    std::vector<NamespaceAccess> namespaces_;
    std::vector<LunAccess> luns_;
    std::optional<LioChap> chap_;  // the CHAP credentials read last
    std::string chap_error_;       // why the secret file could not be read, if so
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_EXPORT_TENDER_H_
