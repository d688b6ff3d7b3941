// A node's storage pool: an LVM volume group in which chorusd makes one
// logical volume per replica it holds (Documentation/cluster.md, "Storage
// pools"). Works through the lvm2 commands and their JSON reports, the
// interface LVM keeps stable for programs (liblvm2app is gone).
//
// chorusd's logical volumes are named "chorus-<volume>" and tagged with the
// volume's uuid, so that nothing else in the group is ever touched and a
// volume recreated under the same name is never confused with an old one.
#ifndef CHORUS_LIB_LVM_H_
#define CHORUS_LIB_LVM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/errors.h"
#include "lib/uuid.h"

namespace chorus {

// An lvm command failed; the message names the command and what LVM said.
class LvmError : public Error {
public:
    using Error::Error;
};

struct PoolStats {
    std::string vg;
    uint64_t size_bytes = 0;
    uint64_t free_bytes = 0;
    uint64_t extent_bytes = 0;
};

struct LogicalVolume {
    std::string name;
    std::string path;  // /dev/<vg>/<name>
    uint64_t size_bytes = 0;
    std::vector<std::string> tags;

    bool HasTag(std::string_view tag) const;
};

// "chorus-<volume>", the logical volume of a chorus volume.
std::string ReplicaLvName(std::string_view volume);
// "chorus_uuid=<uuid>", the tag that says which volume it belongs to.
std::string ReplicaLvTag(const Uuid& uuid);

class LvmPool {
public:
    explicit LvmPool(std::string vg) : vg_(std::move(vg)) {}

    const std::string& vg() const { return vg_; }

    // Throws LvmError if the group does not exist or lvm fails.
    PoolStats Stats() const;
    std::vector<LogicalVolume> List() const;
    std::optional<LogicalVolume> Find(std::string_view name) const;

    // Makes a logical volume of at least bytes (LVM rounds up to its extent
    // size), tagged, with its first sectors wiped. Throws LvmError, naming
    // the group's free space when it is too small.
    LogicalVolume Create(std::string_view name, uint64_t bytes,
                         const std::vector<std::string>& tags) const;
    // Activates a logical volume (its device node appears): after a boot
    // where nothing activated the group. Throws LvmError.
    void Activate(std::string_view name) const;
    // Removes a logical volume. Throws LvmError.
    void Remove(std::string_view name) const;
    // Renames a logical volume, also while it is open. Throws LvmError.
    void Rename(std::string_view name, std::string_view new_name) const;

private:
    std::string vg_;
};

// Parses the JSON of "vgs --reportformat json --units b --nosuffix" and of
// "lvs ..." (exposed for the unit tests). Throw LvmError on a report that
// does not parse.
std::vector<PoolStats> ParseVgsReport(std::string_view json);
std::vector<LogicalVolume> ParseLvsReport(std::string_view json);

}  // namespace chorus

#endif  // CHORUS_LIB_LVM_H_
