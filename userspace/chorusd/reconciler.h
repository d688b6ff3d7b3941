// chorusd's control loop: reads the cluster store and the kernel, and
// makes this node's part of every volume what the store says
// (Documentation/cluster.md, "What chorusd does"). A pass runs when
// something changed (a watch on the store, the kernel's events, the
// session: PassTrigger), when a step must be retried or looked at again,
// and every kSafetyPeriod besides. Level-triggered all the same: each pass
// starts from what is, not from the events, so a missed event, a restart
// or a failed step is corrected by the next pass.
#ifndef CHORUS_CHORUSD_RECONCILER_H_
#define CHORUS_CHORUSD_RECONCILER_H_

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "chorusd/export_tender.h"
#include "chorusd/kernel_watcher.h"
#include "chorusd/log.h"
#include "chorusd/pass_trigger.h"
#include "chorusd/session_keeper.h"
#include "chorusd/store_watcher.h"
#include "chorusd/unsettled.h"
#include "lib/cluster_store.h"
#include "lib/cluster_view.h"
#include "lib/config.h"
#include "lib/etcd_client.h"
#include "lib/genl_client.h"
#include "lib/lvm.h"

namespace chorus {

// Logs a problem when it appears or changes, and once when it is gone,
// rather than at every pass.
class ProblemLog {
public:
    explicit ProblemLog(const Logger& log) : log_(log) {}
    void Report(const std::string& subject, const std::string& problem);
    void Clear(const std::string& subject);
    bool empty() const { return current_.empty(); }

private:
    const Logger& log_;
    std::map<std::string, std::string> current_;
};

class Reconciler {
public:
    // cfg.cluster must be set; everything must outlive the reconciler.
    // trigger starts the passes; the keeper must wake it when the session
    // changes. configfs, nvmet_state_file and lio_state_file are where the
    // cluster's exports go and the records of them (ExportTender).
    Reconciler(const Config& cfg, const Logger& log, SessionKeeper& keeper, PassTrigger& trigger,
               const std::string& configfs, const std::string& nvmet_state_file,
               const std::string& lio_state_file);
    ~Reconciler();
    Reconciler(const Reconciler&) = delete;
    Reconciler& operator=(const Reconciler&) = delete;

    void Start();

private:
    void Run(std::stop_token stop);
    void RunPass();
    void Pass(const SessionSnapshot& session);
    ClusterView ReadView();
    // Asks the trigger for the passes that no event may start: retries
    // after a failure, rechecks of what changes without events.
    void ScheduleRetry();
    void ScheduleRechecks(const SessionSnapshot& session, const ClusterView& view,
                          const std::vector<VolumeInfo>& attached);
    void TendAll(const SessionSnapshot& session, const ClusterView& view);
    // These take the kernel's volumes as listed after TendAll.
    void RemoveDeleted(const ClusterView& view, const std::vector<VolumeInfo>& attached);
    void RemoveDiskless(const ClusterView& view, const VolumeInfo& kv);
    void RemoveFailedDisk(const VolumeInfo& kv);
    void RemoveOrphanedDisks(const ClusterView& view, const std::vector<VolumeInfo>& attached);
    bool ClaimsDisk(const ClusterView& view, const std::set<std::string>& attached,
                    const std::string& name, const LogicalVolume& lv) const;
    void PublishStatus(const SessionSnapshot& session, const std::vector<VolumeInfo>& attached);
    void MaybeAllowArming(const SessionSnapshot& session, const std::vector<VolumeInfo>& attached);
    void EnsureListening();
    // Hands the kernel the secret of [cluster] peer_secret_file, read again
    // each pass, so that a changed file takes effect without a restart.
    void EnsurePeerSecret();
    // Reads the pool's size and free space if force or it is time; true if read.
    bool RefreshPool(bool force);
    VolumeClient* Kernel();

    const Config& cfg_;
    const ClusterConfig& cluster_;
    const Logger& log_;
    SessionKeeper& keeper_;
    PassTrigger& trigger_;
    EtcdClient etcd_;
    ClusterStore store_;
    std::optional<LvmPool> pool_;
    std::optional<VolumeClient> kernel_;
    ProblemLog problems_;
    ExportTender exports_;
    bool listening_ = false;
    std::optional<PoolStats> pool_stats_;
    std::string pool_error_;
    std::chrono::steady_clock::time_point pool_read_{};
    std::string published_;  // the status value last put
    int64_t published_lease_ = 0;
    bool compare_failed_ = false;         // in this pass: another node moved first
    std::optional<Unsettled> unsettled_;  // as the last pass that got that far found
    std::chrono::milliseconds retry_delay_;
    StoreWatcher store_watch_;
    KernelWatcher kernel_watch_;
    std::jthread thread_;  // last: stopped before the watchers
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_RECONCILER_H_
