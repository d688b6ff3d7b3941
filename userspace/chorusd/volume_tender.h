// One volume on this node, brought in line with the cluster store: its
// replica in the pool, attached, its peers declared and dialled, this
// node's role and epoch as the owner key says, and, on the owner, the
// write set kept true in etcd before the kernel is told
// (Documentation/cluster.md, "What chorusd does"), planned moves carried
// out, and the volume moved where its export's strategy wants it
// (Documentation/access.md).
#ifndef CHORUS_CHORUSD_VOLUME_TENDER_H_
#define CHORUS_CHORUSD_VOLUME_TENDER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/access_strategy.h"
#include "lib/cluster_store.h"
#include "lib/cluster_view.h"
#include "lib/config.h"
#include "lib/genl_client.h"
#include "lib/lvm.h"
#include "lib/severity.h"

namespace chorus {

struct TendContext {
    uint32_t node_id = 0;
    const ClusterConfig* cluster = nullptr;
    VolumeClient* kernel = nullptr;
    ClusterStore* store = nullptr;
    const LvmPool* pool = nullptr;  // null: this node has no pool
    int64_t lease_id = 0;           // the live session's
    const ClusterView* view = nullptr;
    // Where the exports' strategies want each volume owned (null: nowhere).
    const std::map<std::string, AccessPoint>* access = nullptr;
    LogFn log;
};

// Sets the kernel volume kv's payload_crc to the [cluster] section's, if it
// differs (a volume attached now, or adopted from an earlier chorusd or a
// change by hand). A module without the tunable is left as it is. Throws
// NetlinkError.
void EnsurePayloadCrc(const TendContext& ctx, const VolumeInfo& kv);

// Declares each of ids that the kernel's volume kv does not know yet as a
// peer (diskless: a diskless access point) and dials it, once it is a
// member with an address; dials one declared and disconnected. A node that
// never joined has nothing of the volume: the owner syncs all of it to that
// node when it comes. Throws NetlinkError.
void DeclarePeers(const TendContext& ctx, const VolumeSpec& spec, const VolumeInfo& kv,
                  const std::vector<uint32_t>& ids, bool diskless);

// Does what volume needs on this node, which holds one of its replicas;
// kernel_vol is the kernel's volume of that name, if attached. Throws
// chorus::Error (EtcdError, NetlinkError, LvmError) for what it could not
// do; the next pass tries again.
void TendVolume(const TendContext& ctx, const VolumeState& volume,
                const std::optional<VolumeInfo>& kernel_vol);

}  // namespace chorus

#endif  // CHORUS_CHORUSD_VOLUME_TENDER_H_
