// This node's replica of a volume in its storage pool: a logical volume
// made to the volume's size, tagged with its uuid, formatted with chorus
// metadata for it (Documentation/cluster.md, "Storage pools").
#ifndef CHORUS_LIB_REPLICA_DISK_H_
#define CHORUS_LIB_REPLICA_DISK_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/cluster_store.h"
#include "lib/lvm.h"

namespace chorus {

// The logical block size every replica is formatted with; a diskless
// access point of the volume must state the same.
constexpr uint32_t kReplicaBlockSize = 4096;

struct ReplicaDisk {
    std::string path;        // the block device to attach
    bool created = false;    // made just now
    bool formatted = false;  // formatted just now
};

// Finds or makes the replica of spec in pool and makes sure it carries
// chorus metadata of this volume: one without it (made by an attempt that
// stopped before formatting, or holding what a deleted logical volume left
// on the same extents) is formatted; one tagged for another volume, or with
// damaged metadata, is never touched: that throws. Call only while the kernel does not have it
// attached. With fresh (a replaced disk, made just now), the logical volume
// is formatted whatever it holds. Throws LvmError or chorus::Error naming
// what is wrong.
ReplicaDisk EnsureReplicaDisk(const LvmPool& pool, const VolumeSpec& spec, bool fresh = false);

// Discards and removes the replica of the volume named name with this uuid,
// if there is one; a logical volume of that name with another uuid tag is left alone
// (and false returned). Throws LvmError.
bool RemoveReplicaDisk(const LvmPool& pool, const std::string& name, const Uuid& uuid);

// A replica whose disk failed is replaced while the kernel still holds it
// (the volume stays attached): its logical volume is renamed to
// "<replica name>.failed" first, so that EnsureReplicaDisk() makes the new
// one under the usual name, and removed once the kernel let go of it.
std::string FailedReplicaLvName(std::string_view volume);

// Renames the volume's replica to FailedReplicaLvName(), unless that name
// is taken already (by a pass that stopped after the rename). Throws
// LvmError, or chorus::Error for a logical volume not tagged for spec.
void SetFailedReplicaDiskAside(const LvmPool& pool, const VolumeSpec& spec);

// Discards and removes what SetFailedReplicaDiskAside() set aside for
// volume name, if it is there and tagged for uuid. Call only once the
// kernel let go of it. False when there was none. Throws LvmError (or
// chorus::Error when the disk cannot be discarded).
bool RemoveFailedReplicaDisk(const LvmPool& pool, const std::string& name, const Uuid& uuid);

// The volumes logical volume lv_name may hold a disk of: none for a name
// without the "chorus-" prefix; "chorus-<v>" is <v>'s replica, and
// "chorus-<v>.failed" is also <v>'s failed disk set aside (a volume name may
// itself end in ".failed": the tag tells them apart).
std::vector<std::string> VolumesOfReplicaLv(std::string_view lv_name);

// Discards lv (best effort: not every device discards) and removes it, so
// that its data cannot show through a logical volume made later on the same
// extents. Throws LvmError.
void DiscardAndRemoveLv(const LvmPool& pool, const LogicalVolume& lv);

}  // namespace chorus

#endif  // CHORUS_LIB_REPLICA_DISK_H_
