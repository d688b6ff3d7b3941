#include "lib/configfs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lib/errors.h"
#include "lib/fd.h"

namespace chorus {

namespace {

constexpr int kStateVersion = 1;
// statfs f_type of configfs (fs/configfs/mount.c; not in the uapi headers).
constexpr unsigned long kConfigfsMagic = 0x62656570;

const char* KindName(StateEntry::Kind k) {
    switch (k) {
        case StateEntry::Kind::kDir:
            return "dir";
        case StateEntry::Kind::kFile:
            return "file";
        case StateEntry::Kind::kLink:
            return "link";
        case StateEntry::Kind::kWrite:
            return "write";
    }
    return "?";
}

StateEntry::Kind KindFromName(const std::string& s) {
    if (s == "dir")
        return StateEntry::Kind::kDir;
    if (s == "file")
        return StateEntry::Kind::kFile;
    if (s == "link")
        return StateEntry::Kind::kLink;
    if (s == "write")
        return StateEntry::Kind::kWrite;
    throw Error("unknown entry type '" + s + "'");
}

[[noreturn]] void ThrowErrno(const std::string& what, int errnum) {
    throw Error(what + ": " + DescribeErrno(errnum), errnum);
}

std::string TrimTrailing(std::string s) {
    while (!s.empty() &&
           (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' || s.back() == '\0'))
        s.pop_back();
    return s;
}

// Reads a small attribute file. Returns false with errno set on failure.
bool ReadAttr(const std::string& path, std::string& out) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid())
        return false;
    // configfs attributes are at most a page; read until EOF anyway.
    char buf[4096];
    out.clear();
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        if (n == 0)
            break;
        out.append(buf, static_cast<size_t>(n));
    }
    return true;
}

// Whether text, read back from op's attribute (or its read_path), shows
// op's value in place.
bool Shows(const std::string& text, const ConfigfsOp& op) {
    if (!op.shown_as.empty())
        return text.find(op.shown_as) != std::string::npos;
    // configfs shows values with a trailing newline (serial numbers
    // space-padded); compare what matters.
    return TrimTrailing(text) == op.value;
}

// Whether path is one of dirs or inside one.
bool Inside(const std::vector<std::string>& dirs, const std::string& path) {
    for (const std::string& d : dirs)
        if (path == d || path.rfind(d + "/", 0) == 0)
            return true;
    return false;
}

// In a plain tree (tests), what configfs does on rmdir: the attribute files
// of the object go with it, whoever wrote them (a test showing what LIO
// would read back).
void RemovePlainFiles(const std::string& dir) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
        if (entry.is_regular_file(ec) && !entry.is_symlink(ec))
            std::filesystem::remove(entry.path(), ec);
}

// configfs takes an attribute in a single write(); a short write is an error.
// secret: value is not named in the error (a CHAP password).
void WriteAttr(const std::string& path, const std::string& value, int flags, bool secret = false) {
    const std::string what = "write " + path + " = " + (secret ? "<secret>" : "'" + value + "'");
    Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | flags, 0644));
    if (!fd.valid())
        ThrowErrno(what, errno);
    ssize_t n;
    do {
        n = ::write(fd.get(), value.data(), value.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        ThrowErrno(what, errno);
    if (static_cast<size_t>(n) != value.size())
        throw Error(what + ": short write (" + std::to_string(n) + " of " +
                        std::to_string(value.size()) + " bytes)",
                    EIO);
}

}  // namespace

std::vector<StateEntry> StateFile::Load(const std::string& root) const {
    std::error_code ec;
    if (!std::filesystem::exists(path_, ec) && !ec)
        return {};
    std::ifstream in(path_);
    if (!in)
        ThrowErrno("cannot read state file " + path_, errno ? errno : EIO);
    std::vector<StateEntry> entries;
    try {
        nlohmann::json j = nlohmann::json::parse(in);
        if (j.at("version").get<int>() != kStateVersion)
            throw Error("unsupported version " + j.at("version").dump());
        std::string recorded_root = j.at("root").get<std::string>();
        if (recorded_root != root)
            throw Error("it records changes under " + recorded_root + ", not " + root);
        for (const auto& e : j.at("entries")) {
            entries.push_back({KindFromName(e.at("type").get<std::string>()),
                               e.at("path").get<std::string>(), e.value("value", "")});
        }
    } catch (const std::exception& ex) {
        throw Error("state file " + path_ + ": " + ex.what());
    }
    return entries;
}

