// Makes this node's nvmet show the cluster's exports (lib/cluster_nvmet.h,
// Documentation/access.md): prunes what the store no longer asks for and
// applies the rest, whenever the plan changes and every 10 s besides, so
// that a change made by hand is put right. The configfs changes are
// recorded in their own state file: they outlive chorusd (a restart adopts
// them, as it adopts the volumes) and `chorusd --teardown` undoes them.
#ifndef CHORUS_CHORUSD_EXPORT_TENDER_H_
#define CHORUS_CHORUSD_EXPORT_TENDER_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "chorusd/log.h"
#include "lib/cluster_nvmet.h"
#include "lib/cluster_view.h"
#include "lib/config.h"
#include "lib/configfs.h"
#include "lib/genl_codec.h"

namespace chorus {

class ExportTender {
public:
    // cfg, log outlive the tender; configfs is the configfs root,
    // state_file the record of the cluster export.
    ExportTender(const Config& cfg, const Logger& log, const std::string& configfs,
                 const std::string& state_file);

    // One pass of a live session: the exports of view, with the namespaces
    // of the volumes attached here.
    void Tend(const ClusterView& view, const std::vector<VolumeInfo>& attached);
    // The session is lost: every ANA group of every port inaccessible, so
    // hosts use the other nodes' paths. A no-op if nothing is exported.
    void CutOff();

    // For /chorus/status/<id>: see NodeStatus::nvmet.
    nlohmann::json Status() const;
    const std::string& error() const { return error_; }
    // When an applied plan is due to be applied again (a change made by
    // hand put right); nothing if there is none.
    std::optional<std::chrono::steady_clock::time_point> ReapplyDue() const;

private:
    void Converge(const ClusterNvmetPlan& plan);

    const Config& cfg_;
    const Logger& log_;
    ConfigfsApplier applier_;
    std::optional<ClusterView> last_view_;
    std::map<std::string, std::string> last_devices_;
    std::vector<ConfigfsOp> applied_;  // the plan last applied without error
    std::vector<NamespaceAccess> namespaces_;
    std::chrono::steady_clock::time_point applied_at_{};
    std::string error_;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_EXPORT_TENDER_H_
