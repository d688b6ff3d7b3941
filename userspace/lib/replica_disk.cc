#include "lib/replica_disk.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "lib/fd.h"
#include "lib/meta.h"

namespace chorus {

namespace {

// Formats the replica, or checks that its metadata is this volume's.
void PrepareMetadata(const std::string& path, const VolumeSpec& spec) {
    Fd fd(::open(path.c_str(), O_RDWR | O_EXCL | O_CLOEXEC));
    if (!fd.valid())
        throw Error("cannot open " + path + ": " + std::strerror(errno), errno);
    uint64_t bytes = 0;
    int lbs = 0;
    if (::ioctl(fd.get(), BLKGETSIZE64, &bytes) < 0 || ::ioctl(fd.get(), BLKSSZGET, &lbs) < 0)
        throw Error(path + ": not a block device: " + std::strerror(errno), errno);
    MetaRead m = ReadMeta(fd.get(), bytes);
    if (m.state == MetaRead::State::kValid) {
        if (m.super.volume_uuid != spec.uuid)
            throw Error(path + " holds chorus metadata of volume " +
                            FormatUuid(m.super.volume_uuid) + ", not of " + spec.name + " (" +
                            FormatUuid(spec.uuid) + "): left alone",
                        EEXIST);
        return;
    }
    if (m.state == MetaRead::State::kCorrupt)
        throw Error(path + ": damaged chorus metadata (" + m.Problems() + "): left alone", EIO);
    FormatOptions o;
    o.size = spec.size_bytes;
    o.block_size = 4096;
    o.uuid = spec.uuid;
    FormatDevice(fd.get(), bytes, static_cast<uint32_t>(lbs), o);
}

}  // namespace

ReplicaDisk EnsureReplicaDisk(const LvmPool& pool, const VolumeSpec& spec) {
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
    PrepareMetadata(lv->path, spec);
    disk.path = lv->path;
    return disk;
}

bool RemoveReplicaDisk(const LvmPool& pool, const std::string& name, const Uuid& uuid) {
    std::optional<LogicalVolume> lv = pool.Find(ReplicaLvName(name));
    if (!lv)
        return true;
    if (!lv->HasTag(ReplicaLvTag(uuid)))
        return false;
    pool.Remove(lv->name);
    return true;
}

}  // namespace chorus