void StateFile::Save(const std::string& root, const std::vector<StateEntry>& entries) const {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (entries.empty()) {
        if (!fs::remove(path_, ec) && ec)
            ThrowErrno("cannot remove state file " + path_, ec.value());
        return;
    }
    nlohmann::json j;
    j["version"] = kStateVersion;
    j["root"] = root;
    j["entries"] = nlohmann::json::array();
    for (const auto& e : entries) {
        nlohmann::json je = {{"type", KindName(e.kind)}, {"path", e.path}};
        if (e.kind == StateEntry::Kind::kWrite)
            je["value"] = e.value;
        j["entries"].push_back(je);
    }
    fs::path p(path_);
    if (p.has_parent_path()) {
        fs::create_directories(p.parent_path(), ec);
        if (ec)
            ThrowErrno("cannot create " + p.parent_path().string(), ec.value());
    }
    // Write a temporary file and rename it over the old one, so a crash
    // leaves either the old or the new record, never half of one. The
    // name is unique so that nothing else's temporary file is clobbered.
    std::string tmp = path_ + ".XXXXXX";
    std::string text = j.dump(2) + "\n";
    {
        Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));
        if (!fd.valid())
            ThrowErrno("cannot create a temporary state file " + tmp, errno);
        uint64_t off = 0;
        int err = ::fchmod(fd.get(), 0644) < 0 ? errno : 0;
        const char* what = "cannot set the mode of state file ";
        if (err == 0 && (err = PwriteAll(fd.get(), text.data(), text.size(), off)) != 0)
            what = "cannot write state file ";
        if (err == 0 && ::fsync(fd.get()) < 0) {
            err = errno;
            what = "cannot sync state file ";
        }
        if (err != 0) {
            ::unlink(tmp.c_str());
            ThrowErrno(what + tmp, err);
        }
    }
    if (::rename(tmp.c_str(), path_.c_str()) < 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        ThrowErrno("cannot rename " + tmp + " to " + path_, err);
    }
}

ConfigfsApplier::ConfigfsApplier(std::string root, std::string state_file, LogFn log)
    : root_(std::move(root)), state_(std::move(state_file)), log_(std::move(log)) {
    // Absolute, because symlink targets are written as root + path and a
    // relative target would resolve against the link's own directory.
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(root_, ec);
    if (!ec)
        root_ = abs.lexically_normal().string();
    while (root_.size() > 1 && root_.back() == '/')
        root_.pop_back();
}

std::string ConfigfsApplier::Abs(const std::string& rel) const {
    return root_ + "/" + rel;
}

void ConfigfsApplier::Log(Severity s, const std::string& msg) const {
    if (log_)
        log_(s, msg);
}

void ConfigfsApplier::Record(StateEntry entry) {
    entries_.push_back(std::move(entry));
    try {
        state_.Save(root_, entries_);
    } catch (const Error&) {
        entries_.pop_back();  // not done, so not to be undone
        throw;
    }
}

template <typename Act>
void ConfigfsApplier::RecordThen(StateEntry entry, Act act) {
    Record(std::move(entry));
    try {
        act();
    } catch (...) {
        entries_.pop_back();
        throw;
    }
}

FileLock ConfigfsApplier::Lock() const {
    namespace fs = std::filesystem;
    const std::string lock_path = state_.path() + ".lock";
    fs::path parent = fs::path(lock_path).parent_path();
    std::error_code ec;
    if (!parent.empty()) {
        fs::create_directories(parent, ec);
        if (ec)
            ThrowErrno("cannot create " + parent.string(), ec.value());
    }
    FileLock lock;
    int err = lock.Acquire(lock_path.c_str(), std::chrono::milliseconds(0));
    if (err == EWOULDBLOCK) {
        Log(Severity::kInfo, "waiting for " + lock_path + ": another chorusd run holds it");
        err = lock.Acquire(lock_path.c_str(), lock_timeout_);
    }
    if (err == EWOULDBLOCK) {
        const auto ms = lock_timeout_.count();
        const std::string waited =
            ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
        throw Error("another chorusd run holds the lock " + lock_path + " (waited " + waited +
                        "); try again when it has finished",
                    err);
    }
    if (err != 0)
        ThrowErrno("cannot lock " + lock_path, err);
    return lock;
}

