#include "lib/config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "lib/volume_validate.h"

namespace chorus {

namespace {

struct Entry {
    std::string value;
    int line = 0;
    bool used = false;
};

// One "[type label]" section with its keys, as written.
struct Section {
    std::string type;
    std::string label;
    int line = 0;
    std::map<std::string, Entry> keys;
};

std::string Trim(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string_view::npos)
        return "";
    size_t e = s.find_last_not_of(" \t\r");
    return std::string(s.substr(b, e - b + 1));
}

std::string SectionTitle(const Section& s) {
    return "[" + s.type + (s.label.empty() ? "" : " " + s.label) + "]";
}

// Reads typed values out of one section and remembers which keys were used
// so that the leftovers can be reported as unknown.
class SectionReader {
public:
    SectionReader(const std::string& file, Section& s) : file_(file), s_(s) {}

    [[noreturn]] void Fail(int line, const std::string& msg) const {
        throw ConfigError(file_ + ":" + std::to_string(line) + ": " + msg);
    }

    // The key's entry, or nullptr if absent (then required keys fail).
    Entry* Find(const std::string& key, bool required) {
        auto it = s_.keys.find(key);
        if (it == s_.keys.end()) {
            if (required)
                Fail(s_.line, SectionTitle(s_) + ": missing required key '" + key + "'");
            return nullptr;
        }
        it->second.used = true;
        return &it->second;
    }

    std::optional<std::string> String(const std::string& key, bool required = false) {
        Entry* e = Find(key, required);
        if (e == nullptr)
            return std::nullopt;
        return e->value;
    }

    std::optional<uint64_t> Number(const std::string& key, uint64_t min, uint64_t max,
                                   bool required = false) {
        Entry* e = Find(key, required);
        if (e == nullptr)
            return std::nullopt;
        return ParseNumber(*e, key, min, max);
    }

    uint64_t ParseNumber(const Entry& e, const std::string& key, uint64_t min, uint64_t max) {
        std::string_view v = e.value;
        int base = 10;
        if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
            base = 16;
            v.remove_prefix(2);
        }
        uint64_t n = 0;
        bool ok = !v.empty();
        for (char c : v) {
            int d = -1;
            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (base == 16 && c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (base == 16 && c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            if (d < 0 || n > (UINT64_MAX - static_cast<uint64_t>(d)) / base) {
                ok = false;
                break;
            }
            n = n * base + static_cast<uint64_t>(d);
        }
        if (!ok || n < min || n > max)
            Fail(e.line, "'" + key + "': '" + e.value + "' is not a number in " +
                             std::to_string(min) + ".." + std::to_string(max));
        return n;
    }

    std::optional<bool> Bool(const std::string& key) {
        Entry* e = Find(key, false);
        if (e == nullptr)
            return std::nullopt;
        std::string v = e->value;
        std::transform(v.begin(), v.end(), v.begin(), ::tolower);
        if (v == "yes" || v == "true" || v == "on" || v == "1")
            return true;
        if (v == "no" || v == "false" || v == "off" || v == "0")
            return false;
        Fail(e->line, "'" + key + "': '" + e->value + "' is not yes or no");
    }

    std::optional<Uuid> UuidValue(const std::string& key, bool required) {
        Entry* e = Find(key, required);
        if (e == nullptr)
            return std::nullopt;
        try {
            return ParseUuid(e->value);
        } catch (const std::exception& ex) {
            Fail(e->line, "'" + key + "': " + ex.what());
        }
    }

    int Line(const std::string& key) const {
        auto it = s_.keys.find(key);
        return it == s_.keys.end() ? s_.line : it->second.line;
    }

    // Every key of the section must have been consumed.
    void RejectUnknown() const {
        for (const auto& [key, e] : s_.keys)
            if (!e.used)
                Fail(e.line, "unknown key '" + key + "' in " + SectionTitle(s_));
    }

    const Section& section() const { return s_; }

private:
    const std::string& file_;
    Section& s_;
};

bool Printable(std::string_view s, char lo) {
    return std::all_of(s.begin(), s.end(), [lo](char c) { return c >= lo && c <= '~'; });
}

// A "[type label]" line, checked against the section types there are;
// Tokenize adds the keys that follow it.
Section ParseHeader(const std::string& line, int lineno, const std::string& file) {
    auto fail = [&](const std::string& msg) {
        throw ConfigError(file + ":" + std::to_string(lineno) + ": " + msg);
    };
    if (line.back() != ']')
        fail("section header '" + line + "' lacks a closing ']'");
    std::string inner = Trim(std::string_view(line).substr(1, line.size() - 2));
    Section s;
    s.line = lineno;
    size_t sp = inner.find_first_of(" \t");
    s.type = inner.substr(0, sp);
    if (sp != std::string::npos)
        s.label = Trim(std::string_view(inner).substr(sp));
    if (s.type.empty())
        fail("empty section name");
    bool labelled = s.type == "port" || s.type == "namespace";
    bool plain = s.type == "node" || s.type == "subsystem" || s.type == "ana" ||
                 s.type == "cluster" || s.type == "metrics";
    if (!labelled && !plain)
        fail("unknown section [" + inner + "]");
    if (labelled && s.label.empty())
        fail("section [" + s.type + "] needs a label, e.g. [" + s.type +
             (s.type == "port" ? " tcp1]" : " 1]"));
    if (plain && !s.label.empty())
        fail("section [" + s.type + "] takes no label");
    return s;
}

std::vector<Section> Tokenize(std::string_view text, const std::string& file) {
    std::vector<Section> sections;
    std::map<std::string, int> seen;  // section title -> line
    int lineno = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos)
            nl = text.size();
        std::string_view raw = text.substr(pos, nl - pos);
        pos = nl + 1;
        lineno++;
        auto fail = [&](const std::string& msg) {
            throw ConfigError(file + ":" + std::to_string(lineno) + ": " + msg);
        };

