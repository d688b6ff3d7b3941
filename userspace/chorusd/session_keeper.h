// chorusd's cluster session, kept alive in a thread of its own: starts (or
// adopts) the session, renews it every keepalive period and posts the lease
// deadline each renewal earns to the DeadlineGiver, which hands it to the
// kernel (Documentation/cluster.md, "Timing").
#ifndef CHORUS_CHORUSD_SESSION_KEEPER_H_
#define CHORUS_CHORUSD_SESSION_KEEPER_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

#include "chorusd/deadline_giver.h"
#include "chorusd/log.h"
#include "lib/cluster_session.h"
#include "lib/config.h"
#include "lib/etcd_client.h"
#include "lib/genl_client.h"

namespace chorus {

// How chorusd's threads talk to etcd: no call outlasts half a lease.
EtcdOptions DaemonEtcdOptions(const ClusterConfig& cluster, const Logger& log);

// What the reconciler needs to know of the session.
struct SessionSnapshot {
    int64_t lease_id = 0;
    bool arms_kernel = false;
    // The deadline the last keepalive earned has passed: etcd has not
    // answered for TTL - margin, so this node's kernel holds what it owns
    // and etcd may have let the session go (or will). The session is not
    // lost (etcd has not said so), but the node is cut off: its NVMe-oF
    // paths become inaccessible until a keepalive succeeds again.
    bool cut_off = false;

    bool operator==(const SessionSnapshot&) const = default;
};

class SessionKeeper {
public:
    // cfg.cluster must be set; cfg and log must outlive the keeper.
    // on_change is called, from the keeper's thread, whenever what
    // Current() returns changes (a session started, lost or replaced, or
    // allowed to arm the kernel).
    SessionKeeper(const Config& cfg, const Logger& log, std::function<void()> on_change = {});
    // Stops the thread. The session's lease is left to etcd: a restarted
    // chorusd adopts it, and if none comes it expires after its TTL.
    ~SessionKeeper();
    SessionKeeper(const SessionKeeper&) = delete;
    SessionKeeper& operator=(const SessionKeeper&) = delete;

    void Start();

    // The live session, or nothing (not started yet, or lost and not yet
    // replaced). Thread-safe.
    std::optional<SessionSnapshot> Current() const;
    // Asks the keeper thread to let the current session arm the kernel
    // (ClusterSession::AllowArming) if it is still lease_id. Thread-safe.
    void AllowArming(int64_t lease_id);

private:
    void Run(std::stop_token stop);
    // Starts a session, retrying every keepalive period; false if stopped.
    bool StartSession(std::stop_token stop, bool after_loss);
    // Whether a new session may give the kernel deadlines.
    bool KernelLeaseIsOurs();
    // Waits for the period or a stop; false if stopped.
    bool Sleep(std::stop_token stop, std::chrono::milliseconds period);
    // The keepalive period, cut short to wake just after the deadline the
    // last keepalive earned, so that passing it is published at once.
    std::chrono::milliseconds NextWake() const;

    const ClusterConfig& cluster_;
    uint32_t node_id_;
    const Logger& log_;
    EtcdClient etcd_;
    std::unique_ptr<ClusterSession> session_;
    // The deadline (CLOCK_BOOTTIME ns) the session's last keepalive earned,
    // armed in the kernel or not; nothing before the first. Keeper thread.
    std::optional<uint64_t> earned_deadline_;
    DeadlineGiver deadlines_;
    std::function<void()> on_change_;
    void Publish();

    mutable std::mutex snapshot_mutex_;
    std::optional<SessionSnapshot> snapshot_;  // protected by snapshot_mutex_
    int64_t arm_request_ = 0;                  // protected by snapshot_mutex_
    std::mutex mutex_;                         // for the condition variable only
    std::condition_variable_any wake_;
    std::jthread thread_;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_SESSION_KEEPER_H_