bool ConfigfsApplier::Recorded(StateEntry::Kind kind, const std::string& rel) const {
    for (const auto& e : entries_)
        if (e.kind == kind && e.path == rel)
            return true;
    return false;
}

void ConfigfsApplier::DetectConfigfs() {
    struct statfs sfs;
    configfs_ = ::statfs(root_.c_str(), &sfs) == 0 &&
                static_cast<unsigned long>(sfs.f_type) == kConfigfsMagic;
}

ApplyResult ConfigfsApplier::Apply(const std::vector<ConfigfsOp>& plan) {
    struct stat st;
    if (::stat(root_.c_str(), &st) < 0 || !S_ISDIR(st.st_mode))
        throw Error("configfs root " + root_ + " is not a directory (is configfs mounted?)",
                    ENOENT);
    DetectConfigfs();
    FileLock lock = Lock();
    entries_ = state_.Load(root_);
    const size_t run_start = entries_.size();
    ApplyResult result;
    for (const ConfigfsOp& op : plan) {
        try {
            if (ApplyOp(op))
                result.changed++;
            else
                result.skipped++;
        } catch (const Error& e) {
            const size_t made = entries_.size() - run_start;
            TeardownResult undo = UndoFrom(run_start);
            std::string msg = e.what();
            if (op.path == "nvmet")
                msg += " (is the nvmet module loaded? modprobe nvmet)";
            else if (op.path == "target" || op.path == "target/iscsi")
                msg += " (is LIO's iSCSI target loaded? modprobe iscsi_target_mod)";
            msg += "; rolled back " + std::to_string(undo.undone) + " of " + std::to_string(made) +
                   " changes made by this run";
            if (undo.failed > 0)
                msg += " (" + std::to_string(undo.failed) + " could not be undone and stay in " +
                       state_.path() + ")";
            throw Error(msg, e.errnum());
        }
    }
    return result;
}

bool ConfigfsApplier::Holds(const ConfigfsOp& op) const {
    std::string current;
    return ReadAttr(Abs(op.read_path.empty() ? op.path : op.read_path), current) &&
           Shows(current, op);
}