        // '#' starts a comment anywhere (no value needs one); ';' only at
        // the start of a line, as in classic INI files.
        std::string line = Trim(raw.substr(0, raw.find('#')));
        if (line.empty() || line[0] == ';')
            continue;

        if (line[0] == '[') {
            Section s = ParseHeader(line, lineno, file);
            std::string title = SectionTitle(s);
            auto [it, inserted] = seen.emplace(title, lineno);
            if (!inserted)
                fail("duplicate section " + title + " (first at line " +
                     std::to_string(it->second) + ")");
            sections.push_back(std::move(s));
            continue;
        }

        size_t eq = line.find('=');
        if (eq == std::string::npos)
            fail("expected 'key = value' or '[section]', got '" + line + "'");
        std::string key = Trim(std::string_view(line).substr(0, eq));
        std::string value = Trim(std::string_view(line).substr(eq + 1));
        if (key.empty())
            fail("missing key before '='");
        if (sections.empty())
            fail("key '" + key + "' outside of any section");
        if (value.empty())
            fail("key '" + key + "' has no value");
        Section& s = sections.back();
        auto [it, inserted] = s.keys.emplace(key, Entry{value, lineno});
        if (!inserted)
            fail("duplicate key '" + key + "' in " + SectionTitle(s) + " (first at line " +
                 std::to_string(it->second.line) + ")");
    }
    return sections;
}

Section* FindSection(std::vector<Section>& sections, const std::string& type) {
    for (Section& s : sections)
        if (s.type == type)
            return &s;
    return nullptr;
}

[[noreturn]] void MissingSection(const std::string& file, const std::string& title) {
    throw ConfigError(file + ": missing required section " + title);
}

// [node]: the node id and the controller ids this node hands out.
void ParseNode(const std::string& file, Section& s, Config& cfg) {
    SectionReader r(file, s);
    cfg.node_id = static_cast<uint32_t>(*r.Number("id", 1, kMaxNodeId, true));
    // Disjoint controller id ranges per node: the host's multipath needs
    // cntlids unique across all paths of one subsystem.
    uint32_t def_min = (cfg.node_id - 1) * 2000 + 1;
    uint32_t def_max = cfg.node_id * 2000;
    cfg.cntlid_min = static_cast<uint16_t>(r.Number("cntlid_min", 1, kMaxCntlid).value_or(def_min));
    cfg.cntlid_max = static_cast<uint16_t>(r.Number("cntlid_max", 1, kMaxCntlid).value_or(def_max));
    if (cfg.cntlid_min >= cfg.cntlid_max)
        r.Fail(r.Line("cntlid_max"), "cntlid_min (" + std::to_string(cfg.cntlid_min) +
                                         ") must be below cntlid_max (" +
                                         std::to_string(cfg.cntlid_max) + ")");
    r.RejectUnknown();
}

