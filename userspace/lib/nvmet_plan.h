// What chorusd does to nvmet's configfs tree, as an ordered list of
// operations computed from the config alone (no I/O), so that the ordering
// rules of Linux 6.1 nvmet can be unit-tested.
#ifndef CHORUS_LIB_NVMET_PLAN_H_
#define CHORUS_LIB_NVMET_PLAN_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lib/config.h"

namespace chorus {

struct ConfigfsOp {
    enum class Kind {
        // mkdir an object chorusd owns (subsystem, namespace, port, ANA
        // group). If it already exists it is reused and left on teardown.
        kMkdir,
        // A directory configfs creates by itself along with its parent
        // (e.g. subsystems/<nqn>/namespaces): created only when missing, so
        // the same plan works on a plain directory tree.
        kEnsureDir,
        // Write value to an attribute file, unless it already reads back as
        // value. If undo is set, teardown writes undo (enable=0).
        kWrite,
        // Symlink path -> value (both relative to the configfs root).
        kSymlink,
    };
    Kind kind;
    std::string path;   // relative to the configfs root, e.g. "nvmet/ports/1"
    std::string value;  // kWrite: the value; kSymlink: the target
    std::string undo;   // kWrite only; empty: nothing to undo
    // kWrite only: the attribute can be written only while its object is
    // new (nvmet's device_path once enabled). ConfigfsApplier::Prune
    // removes an object chorusd made whose fixed attribute reads back
    // otherwise, and Apply makes it again.
    bool fixed = false;
    // kWrite only, for attributes that do not read back what was written
    // (LIO's): the attribute to read instead (relative to the root; empty:
    // path itself), and the text it shows, somewhere in it, once value is
    // in place (empty: it reads back as value). A fixed write whose read
    // shows otherwise remakes the nearest object of the plan above path.
    std::string read_path{};
    std::string shown_as{};
    // kWrite only: value is a secret (a CHAP password), never logged,
    // described or named in an error.
    bool secret = false;

    bool operator==(const ConfigfsOp&) const = default;
};

// The export, in the order nvmet requires: subsystem and its identity
// attributes; each namespace with device_path, device_uuid, device_nguid
// and ana_grpid before enable; each port with its address, its ANA groups
// and their states, and only then the link of the subsystem to the port.
std::vector<ConfigfsOp> PlanNvmetExport(const Config& cfg);

// One port, for both kinds of export: its address, its ANA groups (group 1
// is nvmet's own, made with the port and always there; a group's state is
// written only if group_states names it), and only then the
// links of the subsystems named by nqns, so that a host never sees a
// transient state. The address attributes can change only while no
// subsystem is linked.
void PlanPort(std::vector<ConfigfsOp>& ops, const PortConfig& port,
              const std::map<uint32_t, std::string>& group_states,
              const std::vector<std::string>& nqns);

// "mkdir nvmet/ports/1", "write nvmet/.../enable = 1", ...
std::string DescribeOp(const ConfigfsOp& op);

// "optimized" for the group owned by this node, "non-optimized" otherwise.
std::string AnaStateFor(const Config& cfg, uint32_t group);

}  // namespace chorus

#endif  // CHORUS_LIB_NVMET_PLAN_H_