bool ConfigfsApplier::ApplyOp(const ConfigfsOp& op) {
    const std::string path = Abs(op.path);
    struct stat st;
    switch (op.kind) {
        case ConfigfsOp::Kind::kMkdir:
        case ConfigfsOp::Kind::kEnsureDir: {
            if (::lstat(path.c_str(), &st) == 0) {
                if (!S_ISDIR(st.st_mode))
                    throw Error("mkdir " + path + ": exists and is not a directory", EEXIST);
                if (op.kind == ConfigfsOp::Kind::kMkdir &&
                    !Recorded(StateEntry::Kind::kDir, op.path) && warned_.insert(op.path).second)
                    Log(Severity::kWarn, path +
                                             " already exists and was not created by chorusd: "
                                             "reusing it, teardown will leave it in place");
                return false;
            }
            if (errno != ENOENT)
                ThrowErrno("stat " + path, errno);
            if (op.kind == ConfigfsOp::Kind::kEnsureDir && configfs_) {
                // A group configfs makes on first use (LIO's target/iscsi,
                // which loads the fabric): not ours, others may use it.
                if (::mkdir(path.c_str(), 0755) < 0)
                    ThrowErrno("mkdir " + path, errno);
                return true;
            }
            RecordThen({StateEntry::Kind::kDir, op.path, ""}, [&] {
                if (::mkdir(path.c_str(), 0755) < 0)
                    ThrowErrno("mkdir " + path, errno);
            });
            Log(Severity::kDebug, "mkdir " + path);
            return true;
        }
        case ConfigfsOp::Kind::kWrite: {
            if (Holds(op))
                return false;
            int flags = O_TRUNC;
            if (::access(path.c_str(), F_OK) < 0 && errno == ENOENT) {
                // configfs makes every attribute along with its object, so
                // a missing one is not ours to create: this nvmet lacks it.
                if (configfs_)
                    throw Error("attribute " + path + " does not exist (does this kernel have it?)",
                                ENOENT);
                // A plain tree (tests): create the file, to be removed.
                flags = O_CREAT | O_EXCL;
            }
            // Otherwise unreadable but maybe writable: let the write decide.
            const size_t before = entries_.size();
            try {
                if (flags & O_CREAT)
                    Record({StateEntry::Kind::kFile, op.path, ""});
                if (!op.undo.empty())
                    Record({StateEntry::Kind::kWrite, op.path, op.undo});
                WriteAttr(path, op.value, flags, op.secret);
            } catch (...) {
                entries_.resize(before);
                throw;
            }
            Log(Severity::kDebug, "write " + path + " = " + (op.secret ? "<secret>" : op.value));
            return true;
        }
        case ConfigfsOp::Kind::kSymlink: {
            const std::string target = Abs(op.value);
            if (::lstat(path.c_str(), &st) == 0) {
                struct stat a, b;
                if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &a) == 0 &&
                    ::stat(target.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                    return false;
                throw Error("symlink " + path + ": exists and does not point to " + target, EEXIST);
            }
            if (errno != ENOENT)
                ThrowErrno("stat " + path, errno);
            RecordThen({StateEntry::Kind::kLink, op.path, ""}, [&] {
                if (::symlink(target.c_str(), path.c_str()) < 0)
                    ThrowErrno("symlink " + path + " -> " + target, errno);
            });
            Log(Severity::kDebug, "symlink " + path + " -> " + target);
            return true;
        }
    }
    return false;
}

bool ConfigfsApplier::Undo(const StateEntry& e) {
    const std::string path = Abs(e.path);
    int rc = 0;
    std::string what;
    switch (e.kind) {
        case StateEntry::Kind::kDir:
            what = "rmdir " + path;
            if (!configfs_)
                RemovePlainFiles(path);
            rc = ::rmdir(path.c_str());
            break;
        case StateEntry::Kind::kFile:
        case StateEntry::Kind::kLink:
            what = "unlink " + path;
            rc = ::unlink(path.c_str());
            break;
        case StateEntry::Kind::kWrite:
            what = "write " + path + " = " + e.value;
            try {
                WriteAttr(path, e.value, O_TRUNC);
            } catch (const Error& ex) {
                errno = ex.errnum();
                rc = -1;
            }
            break;
    }
    if (rc < 0 && errno != ENOENT) {
        Log(Severity::kWarn, what + ": " + DescribeErrno(errno));
        return false;
    }
    Log(Severity::kDebug, what + (rc < 0 ? " (already gone)" : ""));
    return true;
}

TeardownResult ConfigfsApplier::UndoFrom(size_t from) {
    TeardownResult result;
    std::vector<StateEntry> kept;  // failed ones, newest first
    while (entries_.size() > from) {
        StateEntry e = entries_.back();
        entries_.pop_back();
        if (Undo(e)) {
            result.undone++;
        } else {
            kept.push_back(e);
            result.failed++;
        }
    }
    // Failed entries stay, oldest first, so a later teardown retries them.
    entries_.insert(entries_.end(), kept.rbegin(), kept.rend());
    try {
        state_.Save(root_, entries_);
    } catch (const Error& ex) {
        Log(Severity::kWarn, ex.what());
    }
    return result;
}