// [subsystem]: the NQN and what the subsystem tells hosts about itself.
void ParseSubsystem(const std::string& file, Section& s, Config& cfg) {
    SectionReader r(file, s);
    cfg.nqn = *r.String("nqn", true);
    if (std::string problem = NqnProblem(cfg.nqn); !problem.empty())
        r.Fail(r.Line("nqn"), "'nqn': " + problem);

    cfg.serial = r.String("serial").value_or(DefaultSerial(cfg.nqn));
    if (cfg.serial.size() > kMaxSerialLen || !Printable(cfg.serial, ' '))
        r.Fail(r.Line("serial"), "'serial' must be 1.." + std::to_string(kMaxSerialLen) +
                                     " printable ASCII characters");
    cfg.model = r.String("model").value_or("chorus");
    if (cfg.model.size() > kMaxModelLen || !Printable(cfg.model, ' '))
        r.Fail(r.Line("model"), "'model' must be 1.." + std::to_string(kMaxModelLen) +
                                    " printable ASCII characters");
    cfg.allow_any_host = r.Bool("allow_any_host").value_or(true);
    r.RejectUnknown();
}

// [ana]: the ANA groups, listed once each.
void ParseAna(const std::string& file, Section& s, Config& cfg) {
    SectionReader r(file, s);
    int line = r.Line("groups");
    std::string list = *r.String("groups", true);
    std::set<uint32_t> groups;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ',')) {
        Entry e{Trim(item), line};
        uint32_t g = static_cast<uint32_t>(r.ParseNumber(e, "groups", 1, kMaxAnaGroups));
        if (!groups.insert(g).second)
            r.Fail(line, "'groups': group " + std::to_string(g) + " listed twice");
    }
    cfg.ana_groups.assign(groups.begin(), groups.end());
    r.RejectUnknown();
}

// An LVM volume group name: what LVM accepts, without its reserved names.
std::string CheckPoolName(const std::string& vg) {
    if (vg.empty())
        return "";
    if (vg == "." || vg == ".." || vg[0] == '-' || vg.size() > 127)
        return "'" + vg + "' is not a volume group name";
    for (char ch : vg)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '+' && ch != '_' && ch != '.' &&
            ch != '-')
            return "'" + vg + "' is not a volume group name (letters, digits, + _ . - only)";
    return "";
}

// [cluster]: the etcd members and the session lease's timing
// (Documentation/cluster.md, "Timing").
void ParseCluster(const std::string& file, Section& s, Config& cfg) {
    SectionReader r(file, s);
    ClusterConfig c;
    int line = r.Line("etcd");
    std::stringstream ss(*r.String("etcd", true));
    std::string item;
    while (std::getline(ss, item, ',')) {
        std::string ep = Trim(item);
        if (ep.rfind("http://", 0) != 0 || ep.size() <= 7)
            r.Fail(line, "'etcd': '" + ep + "' is not an http://HOST:PORT endpoint");
        if (std::find(c.etcd.begin(), c.etcd.end(), ep) != c.etcd.end())
            r.Fail(line, "'etcd': '" + ep + "' is listed twice");
        c.etcd.push_back(ep);
    }
    c.lease_ttl_s = static_cast<uint32_t>(r.Number("lease_ttl", 2, 60).value_or(c.lease_ttl_s));
    c.lease_margin_ms =
        static_cast<uint32_t>(r.Number("lease_margin_ms", 100, 30000).value_or(c.lease_margin_ms));
    c.keepalive_ms = static_cast<uint32_t>(
        r.Number("keepalive_ms", 100, 30000).value_or(c.lease_ttl_s * 1000 / 5));
    if (c.lease_margin_ms * 2 > c.lease_ttl_s * 1000)
        r.Fail(r.Line("lease_margin_ms"),
               "'lease_margin_ms' (" + std::to_string(c.lease_margin_ms) +
                   ") must be at most half of lease_ttl (" + std::to_string(c.lease_ttl_s) + " s)");
    if (c.keepalive_ms + c.lease_margin_ms >= c.lease_ttl_s * 1000)
        r.Fail(r.Line("keepalive_ms"), "'keepalive_ms' (" + std::to_string(c.keepalive_ms) +
                                           ") plus lease_margin_ms must be below lease_ttl (" +
                                           std::to_string(c.lease_ttl_s) + " s)");
    c.address = r.String("address").value_or("");
    if (std::string why = CheckAddress(c.address); !c.address.empty() && !why.empty())
        r.Fail(r.Line("address"), "'address': " + why);
    c.port = static_cast<uint16_t>(r.Number("port", 1, 65535).value_or(c.port));
    c.pool = r.String("pool").value_or("");
    if (std::string why = CheckPoolName(c.pool); !why.empty())
        r.Fail(r.Line("pool"), "'pool': " + why);
    if (!c.pool.empty() && c.address.empty())
        r.Fail(r.Line("pool"), "'pool' needs 'address': peers must be able to reach the replicas");
    c.state_file = r.String("state_file").value_or(c.state_file);
    if (c.state_file.empty() || c.state_file[0] != '/')
        r.Fail(r.Line("state_file"),
               "'state_file': '" + c.state_file + "' is not an absolute path");
    r.RejectUnknown();
    cfg.cluster = std::move(c);
}

