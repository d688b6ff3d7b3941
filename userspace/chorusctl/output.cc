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

std::string FormatEndpoint(const std::string& address, uint16_t port) {
    if (address.find(':') != std::string::npos)
        return "[" + address + "]:" + std::to_string(port);
    return address + ":" + std::to_string(port);
}

std::string FormatRate(uint64_t bytes_per_sec) {
    return FormatSize(bytes_per_sec) + "/s";
}

std::string FormatPercent(uint64_t done, uint64_t total) {
    if (total == 0)
        return "0.0%";
    // In tenths of a percent, rounded down so that 100.0% means done; long
    // double keeps 64-bit byte counts exact enough.
    long double tenths = static_cast<long double>(std::min(done, total)) * 1000 / total;
    auto t = static_cast<uint64_t>(tenths);
    return std::to_string(t / 10) + "." + std::to_string(t % 10) + "%";
}

namespace {

// Where a volume's local replica is: its backing device, or none.
std::string BackingText(const VolumeInfo& v) {
    return v.diskless ? "none (diskless access point)" : v.backing_path;
}

// Adds key: value to j if the kernel sent the value.
template <typename T>
void Put(nlohmann::json& j, const char* key, const std::optional<T>& value) {
    if (value)
        j[key] = *value;
}

std::string YesNo(bool b) {
    return b ? "yes" : "no";
}

// The peer's node id, "?" if the kernel left it out.
std::string PeerId(const PeerInfo& p) {
    return p.node_id ? std::to_string(*p.node_id) : "?";
}

// A resync is shown while the peer is syncing, or, if the kernel gave no
// replica state, while it reports one with a size.
bool ShowsResync(const PeerInfo& p) {
    if (p.repl_state)
        return *p.repl_state == CHORUS_REPL_SYNCING;
    return p.sync_total_bytes.value_or(0) > 0;
}

bool ShowsVerify(const PeerInfo& p) {
    return p.verify_running.value_or(false) || p.verify_done_bytes.value_or(0) > 0 ||
           p.verify_mismatches.value_or(0) > 0;
}

// "3", or "3 (2 waiting for it to store the activity log)".
std::string HeldText(const PeerInfo& p) {
    std::string text = std::to_string(p.held.value_or(0));
    if (p.al_waiting.value_or(0) > 0)
        text += " (" + std::to_string(*p.al_waiting) + " waiting for it to store the activity log)";
    return text;
}

// "512.00 MiB of 1.00 GiB (50.0%), 10.00 MiB/s".
std::string ResyncText(const PeerInfo& p) {
    uint64_t done = p.sync_done_bytes.value_or(0);
    std::string text = FormatSize(done);
    if (p.sync_total_bytes)
        text += " of " + FormatSize(*p.sync_total_bytes) + " (" +
                FormatPercent(done, *p.sync_total_bytes) + ")";
    if (p.sync_rate)
        text += ", " + FormatRate(*p.sync_rate);
    return text;
}

// "running, 512.00 MiB compared (50.0%), 0 mismatches".
std::string VerifyText(const PeerInfo& p, uint64_t volume_bytes) {
    uint64_t done = p.verify_done_bytes.value_or(0);
    std::string text = p.verify_running.value_or(false) ? "running" : "done";
    text += ", " + FormatSize(done) + " compared";
    if (volume_bytes > 0)
        text += " (" + FormatPercent(done, volume_bytes) + ")";
    text += ", " + std::to_string(p.verify_mismatches.value_or(0)) + " mismatches";
    return text;
}

// The transport carrying a peer's traffic: "tcp", "rdma"; "none" when no
// session does.
std::string ActiveTransportName(uint32_t transport) {
    return transport == CHORUS_TRANSPORT_UNSPEC ? "none" : TransportName(transport);
}

nlohmann::json PathToJson(const PathInfo& p) {
    nlohmann::json j = nlohmann::json::object();
    if (p.transport)
        j["transport"] = TransportName(*p.transport);
    Put(j, "active", p.active);
    Put(j, "sessions", p.sessions);
    Put(j, "failures", p.failures);
    Put(j, "msgs_sent", p.msgs_sent);
    Put(j, "bytes_sent", p.bytes_sent);
    Put(j, "last_error", p.last_error);
    return j;
}

// s followed by blanks up to width, at least one.
std::string Pad(const std::string& s, size_t width) {
    return s + std::string(s.size() < width ? width - s.size() : 1, ' ');
}

// "rdma  active  sessions 3 failures 1 msgs 1200 bytes 48.00 MiB": what the
// kernel sent of one path, transport and state padded so that paths line up.
std::string PathText(const PathInfo& p) {
    std::string text = Pad(p.transport ? TransportName(*p.transport) : "?", 6);
    if (p.active)
        text += Pad(*p.active ? "active" : "idle", 8);
    auto count = [&](const char* key, const std::optional<uint64_t>& n) {
        if (n)
            text += std::string(key) + " " + std::to_string(*n) + " ";
    };
    count("sessions", p.sessions);
    count("failures", p.failures);
    count("msgs", p.msgs_sent);
    if (p.bytes_sent)
        text += "bytes " + FormatSize(*p.bytes_sent);
    while (!text.empty() && text.back() == ' ')
        text.pop_back();
    return text;
}

// "2:connected/up-to-date", for the volume table.
std::string PeerSummary(const PeerInfo& p) {
    std::string text = PeerId(p) + ":" + (p.conn_state ? ConnStateName(*p.conn_state) : "?");
    if (p.repl_state)
        text += "/" + ReplStateName(*p.repl_state);
    if (ShowsResync(p) && p.sync_total_bytes)
        text += "(" + FormatPercent(p.sync_done_bytes.value_or(0), *p.sync_total_bytes) + ")";
    return text;
}

}  // namespace

