#include "chorusd/disk_replacer.h"

#include <algorithm>
#include <cerrno>
#include <string>

#include "lib/replica_disk.h"

namespace chorus {

namespace {

void Log(const TendContext& ctx, Severity s, const std::string& volume, const std::string& msg) {
    if (ctx.log)
        ctx.log(s, volume + ": " + msg);
}

// Removes the failed logical volume a live replacement set aside. The disk
// under it may be dead: a failure is logged and leaves it for a person, and
// the replacement goes on.
void DropFailedDisk(const TendContext& ctx, const VolumeSpec& spec) {
    try {
        RemoveFailedReplicaDisk(*ctx.pool, spec.name, spec.uuid);
    } catch (const Error& e) {
        Log(ctx, Severity::kWarn, spec.name,
            "cannot remove the failed disk's logical volume " + FailedReplicaLvName(spec.name) +
                " (" + e.what() + "): left for a person to remove");
    }
}

// The kernel holds the failed disk and keeps the volume (its block device,
// its openers, its export): the failed logical volume is set aside, a new
// one made and formatted under the usual name and attached in its place,
// then the old one removed. A pass that stops half way starts again here:
// each step finds what an earlier one did.
void ReplaceFailedDiskLive(const TendContext& ctx, const VolumeSpec& spec, int64_t request,
                           std::optional<VolumeInfo>& kernel_vol) {
    SetFailedReplicaDiskAside(*ctx.pool, spec);
    ReplicaDisk disk = EnsureReplicaDisk(*ctx.pool, spec, true);
    kernel_vol = ctx.kernel->AttachDisk(spec.name, disk.path);
    DropFailedDisk(ctx, spec);
    if (!ctx.store->EndReplace(spec.name, request))
        throw Error("the replace request changed meanwhile: done again on the next pass", EAGAIN);
    Log(ctx, Severity::kInfo, spec.name,
        "disk replaced while attached: " + disk.path +
            " made, formatted and attached in place of the failed one; the owner copies every "
            "region to it");
}

}  // namespace

void ReplaceDiskIfAsked(const TendContext& ctx, const VolumeState& vol,
                        std::optional<VolumeInfo>& kernel_vol) {
    if (!vol.replace || vol.replace->value.node != ctx.node_id)
        return;
    const VolumeSpec& spec = vol.spec.value;
    const int64_t request = vol.replace->mod_revision;
    const std::vector<uint32_t>* members = vol.writeset ? &vol.writeset->value.members : nullptr;
    // Checked again here: the write set may have changed since chorusctl
    // looked, and an up-to-date copy must never be wiped.
    if (members == nullptr || std::count(members->begin(), members->end(), ctx.node_id) > 0 ||
        ctx.pool == nullptr) {
        ctx.store->EndReplace(spec.name, request);
        Log(ctx, Severity::kWarn, spec.name,
            ctx.pool == nullptr
                ? "disk replacement refused: this node's config names no pool"
                : "disk replacement refused: this node is an up-to-date member of the write set");
        return;
    }
    if (vol.owner && vol.owner->node_id == ctx.node_id)
        throw Error("the disk replacement waits: this node still owns the volume", EAGAIN);
    if (kernel_vol && kernel_vol->disk_error) {
        ReplaceFailedDiskLive(ctx, spec, request, kernel_vol);
        return;
    }
    if (kernel_vol) {
        if (kernel_vol->open_count > 0)
            throw Error("the disk replacement waits: the volume is open here (" +
                            std::to_string(kernel_vol->open_count) +
                            " openers: an export, a mount or an application) and its disk "
                            "works; close it",
                        EBUSY);
        ctx.kernel->Destroy(spec.name);
        kernel_vol.reset();
        Log(ctx, Severity::kInfo, spec.name, "detached for the disk replacement");
    }
    // Not held by the kernel: a live replacement's left-over, if any.
    DropFailedDisk(ctx, spec);
    if (!RemoveReplicaDisk(*ctx.pool, spec.name, spec.uuid))
        throw Error("the logical volume for " + spec.name +
                        " is not tagged for it: the disk replacement leaves it alone",
                    EEXIST);
    ReplicaDisk disk = EnsureReplicaDisk(*ctx.pool, spec, true);
    if (!ctx.store->EndReplace(spec.name, request))
        throw Error("the replace request changed meanwhile: done again on the next pass", EAGAIN);
    Log(ctx, Severity::kInfo, spec.name,
        "disk replaced: " + disk.path +
            " made and formatted; the owner copies every region to it once attached");
}

}  // namespace chorus