// "IPV4:PORT" or "[IPV6]:PORT" into host and port; false if it is neither.
bool SplitHostPort(const std::string& address, std::string& host, uint16_t& port) {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos)
        return false;
    host = address.substr(0, colon);
    std::string digits = address.substr(colon + 1);
    int family = AF_INET;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
        family = AF_INET6;
    }
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(family, host.c_str(), buf) != 1)
        return false;
    if (digits.empty() || digits.size() > 5 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    unsigned long n = std::stoul(digits);
    if (n < 1 || n > 65535)
        return false;
    port = static_cast<uint16_t>(n);
    return true;
}

// [metrics]: the address of the Prometheus endpoint. No default address:
// the section is the switch, and what it exposes is the admin's choice.
void ParseMetrics(const std::string& file, Section& s, Config& cfg) {
    SectionReader r(file, s);
    MetricsConfig m;
    m.address = *r.String("address", true);
    if (!SplitHostPort(m.address, m.host, m.port))
        r.Fail(r.Line("address"), "'address': '" + m.address +
                                      "' is not IPV4:PORT or [IPV6]:PORT (port 1..65535), "
                                      "e.g. 127.0.0.1:9653");
    r.RejectUnknown();
    cfg.metrics = std::move(m);
}

// What the [port] and [namespace] sections read so far have taken, which
// the next ones must not take again.
struct Taken {
    std::set<uint32_t> port_ids;
    std::set<std::string> endpoints;  // "tcp 10.0.0.1 4420"
    std::set<uint32_t> nsids;
    std::set<Uuid> ns_uuids;
};

// [port LABEL]; default_id is its place among the ports, from 1.
PortConfig ParsePort(const std::string& file, Section& s, uint32_t default_id, Taken& taken) {
    SectionReader r(file, s);
    PortConfig p;
    p.label = s.label;
    p.transport = *r.String("transport", true);
    if (p.transport != "tcp" && p.transport != "rdma")
        r.Fail(r.Line("transport"), "'transport': '" + p.transport + "' is not tcp or rdma");
    p.address = *r.String("address", true);
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(AF_INET, p.address.c_str(), buf) == 1)
        p.adrfam = "ipv4";
    else if (inet_pton(AF_INET6, p.address.c_str(), buf) == 1)
        p.adrfam = "ipv6";
    else
        r.Fail(r.Line("address"), "'address': '" + p.address + "' is not an IPv4 or IPv6 address");
    p.service = static_cast<uint16_t>(r.Number("service", 1, 65535).value_or(4420));
    p.id = static_cast<uint32_t>(r.Number("id", 1, 65535).value_or(default_id));
    if (!taken.port_ids.insert(p.id).second)
        r.Fail(r.Line("id"), "port id " + std::to_string(p.id) + " of " + SectionTitle(s) +
                                 " is used by another port");
    std::string ep = p.transport + " " + p.address + " " + std::to_string(p.service);
    if (!taken.endpoints.insert(ep).second)
        r.Fail(s.line, SectionTitle(s) + ": another port already listens on " + p.transport + " " +
                           p.address + ":" + std::to_string(p.service));
    r.RejectUnknown();
    return p;
}

