// An exported volume on a node without a replica of it: a diskless access
// point (Documentation/access.md, "Diskless access points"), so that this
// node's nvmet serves the volume too and forwards its I/O to the owner.
#ifndef CHORUS_CHORUSD_DISKLESS_TENDER_H_
#define CHORUS_CHORUSD_DISKLESS_TENDER_H_

#include <optional>

#include "chorusd/volume_tender.h"

namespace chorus {

// Attaches volume diskless if the kernel does not have it (size and uuid
// from its spec, the replicas' block size, the owner key's epoch), then
// declares and dials its replicas. A kernel volume of that name with a
// backing device is left alone: that throws. Throws chorus::Error
// (NetlinkError) for what it could not do; the next pass tries again.
void TendDiskless(const TendContext& ctx, const VolumeState& volume,
                  const std::optional<VolumeInfo>& kernel_vol);

}  // namespace chorus

#endif  // CHORUS_CHORUSD_DISKLESS_TENDER_H_
