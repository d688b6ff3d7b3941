#include "lib/cluster_lio.h"

#include <set>

#include "lib/cluster_export.h"
#include "lib/cluster_nvmet.h"
#include "lib/nqn.h"

namespace chorus {

namespace {

using K = ConfigfsOp::Kind;

// LIO's numbers for the ALUA states chorus uses (target_core_alua.h).
struct AluaState {
    const char* number;
    const char* name;
};
constexpr AluaState kOptimized = {"0", "active/optimized"};
constexpr AluaState kNonOptimized = {"1", "active/non-optimized"};
constexpr AluaState kUnavailable = {"3", "unavailable"};
// alua_access_type 1: implicit only. With explicit ALUA a host's
// scsi_dh_alua would ask (SET TARGET PORT GROUPS) to make its path
// optimized; the owner decides that, not the host.
constexpr const char* kImplicitAlua = "1";

// What the SCSI inquiry shows on every node (multipath matches on it).
constexpr const char* kVendor = "CHORUS";
constexpr const char* kProduct = "chorus";

void Add(std::vector<ConfigfsOp>& ops, K kind, std::string path, std::string value = "",
         std::string undo = "") {
    ops.push_back({kind, std::move(path), std::move(value), std::move(undo)});
}

// A write LIO shows otherwise than it was written: what to read back
// (read_path, "" for path itself) and the text it holds once in place.
void AddShown(std::vector<ConfigfsOp>& ops, std::string path, std::string value,
              std::string read_path, std::string shown_as, bool fixed) {
    ConfigfsOp op{K::kWrite, std::move(path), std::move(value), ""};
    op.fixed = fixed;
    op.read_path = std::move(read_path);
    op.shown_as = std::move(shown_as);
    ops.push_back(std::move(op));
}

std::string GroupName(const Config& cfg) {
    return "chorus_node" + std::to_string(cfg.node_id);
}

// The backstore of a volume attached here: an iblock device over its
// /dev/chorusN with the volume's identity, and this node's port group in
// the state given. Identity first: LIO refuses a unit serial, vendor or
// product once the device is exported (a LUN links to it), and a state
// while it is not enabled. There is no disable: a backstore goes by rmdir,
// once no LUN links to it.
void PlanBackstore(std::vector<ConfigfsOp>& ops, const Config& cfg, const std::string& volume,
                   const std::string& uuid, const std::string& device, const AluaState& state) {
    const std::string dir = std::string(kLioHba) + "/" + volume;
    Add(ops, K::kMkdir, dir);
    // control is write-only; info shows the path once configured. The
    // path cannot change once enabled: a new minor remakes the backstore.
    AddShown(ops, dir + "/control", "udev_path=" + device, dir + "/info",
             "UDEV PATH: " + device + " ", true);
    Add(ops, K::kEnsureDir, dir + "/wwn");  // configfs makes wwn/ and alua/ with dir
    AddShown(ops, dir + "/wwn/vpd_unit_serial", uuid, "",
             "T10 VPD Unit Serial Number: " + uuid + "\n", true);
    AddShown(ops, dir + "/wwn/vendor_id", kVendor, "", "", true);
    AddShown(ops, dir + "/wwn/product_id", kProduct, "", "", true);
    Add(ops, K::kWrite, dir + "/enable", "1");
    Add(ops, K::kEnsureDir, dir + "/alua");
    const std::string gp = dir + "/alua/" + GroupName(cfg);
    Add(ops, K::kMkdir, gp);
    ConfigfsOp id{K::kWrite, gp + "/tg_pt_gp_id", std::to_string(cfg.node_id), ""};
    id.fixed = true;  // set once per group
    ops.push_back(id);
    AddShown(ops, gp + "/alua_access_type", kImplicitAlua, "", "Implicit\n", false);
    // LIO may delay a command through a non-optimized port by this much
    // (100 ms by default) to make the port look slower; forwarding to the
    // owner is what makes it slower, nothing needs adding.
    Add(ops, K::kWrite, gp + "/nonop_delay_msecs", "0");
    Add(ops, K::kWrite, gp + "/alua_access_state", state.number);
}

// CHAP credentials of an ACL, or of the portal group's dynamic ACLs
// (dir: the ACL's or the group's directory).
void PlanChap(std::vector<ConfigfsOp>& ops, const std::string& dir, const LioChap& chap) {
    Add(ops, K::kEnsureDir, dir + "/auth");
    // "NULL" clears them (the undo, when CHAP is turned off).
    Add(ops, K::kWrite, dir + "/auth/userid", chap.user, "NULL");
    ConfigfsOp password{K::kWrite, dir + "/auth/password", chap.secret, "NULL"};
    password.secret = true;
    ops.push_back(std::move(password));
}

// The target of one export: its LUNs over the backstores planned, the
// initiators allowed (each with every LUN mapped and the CHAP credentials),
// whether CHAP is required, the portals, then enable, so that an initiator
// never logs in to a half-made target.
void PlanTarget(std::vector<ConfigfsOp>& ops, const Config& cfg, const ExportSpec& spec,
                const std::vector<const LunAccess*>& luns, const std::optional<LioChap>& chap) {
    const std::string target = "target/iscsi/" + IqnOf(spec.nqn);
    const std::string tpg = target + "/tpgt_" + std::to_string(kLioTpgt);
    Add(ops, K::kMkdir, target);
    Add(ops, K::kMkdir, tpg);
    const std::string any = spec.allow_any_host ? "1" : "0";
    Add(ops, K::kEnsureDir, tpg + "/attrib");
    Add(ops, K::kWrite, tpg + "/attrib/generate_node_acls", any);
    Add(ops, K::kWrite, tpg + "/attrib/cache_dynamic_acls", any);
    // Demo mode (any initiator) would otherwise be read-only.
    Add(ops, K::kWrite, tpg + "/attrib/demo_mode_write_protect", "0");
    Add(ops, K::kEnsureDir, tpg + "/lun");
    for (const LunAccess* l : luns) {
        const std::string lun = tpg + "/lun/lun_" + std::to_string(l->lun);
        Add(ops, K::kMkdir, lun);
        Add(ops, K::kSymlink, lun + "/" + l->volume, std::string(kLioHba) + "/" + l->volume);
        AddShown(ops, lun + "/alua_tg_pt_gp", GroupName(cfg), "",
                 "TG Port Alias: " + GroupName(cfg) + "\n", false);
    }
    Add(ops, K::kEnsureDir, tpg + "/acls");
    for (const std::string& initiator : spec.initiators) {
        const std::string acl = tpg + "/acls/" + initiator;
        Add(ops, K::kMkdir, acl);
        for (const LunAccess* l : luns) {
            const std::string mapped = acl + "/lun_" + std::to_string(l->lun);
            Add(ops, K::kMkdir, mapped);
            Add(ops, K::kSymlink, mapped + "/lun", tpg + "/lun/lun_" + std::to_string(l->lun));
        }
        if (chap)
            PlanChap(ops, acl, *chap);
    }
    if (chap && spec.allow_any_host)
        PlanChap(ops, tpg, *chap);
    // After the credentials, so that a login never meets CHAP without them.
    Add(ops, K::kWrite, tpg + "/attrib/authentication", chap ? "1" : "0");
    Add(ops, K::kEnsureDir, tpg + "/np");
    for (const IscsiPortal& p : cfg.iscsi->portals)
        Add(ops, K::kMkdir, tpg + "/np/" + p.Name());
    Add(ops, K::kWrite, tpg + "/enable", "1", "0");
}

// Each namespace of spec, as this node serves it over iSCSI.
std::vector<LunAccess> LunsOf(const Config& cfg, const ClusterView& view, const ExportSpec& spec,
                              const std::map<std::string, std::string>& devices, bool cut_off) {
    std::vector<LunAccess> out;
    for (const ExportNamespace& ns : spec.namespaces) {
        LunAccess a{spec.nqn, ns.nsid, ns.volume, ns.nsid - 1, "", ""};
        auto vol = view.volumes.find(ns.volume);
        if (!cfg.iscsi)
            a.why_not = "this node has no [iscsi] portals in its config";
        else if (vol == view.volumes.end())
            a.why_not = "no volume " + ns.volume + " in the cluster";
        else if (devices.count(ns.volume) == 0)
            a.why_not = "volume " + ns.volume + " is not attached on this node";
        else if (cut_off)
            a.alua_state = kUnavailable.name;
        else
            a.alua_state =
                AnaGroupOf(vol->second) == cfg.node_id ? kOptimized.name : kNonOptimized.name;
        out.push_back(std::move(a));
    }
    return out;
}

const AluaState& StateNamed(const std::string& name) {
    for (const AluaState* s : {&kOptimized, &kNonOptimized})
        if (name == s->name)
            return *s;
    return kUnavailable;
}

}  // namespace

ClusterLioPlan PlanClusterLio(const Config& cfg, const ClusterView& view,
                              const std::map<std::string, std::string>& devices, bool cut_off,
                              const std::optional<LioChap>& chap) {
    ClusterLioPlan plan;
    std::vector<const ExportSpec*> exports;
    std::map<std::string, std::string> targets;  // IQN -> the NQN that has it
    for (const auto& [nqn, e] : view.exports) {
        if (!ExportsBy(e.value, kProtocolIscsi))
            continue;
        auto [t, fresh] = targets.emplace(IqnOf(nqn), nqn);
        if (!fresh) {
            // NQNs differing in case only make one IQN: the first keeps it.
            for (const ExportNamespace& ns : e.value.namespaces)
                plan.luns.push_back(
                    {nqn, ns.nsid, ns.volume, ns.nsid - 1, "",
                     "its iSCSI target name " + t->first + " is " + t->second + "'s"});
            continue;
        }
        exports.push_back(&e.value);
        for (LunAccess& l : LunsOf(cfg, view, e.value, devices, cut_off))
            plan.luns.push_back(std::move(l));
    }
    if (exports.empty() || !cfg.iscsi)
        return plan;

    std::vector<ConfigfsOp>& ops = plan.ops;
    Add(ops, K::kEnsureDir, "target");
    Add(ops, K::kEnsureDir, "target/core");
    Add(ops, K::kMkdir, kLioHba);
    std::set<std::string> planned;  // a volume in two exports has one backstore
    for (const LunAccess& l : plan.luns)
        if (!l.alua_state.empty() && planned.insert(l.volume).second)
            PlanBackstore(ops, cfg, l.volume, FormatUuid(view.volumes.at(l.volume).spec.value.uuid),
                          devices.at(l.volume), StateNamed(l.alua_state));
    Add(ops, K::kEnsureDir, "target/iscsi");
    for (const ExportSpec* e : exports) {
        std::vector<const LunAccess*> luns;
        for (const LunAccess& l : plan.luns)
            if (l.nqn == e->nqn && !l.alua_state.empty())
                luns.push_back(&l);
        PlanTarget(ops, cfg, *e, luns, chap);
    }
    return plan;
}

}  // namespace chorus