nlohmann::json PeerToJson(const PeerInfo& p) {
    nlohmann::json j = nlohmann::json::object();
    Put(j, "node_id", p.node_id);
    Put(j, "address", p.address);
    Put(j, "port", p.port);
    if (p.transport)
        j["transport"] = TransportName(*p.transport);
    Put(j, "nr_conns", p.nr_conns);
    if (p.conn_state)
        j["conn_state"] = ConnStateName(*p.conn_state);
    if (p.repl_state)
        j["repl_state"] = ReplStateName(*p.repl_state);
    Put(j, "in_writeset", p.in_writeset);
    Put(j, "disk_failed", p.disk_failed);
    if (p.role)
        j["role"] = RoleName(*p.role);
    Put(j, "dirty_bytes", p.dirty_bytes);
    Put(j, "sync_total_bytes", p.sync_total_bytes);
    Put(j, "sync_done_bytes", p.sync_done_bytes);
    if (p.sync_total_bytes && *p.sync_total_bytes > 0) {
        uint64_t done = std::min(p.sync_done_bytes.value_or(0), *p.sync_total_bytes);
        j["sync_percent"] =
            static_cast<double>(done) * 100.0 / static_cast<double>(*p.sync_total_bytes);
    }
    Put(j, "sync_rate", p.sync_rate);
    Put(j, "writes_sent", p.writes_sent);
    Put(j, "bytes_sent", p.bytes_sent);
    Put(j, "held", p.held);
    Put(j, "al_waiting", p.al_waiting);
    Put(j, "reconnects", p.reconnects);
    Put(j, "resynced_bytes", p.resynced_bytes);
    Put(j, "verify_done_bytes", p.verify_done_bytes);
    Put(j, "verify_mismatches", p.verify_mismatches);
    Put(j, "verify_running", p.verify_running);
    Put(j, "last_error", p.last_error);
    if (p.active_transport)
        j["active_transport"] = ActiveTransportName(*p.active_transport);
    nlohmann::json paths = nlohmann::json::array();
    for (const auto& path : p.paths)
        paths.push_back(PathToJson(path));
    j["paths"] = paths;
    return j;
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
        {"diskless", v.diskless},
    };
    Put(j, "node_id", v.node_id);
    Put(j, "held_io", v.held_io);
    if (v.role)
        j["role"] = RoleName(*v.role);
    Put(j, "epoch", v.epoch);
    Put(j, "request_timeout_ms", v.request_timeout_ms);
    Put(j, "ping_interval_ms", v.ping_interval_ms);
    Put(j, "ping_timeout_ms", v.ping_timeout_ms);
    Put(j, "resync_rate", v.resync_rate);
    Put(j, "auto_degrade", v.auto_degrade);
    Put(j, "payload_crc", v.payload_crc);
    Put(j, "disk_timeout_ms", v.disk_timeout_ms);
    Put(j, "disk_error", v.disk_error);
    if (v.disk_failed_at)
        j["disk_failed_at"] = FormatUtcSeconds(*v.disk_failed_at);
    Put(j, "disk_in_writeset", v.disk_in_writeset);
    Put(j, "disk_held", v.disk_held);
    if (v.stats) {
        const VolumeStats& s = *v.stats;
        j["stats"] = {
            {"reads", s.reads},
            {"read_bytes", s.read_bytes},
            {"writes", s.writes},
            {"write_bytes", s.write_bytes},
            {"flushes", s.flushes},
            {"fua_writes", s.fua_writes},
            {"discards", s.discards},
            {"write_zeroes", s.write_zeroes},
            {"errors", s.errors},
            {"stale_epoch", s.stale_epoch},
            {"forwarded", s.forwarded},
            {"forward_resent", s.forward_resent},
            {"forward_expired", s.forward_expired},
            {"forward_served", s.forward_served},
            {"degraded_reads", s.degraded_reads},
            {"payload_crc_checked", s.payload_crc_checked},
            {"payload_crc_errors", s.payload_crc_errors},
        };
    }
    nlohmann::json peers = nlohmann::json::array();
    for (const auto& p : v.peers)
        peers.push_back(PeerToJson(p));
    j["peers"] = peers;
    if (v.peer)
        j["peer"] = PeerToJson(*v.peer);
    Put(j, "reason", v.reason);
    return j;
}

