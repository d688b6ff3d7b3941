// Which node should own each exported volume (Documentation/access.md,
// "Access strategies"): the optimized path of a namespace is its volume's
// owner, so choosing the owner chooses the access point. Computed from one
// view, the same on every node, with no I/O; the owner's chorusd moves a
// volume whose assignment names another node (a planned move).
//
// Per subsystem (ExportSpec::strategy):
//  - "inherit": all its namespaces share one access point: the node that
//    can own the most of them (then: owns the most now, fewest volumes
//    assigned so far, lowest id);
//  - "balance": its namespaces are spread over the nodes as evenly as
//    possible, moving as few as it can: a current owner keeps up to an
//    even share (rounded down), the rest go to the node with the fewest of
//    the subsystem's, then the fewest volumes assigned so far in the
//    cluster (so that several subsystems spread too), then the current
//    owner, then the lowest id;
//  - "none": never moved; the access point is wherever the owner is.
// A node can own a volume when it is an up-to-date member of its write set
// with a live chorusd. A volume in several exports follows the first (by
// NQN).
#ifndef CHORUS_LIB_ACCESS_STRATEGY_H_
#define CHORUS_LIB_ACCESS_STRATEGY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/cluster_view.h"

namespace chorus {

// "" if s is a strategy chorus knows, else why not.
std::string StrategyProblem(const std::string& s);

struct AccessPoint {
    uint32_t node_id = 0;
    std::string nqn;       // the export that decided it
    std::string strategy;  // its strategy
};

// volume name -> the node that should own it; volumes that no export
// decides (not exported, "none", no node can own it) are absent.
std::map<std::string, AccessPoint> AssignAccessPoints(const ClusterView& view);

// How many nodes serve an exported volume: one path optimized, two not
// (DESIGN.md, "NVMe-oF export").
constexpr size_t kAccessPointsPerVolume = 3;

// The nodes that serve the volume named name as diskless access points: if
// it is in an export, the live members without a replica of it, lowest ids
// first, as many as make kAccessPointsPerVolume with its replicas. Empty
// for a volume in no export or not in the view.
std::vector<uint32_t> DisklessNodes(const ClusterView& view, const std::string& name);

}  // namespace chorus

#endif  // CHORUS_LIB_ACCESS_STRATEGY_H_
