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

namespace {

std::string Hex64(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
    return buf;
}

std::string PeerFlagsText(uint32_t flags) {
    std::string out;
    auto add = [&](const std::string& word) { out += (out.empty() ? "" : ",") + word; };
    if ((flags & CHORUS_META_PEER_OUT_OF_DATE) != 0)
        add("out-of-date");
    if ((flags & CHORUS_META_PEER_FULL_SYNC) != 0)
        add("full-sync");
    uint32_t unknown = flags & ~(CHORUS_META_PEER_OUT_OF_DATE | CHORUS_META_PEER_FULL_SYNC);
    if (unknown != 0) {
        char buf[16];
        std::snprintf(buf, sizeof(buf), "0x%x", unknown);
        add(buf);
    }
    return out.empty() ? "none" : out;
}

// Where the metadata area starts: the superblock counts it back from the
// device's end rounded down to CHORUS_META_BLOCK.
uint64_t MetaOffsetBytes(const MetaSuper& s) {
    uint64_t end = s.device_sectors * 512 / CHORUS_META_BLOCK * CHORUS_META_BLOCK;
    return end - s.md_sectors * 512;
}

}  // namespace

nlohmann::json MetaSuperToJson(const MetaSuper& s) {
    nlohmann::json peers = nlohmann::json::array();
    for (size_t i = 0; i < s.peers.size(); i++) {
        const MetaPeer& p = s.peers[i];
        if (p.node_id == 0)
            continue;
        peers.push_back({{"slot", i},
                         {"node_id", p.node_id},
                         {"flags", p.flags},
                         {"bitmap_gen", p.bitmap_gen}});
    }
    return {
        {"uuid", FormatUuid(s.volume_uuid)},
        {"version", s.version},
        {"flags", s.flags},
        {"clean", (s.flags & CHORUS_META_F_CLEAN) != 0},
        {"seq", s.seq},
        {"node_id", s.node_id},
        {"block_size", s.block_size},
        {"size_bytes", s.data_sectors * 512},
        {"data_sectors", s.data_sectors},
        {"md_sectors", s.md_sectors},
        {"md_bytes", s.md_sectors * 512},
        {"md_offset_bytes", MetaOffsetBytes(s)},
        {"device_sectors", s.device_sectors},
        {"device_bytes", s.device_sectors * 512},
        {"highest_epoch", s.highest_epoch},
        {"current_gen", s.current_gen},
        {"bm_shift", s.bm_shift},
        {"al_extent_shift", s.al_extent_shift},
        {"al_slots", s.al_slots},
        {"max_peers", s.max_peers},
        {"al_offset_sectors", s.al_offset_sectors},
        {"bm_offset_sectors", s.bm_offset_sectors},
        {"bm_slot_sectors", s.bm_slot_sectors},
        {"peers", peers},
    };
}

std::string MetaFlagsText(uint32_t flags) {
    std::string out = (flags & CHORUS_META_F_CLEAN) != 0 ? "clean" : "dirty";
    uint32_t unknown = flags & ~static_cast<uint32_t>(CHORUS_META_F_CLEAN);
    if (unknown != 0) {
        char buf[16];
        std::snprintf(buf, sizeof(buf), ",0x%x", unknown);
        out += buf;
    }
    return out;
}

void PrintMetaInspect(std::ostream& out, const std::string& backing, const MetaRead& m) {
    const MetaSuper& s = m.super;
    auto line = [&](const char* key, const std::string& value) {
        out << std::left << std::setw(16) << (std::string(key) + ":") << value << '\n';
    };
    auto bytes = [](uint64_t n) { return FormatSize(n) + " (" + std::to_string(n) + " bytes)"; };
    line("backing", backing);
    line("volume uuid", FormatUuid(s.volume_uuid));
    line("size", bytes(s.data_sectors * 512));
    line("block size", std::to_string(s.block_size));
    line("device size", bytes(s.device_sectors * 512));
    line("metadata",
         FormatSize(s.md_sectors * 512) + " at byte " + std::to_string(MetaOffsetBytes(s)));
    line("bitmaps", std::to_string(s.max_peers) + " x " + FormatSize(s.bm_slot_sectors * 512) +
                        ", " + FormatSize(uint64_t{1} << s.bm_shift) + " per bit");
    line("activity log", std::to_string(s.al_slots) + " blocks, " +
                             FormatSize(uint64_t{1} << s.al_extent_shift) + " per extent");
    line("node id", std::to_string(s.node_id));
    line("highest epoch", std::to_string(s.highest_epoch));
    line("current gen", Hex64(s.current_gen));
    line("flags", MetaFlagsText(s.flags));
    line("seq", std::to_string(s.seq));
    for (int i = 0; i < 2; i++) {
        const DecodeResult& c = m.copies[i];
        std::string state = c.ok() ? "valid, seq " + std::to_string(c.super.seq) : c.reason;
        if (i == m.current)
            state += " (current)";
        line(i == 0 ? "superblock A" : "superblock B", state);
    }
    bool any = false;
    for (size_t i = 0; i < s.peers.size(); i++) {
        const MetaPeer& p = s.peers[i];
        if (p.node_id == 0)
            continue;
        if (!any)
            out << "peers:\n";
        any = true;
        out << "  slot " << i << ": node " << p.node_id << ", flags " << PeerFlagsText(p.flags)
            << ", bitmap gen " << Hex64(p.bitmap_gen) << '\n';
    }
    if (!any)
        line("peers", "none");
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
