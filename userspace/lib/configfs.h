// Applies a ConfigfsOp plan to a directory tree (nvmet's configfs, or any
// directory in tests) and undoes exactly what it did.
//
// Every object chorusd creates and every attribute write it must undo is
// recorded, in order, in a JSON state file, saved after each step so that
// even a crash leaves an accurate record. Teardown walks the record
// backwards; objects that existed before chorusd touched them are never in
// the record and so are left alone.
#ifndef CHORUS_LIB_CONFIGFS_H_
#define CHORUS_LIB_CONFIGFS_H_

#include <functional>
#include <string>
#include <vector>

#include "lib/nvmet_plan.h"

namespace chorus {

inline constexpr const char* kDefaultConfigfsRoot = "/sys/kernel/config";
inline constexpr const char* kDefaultStateFile = "/run/chorus/nvmet.json";

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
    // Atomically replaces the file (write + rename); removes it when
    // entries is empty. Throws chorus::Error.
    void Save(const std::string& root, const std::vector<StateEntry>& entries) const;

    const std::string& path() const { return path_; }

private:
    std::string path_;
};

enum class Severity { kDebug, kInfo, kWarn };
using LogFn = std::function<void(Severity, const std::string&)>;

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

    // Applies plan. Idempotent: what already matches is left untouched. On
    // failure, undoes what this call created, then throws chorus::Error
    // naming the failed operation (file, value, errno).
    ApplyResult Apply(const std::vector<ConfigfsOp>& plan);

    // Undoes everything the state file records, newest first. Failures are
    // logged and kept in the state file; the rest is still undone.
    TeardownResult Teardown();

    const std::string& root() const { return root_; }

private:
    // Returns true if it changed something. Appends to entries_ (and saves)
    // for every change that teardown must undo.
    bool ApplyOp(const ConfigfsOp& op);
    // Undoes entries_[from..] newest first, keeping the ones that fail.
    TeardownResult UndoFrom(size_t from);
    void Record(StateEntry entry);
    bool Recorded(StateEntry::Kind kind, const std::string& rel) const;
    std::string Abs(const std::string& rel) const;
    void Log(Severity s, const std::string& msg) const;

    std::string root_;
    StateFile state_;
    LogFn log_;
    std::vector<StateEntry> entries_;
};

}  // namespace chorus

#endif  // CHORUS_LIB_CONFIGFS_H_