void PrintVolumeTable(std::ostream& out, const std::vector<VolumeInfo>& volumes) {
    std::vector<std::vector<std::string>> rows = {
        {"NAME", "DEVICE", "SIZE", "BLOCK", "STATE", "BACKING", "NODE", "ROLE", "EPOCH", "PEERS"}};
    for (const auto& v : volumes) {
        std::string peers;
        for (const auto& p : v.peers)
            peers += (peers.empty() ? "" : ",") + PeerSummary(p);
        rows.push_back({v.name, DevicePath(v), FormatSize(v.size_bytes),
                        std::to_string(v.block_size), VolumeStateName(v.state), BackingText(v),
                        v.node_id.value_or(0) != 0 ? std::to_string(*v.node_id) : "-",
                        v.role ? RoleName(*v.role) : "-", v.epoch ? std::to_string(*v.epoch) : "-",
                        peers.empty() ? "-" : peers});
    }
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
    // Sub-entries of a section, indented by indent.
    auto entry = [&](int indent, const char* key, const std::string& value) {
        out << std::string(indent, ' ') << std::left << std::setw(18) << (std::string(key) + ":")
            << value << '\n';
    };
    line("name", v.name);
    line("device", DevicePath(v));
    line("minor", std::to_string(v.minor));
    line("size", FormatSize(v.size_bytes) + " (" + std::to_string(v.size_bytes) + " bytes)");
    line("block size", std::to_string(v.block_size));
    line("uuid", FormatUuid(v.uuid));
    line("state", VolumeStateName(v.state));
    if (v.disk_error)
        line("disk", "failed" +
                         (v.disk_failed_at ? " at " + FormatUtcSeconds(*v.disk_failed_at) : "") +
                         ": " + *v.disk_error + "; detached" +
                         (v.disk_in_writeset.value_or(false) ? ", still in the write set" : ""));
    if (v.disk_held && *v.disk_held > 0)
        line("held writes", std::to_string(*v.disk_held) +
                                " (their local part failed; they complete once the disk leaves "
                                "the write set)");
    line("open count", std::to_string(v.open_count));
    if (v.held_io && *v.held_io > 0)
        line("held I/O", std::to_string(*v.held_io) + " requests (lease deadline passed)");
    line("backing", BackingText(v));
    if (v.node_id)  // 0: attached without one
        line("node id", *v.node_id != 0 ? std::to_string(*v.node_id) : "none");
    if (v.role)
        line("role", RoleName(*v.role));
    if (v.epoch)
        line("epoch", std::to_string(*v.epoch));
    if (v.request_timeout_ms || v.ping_interval_ms || v.ping_timeout_ms || v.resync_rate ||
        v.auto_degrade || v.payload_crc || v.disk_timeout_ms) {
        out << "tunables:\n";
        if (v.request_timeout_ms)
            entry(2, "request timeout", std::to_string(*v.request_timeout_ms) + " ms");
        if (v.ping_interval_ms)
            entry(2, "ping interval", std::to_string(*v.ping_interval_ms) + " ms");
        if (v.ping_timeout_ms)
            entry(2, "ping timeout", std::to_string(*v.ping_timeout_ms) + " ms");
        if (v.resync_rate)
            entry(2, "resync rate",
                  *v.resync_rate == 0 ? "unlimited"
                                      : FormatRate(*v.resync_rate) + " (" +
                                            std::to_string(*v.resync_rate) + " bytes/s)");
        if (v.auto_degrade)
            entry(2, "auto degrade", *v.auto_degrade ? "on" : "off");
        if (v.payload_crc)
            entry(2, "payload crc", *v.payload_crc ? "on" : "off");
        if (v.disk_timeout_ms)
            entry(2, "disk timeout",
                  *v.disk_timeout_ms == 0 ? "none" : std::to_string(*v.disk_timeout_ms) + " ms");
    }
    if (v.stats) {
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
        counter("stale epoch", s.stale_epoch);
        counter("forwarded", s.forwarded);
        counter("fwd resent", s.forward_resent);
        counter("fwd expired", s.forward_expired);
        counter("fwd served", s.forward_served);
        counter("degraded reads", s.degraded_reads);
        counter("crc checked", s.payload_crc_checked);
        counter("crc errors", s.payload_crc_errors);
    }
    if (v.peers.empty()) {
        // Only a module with replication says anything about peers.
        if (v.node_id || v.role)
            line("peers", "none");
        return;
    }
    out << "peers:\n";
    auto bytes = [](uint64_t n) { return FormatSize(n) + " (" + std::to_string(n) + " bytes)"; };
    for (const auto& p : v.peers) {
        out << "  node " << PeerId(p) << ":\n";
        if (p.address)
            entry(4, "address", p.port ? FormatEndpoint(*p.address, *p.port) : *p.address);
        if (p.transport || p.nr_conns) {
            std::string text = p.transport ? TransportName(*p.transport) : "";
            if (p.nr_conns)
                text += (text.empty() ? "" : ", ") + std::to_string(*p.nr_conns) +
                        (*p.nr_conns == 1 ? " connection" : " connections");
            entry(4, "transport", text);
        }
        if (p.active_transport)
            entry(4, "active transport", ActiveTransportName(*p.active_transport));
        if (p.conn_state)
            entry(4, "connection", ConnStateName(*p.conn_state));
        if (p.repl_state)
            entry(4, "replica", ReplStateName(*p.repl_state));
        if (p.in_writeset)
            entry(4, "in write set", YesNo(*p.in_writeset));
        if (p.disk_failed.value_or(false))
            entry(4, "disk", "failed (its writes are held until it leaves the write set)");
        if (p.role)
            entry(4, "peer role", RoleName(*p.role));
        if (p.held)
            entry(4, "held writes", HeldText(p));
        if (p.dirty_bytes)
            entry(4, "dirty", bytes(*p.dirty_bytes));
        if (ShowsResync(p))
            entry(4, "resync", ResyncText(p));
        if (p.resynced_bytes)
            entry(4, "resynced", bytes(*p.resynced_bytes));
        if (ShowsVerify(p))
            entry(4, "verify", VerifyText(p, v.size_bytes));
        if (p.reconnects)
            entry(4, "reconnects", std::to_string(*p.reconnects));
        if (p.writes_sent)
            entry(4, "writes sent", std::to_string(*p.writes_sent));
        if (p.bytes_sent)
            entry(4, "bytes sent", bytes(*p.bytes_sent));
        if (p.last_error)
            entry(4, "last error", *p.last_error);
        for (const auto& path : p.paths) {
            out << "    path " << PathText(path) << '\n';
            if (path.last_error)
                out << "      last error: " << *path.last_error << '\n';
        }
    }
}

