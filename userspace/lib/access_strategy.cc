#include "lib/access_strategy.h"

#include <algorithm>
#include <set>

namespace chorus {

namespace {

// The nodes that can own v now: up-to-date members with a live chorusd.
std::vector<uint32_t> Candidates(const ClusterView& view, const VolumeState& v) {
    std::vector<uint32_t> out;
    if (!v.writeset)
        return out;
    for (uint32_t id : v.writeset->value.members)
        if (view.nodes.count(id) > 0)
            out.push_back(id);
    std::sort(out.begin(), out.end());
    return out;
}

uint32_t OwnerOf(const VolumeState& v) {
    return v.owner ? v.owner->node_id : 0;
}

bool Has(const std::vector<uint32_t>& v, uint32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

struct Item {
    std::string volume;
    uint32_t owner = 0;
    std::vector<uint32_t> candidates;
};

class Assigner {
public:
    explicit Assigner(const ClusterView& view) : view_(view) {}

    void Export(const ExportSpec& e) {
        if (e.strategy == "none")
            return;
        std::vector<Item> items;
        for (const ExportNamespace& ns : e.namespaces) {
            auto v = view_.volumes.find(ns.volume);
            if (v == view_.volumes.end() || out_.count(ns.volume) > 0)
                continue;
            Item it{ns.volume, OwnerOf(v->second), Candidates(view_, v->second)};
            if (!it.candidates.empty())
                items.push_back(std::move(it));
        }
        if (e.strategy == "inherit")
            Inherit(e, items);
        else
            Balance(e, items);
    }

    std::map<std::string, AccessPoint> Take() { return std::move(out_); }

private:
    void Assign(const ExportSpec& e, const Item& it, uint32_t node) {
        out_[it.volume] = {node, e.nqn, e.strategy};
        global_[node]++;
    }

    void Inherit(const ExportSpec& e, const std::vector<Item>& items) {
        std::map<uint32_t, std::pair<int, int>> score;  // node -> (can own, owns)
        for (const Item& it : items)
            for (uint32_t id : it.candidates) {
                score[id].first++;
                score[id].second += it.owner == id;
            }
        uint32_t best = 0;
        for (const auto& [id, s] : score) {
            if (best == 0) {
                best = id;
                continue;
            }
            const auto& b = score[best];
            if (s.first != b.first     ? s.first > b.first
                : s.second != b.second ? s.second > b.second
                                       : global_[id] < global_[best])
                best = id;
        }
        for (const Item& it : items)
            Assign(e, it,
                   Has(it.candidates, best)       ? best
                   : Has(it.candidates, it.owner) ? it.owner
                                                  : it.candidates.front());
    }

    void Balance(const ExportSpec& e, const std::vector<Item>& items) {
        std::set<uint32_t> nodes;
        for (const Item& it : items)
            nodes.insert(it.candidates.begin(), it.candidates.end());
        if (items.empty())
            return;
        // Every node's even share, rounded down: owners keep that many.
        const size_t share = items.size() / nodes.size();
        std::map<uint32_t, size_t> load;
        std::vector<const Item*> rest;
        for (const Item& it : items) {
            if (Has(it.candidates, it.owner) && load[it.owner] < share) {
                load[it.owner]++;
                Assign(e, it, it.owner);
            } else {
                rest.push_back(&it);
            }
        }
        for (const Item* it : rest) {
            uint32_t best = 0;
            for (uint32_t id : it->candidates) {
                if (best == 0) {
                    best = id;
                    continue;
                }
                bool better = load[id] != load[best]         ? load[id] < load[best]
                              : global_[id] != global_[best] ? global_[id] < global_[best]
                                                             : id == it->owner;
                if (better)
                    best = id;
            }
            load[best]++;
            Assign(e, *it, best);
        }
    }

    const ClusterView& view_;
    std::map<std::string, AccessPoint> out_;
    std::map<uint32_t, int> global_;  // volumes assigned to each node so far
};

}  // namespace

std::string StrategyProblem(const std::string& s) {
    if (s == "balance" || s == "inherit" || s == "none")
        return "";
    return "strategy '" + s + "' is not balance, inherit or none";
}

std::map<std::string, AccessPoint> AssignAccessPoints(const ClusterView& view) {
    Assigner a(view);
    for (const auto& [nqn, e] : view.exports)
        a.Export(e.value);
    return a.Take();
}

std::vector<uint32_t> DisklessNodes(const ClusterView& view, const std::string& name) {
    std::vector<uint32_t> out;
    auto vol = view.volumes.find(name);
    if (vol == view.volumes.end())
        return out;
    const bool exported = std::any_of(view.exports.begin(), view.exports.end(), [&](const auto& e) {
        const auto& nss = e.second.value.namespaces;
        return std::any_of(nss.begin(), nss.end(),
                           [&](const ExportNamespace& ns) { return ns.volume == name; });
    });
    const std::vector<uint32_t>& replicas = vol->second.spec.value.nodes;
    if (!exported || replicas.size() >= kAccessPointsPerVolume)
        return out;
    for (const auto& [id, record] : view.nodes) {  // ordered by id
        if (out.size() + replicas.size() == kAccessPointsPerVolume)
            break;
        if (std::find(replicas.begin(), replicas.end(), id) == replicas.end())
            out.push_back(id);
    }
    return out;
}

}  // namespace chorus
