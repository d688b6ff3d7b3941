// What one node's nvmet must look like for the cluster's exports
// (Documentation/access.md): computed from a view of the store and the
// volumes this node has attached, with no I/O, as a configfs plan that
// ConfigfsApplier prunes to and applies.
//
// Every node presents each subsystem with the same NQN, serial and model,
// and each namespace with the same nsid, device_uuid and device_nguid (the
// volume's uuid), so that a host's native multipath merges the paths
// through every node into one device; each node has its own controller id
// range. ANA: group N holds the namespaces whose volume node N owns; on
// node N's ports group N is optimized and every other group non-optimized,
// so the optimized path of a namespace is its owner's and an owner change
// re-points it by rewriting ana_grpid on every node. A node cut off from
// the store shows every group inaccessible, so hosts move to other paths.
#ifndef CHORUS_LIB_CLUSTER_NVMET_H_
#define CHORUS_LIB_CLUSTER_NVMET_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/cluster_view.h"
#include "lib/config.h"
#include "lib/nvmet_plan.h"

namespace chorus {

// One namespace of an export as this node serves it.
struct NamespaceAccess {
    std::string nqn;
    uint32_t nsid = 0;
    std::string volume;
    uint32_t ana_group = 0;  // 0: not exported here
    std::string ana_state;   // as written to the port's group; "" when not exported
    std::string why_not;     // not exported here: why
};

struct ClusterNvmetPlan {
    std::vector<ConfigfsOp> ops;
    std::vector<NamespaceAccess> namespaces;
};

// cfg gives the node id, its cntlid range and its ports; devices maps each
// volume attached here to its device node ("/dev/chorus0"); cut_off says
// the node has lost its session in the store.
ClusterNvmetPlan PlanClusterNvmet(const Config& cfg, const ClusterView& view,
                                  const std::map<std::string, std::string>& devices, bool cut_off);

// The ANA group of a volume's namespaces: its owner's node id; without an
// owner, the target of a planned move, else the first node of its spec.
uint32_t AnaGroupOf(const VolumeState& volume);

}  // namespace chorus

#endif  // CHORUS_LIB_CLUSTER_NVMET_H_
