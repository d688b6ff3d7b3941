#include "chorusd/unsettled.h"

#include <algorithm>

#include <linux/chorus.h>

namespace chorus {

namespace {

constexpr std::chrono::milliseconds kUnsettledRecheck(250);
constexpr std::chrono::milliseconds kProgressRecheck(1000);

bool Contains(const std::vector<uint32_t>& v, uint32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

bool Connected(const PeerInfo& p) {
    return p.conn_state == CHORUS_CONN_CONNECTED;
}

bool MemberOf(const VolumeState& vol, uint32_t node_id) {
    return vol.writeset && Contains(vol.writeset->value.members, node_id);
}

std::string Id(uint32_t node_id) {
    return "node " + std::to_string(node_id);
}

// On the owner: a member it may hold writes for.
std::optional<std::string> OwnerUnsettled(const VolumeState& vol, const VolumeInfo& kv) {
    for (const PeerInfo& p : kv.peers) {
        const uint32_t id = p.node_id.value_or(0);
        if (!Connected(p) && (p.in_writeset.value_or(false) || MemberOf(vol, id)))
            return Id(id) + ", in the write set, is not connected";
    }
    return std::nullopt;
}

// On a replica that may become owner: an owner key that may go.
std::optional<std::string> ReplicaUnsettled(const VolumeState& vol, const VolumeInfo& kv,
                                            uint32_t node_id) {
    if (!MemberOf(vol, node_id))
        return std::nullopt;  // it cannot take over: nothing to be quick for
    if (!vol.owner)
        return std::string("no owner");
    if (vol.owner->node_id == node_id)
        return std::nullopt;
    for (const PeerInfo& p : kv.peers)
        if (p.node_id == vol.owner->node_id && Connected(p))
            return std::nullopt;
    return "the owner, " + Id(vol.owner->node_id) + ", is not connected";
}

std::optional<std::string> VolumeUnsettled(const VolumeState& vol, const VolumeInfo& kv,
                                           uint32_t node_id) {
    if (vol.move)
        return std::string("a move in progress");
    if (kv.role == CHORUS_ROLE_OWNER)
        return OwnerUnsettled(vol, kv);
    if (kv.diskless)
        return std::nullopt;
    return ReplicaUnsettled(vol, kv, node_id);
}

bool Resyncing(const VolumeInfo& kv) {
    return std::any_of(kv.peers.begin(), kv.peers.end(),
                       [](const PeerInfo& p) { return p.sync_total_bytes.value_or(0) > 0; });
}

}  // namespace

std::optional<Unsettled> FindUnsettled(const ClusterView& view,
                                       const std::vector<VolumeInfo>& attached, uint32_t node_id) {
    std::optional<Unsettled> soonest;
    for (const VolumeInfo& kv : attached) {
        auto it = view.volumes.find(kv.name);
        if (it == view.volumes.end())
            continue;
        if (std::optional<std::string> why = VolumeUnsettled(it->second, kv, node_id))
            return Unsettled{kUnsettledRecheck, "volume " + kv.name + ": " + *why};
        if (!soonest && Resyncing(kv))
            soonest = Unsettled{kProgressRecheck, "volume " + kv.name + ": a resync in progress"};
    }
    return soonest;
}

}  // namespace chorus
