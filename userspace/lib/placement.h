// Where a new volume's replicas go: nodes that are members now, have a
// pool with room, one replica per node; the nodes asked for, if any.
#ifndef CHORUS_LIB_PLACEMENT_H_
#define CHORUS_LIB_PLACEMENT_H_

#include <cstdint>
#include <vector>

#include "lib/cluster_view.h"
#include "lib/errors.h"

namespace chorus {

// Room a replica of data_bytes takes in a pool: the device with its chorus
// metadata, rounded up to LVM's default extent (4 MiB).
uint64_t PoolBytesFor(uint64_t data_bytes);

// Picks replicas nodes for a volume of data_bytes. With wanted empty, the
// members with the most free room first (ties: lower id); else exactly
// wanted, in that order, each checked. The first node listed is the one
// that becomes the owner. Throws chorus::Error (ENOENT unknown node,
// ENOSPC no room, EINVAL a node twice or a count that does not match)
// with a message naming the node and what it lacks.
std::vector<uint32_t> PlaceReplicas(const ClusterView& view, uint64_t data_bytes, uint32_t replicas,
                                    const std::vector<uint32_t>& wanted);

}  // namespace chorus

#endif  // CHORUS_LIB_PLACEMENT_H_
