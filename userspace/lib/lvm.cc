#include "lib/lvm.h"

#include <sys/stat.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "lib/process.h"
#include "lib/size.h"

namespace chorus {

namespace {

using Json = nlohmann::json;

// Without udevd (a container, a minimal VM) LVM waits for udev to make the
// device nodes and fails when none come: then it must make them itself.
std::vector<std::string> WithUdevConfig(std::vector<std::string> argv) {
    struct stat st;
    if (stat("/run/udev/control", &st) != 0) {
        argv.insert(argv.begin() + 1, "--config");
        argv.insert(argv.begin() + 2, "activation { udev_sync = 0 udev_rules = 0 }");
    }
    return argv;
}

// LVM's commands print warnings about things that have nothing to do with
// us (other devices, a missing lvmetad); they are kept out of our parsing
// by reading only stdout and are passed on only when a command fails.
ProcessResult Lvm(const std::vector<std::string>& args) {
    std::vector<std::string> argv = WithUdevConfig(args);
    ProcessResult r = RunProcess(argv);
    if (!r.ok())
        throw LvmError(JoinArgv(argv) + " failed (exit " + std::to_string(r.exit_status) +
                       "): " + (r.err.empty() ? "no message" : r.err));
    return r;
}

// The rows of the first report named what.
Json ReportRows(std::string_view text, const char* what) {
    Json j = Json::parse(text, nullptr, false);
    if (j.is_discarded())
        throw LvmError(std::string("the ") + what + " report is not JSON");
    try {
        return j.at("report").at(0).at(what);
    } catch (const Json::exception&) {
        throw LvmError(std::string("the ") + what + " report has no report[0]." + what);
    }
}

uint64_t Number(const Json& row, const char* field) {
    try {
        std::string s = row.at(field).get<std::string>();
        size_t used = 0;
        uint64_t v = std::stoull(s, &used);
        if (used != s.size())
            throw std::invalid_argument(s);
        return v;
    } catch (const std::exception&) {
        throw LvmError(std::string("LVM reported no number for ") + field + ": " + row.dump());
    }
}

std::vector<std::string> SplitTags(const std::string& tags) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < tags.size()) {
        size_t end = tags.find(',', start);
        if (end == std::string::npos)
            end = tags.size();
        if (end > start)
            out.push_back(tags.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

}  // namespace

bool LogicalVolume::HasTag(std::string_view tag) const {
    return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

std::string ReplicaLvName(std::string_view volume) {
    return "chorus-" + std::string(volume);
}

std::string ReplicaLvTag(const Uuid& uuid) {
    return "chorus_uuid=" + FormatUuid(uuid);
}

std::vector<PoolStats> ParseVgsReport(std::string_view json) {
    std::vector<PoolStats> out;
    for (const Json& row : ReportRows(json, "vg")) {
        PoolStats s;
        s.vg = row.value("vg_name", "");
        s.size_bytes = Number(row, "vg_size");
        s.free_bytes = Number(row, "vg_free");
        s.extent_bytes = Number(row, "vg_extent_size");
        out.push_back(s);
    }
    return out;
}

std::vector<LogicalVolume> ParseLvsReport(std::string_view json) {
    std::vector<LogicalVolume> out;
    for (const Json& row : ReportRows(json, "lv")) {
        LogicalVolume lv;
        lv.name = row.value("lv_name", "");
        lv.path = row.value("lv_path", "");
        lv.size_bytes = Number(row, "lv_size");
        lv.tags = SplitTags(row.value("lv_tags", ""));
        out.push_back(lv);
    }
    return out;
}

PoolStats LvmPool::Stats() const {
    ProcessResult r = Lvm({"vgs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o",
                           "vg_name,vg_size,vg_free,vg_extent_size", vg_});
    std::vector<PoolStats> rows = ParseVgsReport(r.out);
    if (rows.size() != 1)
        throw LvmError("vgs reported " + std::to_string(rows.size()) + " groups for " + vg_);
    return rows[0];
}

std::vector<LogicalVolume> LvmPool::List() const {
    ProcessResult r = Lvm({"lvs", "--reportformat", "json", "--units", "b", "--nosuffix", "-o",
                           "lv_name,lv_path,lv_size,lv_tags", vg_});
    return ParseLvsReport(r.out);
}

std::optional<LogicalVolume> LvmPool::Find(std::string_view name) const {
    for (auto& lv : List())
        if (lv.name == name)
            return lv;
    return std::nullopt;
}

LogicalVolume LvmPool::Create(std::string_view name, uint64_t bytes,
                              const std::vector<std::string>& tags) const {
    PoolStats s = Stats();
    if (bytes > s.free_bytes)
        throw LvmError("pool " + vg_ + " has " + FormatSize(s.free_bytes) + " free, " +
                       std::string(name) + " needs " + FormatSize(bytes));
    std::vector<std::string> argv{
        "lvcreate", "--yes",  "--wipesignatures", "y",      "--zero",
        "y",        "--name", std::string(name),  "--size", std::to_string(bytes) + "b"};
    for (const auto& t : tags) {
        argv.push_back("--addtag");
        argv.push_back(t);
    }
    argv.push_back(vg_);
    Lvm(argv);
    std::optional<LogicalVolume> lv = Find(name);
    if (!lv)
        throw LvmError("lvcreate made " + std::string(name) + " in " + vg_ +
                       " but lvs does not list it");
    return *lv;
}

void LvmPool::Activate(std::string_view name) const {
    Lvm({"lvchange", "--activate", "y", vg_ + "/" + std::string(name)});
}

void LvmPool::Remove(std::string_view name) const {
    Lvm({"lvremove", "--yes", vg_ + "/" + std::string(name)});
}

void LvmPool::Rename(std::string_view name, std::string_view new_name) const {
    Lvm({"lvrename", vg_, std::string(name), std::string(new_name)});
}

}  // namespace chorus
