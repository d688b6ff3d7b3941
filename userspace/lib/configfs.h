// Applies a ConfigfsOp plan to a directory tree (nvmet's configfs, or any
// directory in tests) and undoes exactly what it did.
//
// Every object chorusd creates and every attribute write it must undo is
// recorded, in order, in a JSON state file, saved before each step is
// carried out so that even a crash leaves a record of everything done (at
// worst one entry more, which teardown finds already gone or undoes
// harmlessly). Teardown walks the record backwards; objects that existed
// before chorusd touched them are never in the record and so are left
// alone. Apply and Teardown hold an exclusive lock on "<state file>.lock",
// so concurrent runs take turns instead of losing each other's entries.
#ifndef CHORUS_LIB_CONFIGFS_H_
#define CHORUS_LIB_CONFIGFS_H_

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "lib/fd.h"
#include "lib/nvmet_plan.h"
#include "lib/severity.h"

namespace chorus {

inline constexpr const char* kDefaultConfigfsRoot = "/sys/kernel/config";
inline constexpr const char* kDefaultStateFile = "/run/chorus/nvmet.json";
inline constexpr const char* kDefaultClusterStateFile = "/run/chorus/nvmet-cluster.json";
inline constexpr const char* kDefaultLioStateFile = "/run/chorus/lio-cluster.json";

// One recorded change, undone on teardown.
struct StateEntry {
    enum class Kind {
        kDir,    // created directory: rmdir
        kFile,   // created regular file (plain trees only): unlink
        kLink,   // created symlink: unlink
        kWrite,  // attribute to reset: write value
    };
    Kind kind;
    std::string path;  // relative to the root
    std::string value;

    bool operator==(const StateEntry&) const = default;
};

// The record of what chorusd created under one configfs root.
class StateFile {
public:
    explicit StateFile(std::string path) : path_(std::move(path)) {}

    // Reads the file; a missing file is an empty record. Throws chorus::Error
    // if it is unreadable, malformed, or was written for another root.
    std::vector<StateEntry> Load(const std::string& root) const;
    // Atomically replaces the file (write a unique temporary file in the
    // same directory + rename); removes it when entries is empty. Throws
    // chorus::Error.
    void Save(const std::string& root, const std::vector<StateEntry>& entries) const;

    const std::string& path() const { return path_; }

private:
    std::string path_;
};

struct ApplyResult {
    int changed = 0;  // operations that changed something
    int skipped = 0;  // already in the desired state
};

struct TeardownResult {
    int undone = 0;
    int failed = 0;  // left in the state file for a later retry
};

class ConfigfsApplier {
public:
    ConfigfsApplier(std::string root, std::string state_file, LogFn log = nullptr);

    // How long Apply and Teardown wait for another run's lock before
    // failing; 30 s unless changed (tests shorten it).
    void set_lock_timeout(std::chrono::milliseconds t) { lock_timeout_ = t; }

    // Applies plan. Idempotent: what already matches is left untouched. On
    // failure, undoes what this call created, then throws chorus::Error
    // naming the failed operation (file, value, errno). Throws, changing
    // nothing, if the lock stays held by another run for the lock timeout.
    ApplyResult Apply(const std::vector<ConfigfsOp>& plan);

    // Undoes everything the state file records, newest first. Failures are
    // logged and kept in the state file; the rest is still undone.
    TeardownResult Teardown();

    // Undoes, newest first, what the state file records and plan no longer
    // asks for: a directory or link it does not make, a write it does not
    // make with an undo; every object a fixed write of plan would have to
    // change, with everything recorded inside it; the links to such an
    // object, and the links to an object in which a link is undone (LIO
    // forgets an ACL's mapped LUN with the LUN's link). Run before
    // Apply(plan), which makes them again. Failures stay recorded, as in
    // Teardown.
    TeardownResult Prune(const std::vector<ConfigfsOp>& plan);

    const std::string& root() const { return root_; }

private:
    // Returns true if it changed something. Appends to entries_ (and saves)
    // every change that teardown must undo, before making it.
    bool ApplyOp(const ConfigfsOp& op);
    // Whether op's write is in place already (it reads back as asked).
    bool Holds(const ConfigfsOp& op) const;
    // Records entry, then runs act; drops the entry again if act throws
    // (the rollback that follows saves the file without it).
    template <typename Act>
    void RecordThen(StateEntry entry, Act act);
    FileLock Lock() const;
    // Sets configfs_: whether root_ is a configfs mount.
    void DetectConfigfs();
    // Undoes entries_[from..] newest first, keeping the ones that fail.
    TeardownResult UndoFrom(size_t from);
    // Undoes one entry; false (logged) if that failed.
    bool Undo(const StateEntry& e);
    // Adds to remake the plan's links that must be made again with it: see
    // Prune. wanted: what the plan makes, as recorded entries.
    void AddLinksToRemake(const std::vector<ConfigfsOp>& plan,
                          const std::set<std::pair<StateEntry::Kind, std::string>>& wanted,
                          std::vector<std::string>& remake) const;
    // The directories of plan's objects whose fixed attribute differs.
    std::vector<std::string> ObjectsToRemake(const std::vector<ConfigfsOp>& plan) const;
    void Record(StateEntry entry);
    bool Recorded(StateEntry::Kind kind, const std::string& rel) const;
    std::string Abs(const std::string& rel) const;
    void Log(Severity s, const std::string& msg) const;

    std::string root_;
    StateFile state_;
    LogFn log_;
    std::vector<StateEntry> entries_;
    std::chrono::milliseconds lock_timeout_{30000};
    bool configfs_ = false;         // root is a configfs mount, not a plain tree
    std::set<std::string> warned_;  // "exists, not ours" said once per path
};

}  // namespace chorus

#endif  // CHORUS_LIB_CONFIGFS_H_
