#include "lib/replica_disk.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "lib/fd.h"
#include "lib/meta.h"
#include "lib/process.h"

namespace chorus {

namespace {

// Formats the replica, or checks that its metadata is this volume's. The
// logical volume carries this volume's tag, so it was made for it: metadata
// of another volume on it is what a deleted logical volume left on the same
// extents (lvcreate zeroes only the start; chorus metadata is at the end),
// and is formatted over. Damaged metadata may be this replica's own and is
// left for a person to look at. A new disk (fresh) is always formatted: its
// new generation id tells the owner to copy every region to it.
bool PrepareMetadata(const std::string& path, const VolumeSpec& spec, bool fresh) {
    Fd fd(::open(path.c_str(), O_RDWR | O_EXCL | O_CLOEXEC));
    if (!fd.valid())
        throw Error("cannot open " + path + ": " + std::strerror(errno), errno);
    uint64_t bytes = 0;
    int lbs = 0;
    if (::ioctl(fd.get(), BLKGETSIZE64, &bytes) < 0 || ::ioctl(fd.get(), BLKSSZGET, &lbs) < 0)
        throw Error(path + ": not a block device: " + std::strerror(errno), errno);
    MetaRead m = ReadMeta(fd.get(), bytes);
    if (!fresh && m.state == MetaRead::State::kValid && m.super.volume_uuid == spec.uuid)
        return false;
    if (!fresh && m.state == MetaRead::State::kCorrupt)
        throw Error(path + ": damaged chorus metadata (" + m.Problems() + "): left alone", EIO);
    FormatOptions o;
    o.size = spec.size_bytes;
    o.block_size = kReplicaBlockSize;
    o.uuid = spec.uuid;
    o.force = true;  // only stale metadata of another volume can be there
    FormatDevice(fd.get(), bytes, static_cast<uint32_t>(lbs), o);
    return true;
}

// Discards and removes logical volume lv_name if it is tagged for uuid;
// false if it has another tag. A deleted volume's data must not show
// through a later one made on the same extents: discard it (zeroes on
// devices that zero discarded blocks; best effort, as not every device
// discards).
bool RemoveTaggedLv(const LvmPool& pool, const std::string& lv_name, const Uuid& uuid) {
    std::optional<LogicalVolume> lv = pool.Find(lv_name);
    if (!lv)
        return true;
    if (!lv->HasTag(ReplicaLvTag(uuid)))
        return false;
    DiscardAndRemoveLv(pool, *lv);
    return true;
}

}  // namespace

ReplicaDisk EnsureReplicaDisk(const LvmPool& pool, const VolumeSpec& spec, bool fresh) {
    const std::string name = ReplicaLvName(spec.name);
    const std::string tag = ReplicaLvTag(spec.uuid);
    ReplicaDisk disk;
    std::optional<LogicalVolume> lv = pool.Find(name);
    if (lv && !lv->HasTag(tag))
        throw Error("logical volume " + pool.vg() + "/" + name + " is not tagged " + tag +
                        ": it belongs to another volume (or not to chorus) and is left alone",
                    EEXIST);
    if (!lv) {
        lv = pool.Create(name, DeviceBytesFor(spec.size_bytes), {tag});
        disk.created = true;
    }
    struct stat st;
    if (stat(lv->path.c_str(), &st) != 0)
        pool.Activate(name);  // a boot with nothing activating LVM
    disk.formatted = PrepareMetadata(lv->path, spec, fresh);
    disk.path = lv->path;
    return disk;
}

bool RemoveReplicaDisk(const LvmPool& pool, const std::string& name, const Uuid& uuid) {
    return RemoveTaggedLv(pool, ReplicaLvName(name), uuid);
}

// What SetFailedReplicaDiskAside() appends to the replica's name.
constexpr std::string_view kFailedSuffix = ".failed";

std::string FailedReplicaLvName(std::string_view volume) {
    return ReplicaLvName(volume) + std::string(kFailedSuffix);
}

void SetFailedReplicaDiskAside(const LvmPool& pool, const VolumeSpec& spec) {
    const std::string aside = FailedReplicaLvName(spec.name);
    if (pool.Find(aside))
        return;
    std::optional<LogicalVolume> lv = pool.Find(ReplicaLvName(spec.name));
    if (!lv)
        return;
    if (!lv->HasTag(ReplicaLvTag(spec.uuid)))
        throw Error("logical volume " + pool.vg() + "/" + lv->name +
                        " is not tagged for this volume: the disk replacement leaves it alone",
                    EEXIST);
    pool.Rename(lv->name, aside);
}

std::vector<std::string> VolumesOfReplicaLv(std::string_view lv_name) {
    const std::string prefix = ReplicaLvName("");
    if (lv_name.substr(0, prefix.size()) != prefix || lv_name.size() == prefix.size())
        return {};
    const std::string_view volume = lv_name.substr(prefix.size());
    std::vector<std::string> volumes{std::string(volume)};
    if (volume.size() > kFailedSuffix.size() && volume.ends_with(kFailedSuffix))
        volumes.emplace_back(volume.substr(0, volume.size() - kFailedSuffix.size()));
    return volumes;
}

void DiscardAndRemoveLv(const LvmPool& pool, const LogicalVolume& lv) {
    RunProcess({"blkdiscard", "--force", lv.path}, std::chrono::minutes(10));
    pool.Remove(lv.name);
}

bool RemoveFailedReplicaDisk(const LvmPool& pool, const std::string& name, const Uuid& uuid) {
    if (!pool.Find(FailedReplicaLvName(name)))
        return false;
    RemoveTaggedLv(pool, FailedReplicaLvName(name), uuid);
    return true;
}

}  // namespace chorus
