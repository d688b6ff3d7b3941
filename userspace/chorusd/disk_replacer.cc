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
    if (kernel_vol) {
        if (kernel_vol->open_count > 0)
            throw Error("the disk replacement waits: the volume is open here (" +
                            std::to_string(kernel_vol->open_count) +
                            " openers: an export, a mount or an application); close it",
                        EBUSY);
        ctx.kernel->Destroy(spec.name);
        kernel_vol.reset();
        Log(ctx, Severity::kInfo, spec.name, "detached for the disk replacement");
    }
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