std::vector<std::string> ConfigfsApplier::ObjectsToRemake(
    const std::vector<ConfigfsOp>& plan) const {
    std::set<std::string> objects;  // what the plan makes
    for (const ConfigfsOp& op : plan)
        if (op.kind == ConfigfsOp::Kind::kMkdir)
            objects.insert(op.path);
    std::vector<std::string> dirs;
    for (const ConfigfsOp& op : plan) {
        if (op.kind != ConfigfsOp::Kind::kWrite || !op.fixed)
            continue;
        // The object the attribute belongs to: its directory, or above it
        // for an attribute in a group configfs makes (LIO's wwn/).
        std::string dir = op.path.substr(0, op.path.rfind('/'));
        while (objects.count(dir) == 0 && dir.find('/') != std::string::npos)
            dir = dir.substr(0, dir.rfind('/'));
        std::string current;
        if (ReadAttr(Abs(op.read_path.empty() ? op.path : op.read_path), current) &&
            !Shows(current, op) && Recorded(StateEntry::Kind::kDir, dir))
            dirs.push_back(dir);
    }
    return dirs;
}

void ConfigfsApplier::AddLinksToRemake(
    const std::vector<ConfigfsOp>& plan,
    const std::set<std::pair<StateEntry::Kind, std::string>>& wanted,
    std::vector<std::string>& remake) const {
    // A link to a remade object (LIO's LUN to its backstore) goes too:
    // configfs refuses to remove an object while a link points at it.
    for (const ConfigfsOp& op : plan)
        if (op.kind == ConfigfsOp::Kind::kSymlink && Inside(remake, op.value))
            remake.push_back(op.path);
    // And a link to an object in which a link goes (an ACL's mapped LUN to
    // the LUN whose link to its backstore goes): LIO forgets the mapping
    // with the LUN's link, and only a new link makes it again.
    std::set<std::string> emptied;
    for (const StateEntry& e : entries_)
        if (e.kind == StateEntry::Kind::kLink &&
            (wanted.count({e.kind, e.path}) == 0 || Inside(remake, e.path)))
            emptied.insert(e.path.substr(0, e.path.rfind('/')));
    for (const ConfigfsOp& op : plan)
        if (op.kind == ConfigfsOp::Kind::kSymlink && emptied.count(op.value) > 0)
            remake.push_back(op.path);
}

TeardownResult ConfigfsApplier::Prune(const std::vector<ConfigfsOp>& plan) {
    DetectConfigfs();
    FileLock lock = Lock();
    entries_ = state_.Load(root_);
    std::set<std::pair<StateEntry::Kind, std::string>> wanted;
    for (const ConfigfsOp& op : plan) {
        switch (op.kind) {
            case ConfigfsOp::Kind::kMkdir:
            case ConfigfsOp::Kind::kEnsureDir:
                wanted.emplace(StateEntry::Kind::kDir, op.path);
                break;
            case ConfigfsOp::Kind::kSymlink:
                wanted.emplace(StateEntry::Kind::kLink, op.path);
                break;
            case ConfigfsOp::Kind::kWrite:
                wanted.emplace(StateEntry::Kind::kFile, op.path);
                if (!op.undo.empty())
                    wanted.emplace(StateEntry::Kind::kWrite, op.path);
                break;
        }
    }
    std::vector<std::string> remake = ObjectsToRemake(plan);
    for (const std::string& d : remake)
        Log(Severity::kInfo, Abs(d) + ": an attribute fixed once enabled must change: remaking it");
    AddLinksToRemake(plan, wanted, remake);
    TeardownResult result;
    std::vector<StateEntry> kept;  // newest first
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
        if (wanted.count({it->kind, it->path}) > 0 && !Inside(remake, it->path)) {
            kept.push_back(*it);
        } else if (Undo(*it)) {
            result.undone++;
        } else {
            kept.push_back(*it);
            result.failed++;
        }
    }
    if (result.undone == 0 && result.failed == 0)
        return result;
    entries_.assign(kept.rbegin(), kept.rend());
    try {
        state_.Save(root_, entries_);
    } catch (const Error& ex) {
        Log(Severity::kWarn, ex.what());
    }
    return result;
}

TeardownResult ConfigfsApplier::Teardown() {
    DetectConfigfs();
    FileLock lock = Lock();
    entries_ = state_.Load(root_);
    if (entries_.empty())
        Log(Severity::kInfo, "nothing to tear down (" + state_.path() + " records no changes)");
    return UndoFrom(0);
}

}  // namespace chorus
