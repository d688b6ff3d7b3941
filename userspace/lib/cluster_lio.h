// What one node's LIO (the kernel's SCSI target) must look like for the
// cluster's exports that name iSCSI (Documentation/iscsi.md): computed from
// a view of the store and the volumes this node has attached, with no I/O,
// as a configfs plan that ConfigfsApplier prunes to and applies, like
// nvmet's (lib/cluster_nvmet.h).
//
// Every node presents each subsystem as the same iSCSI target (IqnOf its
// NQN, portal group 1 on the node's [iscsi] portals) and each namespace as
// the same LUN (nsid - 1) of an iblock backstore over the volume's device,
// whose unit serial is the volume's uuid, so that the NAA identifier LIO
// derives from it, and with it the host's multipath device, is the same
// through every node. ALUA: a backstore has one target port group, this
// node's (id = node id), holding its LUN; implicit ALUA only, so hosts
// follow the states and never set them. The group is active/optimized on
// the volume's owner (the node whose ANA group holds it over NVMe-oF),
// active/non-optimized elsewhere, unavailable on a node cut off from the
// store. LIO reports a LUN's own group only (it skips empty groups), so each
// path reports its node's state, which is all a host's multipath needs.
#ifndef CHORUS_LIB_CLUSTER_LIO_H_
#define CHORUS_LIB_CLUSTER_LIO_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lib/cluster_view.h"
#include "lib/config.h"
#include "lib/nvmet_plan.h"

namespace chorus {

// Where chorus's backstores live: an iblock HBA of its own, so that LIO
// objects made by hand or by targetcli (iblock_0, iblock_1, ...) are never
// touched.
inline constexpr const char* kLioHba = "target/core/iblock_7788";
// Every export is target portal group 1 of its target.
inline constexpr uint32_t kLioTpgt = 1;

// One LUN of an export as this node serves it over iSCSI.
struct LunAccess {
    std::string nqn;
    uint32_t nsid = 0;
    std::string volume;
    uint32_t lun = 0;        // nsid - 1
    std::string alua_state;  // as written ("active/optimized", ...); "" when not exported
    std::string why_not;     // not exported here: why
};

struct ClusterLioPlan {
    std::vector<ConfigfsOp> ops;
    std::vector<LunAccess> luns;
};

// CHAP credentials initiators must log in with (the config's chap_user
// and the secret its chap_secret_file holds).
struct LioChap {
    std::string user;
    std::string secret;
};

// cfg gives the node id and its [iscsi] portals (no plan without them:
// each LUN says why); devices maps each volume attached here to its device
// node ("/dev/chorus0"); cut_off says the node has lost its session in the
// store; with chap, every initiator must log in with it.
ClusterLioPlan PlanClusterLio(const Config& cfg, const ClusterView& view,
                              const std::map<std::string, std::string>& devices, bool cut_off,
                              const std::optional<LioChap>& chap = std::nullopt);

}  // namespace chorus

#endif  // CHORUS_LIB_CLUSTER_LIO_H_
