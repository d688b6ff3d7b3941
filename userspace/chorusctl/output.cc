#include "chorusctl/output.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iomanip>

#include "lib/size.h"
#include "lib/uuid.h"

namespace chorus {

std::string DevicePath(const VolumeInfo& v) {
    return "/dev/" + v.disk_name;
}

nlohmann::json VolumeToJson(const VolumeInfo& v) {
    nlohmann::json j = {
        {"name", v.name},
        {"device", DevicePath(v)},
        {"disk_name", v.disk_name},
        {"minor", v.minor},
        {"size_bytes", v.size_bytes},
        {"block_size", v.block_size},
        {"uuid", FormatUuid(v.uuid)},
        {"state", VolumeStateName(v.state)},
        {"open_count", v.open_count},
        {"backing", v.backing_path},
    };
    if (v.stats) {
        const VolumeStats& s = *v.stats;
        j["stats"] = {
            {"reads", s.reads},       {"read_bytes", s.read_bytes},
            {"writes", s.writes},     {"write_bytes", s.write_bytes},
            {"flushes", s.flushes},   {"fua_writes", s.fua_writes},
            {"discards", s.discards}, {"write_zeroes", s.write_zeroes},
            {"errors", s.errors},
        };
    }
    return j;
}

void PrintVolumeTable(std::ostream& out, const std::vector<VolumeInfo>& volumes) {
    std::vector<std::vector<std::string>> rows = {
        {"NAME", "DEVICE", "SIZE", "BLOCK", "STATE", "BACKING"}};
    for (const auto& v : volumes)
        rows.push_back({v.name, DevicePath(v), FormatSize(v.size_bytes),
                        std::to_string(v.block_size), VolumeStateName(v.state), v.backing_path});
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); i++)
            width[i] = std::max(width[i], r[i].size());
    for (const auto& r : rows) {
        for (size_t i = 0; i < r.size(); i++) {
            if (i + 1 == r.size())
                out << r[i];  // no trailing blanks
            else
                out << std::left << std::setw(static_cast<int>(width[i] + 2)) << r[i];
        }
        out << '\n';
    }
}

void PrintVolumeStatus(std::ostream& out, const VolumeInfo& v) {
    auto line = [&](const char* key, const std::string& value) {
        out << std::left << std::setw(14) << (std::string(key) + ":") << value << '\n';
    };
    line("name", v.name);
    line("device", DevicePath(v));
    line("minor", std::to_string(v.minor));
    line("size", FormatSize(v.size_bytes) + " (" + std::to_string(v.size_bytes) + " bytes)");
    line("block size", std::to_string(v.block_size));
    line("uuid", FormatUuid(v.uuid));
    line("state", VolumeStateName(v.state));
    line("open count", std::to_string(v.open_count));
    line("backing", v.backing_path);
    if (!v.stats)
        return;
    const VolumeStats& s = *v.stats;
    out << "counters:\n";
    auto counter = [&](const char* key, uint64_t value) {
        out << "  " << std::left << std::setw(14) << (std::string(key) + ":") << value << '\n';
    };
    counter("reads", s.reads);
    counter("read bytes", s.read_bytes);
    counter("writes", s.writes);
    counter("write bytes", s.write_bytes);
    counter("flushes", s.flushes);
    counter("fua writes", s.fua_writes);
    counter("discards", s.discards);
    counter("write zeroes", s.write_zeroes);
    counter("errors", s.errors);
}

std::string FormatEventLine(const std::string& time, const VolumeInfo& v) {
    return time + " " + EventName(v.event) + " " + v.name + " " + DevicePath(v) +
           " size=" + std::to_string(v.size_bytes) + " state=" + VolumeStateName(v.state);
}

std::string NowIso8601() {
    using namespace std::chrono;
    auto now = system_clock::now();
    std::time_t t = system_clock::to_time_t(now);
    auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm;
    gmtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms));
    return buf;
}

}  // namespace chorus
