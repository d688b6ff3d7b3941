#include "chorusd/diskless_tender.h"

#include "lib/replica_disk.h"

namespace chorus {

namespace {

VolumeInfo AttachDiskless(const TendContext& ctx, const VolumeState& vol) {
    const VolumeSpec& spec = vol.spec.value;
    VolumeCreateRequest req;
    req.name = spec.name;
    req.diskless = true;
    req.size_bytes = spec.size_bytes;
    req.block_size = kReplicaBlockSize;
    req.uuid = spec.uuid;
    req.node_id = ctx.node_id;
    // It keeps no epoch of its own: an owner older than the key's is refused.
    if (vol.owner)
        req.epoch = static_cast<uint64_t>(vol.owner->epoch);
    VolumeInfo kv = ctx.kernel->Create(req);
    if (ctx.log)
        ctx.log(Severity::kInfo, spec.name + ": attached as a diskless access point, /dev/" +
                                     kv.disk_name + " (no replica on this node)");
    return kv;
}

}  // namespace

void TendDiskless(const TendContext& ctx, const VolumeState& vol,
                  const std::optional<VolumeInfo>& kernel_vol) {
    const VolumeSpec& spec = vol.spec.value;
    VolumeInfo kv = kernel_vol ? *kernel_vol : AttachDiskless(ctx, vol);
    if (!kv.diskless)
        throw Error("the kernel has a volume " + spec.name + " on " + kv.backing_path +
                        ", not a diskless access point: left alone",
                    EEXIST);
    EnsurePayloadCrc(ctx, kv);
    DeclarePeers(ctx, spec, kv, spec.nodes, false);
}

}  // namespace chorus