std::string FormatEventLine(const std::string& time, const VolumeInfo& v) {
    std::string text = time + " " + EventName(v.event) + " " + v.name + " " + DevicePath(v) +
                       " size=" + std::to_string(v.size_bytes) +
                       " state=" + VolumeStateName(v.state);
    if (v.event == CHORUS_EVENT_ROLE || v.event == CHORUS_EVENT_STALE_EPOCH) {
        if (v.role)
            text += " role=" + RoleName(*v.role);
        if (v.epoch)
            text += " epoch=" + std::to_string(*v.epoch);
    }
    if (v.peer) {
        const PeerInfo& p = *v.peer;
        text += " peer=" + PeerId(p);
        if (p.conn_state)
            text += " conn=" + ConnStateName(*p.conn_state);
        if (p.repl_state)
            text += " repl=" + ReplStateName(*p.repl_state);
        if (p.in_writeset)
            text += " writeset=" + YesNo(*p.in_writeset);
        if (p.disk_failed.value_or(false))
            text += " disk=failed";
        if (v.event == CHORUS_EVENT_RESYNC) {
            if (p.sync_done_bytes)
                text += " sync_done=" + std::to_string(*p.sync_done_bytes);
            if (p.sync_total_bytes)
                text += " sync_total=" + std::to_string(*p.sync_total_bytes) + " sync_percent=" +
                        FormatPercent(p.sync_done_bytes.value_or(0), *p.sync_total_bytes);
            if (p.sync_rate)
                text += " sync_rate=" + std::to_string(*p.sync_rate);
        }
        if (v.event == CHORUS_EVENT_VERIFY) {
            if (p.verify_running)
                text += " verify=" + std::string(*p.verify_running ? "running" : "done");
            if (p.verify_done_bytes)
                text += " verify_done=" + std::to_string(*p.verify_done_bytes);
            if (p.verify_mismatches)
                text += " mismatches=" + std::to_string(*p.verify_mismatches);
        }
    }
    // JSON quoting keeps a reason with blanks or quotes on one parseable line.
    if (v.reason)
        text += " reason=" + nlohmann::json(*v.reason).dump();
    return text;
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

std::string FormatUtcSeconds(uint64_t seconds) {
    std::time_t t = static_cast<std::time_t>(seconds);
    std::tm tm;
    gmtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return buf;
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
