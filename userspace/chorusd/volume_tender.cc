#include "chorusd/volume_tender.h"

#include <algorithm>

#include <linux/chorus.h>

#include "chorusd/disk_replacer.h"
#include "lib/replica_disk.h"

namespace chorus {

namespace {

bool Contains(const std::vector<uint32_t>& v, uint32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

void Remove(std::vector<uint32_t>& v, uint32_t x) {
    v.erase(std::remove(v.begin(), v.end(), x), v.end());
}

const PeerInfo* FindPeer(const VolumeInfo& kv, uint32_t node_id) {
    for (const PeerInfo& p : kv.peers)
        if (p.node_id == node_id)
            return &p;
    return nullptr;
}

void Log(const TendContext& ctx, Severity s, const std::string& volume, const std::string& msg) {
    if (ctx.log)
        ctx.log(s, volume + ": " + msg);
}

std::string Id(uint32_t node_id) {
    return "node " + std::to_string(node_id);
}

// The replica made or found in the pool and attached. A volume the kernel
// attaches fresh is a standalone owner until told otherwise: it is made a
// replica at once, before it has peers, and only the owner key makes it
// an owner again.
VolumeInfo Attach(const TendContext& ctx, const VolumeSpec& spec) {
    if (ctx.pool == nullptr)
        throw Error("this node holds a replica but its config names no pool", ENODEV);
    ReplicaDisk disk = EnsureReplicaDisk(*ctx.pool, spec);
    if (disk.created || disk.formatted)
        Log(ctx, Severity::kInfo, spec.name,
            std::string(disk.created ? "made and " : "") + "formatted " + disk.path + " for " +
                std::to_string(spec.size_bytes) + " bytes of data");
    VolumeCreateRequest req;
    req.name = spec.name;
    req.backing_path = disk.path;
    req.node_id = ctx.node_id;
    VolumeInfo kv = ctx.kernel->Create(req);
    if (kv.role != CHORUS_ROLE_REPLICA)
        ctx.kernel->SetRole({spec.name, CHORUS_ROLE_REPLICA, std::nullopt});
    Log(ctx, Severity::kInfo, spec.name, "attached " + disk.path + " as /dev/" + kv.disk_name);
    return ctx.kernel->Get(spec.name);
}

// Declares and dials every other node of the spec that the kernel does not
// know yet, and the volume's diskless access points (never members of the
// write set), once its chorusd is a member.
void EnsurePeers(const TendContext& ctx, const VolumeSpec& spec, const VolumeInfo& kv) {
    DeclarePeers(ctx, spec, kv, spec.nodes, false);
    DeclarePeers(ctx, spec, kv, DisklessNodes(*ctx.view, spec.name), true);
}

// Before this node serves as owner: every other member of the write set
// must be a peer the kernel replicates to. One it does not know (this node
// restarted while that one was away) has missed nothing yet but will miss
// every write from now on, so it is marked out of date first.
void MarkUnknownMembers(const TendContext& ctx, const VolumeState& vol, const Ownership& mine,
                        const VolumeInfo& kv) {
    WriteSet next = vol.writeset->value;
    bool change = false;
    for (uint32_t id : vol.writeset->value.members) {
        if (id == ctx.node_id || FindPeer(kv, id) != nullptr)
            continue;
        Remove(next.members, id);
        next.out_of_date.push_back(id);
        change = true;
    }
    if (change &&
        !ctx.store->ChangeWriteSet(vol.spec.value.name, mine, vol.writeset->mod_revision, next))
        throw Error("the write set changed while marking unknown members out of date", EAGAIN);
}

// The owner key this node holds under its live session, taking it if there
// is none and this node may (an up-to-date member of the write set).
std::optional<Ownership> MyOwnership(const TendContext& ctx, const VolumeState& vol,
                                     const VolumeInfo& kv) {
    const std::string& name = vol.spec.value.name;
    if (vol.owner)
        return vol.owner->node_id == ctx.node_id && vol.owner->lease == ctx.lease_id ? vol.owner
                                                                                     : std::nullopt;
    // A member whose disk failed takes no key: the kernel would refuse it
    // the owner role (it serves nothing without a disk and a write set).
    if (!vol.writeset || !Contains(vol.writeset->value.members, ctx.node_id) ||
        kv.state == CHORUS_VOLUME_STATE_FAILED)
        return std::nullopt;
    Ownership won;
    TakeRefusal r = ctx.store->TakeOwnership(name, ctx.node_id, ctx.lease_id, &won);
    if (r != TakeRefusal::kNone)
        return std::nullopt;
    Log(ctx, Severity::kInfo, name, "took ownership at epoch " + std::to_string(won.epoch));
    return won;
}

// This node's role as the owner key says. An owner at an older epoch steps
// down first: past its lease deadline its kernel hands what it holds over to
// the next owner (forwarded, never completed under the old epoch); inside
// it, the held requests fail. The kernel may have handed over by itself
// already (a successor's signed hello): then it is a replica, and nothing
// is sent.
void EnsureRole(const TendContext& ctx, const VolumeState& vol, const VolumeInfo& kv) {
    const std::string& name = vol.spec.value.name;
    std::optional<Ownership> mine = MyOwnership(ctx, vol, kv);
    const bool owner_now = kv.role == CHORUS_ROLE_OWNER;
    if (!mine) {
        if (owner_now) {
            ctx.kernel->SetRole({name, CHORUS_ROLE_REPLICA, std::nullopt});
            Log(ctx, Severity::kWarn, name,
                vol.owner ? "stepped down: " + Id(vol.owner->node_id) + " owns it at epoch " +
                                std::to_string(vol.owner->epoch)
                          : std::string("stepped down: no owner key holds it for this node"));
        }
        return;
    }
    const uint64_t epoch = static_cast<uint64_t>(mine->epoch);
    if (owner_now && kv.epoch.value_or(0) == epoch)
        return;
    if (!owner_now && kv.epoch.value_or(0) >= epoch) {
        // Stepped down at this epoch for a move that did not finish: the
        // kernel takes no owner role at an epoch it has seen. Give the key
        // up; the election that follows makes a new epoch.
        if (ctx.store->ReleaseOwnership(name, *mine))
            Log(ctx, Severity::kWarn, name,
                "owner key of epoch " + std::to_string(epoch) +
                    " given up: this node stepped down at it");
        return;
    }
    MarkUnknownMembers(ctx, vol, *mine, kv);
    if (owner_now)
        ctx.kernel->SetRole({name, CHORUS_ROLE_REPLICA, std::nullopt});
    ctx.kernel->SetRole({name, CHORUS_ROLE_OWNER, epoch});
    Log(ctx, Severity::kInfo, name, "serving as owner at epoch " + std::to_string(epoch));
}

bool Ready(const VolumeState& vol, const VolumeInfo& kv, uint32_t node_id) {
    const PeerInfo* p = FindPeer(kv, node_id);
    return vol.writeset && Contains(vol.writeset->value.members, node_id) && p != nullptr &&
           p->conn_state == CHORUS_CONN_CONNECTED && p->repl_state == CHORUS_REPL_UP_TO_DATE &&
           p->in_writeset.value_or(false) && !p->disk_failed.value_or(false);
}

// A planned move (Documentation/cluster.md, "Planned owner moves"): the
// owner at the move's epoch steps down in its kernel once the target is
// connected and up to date, then gives its owner key up; the target takes
// it in the election that follows, which the other members sit out. True
// when this pass must not decide this node's role.
bool TendMove(const TendContext& ctx, const VolumeState& vol, const VolumeInfo& kv) {
    if (!vol.move)
        return false;
    const std::string& name = vol.spec.value.name;
    const MoveRequest& m = vol.move->value;
    const bool mine =
        vol.owner && vol.owner->node_id == ctx.node_id && vol.owner->lease == ctx.lease_id;
    if (!vol.owner) {
        // A target whose disk failed since cannot take the key (MyOwnership):
        // the move ends, so that the other members take part again.
        if (m.to == ctx.node_id && kv.state == CHORUS_VOLUME_STATE_FAILED &&
            ctx.store->EndMove(name, vol.move->mod_revision)) {
            Log(ctx, Severity::kWarn, name, "move to this node dropped: its disk failed");
            return true;
        }
        return m.to != ctx.node_id;
    }
    if (vol.owner->epoch != m.from_epoch) {
        // Done (the target owns it now) or overtaken by a failover.
        if (mine && ctx.store->EndMove(name, vol.move->mod_revision))
            Log(ctx, Severity::kInfo, name,
                vol.owner->node_id == m.to ? "move done" : "move dropped: ownership changed");
        return false;
    }
    if (!mine || m.to == ctx.node_id)
        return false;
    const bool stepped_down = kv.role != CHORUS_ROLE_OWNER;
    if (!stepped_down && !Ready(vol, kv, m.to))
        return false;  // keeps serving until the target can take over
    if (!stepped_down) {
        ctx.kernel->SetRole({name, CHORUS_ROLE_REPLICA, std::nullopt});
        Log(ctx, Severity::kInfo, name, "stepped down for the move to " + Id(m.to));
    }
    if (!ctx.store->ReleaseOwnership(name, *vol.owner))
        throw Error("the owner key changed during the move to " + Id(m.to), EAGAIN);
    Log(ctx, Severity::kInfo, name,
        "handed over to " + Id(m.to) + ": owner key of epoch " + std::to_string(vol.owner->epoch) +
            " released");
    return true;
}

bool Unreachable(const PeerInfo& p) {
    return p.conn_state != CHORUS_CONN_CONNECTED &&
           (p.conn_state == CHORUS_CONN_UNREACHABLE || p.held.value_or(0) > 0);
}

// A member that cannot take writes: away, or its disk failed (it stays
// connected, and the kernel holds its writes like an absent member's).
bool Lost(const PeerInfo& p) {
    return Unreachable(p) || p.disk_failed.value_or(false);
}

std::string LostWhy(const PeerInfo& p) {
    return p.disk_failed.value_or(false) ? "'s disk failed" : " is unreachable";
}

// On the owner: a member the kernel cannot reach leaves the write set in
// etcd first, and only then in the kernel (which holds the writes for it
// meanwhile: DESIGN.md invariant 4); an out-of-date replica that finished
// its resync is a member again. The last member stays one in etcd, lost or
// not: it holds every acknowledged write (this node, whose disk failed,
// left before it: RecordFailedDisk()).
void TendWriteSet(const TendContext& ctx, const VolumeState& vol, const VolumeInfo& kv) {
    const std::string& name = vol.spec.value.name;
    if (!vol.owner || !vol.writeset || kv.role != CHORUS_ROLE_OWNER ||
        kv.epoch.value_or(0) != static_cast<uint64_t>(vol.owner->epoch))
        return;
    WriteSet next = vol.writeset->value;
    std::vector<uint32_t> drop;
    for (const PeerInfo& p : kv.peers) {
        uint32_t id = p.node_id.value_or(0);
        if (next.members == std::vector<uint32_t>{id} && Lost(p)) {
            // Never an empty write set: the last member has every
            // acknowledged write (HandOverFailedDisk() lets its writes go).
            continue;
        } else if (Contains(next.members, id) && Lost(p)) {
            Remove(next.members, id);
            next.out_of_date.push_back(id);
            if (p.in_writeset.value_or(false))
                drop.push_back(id);
            else
                Log(ctx, Severity::kWarn, name, Id(id) + LostWhy(p) + ": marked out of date");
        } else if (Contains(next.out_of_date, id) && p.in_writeset.value_or(false) && Lost(p)) {
            drop.push_back(id);
        } else if (Contains(next.out_of_date, id) && p.conn_state == CHORUS_CONN_CONNECTED &&
                   p.repl_state == CHORUS_REPL_UP_TO_DATE) {
            Remove(next.out_of_date, id);
            next.members.push_back(id);
            Log(ctx, Severity::kInfo, name, Id(id) + " is up to date: a member of the write set");
        }
    }
    if (next.members != vol.writeset->value.members &&
        !ctx.store->ChangeWriteSet(name, *vol.owner, vol.writeset->mod_revision, next))
        throw Error("the write set changed under the owner; read again", EAGAIN);
    for (uint32_t id : drop) {
        ctx.kernel->WritesetRemove(name, id);
        const PeerInfo* p = FindPeer(kv, id);
        Log(ctx, Severity::kWarn, name,
            Id(id) + (p ? LostWhy(*p) : std::string(" is unreachable")) +
                ": out of the write set (recorded in etcd first)");
    }
}

// Whether the kernel's write set has @id (not this node) with a working
// disk: a peer that acknowledges this node's writes.
bool AcksWrites(const TendContext& ctx, const VolumeInfo& kv, uint32_t id) {
    const PeerInfo* p = FindPeer(kv, id);
    return id != ctx.node_id && p != nullptr && p->in_writeset.value_or(false) &&
           !p->disk_failed.value_or(false);
}

std::string Ids(const std::vector<uint32_t>& ids) {
    std::string s;
    for (uint32_t id : ids)
        s += (s.empty() ? "" : ", ") + std::to_string(id);
    return (ids.size() == 1 ? "node " : "nodes ") + s;
}

bool FailedDiskOwner(const TendContext& ctx, const VolumeState& vol, const VolumeInfo& kv) {
    return kv.state == CHORUS_VOLUME_STATE_FAILED && kv.role == CHORUS_ROLE_OWNER && vol.owner &&
           vol.writeset && vol.owner->node_id == ctx.node_id && vol.owner->lease == ctx.lease_id &&
           kv.epoch.value_or(0) == static_cast<uint64_t>(vol.owner->epoch);
}

// On an owner whose disk failed (the kernel detached it; the write set
// acknowledges its writes, its reads fail over to it): from the failure on
// only the other members have every acknowledged write, so in the first
// pass that sees it this node is recorded out of date in etcd (guarded by
// its owner key), as long as another member is in the kernel's write set.
// It does not wait for that member to be up to date and connected: were it
// lost before it took over, etcd must not be left naming this disk alone
// (Documentation/cluster.md, "What chorusd does"). With none, no write
// stands and this disk stays a member: the last copy. True if it did.
//
// Invariant 4 for the owner's own disk: the kernel holds every write whose
// local part failed until the failure is recorded; once etcd has it, the
// disk leaves the kernel's write set (WRITESET_REMOVE with this node's id)
// and those writes complete on the members. A pass that finds the record
// in etcd but the disk still in the kernel's write set (chorusd stopped
// between the two) does the kernel's half only.
bool RecordFailedDisk(const TendContext& ctx, const VolumeState& vol, const VolumeInfo& kv) {
    if (!FailedDiskOwner(ctx, vol, kv))
        return false;
    const std::string& name = vol.spec.value.name;
    if (!Contains(vol.writeset->value.members, ctx.node_id)) {
        if (kv.disk_in_writeset.value_or(false)) {
            ctx.kernel->WritesetRemove(name, ctx.node_id);
            Log(ctx, Severity::kWarn, name,
                "the failed local disk, recorded out of date in etcd, left the kernel's write "
                "set: its held writes stand on the members");
        }
        return false;
    }
    std::vector<uint32_t> acking;
    for (uint32_t id : vol.writeset->value.members)
        if (AcksWrites(ctx, kv, id))
            acking.push_back(id);
    if (acking.empty())
        return false;
    WriteSet next = vol.writeset->value;
    Remove(next.members, ctx.node_id);
    next.out_of_date.push_back(ctx.node_id);
    if (!ctx.store->ChangeWriteSet(name, *vol.owner, vol.writeset->mod_revision, next))
        throw Error("the write set changed while recording this node's failed disk", EAGAIN);
    if (kv.disk_in_writeset)  // absent: a module that does not hold them
        ctx.kernel->WritesetRemove(name, ctx.node_id);
    Log(ctx, Severity::kWarn, name,
        "the local disk failed: this node is out of date (recorded in etcd first); its writes "
        "stand on " +
            Ids(acking) + " alone");
    return true;
}

// On an owner whose disk failed and that is no member any more
// (RecordFailedDisk()): it steps down and gives the key up, at once if a
// member is connected and up to date (that one takes over), or once no
// member can become so through it. A member that only lost its connection
// (no writes held for it yet) is waited for; one that is lost, or syncing
// from this node's failed disk (a resync that cannot end), leaves the
// kernel's write set first, so that the writes held for it fail rather than
// wait without end (it stays a member in etcd: it has every acknowledged
// write, and takes the key once it can). The election that follows cannot
// pick this node, and as a replica without a disk it serves the volume by
// forwarding. True if it stepped down.
bool HandOverFailedDisk(const TendContext& ctx, const VolumeState& vol, const VolumeInfo& kv) {
    if (!FailedDiskOwner(ctx, vol, kv) || Contains(vol.writeset->value.members, ctx.node_id))
        return false;
    const std::string& name = vol.spec.value.name;
    const std::vector<uint32_t>& members = vol.writeset->value.members;
    const bool ready = std::any_of(members.begin(), members.end(),
                                   [&](uint32_t id) { return Ready(vol, kv, id); });
    std::vector<uint32_t> dropped;
    if (!ready) {
        for (uint32_t id : members) {
            const PeerInfo* p = FindPeer(kv, id);
            if (AcksWrites(ctx, kv, id) && !Lost(*p) && p->repl_state == CHORUS_REPL_UP_TO_DATE)
                return false;
        }
        for (uint32_t id : members)
            if (AcksWrites(ctx, kv, id)) {
                ctx.kernel->WritesetRemove(name, id);
                dropped.push_back(id);
            }
    }
    ctx.kernel->SetRole({name, CHORUS_ROLE_REPLICA, std::nullopt});
    if (!ctx.store->ReleaseOwnership(name, *vol.owner))
        throw Error("the owner key changed while handing over from a failed disk", EAGAIN);
    Log(ctx, Severity::kWarn, name,
        std::string(ready ? "the local disk failed: "
                          : "the local disk failed and no member of the write set can take "
                            "its writes now" +
                                (dropped.empty() ? std::string()
                                                 : " (" + Ids(dropped) +
                                                       " out of the kernel's write set: "
                                                       "its writes fail)") +
                                ": ") +
            "stepped down and released the owner key of epoch " + std::to_string(vol.owner->epoch) +
            "; " + Ids(members) + ", with every acknowledged write, " +
            (ready ? "takes over" : "takes it over once it can"));
    return true;
}

// On the owner: a volume its export's strategy assigns to another node is
// handed there (a planned move) once that node is ready to take it.
void TendAccessPoint(const TendContext& ctx, const VolumeState& vol, const VolumeInfo& kv) {
    const std::string& name = vol.spec.value.name;
    if (ctx.access == nullptr || vol.move || !vol.owner || vol.owner->node_id != ctx.node_id ||
        vol.owner->lease != ctx.lease_id || kv.role != CHORUS_ROLE_OWNER ||
        kv.epoch.value_or(0) != static_cast<uint64_t>(vol.owner->epoch))
        return;
    auto it = ctx.access->find(name);
    if (it == ctx.access->end() || it->second.node_id == ctx.node_id)
        return;
    const AccessPoint& ap = it->second;
    auto rec = ctx.view->nodes.find(ap.node_id);
    if (rec == ctx.view->nodes.end() || !Ready(vol, kv, ap.node_id))
        return;
    if (ctx.store->RequestMove(name, *vol.owner, ap.node_id, rec->second.lease))
        Log(ctx, Severity::kInfo, name,
            "moving to " + Id(ap.node_id) + ": the " + ap.strategy + " strategy of " + ap.nqn +
                " puts it there");
}

}  // namespace

void DeclarePeers(const TendContext& ctx, const VolumeSpec& spec, const VolumeInfo& kv,
                  const std::vector<uint32_t>& ids, bool diskless) {
    for (uint32_t id : ids) {
        if (id == ctx.node_id)
            continue;
        const PeerInfo* p = FindPeer(kv, id);
        if (p != nullptr) {
            if (p->conn_state == CHORUS_CONN_DISCONNECTED)
                ctx.kernel->PeerConnect(spec.name, id);
            continue;
        }
        auto rec = ctx.view->nodes.find(id);
        if (rec == ctx.view->nodes.end() || rec->second.address.empty())
            continue;  // not a member now: declared when it joins
        PeerAddRequest req;
        req.volume = spec.name;
        req.node_id = id;
        req.address = rec->second.address;
        req.port = rec->second.port;
        req.transport = ParseTransport(spec.transport);
        req.initial_sync = CHORUS_INITIAL_SYNC_FULL;
        req.diskless = diskless;
        ctx.kernel->PeerAdd(req);
        ctx.kernel->PeerConnect(spec.name, id);
        Log(ctx, Severity::kInfo, spec.name,
            std::string(diskless ? "diskless access point " : "peer ") + Id(id) + " at " +
                req.address + ":" + std::to_string(req.port) + " over " + spec.transport +
                " declared and dialled");
    }
}

void EnsurePayloadCrc(const TendContext& ctx, const VolumeInfo& kv) {
    bool want = ctx.cluster->payload_crc;
    if (!kv.payload_crc || *kv.payload_crc == want)
        return;
    VolumeSetRequest req;
    req.volume = kv.name;
    req.payload_crc = want;
    ctx.kernel->Set(req);
    Log(ctx, Severity::kInfo, kv.name,
        std::string("payload crc ") + (want ? "on" : "off") + " (the [cluster] section's)");
}

void TendVolume(const TendContext& ctx, const VolumeState& vol,
                const std::optional<VolumeInfo>& attached) {
    const VolumeSpec& spec = vol.spec.value;
    std::optional<VolumeInfo> kernel_vol = attached;
    ReplaceDiskIfAsked(ctx, vol, kernel_vol);
    VolumeInfo kv = kernel_vol ? *kernel_vol : Attach(ctx, spec);
    if (ctx.pool != nullptr &&
        kv.backing_path != "/dev/" + ctx.pool->vg() + "/" + ReplicaLvName(spec.name))
        throw Error("the kernel has a volume " + spec.name + " on " + kv.backing_path +
                        ", not on this node's pool: left alone",
                    EEXIST);
    EnsurePayloadCrc(ctx, kv);
    EnsurePeers(ctx, spec, kv);
    kv = ctx.kernel->Get(spec.name);
    if (RecordFailedDisk(ctx, vol, kv) || TendMove(ctx, vol, kv) ||
        HandOverFailedDisk(ctx, vol, kv))
        return;
    EnsureRole(ctx, vol, kv);
    kv = ctx.kernel->Get(spec.name);
    TendWriteSet(ctx, vol, kv);
    TendAccessPoint(ctx, vol, kv);
    if (kv.state == CHORUS_VOLUME_STATE_FAILED)
        throw Error("the local disk " + kv.backing_path + " failed (" +
                        kv.disk_error.value_or("no reason given") +
                        ") and is detached: this node's copy is out of date; " +
                        (kv.role == CHORUS_ROLE_OWNER
                             ? "it stays the owner, its writes and reads served by the "
                               "other members of the write set, until one can take over"
                             : "it serves the volume by forwarding to the owner until the disk "
                               "is replaced ('chorusctl cluster volume replace-disk " +
                                   spec.name + " --node " + std::to_string(ctx.node_id) + "')"),
                    EIO);
}

}  // namespace chorus
