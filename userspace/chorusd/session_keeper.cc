#include "chorusd/session_keeper.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include <linux/chorus.h>

namespace chorus {

EtcdOptions DaemonEtcdOptions(const ClusterConfig& cluster, const Logger& log) {
    EtcdOptions o;
    o.endpoints = cluster.etcd;
    o.tls = {cluster.etcd_ca_file, cluster.etcd_cert_file, cluster.etcd_key_file};
    // A call must not outlast a lease: half the TTL; an attempt is cut to
    // the call's time left (the config keeps a given one to half a call).
    o.attempt_timeout = std::chrono::milliseconds(cluster.etcd_attempt_timeout_ms);
    o.call_timeout = std::chrono::milliseconds(cluster.lease_ttl_s * 1000 / 2);
    o.connect_timeout = std::min(o.connect_timeout, o.attempt_timeout);
    o.log = [&log](Severity s, const std::string& msg) { log.Log(s, msg); };
    return o;
}

SessionKeeper::SessionKeeper(const Config& cfg, const Logger& log, std::function<void()> on_change)
    : cluster_(*cfg.cluster),
      node_id_(cfg.node_id),
      log_(log),
      etcd_(DaemonEtcdOptions(*cfg.cluster, log)),
      deadlines_(log),
      on_change_(std::move(on_change)) {}

SessionKeeper::~SessionKeeper() {
    if (thread_.joinable()) {
        thread_.request_stop();
        wake_.notify_all();
        thread_.join();
    }
}

void SessionKeeper::Start() {
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

bool SessionKeeper::Sleep(std::stop_token stop, std::chrono::milliseconds period) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, stop, period, [] { return false; });
    return !stop.stop_requested();
}

// A session that does not adopt the last one may arm the kernel only if the
// kernel has no deadline yet: a deadline there came from a session that is
// gone, and what this node owned under it may be another's by now.
// Asked once per session start: a socket of its own, closed again (the
// DeadlineGiver keeps the long-lived one).
bool SessionKeeper::KernelLeaseIsOurs() {
    std::optional<VolumeClient> kernel;
    try {
        kernel.emplace(GenlSocket::Open());
    } catch (const ModuleNotLoadedError&) {
        return true;  // nothing to arm; a module loaded later starts disarmed
    }
    LeaseInfo lease = kernel->LeaseGet();
    if (lease.state == CHORUS_LEASE_DISARMED)
        return true;
    log_.Error("the kernel's lease deadline (" + LeaseStateName(lease.state) +
               ") comes from an earlier session that this chorusd could not adopt: the "
               "volumes this node owns hold their I/O once it passes, until ownership is "
               "decided again ('chorusctl lease set --disarm' releases them: only once no other "
               "node owns them)");
    return false;
}

bool SessionKeeper::StartSession(std::stop_token stop, bool after_loss) {
    SessionOptions o;
    o.node_id = node_id_;
    o.ttl = std::chrono::seconds(cluster_.lease_ttl_s);
    o.margin = std::chrono::milliseconds(cluster_.lease_margin_ms);
    o.state_file = cluster_.state_file;
    o.address = cluster_.address;
    o.port = cluster_.port;
    o.register_wait = std::chrono::seconds(3 * cluster_.lease_ttl_s);
    const auto period = std::chrono::milliseconds(cluster_.keepalive_ms);
    for (;;) {
        try {
            auto session = std::make_unique<ClusterSession>(
                etcd_, o, [this](Severity s, const std::string& m) { log_.Log(s, m); });
            session->Start([&] { return !after_loss && KernelLeaseIsOurs(); });
            session_ = std::move(session);
            return true;
        } catch (const Error& e) {
            log_.Error(std::string("cannot start the cluster session: ") + e.what());
        }
        if (!Sleep(stop, period))
            return false;
    }
}

std::optional<SessionSnapshot> SessionKeeper::Current() const {
    std::lock_guard lock(snapshot_mutex_);
    return snapshot_;
}

void SessionKeeper::AllowArming(int64_t lease_id) {
    {
        std::lock_guard lock(snapshot_mutex_);
        arm_request_ = lease_id;
    }
    wake_.notify_all();
}

// Applies an arming request for this session and publishes its state.
void SessionKeeper::Publish() {
    bool changed;
    {
        std::lock_guard lock(snapshot_mutex_);
        if (session_ && !session_->lost() && arm_request_ == session_->lease_id())
            session_->AllowArming();
        std::optional<SessionSnapshot> now;
        if (session_ && !session_->lost())
            now = SessionSnapshot{session_->lease_id(), session_->arms_kernel(),
                                  earned_deadline_ && BoottimeNs() > *earned_deadline_};
        changed = now != snapshot_;
        if (now && snapshot_ && now->lease_id == snapshot_->lease_id &&
            now->cut_off != snapshot_->cut_off)
            log_.Log(now->cut_off ? Severity::kWarn : Severity::kInfo,
                     now->cut_off ? "cut off: no keepalive for the lease TTL less the margin; "
                                    "the kernel holds what this node owns, its NVMe-oF paths "
                                    "go inaccessible"
                                  : "a keepalive succeeded: no longer cut off");
        snapshot_ = now;
    }
    if (changed && on_change_)
        on_change_();
}

std::chrono::milliseconds SessionKeeper::NextWake() const {
    const auto period = std::chrono::milliseconds(cluster_.keepalive_ms);
    const uint64_t now = BoottimeNs();
    if (!earned_deadline_ || *earned_deadline_ < now)
        return period;
    const auto until = std::chrono::milliseconds((*earned_deadline_ - now) / 1000000 + 1);
    return std::min(period, until);
}

void SessionKeeper::Run(std::stop_token stop) {
    if (!StartSession(stop, false))
        return;
    Publish();
    for (;;) {
        std::optional<uint64_t> deadline = session_->KeepAlive();
        if (deadline) {
            earned_deadline_ = deadline;
            if (session_->arms_kernel())
                deadlines_.Post(*deadline);
        }
        Publish();
        if (session_->lost()) {
            earned_deadline_.reset();
            if (!StartSession(stop, true))
                return;
        }
        Publish();
        if (!Sleep(stop, NextWake()))
            return;
        Publish();  // the earned deadline may have passed meanwhile
    }
}

}  // namespace chorus
