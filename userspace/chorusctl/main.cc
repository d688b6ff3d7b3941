// chorusctl: command-line control of chorus.ko volumes over generic netlink.
// Documentation/chorusctl.rst describes the commands and exit codes.
//
// Each command is a Command (commands_*.cc) that declares its own options;
// the table below says where it sits in the command tree and what its
// errors mean, and Main builds the tree, parses and runs the one given.
#include <algorithm>
#include <cerrno>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <linux/chorus.h>
#include <CLI/CLI.hpp>

#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "lib/errors.h"

namespace chorus {
namespace {

// What ENOENT from the kernel means when a command gets it.
enum class Enoent {
    kFailed,    // an ordinary failure (exit status 1)
    kNotFound,  // the volume or peer the command names does not exist (4)
};

struct CommandSpec {
    const char* path;         // the words that name it: "volume create"
    const char* description;  // its line in --help
    Enoent enoent;
    std::unique_ptr<Command> (*make)();
    const char* alias = nullptr;  // another name for the last word of path
};

// Commands that only hold others, as "volume" holds "volume create".
struct GroupSpec {
    const char* path;  // "volume"
    const char* description;
};

constexpr GroupSpec kGroups[] = {
    {"volume", "Create, destroy, inspect and tune volumes; set roles"},
    {"peer", "Declare, forget, connect and disconnect peers"},
    {"writeset", "Change a volume's write set"},
    {"lease", "The node's lease deadline: owners hold I/O past it"},
    {"auth", "The node's peer secret: replication connections authenticate with it"},
    {"cluster", "The cluster from its store (etcd), from any node"},
    {"cluster node", "The cluster's nodes"},
    {"cluster volume", "Volumes managed by the cluster: replicas placed and owned by chorusd"},
    {"cluster export", "Subsystems served by every node over NVMe-oF (ANA) and iSCSI (ALUA)"},
};

// In the order --help lists them; a group is listed where its first command
// is.
constexpr CommandSpec kCommands[] = {
    {"volume create", "Create a volume on a backing device, or a diskless access point",
     Enoent::kFailed, NewVolumeCreate},
    {"volume destroy", "Destroy a volume (alias: delete)", Enoent::kNotFound, NewVolumeDestroy,
     "delete"},
    {"volume list", "List volumes", Enoent::kFailed, NewVolumeList},
    {"volume status", "Show a volume's attributes and counters", Enoent::kNotFound,
     NewVolumeStatus},
    {"volume format", "Write fresh chorus metadata to a backing device", Enoent::kFailed,
     NewVolumeFormat},
    {"volume inspect", "Show the chorus metadata of a backing device", Enoent::kFailed,
     NewVolumeInspect},
    {"volume role", "Make this node the volume's owner (at an epoch) or a replica",
     Enoent::kNotFound, NewVolumeRole},
    {"volume verify", "Compare this replica with a peer's, region by region", Enoent::kNotFound,
     NewVolumeVerify},
    {"volume set", "Change a volume's replication tunables", Enoent::kNotFound, NewVolumeSet},
    {"volume attach-disk", "Give a volume whose disk failed a new, formatted disk while it runs",
     Enoent::kNotFound, NewVolumeAttachDisk},
    {"listen", "Accept replication connections on an address", Enoent::kFailed, NewListen},
    {"unlisten", "Stop accepting replication connections (established ones stay)", Enoent::kFailed,
     NewUnlisten},
    {"peer add", "Declare a peer of a volume", Enoent::kNotFound, NewPeerAdd},
    {"peer del", "Forget a peer (refused while it holds I/O)", Enoent::kNotFound, NewPeerDel},
    {"peer connect", "Start connecting to a peer, retrying with back-off", Enoent::kNotFound,
     NewPeerConnect},
    {"peer disconnect", "Close the connections to a peer and stop", Enoent::kNotFound,
     NewPeerDisconnect},
    {"writeset remove", "Take a peer out of the write set: it is out of date, held I/O completes",
     Enoent::kNotFound, NewWritesetRemove},
    {"lease set", "Set the node's lease deadline (chorusd does this after every keepalive)",
     Enoent::kFailed, NewLeaseSet},
    {"lease show", "Show the node's lease deadline", Enoent::kFailed, NewLeaseShow},
    {"auth set", "Set the peer secret from a root-only file (optionally keeping the old one)",
     Enoent::kFailed, NewAuthSet},
    {"auth drop-previous", "Stop accepting the previous peer secret now", Enoent::kFailed,
     NewAuthDropPrevious},
    {"auth clear", "Forget the peer secrets: authentication off (trusted networks only)",
     Enoent::kFailed, NewAuthClear},
    {"auth show", "Show whether a peer secret is set, its id, and refused connections",
     Enoent::kFailed, NewAuthShow},
    {"events", "Print volume events as they happen", Enoent::kFailed, NewEvents},
    {"cluster status", "Show the store, the nodes and the volumes' health", Enoent::kFailed,
     NewClusterStatus},
    {"cluster node list", "List the nodes with a live chorusd and their pools", Enoent::kFailed,
     NewNodeList},
    {"cluster volume create", "Create a replicated volume: placed, formatted and owned by chorusd",
     Enoent::kFailed, NewClusterVolumeCreate},
    {"cluster volume delete", "Delete a volume and its replicas everywhere", Enoent::kNotFound,
     NewClusterVolumeDelete},
    {"cluster volume list", "List the cluster's volumes with owner and health", Enoent::kFailed,
     NewClusterVolumeList},
    {"cluster volume status", "Show a volume: owner, epoch, write set, each replica",
     Enoent::kNotFound, NewClusterVolumeStatus},
    {"cluster volume move", "Hand a volume to another owner (planned, no I/O error)",
     Enoent::kNotFound, NewClusterVolumeMove},
    {"cluster volume replace-disk",
     "Give a node's out-of-date replica a new disk, copied in full from the write set",
     Enoent::kNotFound, NewClusterVolumeReplaceDisk},
    {"cluster export create", "Create a subsystem every node exports (volumes, allowed hosts)",
     Enoent::kFailed, NewClusterExportCreate},
    {"cluster export delete", "Stop exporting a subsystem on every node", Enoent::kNotFound,
     NewClusterExportDelete},
    {"cluster export add", "Export a volume as a namespace of a subsystem", Enoent::kNotFound,
     NewClusterExportAdd},
    {"cluster export remove", "Stop exporting a volume through a subsystem", Enoent::kNotFound,
     NewClusterExportRemove},
    {"cluster export allow", "Allow a host (its NQN, or an initiator's IQN) to reach a subsystem",
     Enoent::kNotFound, NewClusterExportAllow},
    {"cluster export disallow", "Take a host off a subsystem's allow-list", Enoent::kNotFound,
     NewClusterExportDisallow},
    {"cluster export protocols", "Set how hosts reach a subsystem (iscsi, nvme-tcp, nvme-rdma)",
     Enoent::kNotFound, NewClusterExportProtocols},
    {"cluster export list", "List the exports with each node's ANA and ALUA states per namespace",
     Enoent::kFailed, NewClusterExportList},
};

// "volume create" -> {"volume", "create"}.
std::vector<std::string> Words(std::string_view path) {
    std::vector<std::string> words;
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = std::min(path.find(' ', start), path.size());
        words.emplace_back(path.substr(start, end - start));
        start = end + 1;
    }
    return words;
}

// A command of the table, made and added to the CLI11 tree.
struct Entry {
    const CommandSpec* spec;
    std::unique_ptr<Command> command;  // bound to the options of app
    CLI::App* app;
};

// chorusctl's CLI11 command tree, built from the table: every command with
// the groups on its path, each group made when its first command is added.
class CommandTree {
public:
    explicit CommandTree(CLI::App& root) : root_(root) {}

