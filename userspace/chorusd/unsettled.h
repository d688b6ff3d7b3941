// What chorusd's control loop must look at again soon although no event
// may come: the kernel changes some of what a pass acts on without an
// event (writes held for a peer that is not connected, a resync's
// progress), and a watch stream to an etcd member whose machine died
// hangs until TCP gives up on it, so an owner key that goes meanwhile
// may be seen only by reading. While a volume is in such a state, passes
// run as often as the loop ran before it had watchers (every 250 ms); in
// a quiet cluster none is.
#ifndef CHORUS_CHORUSD_UNSETTLED_H_
#define CHORUS_CHORUSD_UNSETTLED_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/cluster_view.h"
#include "lib/genl_codec.h"

namespace chorus {

struct Unsettled {
    std::chrono::milliseconds recheck;  // the next pass within this
    std::string why;                    // for the debug log
};

// The soonest recheck any of this node's volumes needs (attached: the
// kernel's volumes at the end of a pass), or nothing if all are settled:
//  - a move in progress: 250 ms (its steps wait for the target's state);
//  - on the owner, a peer not connected that is in the kernel's write set
//    or the store's: 250 ms (writes held for it, without an event, make
//    it unreachable for the write set: Documentation/cluster.md step 5);
//  - on a replica that is an up-to-date member of the write set, no owner
//    key, or an owner the kernel is not connected to: 250 ms (its key may
//    go, or this node may win it, at any moment: failover);
//  - a resync in progress: 1 s (its progress, in /chorus/status/<id>,
//    changes without events).
std::optional<Unsettled> FindUnsettled(const ClusterView& view,
                                       const std::vector<VolumeInfo>& attached, uint32_t node_id);

}  // namespace chorus

#endif  // CHORUS_CHORUSD_UNSETTLED_H_
