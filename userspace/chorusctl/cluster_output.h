// How chorusctl prints the cluster: nodes and volumes as the store has
// them, for people (tables, "key: value") and machines (JSON).
#ifndef CHORUS_CHORUSCTL_CLUSTER_OUTPUT_H_
#define CHORUS_CHORUSCTL_CLUSTER_OUTPUT_H_

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "lib/cluster_view.h"

namespace chorus {

struct VolumeHealthCount {
    size_t healthy = 0;    // an owner, every replica in the write set
    size_t degraded = 0;   // an owner, some replica out of date
    size_t ownerless = 0;  // no owner: no node serves it
};

// "healthy", "degraded" or "no owner".
std::string VolumeHealth(const VolumeState& v);
VolumeHealthCount CountHealth(const ClusterView& view);

nlohmann::json NodeToJson(const ClusterView& view, const NodeRecord& rec);
// ID ADDRESS HOSTNAME POOL SIZE FREE VOLUMES.
void PrintNodeTable(std::ostream& out, const ClusterView& view);

// The spec, owner and write set, and per replica what its node reports.
nlohmann::json ClusterVolumeToJson(const ClusterView& view, const VolumeState& v);
// NAME SIZE NODES OWNER EPOCH HEALTH.
void PrintClusterVolumeTable(std::ostream& out, const ClusterView& view);
// "key: value" lines, then one block per replica.
void PrintClusterVolumeStatus(std::ostream& out, const ClusterView& view, const VolumeState& v);

}  // namespace chorus

#endif  // CHORUS_CHORUSCTL_CLUSTER_OUTPUT_H_