    void Add(const CommandSpec& spec) {
        std::vector<std::string> words = Words(spec.path);
        CLI::App* parent = &root_;
        std::string group;  // the path so far: "volume"
        for (size_t i = 0; i + 1 < words.size(); i++) {
            group += (group.empty() ? "" : " ") + words[i];
            parent = Group(*parent, group, words[i]);
        }
        CLI::App* app = parent->add_subcommand(words.back(), spec.description);
        if (spec.alias != nullptr)
            app->alias(spec.alias);
        std::unique_ptr<Command> command = spec.make();
        command->AddOptions(*app);
        entries_.push_back(Entry{&spec, std::move(command), app});
    }

    // The command the command line named, once parsed; nullptr if none.
    const Entry* Parsed() const {
        for (const Entry& e : entries_)
            if (e.app->parsed())
                return &e;
        return nullptr;
    }

private:
    CLI::App* Group(CLI::App& parent, const std::string& path, const std::string& name) {
        auto it = groups_.find(path);
        if (it != groups_.end())
            return it->second;
        CLI::App* group = parent.add_subcommand(name, GroupDescription(path));
        group->require_subcommand(1);
        group->fallthrough();
        groups_.emplace(path, group);
        return group;
    }

    static std::string GroupDescription(const std::string& path) {
        for (const GroupSpec& g : kGroups)
            if (path == g.path)
                return g.description;
        throw std::logic_error("chorusctl: no description of command group " + path);
    }