// [namespace NSID], after [node] and [ana]: its ANA group defaults to the
// node id and must be one of [ana] groups if that section is there.
NamespaceConfig ParseNamespace(const std::string& file, Section& s, const Config& cfg, bool has_ana,
                               Taken& taken) {
    SectionReader r(file, s);
    NamespaceConfig ns;
    Entry label{s.label, s.line};
    ns.nsid = static_cast<uint32_t>(r.ParseNumber(label, "namespace id", 1, 0xfffffffe));
    if (!taken.nsids.insert(ns.nsid).second)
        r.Fail(s.line, "namespace id " + std::to_string(ns.nsid) + " is used twice");
    ns.device = *r.String("device", true);
    if (ns.device[0] != '/')
        r.Fail(r.Line("device"), "'device': '" + ns.device + "' is not an absolute path");
    ns.uuid = *r.UuidValue("uuid", true);
    if (IsNullUuid(ns.uuid))
        r.Fail(r.Line("uuid"), "'uuid' must not be the null uuid");
    if (!taken.ns_uuids.insert(ns.uuid).second)
        r.Fail(r.Line("uuid"), "'uuid' " + FormatUuid(ns.uuid) + " is used by another namespace");
    ns.nguid = r.UuidValue("nguid", false).value_or(ns.uuid);
    ns.ana_group =
        static_cast<uint32_t>(r.Number("ana_group", 1, kMaxAnaGroups).value_or(cfg.node_id));
    if (has_ana && !std::binary_search(cfg.ana_groups.begin(), cfg.ana_groups.end(), ns.ana_group))
        r.Fail(r.Line("ana_group"), "'ana_group': group " + std::to_string(ns.ana_group) +
                                        " is not listed in [ana] groups");
    r.RejectUnknown();
    return ns;
}

// Without [ana]: this node's group plus every group a namespace names.
std::vector<uint32_t> DefaultAnaGroups(const Config& cfg) {
    std::set<uint32_t> groups = {cfg.node_id};
    for (const auto& ns : cfg.namespaces)
        groups.insert(ns.ana_group);
    return std::vector<uint32_t>(groups.begin(), groups.end());
}

}  // namespace

std::string DefaultSerial(std::string_view nqn) {
    // FNV-1a, 64 bits: stable across versions, hosts and compilers, unlike
    // std::hash.
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : nqn) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

Config ParseConfig(std::string_view text, const std::string& file) {
    std::vector<Section> sections = Tokenize(text, file);
    Config cfg;
    cfg.file = file;

    // [node] first: other defaults depend on the node id.
    Section* node = FindSection(sections, "node");
    if (node == nullptr)
        MissingSection(file, "[node]");
    ParseNode(file, *node, cfg);

    Section* cluster = FindSection(sections, "cluster");
    if (cluster != nullptr)
        ParseCluster(file, *cluster, cfg);

    Section* metrics = FindSection(sections, "metrics");
    if (metrics != nullptr)
        ParseMetrics(file, *metrics, cfg);

    // Without [cluster] or [metrics] chorusd only exports: then [subsystem]
    // is required.
    Section* subsystem = FindSection(sections, "subsystem");
    if (subsystem == nullptr && cluster == nullptr && metrics == nullptr)
        MissingSection(file, "[subsystem]");
    Taken taken;
    if (subsystem == nullptr) {
        // A cluster node: its [port] sections are where the cluster's
        // exports (chorusctl cluster export) are reached.
        for (Section& s : sections) {
            if (s.type == "namespace" || s.type == "ana")
                throw ConfigError(file + ":" + std::to_string(s.line) + ": " + SectionTitle(s) +
                                  " needs a [subsystem] section (in a cluster, namespaces are "
                                  "exported with 'chorusctl cluster export')");
            if (s.type == "port") {
                auto default_id = static_cast<uint32_t>(cfg.ports.size() + 1);
                cfg.ports.push_back(ParsePort(file, s, default_id, taken));
            }
        }
        return cfg;
    }
    cfg.export_nvmet = true;
    ParseSubsystem(file, *subsystem, cfg);

    Section* ana = FindSection(sections, "ana");
    if (ana != nullptr)
        ParseAna(file, *ana, cfg);

    // In order of appearance, so that the first mistake in the file is the
    // one reported.
    for (Section& s : sections) {
        if (s.type == "port") {
            auto default_id = static_cast<uint32_t>(cfg.ports.size() + 1);
            cfg.ports.push_back(ParsePort(file, s, default_id, taken));
        } else if (s.type == "namespace") {
            cfg.namespaces.push_back(ParseNamespace(file, s, cfg, ana != nullptr, taken));
        }
    }
    if (cfg.ports.empty())
        MissingSection(file, "[port LABEL] (at least one port is needed to export anything)");

    if (ana == nullptr)
        cfg.ana_groups = DefaultAnaGroups(cfg);
    return cfg;
}

Config LoadConfig(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        throw ConfigError(path + ": cannot open: " + std::strerror(errno));
    std::stringstream buf;
    buf << in.rdbuf();
    if (in.bad())
        throw ConfigError(path + ": read error");
    return ParseConfig(buf.str(), path);
}

}  // namespace chorus
