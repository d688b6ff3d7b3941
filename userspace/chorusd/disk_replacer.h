// A disk replacement asked for this node (chorusctl cluster volume
// replace-disk; Documentation/cluster.md, "Replacing a disk"): the volume
// is detached, its logical volume removed, a new one made and formatted
// (a new generation id, so the owner copies every region to it), and the
// request ended; TendVolume then attaches it as a replica.
#ifndef CHORUS_CHORUSD_DISK_REPLACER_H_
#define CHORUS_CHORUSD_DISK_REPLACER_H_

#include <optional>

#include "chorusd/volume_tender.h"

namespace chorus {

// Carries out vol's replace request if it names this node; kernel_vol is
// reset when the volume was detached. A request for a node that is an
// up-to-date member of the write set is refused (logged, and ended: that
// copy is needed). Throws chorus::Error while the replacement must wait
// (this node still owns the volume, or the volume is open here), or for
// what failed; the next pass tries again, from the start.
void ReplaceDiskIfAsked(const TendContext& ctx, const VolumeState& vol,
                        std::optional<VolumeInfo>& kernel_vol);

}  // namespace chorus

#endif  // CHORUS_CHORUSD_DISK_REPLACER_H_
