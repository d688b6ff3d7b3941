#include "lib/placement.h"

#include <algorithm>
#include <cerrno>
#include <set>

#include "lib/meta.h"
#include "lib/size.h"

namespace chorus {

namespace {

constexpr uint64_t kExtent = 4ull << 20;

// Why node id cannot hold a replica of pool_bytes; "" if it can.
std::string Unfit(const ClusterView& view, uint32_t id, uint64_t pool_bytes) {
    auto rec = view.nodes.find(id);
    if (rec == view.nodes.end())
        return "node " + std::to_string(id) +
               " is not a member of the cluster (no chorusd "
               "session)";
    if (rec->second.address.empty())
        return "node " + std::to_string(id) + " has no replication address in its config";
    auto st = view.status.find(id);
    if (st == view.status.end() || !st->second.pool)
        return "node " + std::to_string(id) + " has no storage pool" +
               (st != view.status.end() && !st->second.pool_error.empty()
                    ? " (" + st->second.pool_error + ")"
                    : "");
    if (st->second.pool->free_bytes < pool_bytes)
        return "node " + std::to_string(id) + " has no room: pool " + st->second.pool->vg +
               " has " + FormatSize(st->second.pool->free_bytes) + " free, the replica needs " +
               FormatSize(pool_bytes);
    return "";
}

}  // namespace

uint64_t PoolBytesFor(uint64_t data_bytes) {
    return (DeviceBytesFor(data_bytes) + kExtent - 1) / kExtent * kExtent;
}

std::vector<uint32_t> PlaceReplicas(const ClusterView& view, uint64_t data_bytes, uint32_t replicas,
                                    const std::vector<uint32_t>& wanted) {
    const uint64_t need = PoolBytesFor(data_bytes);
    if (!wanted.empty()) {
        if (wanted.size() != replicas)
            throw Error(std::to_string(wanted.size()) + " nodes named for " +
                            std::to_string(replicas) + " replicas",
                        EINVAL);
        std::set<uint32_t> seen;
        for (uint32_t id : wanted) {
            if (!seen.insert(id).second)
                throw Error("node " + std::to_string(id) + " is named twice: one replica per node",
                            EINVAL);
            if (std::string why = Unfit(view, id, need); !why.empty())
                throw Error(why, view.nodes.count(id) ? ENOSPC : ENOENT);
        }
        return wanted;
    }
    std::vector<uint32_t> fit;
    std::vector<std::string> why_not;
    for (const auto& [id, rec] : view.nodes) {
        if (std::string why = Unfit(view, id, need); why.empty())
            fit.push_back(id);
        else
            why_not.push_back(why);
    }
    if (fit.size() < replicas) {
        std::string msg = std::to_string(replicas) + " replicas need " + std::to_string(replicas) +
                          " nodes with room for " + FormatSize(need) + "; " +
                          std::to_string(fit.size()) + " have it";
        for (const std::string& w : why_not)
            msg += "; " + w;
        throw Error(msg, ENOSPC);
    }
    auto free_of = [&](uint32_t id) { return view.status.at(id).pool->free_bytes; };
    std::stable_sort(fit.begin(), fit.end(),
                     [&](uint32_t a, uint32_t b) { return free_of(a) > free_of(b); });
    fit.resize(replicas);
    return fit;
}

}  // namespace chorus
