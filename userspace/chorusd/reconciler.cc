#include "chorusd/reconciler.h"

#include <algorithm>

#include <linux/chorus.h>

#include "chorusd/diskless_tender.h"
#include "chorusd/volume_tender.h"
#include "lib/peer_secret.h"
#include "lib/replica_disk.h"

namespace chorus {

namespace {

// The safety net: a pass runs at least this often, whatever woke it or
// not. Every change a pass acts on wakes one (PassTrigger), and what
// changes without telling is rechecked on its own schedule (unsettled.h),
// so this only bounds what a missed wake-up can cost: at most one default
// lease TTL, the time scale on which the cluster reacts to failures
// anyway. A quiet node pays one pass (a range read, a netlink dump) per
// period, a twentieth of what a pass every 250 ms cost.
constexpr auto kSafetyPeriod = std::chrono::seconds(5);
// The first retry of a failed pass or step; it doubles up to kSafetyPeriod
// while the failure lasts (an unreachable etcd, a volume left alone).
constexpr auto kFirstRetry = std::chrono::milliseconds(250);
// While the session must not arm the kernel: MaybeAllowArming() looks
// again this often (it waits for the owner keys to match the kernel).
constexpr auto kArmingRecheck = std::chrono::milliseconds(250);
// How often the pool is read when chorusd changed nothing in it (an lvm
// command costs tens of milliseconds of CPU, far more under emulation).
constexpr auto kPoolPeriod = std::chrono::seconds(30);

bool Holds(const VolumeSpec& spec, uint32_t node_id) {
    return std::find(spec.nodes.begin(), spec.nodes.end(), node_id) != spec.nodes.end();
}

// This node serves the volume named name as a diskless access point.
bool ServesDiskless(const ClusterView& view, const std::string& name, uint32_t node_id) {
    std::vector<uint32_t> ids = DisklessNodes(view, name);
    return std::find(ids.begin(), ids.end(), node_id) != ids.end();
}

nlohmann::json PeerStatus(const PeerInfo& p) {
    return {{"conn_state", ConnStateName(p.conn_state.value_or(0))},
            {"repl_state", ReplStateName(p.repl_state.value_or(0))},
            {"in_writeset", p.in_writeset.value_or(false)},
            {"held", p.held.value_or(0)},
            {"dirty_bytes", p.dirty_bytes.value_or(0)},
            {"sync_done_bytes", p.sync_done_bytes.value_or(0)},
            {"sync_total_bytes", p.sync_total_bytes.value_or(0)},
            {"disk_failed", p.disk_failed.value_or(false)}};
}

nlohmann::json VolumeStatus(const VolumeInfo& v) {
    nlohmann::json peers = nlohmann::json::object();
    for (const PeerInfo& p : v.peers)
        peers[std::to_string(p.node_id.value_or(0))] = PeerStatus(p);
    nlohmann::json j = {{"role", RoleName(v.role.value_or(0))},
                        {"epoch", v.epoch.value_or(0)},
                        {"state", VolumeStateName(v.state)},
                        {"device", "/dev/" + v.disk_name},
                        {"open_count", v.open_count},
                        {"held_io", v.held_io.value_or(0)},
                        {"peers", peers}};
    if (v.disk_error)
        j["disk_error"] = *v.disk_error;
    if (v.disk_failed_at)
        j["disk_failed_at"] = *v.disk_failed_at;
    return j;
}

}  // namespace

void ProblemLog::Report(const std::string& subject, const std::string& problem) {
    auto [it, inserted] = current_.emplace(subject, problem);
    if (!inserted && it->second == problem)
        return;
    it->second = problem;
    log_.Error(subject + ": " + problem);
}

void ProblemLog::Clear(const std::string& subject) {
    if (current_.erase(subject) > 0)
        log_.Info(subject + ": resolved");
}

Reconciler::Reconciler(const Config& cfg, const Logger& log, SessionKeeper& keeper,
                       PassTrigger& trigger, const std::string& configfs,
                       const std::string& nvmet_state_file, const std::string& lio_state_file)
    : cfg_(cfg),
      cluster_(*cfg.cluster),
      log_(log),
      keeper_(keeper),
      trigger_(trigger),
      etcd_(DaemonEtcdOptions(*cfg.cluster, log)),
      store_(etcd_),
      problems_(log),
      exports_(cfg, log, configfs, nvmet_state_file, lio_state_file),
      retry_delay_(kFirstRetry),
      // A node's status is written for chorusctl; no pass reads it.
      store_watch_(DaemonEtcdOptions(*cfg.cluster, log), "/chorus/", {"/chorus/status/"}, trigger),
      kernel_watch_(trigger, log) {
    if (!cluster_.pool.empty())
        pool_.emplace(cluster_.pool);
}

Reconciler::~Reconciler() {
    if (thread_.joinable()) {
        thread_.request_stop();
        thread_.join();
    }
}

void Reconciler::Start() {
    store_watch_.Start();
    kernel_watch_.Start();
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void Reconciler::Run(std::stop_token stop) {
    for (;;) {
        RunPass();
        const std::string why = trigger_.Wait(stop, kSafetyPeriod);
        if (why.empty())
            return;
        log_.Debug("pass: " + why);
    }
}

void Reconciler::RunPass() {
    compare_failed_ = false;
    std::optional<SessionSnapshot> session = keeper_.Current();
    // Cut off (no session, or its last keepalive's deadline passed): hosts
    // must leave this node's paths, whose owned volumes the kernel holds.
    if (session && !session->cut_off) {
        try {
            Pass(*session);
            problems_.Clear("cluster store");
            problems_.Clear("reconciling");
        } catch (const EtcdError& e) {
            problems_.Report("cluster store", e.what());
        } catch (const Error& e) {
            problems_.Report("reconciling", e.what());
        }
    } else {
        exports_.CutOff();
    }
    ScheduleRetry();
}

// A failed compare is retried soon (the change that beat it has woken a
// pass already, most likely); any other problem is retried with a delay
// that doubles while it lasts, up to the safety period.
// A volume unsettled when the last pass got that far is rechecked as
// often, whether this pass failed or not.
void Reconciler::ScheduleRetry() {
    const auto now = PassTrigger::Clock::now();
    if (compare_failed_)
        trigger_.WakeBy(now + kFirstRetry, "retrying a failed compare");
    if (unsettled_)
        trigger_.WakeBy(now + unsettled_->recheck, unsettled_->why);
    if (problems_.empty() && exports_.error().empty() && exports_.iscsi_error().empty()) {
        retry_delay_ = kFirstRetry;
        return;
    }
    trigger_.WakeBy(now + retry_delay_, "retrying what failed");
    retry_delay_ = std::min<std::chrono::milliseconds>(2 * retry_delay_, kSafetyPeriod);
}

// What no event announces: the unsettled volumes (see unsettled.h, asked
// for by ScheduleRetry), the pool's and the export's periodic work, a
// session waiting to arm the kernel.
void Reconciler::ScheduleRechecks(const SessionSnapshot& session, const ClusterView& view,
                                  const std::vector<VolumeInfo>& attached) {
    const auto now = PassTrigger::Clock::now();
    unsettled_ = FindUnsettled(view, attached, cfg_.node_id);
    if (!session.arms_kernel)
        trigger_.WakeBy(now + kArmingRecheck, "the session may not arm the kernel yet");
    if (pool_)
        trigger_.WakeBy(pool_read_ + kPoolPeriod, "the pool's periodic read");
    if (std::optional<PassTrigger::Clock::time_point> due = exports_.ReapplyDue())
        trigger_.WakeBy(*due, "the export's periodic reapply");
}

ClusterView Reconciler::ReadView() {
    ClusterView view = ReadClusterView(etcd_);
    store_watch_.Read(view.revision);
    return view;
}

VolumeClient* Reconciler::Kernel() {
    if (kernel_)
        return &*kernel_;
    try {
        kernel_.emplace(GenlSocket::Open());
        problems_.Clear("chorus.ko");
    } catch (const ModuleNotLoadedError& e) {
        problems_.Report("chorus.ko", e.what());
        return nullptr;
    }
    return &*kernel_;
}

void Reconciler::Pass(const SessionSnapshot& session) {
    ClusterView view = ReadView();
    for (const std::string& p : view.problems)
        problems_.Report("store value", p);
    if (view.problems.empty())
        problems_.Clear("store value");
    if (Kernel() == nullptr)
        return;
    try {
        bool pool_read = RefreshPool(false);
        EnsurePeerSecret();
        EnsureListening();
        TendAll(session, view);
        // Each step lists the kernel's volumes again: TendAll may attach
        // some, and the export's pruning closes the deleted ones (a
        // namespace holds its volume open), which must be seen closed here
        // to be detached in this pass rather than the next.
        exports_.Tend(view, kernel_->List());
        std::vector<VolumeInfo> attached = kernel_->List();
        RemoveDeleted(view, attached);
        if (pool_read)
            RemoveOrphanedDisks(view, attached);
        PublishStatus(session, attached);
        MaybeAllowArming(session, attached);
        ScheduleRechecks(session, view, attached);
    } catch (const NetlinkError& e) {
        // Reopened next pass, and the events listened to anew: the module
        // may have been reloaded.
        kernel_.reset();
        kernel_watch_.Reopen();
        throw;
    }
}

void Reconciler::EnsurePeerSecret() {
    if (cluster_.peer_secret_file.empty())
        return;
    SecretBytes secret;
    try {
        secret = ReadPeerSecret(cluster_.peer_secret_file);
        problems_.Clear("peer secret");
    } catch (const Error& e) {
        // The kernel keeps what it has; connections go on as they were.
        problems_.Report("peer secret", e.what());
        return;
    }
    uint64_t before = kernel_->AuthGet().key_id;
    AuthSetRequest req;
    req.secret = secret.bytes();
    req.keep_previous_s = cluster_.peer_secret_keep_previous_s;
    kernel_->AuthSet(req);
    AuthInfo after = kernel_->AuthGet();
    if (after.key_id == before)
        return;
    std::string kept;
    if (after.prev_key_id != 0)
        kept = "; the previous one (" + KeyIdText(after.prev_key_id) + ") is accepted " +
               std::to_string(after.prev_remaining_s) + " s more";
    log_.Info("peer secret " + KeyIdText(after.key_id) + " set from " + cluster_.peer_secret_file +
              kept);
}

void Reconciler::EnsureListening() {
    if (listening_ || cluster_.address.empty())
        return;
    try {
        kernel_->Listen({cluster_.address, cluster_.port});
    } catch (const NetlinkError& e) {
        // EBUSY: a listener is up already (a restarted chorusd finds its own).
        if (e.errnum() != EBUSY && e.errnum() != EEXIST && e.errnum() != EADDRINUSE)
            throw;
    }
    listening_ = true;
    log_.Info("replication listener on " + cluster_.address + ":" + std::to_string(cluster_.port));
}

void Reconciler::TendAll(const SessionSnapshot& session, const ClusterView& view) {
    std::map<std::string, VolumeInfo> attached;
    for (VolumeInfo& v : kernel_->List())
        attached.emplace(v.name, std::move(v));
    TendContext ctx;
    ctx.node_id = cfg_.node_id;
    ctx.cluster = &cluster_;
    ctx.kernel = &*kernel_;
    ctx.store = &store_;
    ctx.pool = pool_ ? &*pool_ : nullptr;
    ctx.lease_id = session.lease_id;
    ctx.view = &view;
    const std::map<std::string, AccessPoint> access = AssignAccessPoints(view);
    ctx.access = &access;
    ctx.log = [this](Severity s, const std::string& m) { log_.Log(s, m); };
    for (const auto& [name, vol] : view.volumes) {
        const bool holds = Holds(vol.spec.value, cfg_.node_id);
        if (!holds && !ServesDiskless(view, name, cfg_.node_id))
            continue;
        auto it = attached.find(name);
        bool had = it != attached.end();
        try {
            std::optional<VolumeInfo> kv = had ? std::optional(it->second) : std::nullopt;
            if (holds)
                TendVolume(ctx, vol, kv);
            else
                TendDiskless(ctx, vol, kv);
            problems_.Clear("volume " + name);
        } catch (const Error& e) {
            // A compare that failed because another node moved first is
            // no problem: the next pass reads again.
            if (e.errnum() == EAGAIN && dynamic_cast<const NetlinkError*>(&e) == nullptr) {
                log_.Debug("volume " + name + ": " + e.what());
                compare_failed_ = true;
            } else {
                problems_.Report("volume " + name, e.what());
            }
        }
        if (!had && holds)
            RefreshPool(true);
    }
}

// A volume whose spec is gone (deleted), or no longer names this node, is
// detached and its replica removed: only if the kernel has it on this
// node's pool under chorusd's name, never one attached by hand, never
// while it is open, never while its spec is only unreadable. A diskless
// access point this node no longer serves is detached once closed.
void Reconciler::RemoveDeleted(const ClusterView& view, const std::vector<VolumeInfo>& attached) {
    for (const VolumeInfo& kv : attached)
        if (kv.diskless)
            RemoveDiskless(view, kv);
    if (!pool_)
        return;
    for (const VolumeInfo& kv : attached) {
        if (kv.diskless)
            continue;
        auto it = view.volumes.find(kv.name);
        if (it != view.volumes.end() && Holds(it->second.spec.value, cfg_.node_id))
            continue;
        if (std::find(view.damaged.begin(), view.damaged.end(), kv.name) != view.damaged.end())
            continue;
        if (kv.backing_path != "/dev/" + pool_->vg() + "/" + ReplicaLvName(kv.name))
            continue;
        const std::string subject = "volume " + kv.name;
        if (kv.open_count > 0) {
            problems_.Report(subject, "deleted from the cluster but open here (" +
                                          std::to_string(kv.open_count) +
                                          " openers): detached once closed");
            continue;
        }
        try {
            kernel_->Destroy(kv.name);
            RemoveReplicaDisk(*pool_, kv.name, kv.uuid);
            log_.Info(subject + ": deleted from the cluster: detached, " + kv.backing_path +
                      " removed");
            problems_.Clear(subject);
            RemoveFailedDisk(kv);
            RefreshPool(true);
        } catch (const Error& e) {
            problems_.Report(subject, std::string("removing it: ") + e.what());
        }
    }
}

// A failed disk that a live replacement could not remove (it is removed
// once the new disk is attached; a disk that fails its discard stays) is
// tried once more when the volume goes: nothing else would ever look for
// it. A failure now is logged and left for a person.
void Reconciler::RemoveFailedDisk(const VolumeInfo& kv) {
    const std::string lv = pool_->vg() + "/" + FailedReplicaLvName(kv.name);
    try {
        if (RemoveFailedReplicaDisk(*pool_, kv.name, kv.uuid))
            log_.Info("volume " + kv.name + ": the failed disk's logical volume " + lv +
                      " removed with it");
    } catch (const Error& e) {
        log_.Warn("volume " + kv.name + ": deleted, but the failed disk's logical volume " + lv +
                  " could not be removed (" + e.what() + "): left for a person to remove");
    }
}

void Reconciler::RemoveDiskless(const ClusterView& view, const VolumeInfo& kv) {
    if (ServesDiskless(view, kv.name, cfg_.node_id) ||
        std::find(view.damaged.begin(), view.damaged.end(), kv.name) != view.damaged.end())
        return;
    auto it = view.volumes.find(kv.name);
    if (it != view.volumes.end() && Holds(it->second.spec.value, cfg_.node_id))
        return;  // TendVolume reports it: a replica belongs here, not this
    const std::string subject = "volume " + kv.name;
    if (kv.open_count > 0) {
        problems_.Report(subject, "no longer served here but open (" +
                                      std::to_string(kv.open_count) +
                                      " openers): the diskless access point is detached once "
                                      "closed");
        return;
    }
    try {
        kernel_->Destroy(kv.name);
        log_.Info(
            subject + ": diskless access point detached (" +
            (it == view.volumes.end() ? "deleted from the cluster" : "no longer exported here") +
            ")");
        problems_.Clear(subject);
    } catch (const Error& e) {
        problems_.Report(subject, std::string("detaching it: ") + e.what());
    }
}

// Replicas left in the pool by a volume deleted while this chorusd was not
// running: a chorus logical volume with a uuid tag, not attached, whose
// volume is not in the store (or is another volume under the same name).
void Reconciler::RemoveOrphanedDisks(const ClusterView& view,
                                     const std::vector<VolumeInfo>& kernel_volumes) {
    if (!pool_)
        return;
    std::set<std::string> attached;
    for (const VolumeInfo& kv : kernel_volumes)
        attached.insert(kv.name);
    for (const LogicalVolume& lv : pool_->List()) {
        const std::vector<std::string> volumes = VolumesOfReplicaLv(lv.name);
        const bool tagged = std::any_of(lv.tags.begin(), lv.tags.end(), [](const std::string& t) {
            return t.rfind("chorus_uuid=", 0) == 0;
        });
        if (volumes.empty() || !tagged)
            continue;
        // A volume's failed disk set aside ("chorus-<v>.failed") is its
        // volume's: the replacement or the volume's delete removes it, and
        // says so. Only a disk no volume here claims is an orphan.
        if (std::any_of(volumes.begin(), volumes.end(), [&](const std::string& name) {
                return ClaimsDisk(view, attached, name, lv);
            }))
            continue;
        try {
            DiscardAndRemoveLv(*pool_, lv);
            log_.Info("removed " + pool_->vg() + "/" + lv.name +
                      ": its volume is not in the "
                      "cluster (deleted while this node was away)");
        } catch (const Error& e) {
            problems_.Report("logical volume " + lv.name, e.what());
        }
    }
}

// Whether the volume called name, attached here or held here in the
// cluster with lv's tag, or damaged (its spec unreadable), may own lv.
bool Reconciler::ClaimsDisk(const ClusterView& view, const std::set<std::string>& attached,
                            const std::string& name, const LogicalVolume& lv) const {
    if (attached.count(name) > 0 ||
        std::find(view.damaged.begin(), view.damaged.end(), name) != view.damaged.end())
        return true;
    auto it = view.volumes.find(name);
    return it != view.volumes.end() && Holds(it->second.spec.value, cfg_.node_id) &&
           lv.HasTag(ReplicaLvTag(it->second.spec.value.uuid));
}

bool Reconciler::RefreshPool(bool force) {
    if (!pool_)
        return false;
    auto now = std::chrono::steady_clock::now();
    if (!force && pool_stats_ && now - pool_read_ < kPoolPeriod)
        return false;
    pool_read_ = now;
    try {
        pool_stats_ = pool_->Stats();
        pool_error_.clear();
        problems_.Clear("pool " + pool_->vg());
    } catch (const Error& e) {
        pool_stats_.reset();
        pool_error_ = e.what();
        problems_.Report("pool " + pool_->vg(), e.what());
    }
    return true;
}

// /chorus/status/<id>, bound to the session: what the pool has free (for
// placement) and what the kernel says of each volume (for chorusctl).
void Reconciler::PublishStatus(const SessionSnapshot& session,
                               const std::vector<VolumeInfo>& attached) {
    NodeStatus s;
    s.node_id = cfg_.node_id;
    if (pool_stats_)
        s.pool = PoolStatus{pool_stats_->vg, pool_stats_->size_bytes, pool_stats_->free_bytes};
    s.pool_error = pool_error_;
    for (const VolumeInfo& v : attached)
        s.volumes[v.name] = VolumeStatus(v);
    s.nvmet = exports_.Status();
    s.nvmet_error = exports_.error();
    s.iscsi = exports_.IscsiStatus();
    s.iscsi_error = exports_.iscsi_error();
    std::string value = EncodeNodeStatus(s);
    if (value == published_ && session.lease_id == published_lease_)
        return;
    etcd_.Put(NodeStatusKey(cfg_.node_id), value, session.lease_id);
    published_ = value;
    published_lease_ = session.lease_id;
}

// A session that must not arm the kernel (it could not adopt the kernel's
// deadline) may once every volume the kernel owns is owned under it, at
// the epoch of its owner key: no deadline can then extend a stale owner.
void Reconciler::MaybeAllowArming(const SessionSnapshot& session,
                                  const std::vector<VolumeInfo>& attached) {
    if (session.arms_kernel)
        return;
    ClusterView view = ReadView();
    for (const VolumeInfo& kv : attached) {
        if (kv.role != CHORUS_ROLE_OWNER)
            continue;
        auto it = view.volumes.find(kv.name);
        if (it == view.volumes.end() || !it->second.owner)
            return;
        const Ownership& o = *it->second.owner;
        if (o.node_id != cfg_.node_id || o.lease != session.lease_id ||
            kv.epoch.value_or(0) != static_cast<uint64_t>(o.epoch))
            return;
    }
    keeper_.AllowArming(session.lease_id);
}

}  // namespace chorus