    CLI::App& root_;
    std::map<std::string, CLI::App*> groups_;  // by path
    std::vector<Entry> entries_;
};

// Every command accepts these; CLI11 handles --help itself.
void AddGlobalOptions(CLI::App& app, GlobalOptions& global) {
    app.set_version_flag("--version", std::string("chorusctl ") + CHORUS_VERSION +
                                          " (netlink family '" CHORUS_GENL_NAME "' version " +
                                          std::to_string(CHORUS_GENL_VERSION) + ")");
    app.add_flag("--json", global.json, "Print machine-readable JSON instead of text");
    // Exactly one command, and --json accepted after it too. Groups and
    // commands inherit both settings from their parent as they are added,
    // so these come before any of them.
    app.require_subcommand(1);
    app.fallthrough();
}

int ExitCodeFor(const Error& e, Enoent enoent) {
    if (dynamic_cast<const ModuleNotLoadedError*>(&e) != nullptr)
        return kExitNoModule;
    // EPERM only: the module answers EACCES for a read-only backing
    // device, which is an ordinary failure, not a missing privilege.
    if (e.errnum() == EPERM)
        return kExitPermission;
    if (enoent == Enoent::kNotFound && e.errnum() == ENOENT &&
        dynamic_cast<const NetlinkError*>(&e) != nullptr)
        return kExitNotFound;
    if (dynamic_cast<const NotFoundError*>(&e) != nullptr)
        return kExitNotFound;
    return kExitFailed;
}

// Runs the parsed command; its errors become a message and an exit status.
int Run(const Entry& entry, const GlobalOptions& global) {
    std::string subject = entry.command->Subject();
    std::string what = entry.spec->path + (subject.empty() ? "" : " " + subject);
    try {
        return entry.command->Run(global);
    } catch (const UsageError& e) {
        std::cerr << "chorusctl: " << e.what() << std::endl;
        return kExitUsage;
    } catch (const Error& e) {
        std::cerr << "chorusctl: " << what << ": " << e.what() << std::endl;
        return ExitCodeFor(e, entry.spec->enoent);
    } catch (const std::exception& e) {
        std::cerr << "chorusctl: " << what << ": " << e.what() << std::endl;
        return kExitFailed;
    }
}

int Main(int argc, char** argv) {
    GlobalOptions global;
    CLI::App app{"chorusctl - control chorus replicated block volumes", "chorusctl"};
    AddGlobalOptions(app, global);
    CommandTree tree(app);
    for (const CommandSpec& spec : kCommands)
        tree.Add(spec);

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);  // --help, --version
    } catch (const CLI::ParseError& e) {
        std::cerr << "chorusctl: " << e.what() << "\nRun with --help for more information."
                  << std::endl;
        return kExitUsage;
    }
    const Entry* parsed = tree.Parsed();
    if (parsed == nullptr) {
        std::cerr << "chorusctl: no command given\nRun with --help for more information."
                  << std::endl;
        return kExitUsage;
    }
    return Run(*parsed, global);
}

}  // namespace
}  // namespace chorus

int main(int argc, char** argv) {
    return chorus::Main(argc, argv);
}
