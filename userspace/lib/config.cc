#include "lib/config.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <linux/chorus.h>

#include "lib/config_table.h"
#include "lib/errors.h"
#include "lib/etcd_tls.h"
#include "lib/peer_secret.h"
#include "lib/volume_validate.h"

namespace chorus {

namespace {

// The sections there are; [port] and [namespace] hold one table per port
// or namespace, [port.LABEL] and [namespace.NSID].
const std::set<std::string, std::less<>> kSections = {"node",    "subsystem", "ana",  "cluster",
                                                      "metrics", "iscsi",     "port", "namespace"};

bool Labelled(std::string_view section) {
    return section == "port" || section == "namespace";
}

[[noreturn]] void Fail(const std::string& file, int line, const std::string& msg) {
    throw ConfigError(file + ":" + std::to_string(line) + ": " + msg);
}

[[noreturn]] void MissingSection(const std::string& file, const std::string& title) {
    throw ConfigError(file + ": missing required section " + title);
}

// Every top-level key is a known section, written as a table, and every
// entry of [port] and [namespace] is a table of its own.
void CheckShape(const std::string& file, const toml::table& root) {
    for (const auto& [key, node] : InFileOrder(root)) {
        std::string name(key->str());
        int line = static_cast<int>(key->source().begin.line);
        if (kSections.count(name) == 0) {
            if (node->is_table())
                Fail(file, line, "unknown section [" + name + "]");
            Fail(file, line, "key '" + name + "' outside of any section");
        }
        if (!node->is_table())
            Fail(file, line,
                 "'" + name + "' must be a section, [" + name + (Labelled(name) ? ".LABEL]" : "]") +
                     ", not " + TomlTypeName(*node));
        if (!Labelled(name))
            continue;
        for (const auto& [label, entry] : InFileOrder(*node->as_table()))
            if (!entry->is_table())
                Fail(file, static_cast<int>(label->source().begin.line),
                     "key '" + std::string(label->str()) + "' in [" + name + "]: each " + name +
                         " is a section of its own, e.g. [" + name +
                         (name == "port" ? ".tcp1]" : ".1]"));
    }
}

const toml::table* Section(const toml::table& root, std::string_view name) {
    return root[name].as_table();
}

bool Printable(std::string_view s, char lo) {
    return std::all_of(s.begin(), s.end(), [lo](char c) { return c >= lo && c <= '~'; });
}

// [node]: the node id and the controller ids this node hands out.
void ParseNode(ConfigTable& t, Config& cfg) {
    cfg.node_id = static_cast<uint32_t>(*t.Integer("id", 1, kMaxNodeId, true));
    // Disjoint controller id ranges per node: the host's multipath needs
    // cntlids unique across all paths of one subsystem.
    int64_t def_min = (cfg.node_id - 1) * 2000 + 1;
    int64_t def_max = cfg.node_id * 2000;
    cfg.cntlid_min =
        static_cast<uint16_t>(t.Integer("cntlid_min", 1, kMaxCntlid).value_or(def_min));
    cfg.cntlid_max =
        static_cast<uint16_t>(t.Integer("cntlid_max", 1, kMaxCntlid).value_or(def_max));
    if (cfg.cntlid_min >= cfg.cntlid_max)
        t.Fail(t.Line("cntlid_max"), "cntlid_min (" + std::to_string(cfg.cntlid_min) +
                                         ") must be below cntlid_max (" +
                                         std::to_string(cfg.cntlid_max) + ")");
    t.RejectUnknown();
}

// [subsystem] hosts and allow_any_host: who may connect. Exactly one of the
// two, so that an export never admits every host by default and never
// admits none by mistake (nvmet takes an allow-list or allow_any_host).
void ParseHosts(ConfigTable& t, Config& cfg) {
    std::set<std::string> seen;
    for (const auto& h : t.StringArray("hosts").value_or(std::vector<Located<std::string>>{})) {
        if (std::string problem = NqnProblem(h.value); !problem.empty())
            t.Fail(h.line, "'hosts': host " + h.value + ": " + problem);
        if (!seen.insert(h.value).second)
            t.Fail(h.line, "'hosts': host " + h.value + " listed twice");
        cfg.hosts.push_back(h.value);
    }
    cfg.allow_any_host = t.Bool("allow_any_host").value_or(false);
    if (cfg.allow_any_host && !cfg.hosts.empty())
        t.Fail(t.Line("allow_any_host"),
               "'allow_any_host' is true and 'hosts' are listed: give one or the other");
    if (!cfg.allow_any_host && cfg.hosts.empty())
        t.Fail(t.Line(),
               "no host may connect: list the hosts' NQNs in 'hosts' "
               "(or set allow_any_host = true to admit every host)");
}

// [subsystem]: the NQN and what the subsystem tells hosts about itself.
void ParseSubsystem(ConfigTable& t, Config& cfg) {
    cfg.nqn = *t.String("nqn", true);
    if (std::string problem = NqnProblem(cfg.nqn); !problem.empty())
        t.Fail(t.Line("nqn"), "'nqn': " + problem);

    cfg.serial = t.String("serial").value_or(DefaultSerial(cfg.nqn));
    if (cfg.serial.size() > kMaxSerialLen || !Printable(cfg.serial, ' '))
        t.Fail(t.Line("serial"), "'serial' must be 1.." + std::to_string(kMaxSerialLen) +
                                     " printable ASCII characters");
    cfg.model = t.String("model").value_or("chorus");
    if (cfg.model.size() > kMaxModelLen || !Printable(cfg.model, ' '))
        t.Fail(t.Line("model"), "'model' must be 1.." + std::to_string(kMaxModelLen) +
                                    " printable ASCII characters");
    ParseHosts(t, cfg);
    t.RejectUnknown();
}

// [ana]: the ANA groups, listed once each.
void ParseAna(ConfigTable& t, Config& cfg) {
    std::set<uint32_t> groups;
    // A named vector: a range-for over *optional would outlive the optional.
    std::vector<Located<int64_t>> listed = *t.IntegerArray("groups", 1, kMaxAnaGroups, true);
    for (const auto& g : listed)
        if (!groups.insert(static_cast<uint32_t>(g.value)).second)
            t.Fail(g.line, "'groups': group " + std::to_string(g.value) + " listed twice");
    cfg.ana_groups.assign(groups.begin(), groups.end());
    t.RejectUnknown();
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

// [cluster] etcd: the members' endpoints, each once.
std::vector<std::string> ParseEndpoints(ConfigTable& t) {
    std::vector<std::string> out;
    std::vector<Located<std::string>> listed = *t.StringArray("etcd", true);
    for (const auto& ep : listed) {
        bool http = ep.value.rfind("http://", 0) == 0 && ep.value.size() > 7;
        bool https = ep.value.rfind("https://", 0) == 0 && ep.value.size() > 8;
        if (!http && !https)
            t.Fail(ep.line, "'etcd': '" + ep.value +
                                "' is not an http://HOST:PORT or https://HOST:PORT endpoint");
        if (std::find(out.begin(), out.end(), ep.value) != out.end())
            t.Fail(ep.line, "'etcd': '" + ep.value + "' is listed twice");
        out.push_back(ep.value);
    }
    if (out.empty())
        t.Fail(t.Line("etcd"), "'etcd' lists no endpoint");
    return out;
}

// [cluster]'s TLS files for the https members: absolute paths this process
// can read, the certificate with its key, and only with an https endpoint
// (a file given for nothing is a mistake worth reporting).
void ParseEtcdTls(ConfigTable& t, ClusterConfig& c) {
    auto file = [&t](std::string_view key) {
        std::string path = t.String(key).value_or("");
        if (path.empty())
            return path;
        if (path[0] != '/')
            t.Fail(t.Line(key),
                   "'" + std::string(key) + "': '" + path + "' is not an absolute path");
        if (std::string why = UnreadableFile(path); !why.empty())
            t.Fail(t.Line(key), "'" + std::string(key) + "': " + why);
        return path;
    };
    c.etcd_ca_file = file("etcd_ca_file");
    c.etcd_cert_file = file("etcd_cert_file");
    c.etcd_key_file = file("etcd_key_file");
    if (c.etcd_cert_file.empty() != c.etcd_key_file.empty()) {
        const char* given = c.etcd_cert_file.empty() ? "etcd_key_file" : "etcd_cert_file";
        const char* missing = c.etcd_cert_file.empty() ? "etcd_cert_file" : "etcd_key_file";
        t.Fail(t.Line(given), "'" + std::string(given) + "' needs '" + missing +
                                  "': a client certificate goes with its key");
    }
    bool https = std::any_of(c.etcd.begin(), c.etcd.end(),
                             [](const std::string& ep) { return ep.rfind("https://", 0) == 0; });
    for (const char* key : {"etcd_ca_file", "etcd_cert_file"})
        if (!https && t.Find(key, false) != nullptr)
            t.Fail(t.Line(key), "'" + std::string(key) +
                                    "' is set but no 'etcd' endpoint is https://: TLS needs "
                                    "https endpoints");
}

// [cluster]'s session lease timing (Documentation/cluster.md, "Timing").
void ParseTiming(ConfigTable& t, ClusterConfig& c) {
    c.lease_ttl_s = static_cast<uint32_t>(t.Integer("lease_ttl", 2, 60).value_or(c.lease_ttl_s));
    c.lease_margin_ms =
        static_cast<uint32_t>(t.Integer("lease_margin_ms", 100, 30000).value_or(c.lease_margin_ms));
    c.keepalive_ms = static_cast<uint32_t>(
        t.Integer("keepalive_ms", 100, 30000).value_or(c.lease_ttl_s * 1000 / 5));
    if (c.lease_margin_ms * 2 > c.lease_ttl_s * 1000)
        t.Fail(t.Line("lease_margin_ms"),
               "'lease_margin_ms' (" + std::to_string(c.lease_margin_ms) +
                   ") must be at most half of lease_ttl (" + std::to_string(c.lease_ttl_s) + " s)");
    if (c.keepalive_ms + c.lease_margin_ms >= c.lease_ttl_s * 1000)
        t.Fail(t.Line("keepalive_ms"), "'keepalive_ms' (" + std::to_string(c.keepalive_ms) +
                                           ") plus lease_margin_ms must be below lease_ttl (" +
                                           std::to_string(c.lease_ttl_s) + " s)");
    // A call to etcd has half the TTL (DaemonEtcdOptions) and starts with
    // the member that answered last: a value given must leave time for a
    // second member, or a hung one would use up every call alone. The
    // default (2000, or keepalive_ms if less) is as it always was; the
    // client cuts an attempt to the call's time left.
    c.etcd_attempt_timeout_ms = std::min<uint32_t>(2000, c.keepalive_ms);
    if (auto given = t.Integer("etcd_attempt_timeout_ms", 100, 30000)) {
        c.etcd_attempt_timeout_ms = static_cast<uint32_t>(*given);
        if (c.etcd_attempt_timeout_ms > c.lease_ttl_s * 1000 / 4)
            t.Fail(t.Line("etcd_attempt_timeout_ms"),
                   "'etcd_attempt_timeout_ms' (" + std::to_string(c.etcd_attempt_timeout_ms) +
                       ") must be at most a quarter of lease_ttl (" +
                       std::to_string(c.lease_ttl_s) +
                       " s): a call to etcd has half of it, time for two members");
    }
}

// [cluster]'s peer secret: an absolute path to a file ReadPeerSecret takes
// (owner root, mode 0600, a secret of the right size), and the rotation
// window, which means nothing without it.
void ParsePeerSecret(ConfigTable& t, ClusterConfig& c) {
    c.peer_secret_file = t.String("peer_secret_file").value_or("");
    if (!c.peer_secret_file.empty()) {
        if (c.peer_secret_file[0] != '/')
            t.Fail(t.Line("peer_secret_file"),
                   "'peer_secret_file': '" + c.peer_secret_file + "' is not an absolute path");
        try {
            ReadPeerSecret(c.peer_secret_file);
        } catch (const Error& e) {
            t.Fail(t.Line("peer_secret_file"), std::string("'peer_secret_file': ") + e.what());
        }
    }
    c.peer_secret_keep_previous_s = static_cast<uint32_t>(
        t.Integer("peer_secret_keep_previous", 0, CHORUS_AUTH_KEEP_MAX_S).value_or(0));
    if (c.peer_secret_keep_previous_s && c.peer_secret_file.empty())
        t.Fail(t.Line("peer_secret_keep_previous"),
               "'peer_secret_keep_previous' needs 'peer_secret_file'");
}

// [cluster]: the etcd members, the session lease's timing, and this node's
// part in replication.
void ParseCluster(ConfigTable& t, Config& cfg) {
    ClusterConfig c;
    c.etcd = ParseEndpoints(t);
    ParseEtcdTls(t, c);
    ParseTiming(t, c);
    c.address = t.String("address").value_or("");
    if (std::string why = CheckAddress(c.address); !c.address.empty() && !why.empty())
        t.Fail(t.Line("address"), "'address': " + why);
    c.port = static_cast<uint16_t>(t.Integer("port", 1, 65535).value_or(c.port));
    ParsePeerSecret(t, c);
    c.payload_crc = t.Bool("payload_crc").value_or(false);
    c.pool = t.String("pool").value_or("");
    if (std::string why = CheckPoolName(c.pool); !why.empty())
        t.Fail(t.Line("pool"), "'pool': " + why);
    if (!c.pool.empty() && c.address.empty())
        t.Fail(t.Line("pool"), "'pool' needs 'address': peers must be able to reach the replicas");
    c.state_file = t.String("state_file").value_or(c.state_file);
    if (c.state_file[0] != '/')
        t.Fail(t.Line("state_file"),
               "'state_file': '" + c.state_file + "' is not an absolute path");
    t.RejectUnknown();
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
void ParseMetrics(ConfigTable& t, Config& cfg) {
    MetricsConfig m;
    m.address = *t.String("address", true);
    if (!SplitHostPort(m.address, m.host, m.port))
        t.Fail(t.Line("address"), "'address': '" + m.address +
                                      "' is not IPV4:PORT or [IPV6]:PORT (port 1..65535), "
                                      "e.g. \"127.0.0.1:9653\"");
    t.RejectUnknown();
    cfg.metrics = std::move(m);
}

// One entry of [iscsi] portals: "IPV4", "IPV4:PORT", "[IPV6]" or
// "[IPV6]:PORT"; the port is 3260 unless given.
std::optional<IscsiPortal> ParsePortal(const std::string& text) {
    IscsiPortal p;
    if (SplitHostPort(text, p.host, p.port)) {
        p.ipv6 = text.front() == '[';
        return p;
    }
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(AF_INET, text.c_str(), buf) == 1) {
        p.host = text;
        return p;
    }
    if (text.size() > 2 && text.front() == '[' && text.back() == ']') {
        p.host = text.substr(1, text.size() - 2);
        p.ipv6 = true;
        if (inet_pton(AF_INET6, p.host.c_str(), buf) == 1)
            return p;
    }
    return std::nullopt;
}

// [iscsi] CHAP: a user name of printable ASCII without blanks, and an
// absolute path to a file ReadChapSecret takes; both or neither.
void ParseChap(ConfigTable& t, IscsiConfig& c) {
    c.chap_user = t.String("chap_user").value_or("");
    c.chap_secret_file = t.String("chap_secret_file").value_or("");
    if (c.chap_user.empty() != c.chap_secret_file.empty())
        t.Fail(t.Line(c.chap_user.empty() ? "chap_secret_file" : "chap_user"),
               "'chap_user' and 'chap_secret_file' go together (CHAP needs both)");
    if (c.chap_user.size() > kMaxChapSecret ||
        !std::all_of(c.chap_user.begin(), c.chap_user.end(),
                     [](char ch) { return ch >= '!' && ch <= '~'; }))
        t.Fail(t.Line("chap_user"), "'chap_user': '" + c.chap_user +
                                        "' is not 1 to 255 printable ASCII characters "
                                        "without blanks");
    if (c.chap_secret_file.empty())
        return;
    if (c.chap_secret_file[0] != '/')
        t.Fail(t.Line("chap_secret_file"),
               "'chap_secret_file': '" + c.chap_secret_file + "' is not an absolute path");
    try {
        ReadChapSecret(c.chap_secret_file);
    } catch (const Error& e) {
        t.Fail(t.Line("chap_secret_file"), std::string("'chap_secret_file': ") + e.what());
    }
}

// [iscsi]: the portals of this node's iSCSI targets, each once.
void ParseIscsi(ConfigTable& t, Config& cfg) {
    IscsiConfig c;
    std::vector<Located<std::string>> listed = *t.StringArray("portals", true);
    for (const auto& entry : listed) {
        std::optional<IscsiPortal> p = ParsePortal(entry.value);
        if (!p)
            t.Fail(entry.line, "'portals': '" + entry.value +
                                   "' is not IPV4[:PORT] or [IPV6][:PORT] (port 1..65535, "
                                   "default 3260), e.g. \"192.0.2.1:3260\"");
        for (const IscsiPortal& q : c.portals)
            if (q.Name() == p->Name())
                t.Fail(entry.line, "'portals': " + p->Name() + " is listed twice");
        c.portals.push_back(*p);
    }
    if (c.portals.empty())
        t.Fail(t.Line("portals"), "'portals' lists no portal");
    ParseChap(t, c);
    t.RejectUnknown();
    cfg.iscsi = std::move(c);
}

// What the [port] and [namespace] tables read so far have taken, which
// the next ones must not take again.
struct Taken {
    std::set<uint32_t> port_ids;
    std::set<std::string> endpoints;  // "tcp 10.0.0.1 4420"
    std::set<uint32_t> nsids;
    std::set<Uuid> ns_uuids;
};

// [port.LABEL]; default_id is its place among the ports, from 1.
PortConfig ParsePort(ConfigTable& t, std::string label, uint32_t default_id, Taken& taken) {
    PortConfig p;
    p.label = std::move(label);
    p.transport = *t.String("transport", true);
    if (p.transport != "tcp" && p.transport != "rdma")
        t.Fail(t.Line("transport"), "'transport': '" + p.transport + "' is not tcp or rdma");
    p.address = *t.String("address", true);
    unsigned char buf[sizeof(in6_addr)];
    if (inet_pton(AF_INET, p.address.c_str(), buf) == 1)
        p.adrfam = "ipv4";
    else if (inet_pton(AF_INET6, p.address.c_str(), buf) == 1)
        p.adrfam = "ipv6";
    else
        t.Fail(t.Line("address"), "'address': '" + p.address + "' is not an IPv4 or IPv6 address");
    p.service = static_cast<uint16_t>(t.Integer("service", 1, 65535).value_or(4420));
    p.id = static_cast<uint32_t>(t.Integer("id", 1, 65535).value_or(default_id));
    if (!taken.port_ids.insert(p.id).second)
        t.Fail(t.Line("id"),
               "port id " + std::to_string(p.id) + " of " + t.title() + " is used by another port");
    std::string ep = p.transport + " " + p.address + " " + std::to_string(p.service);
    if (!taken.endpoints.insert(ep).second)
        t.Fail(t.Line(), t.title() + ": another port already listens on " + p.transport + " " +
                             p.address + ":" + std::to_string(p.service));
    t.RejectUnknown();
    return p;
}

// A namespace's label: its nsid, decimal or 0x hex.
uint32_t ParseNsid(ConfigTable& t, std::string_view label) {
    std::string_view digits = label;
    int base = 10;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        digits.remove_prefix(2);
        base = 16;
    }
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n, base);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || n < 1 ||
        n > 0xfffffffe)
        t.Fail(t.Line(),
               t.title() + ": '" + std::string(label) + "' is not a namespace id in 1..4294967294");
    return static_cast<uint32_t>(n);
}

// [namespace.NSID], after [node] and [ana]: its ANA group defaults to the
// node id and must be one of [ana] groups if that section is there.
NamespaceConfig ParseNamespace(ConfigTable& t, std::string_view label, const Config& cfg,
                               bool has_ana, Taken& taken) {
    NamespaceConfig ns;
    ns.nsid = ParseNsid(t, label);
    if (!taken.nsids.insert(ns.nsid).second)
        t.Fail(t.Line(), "namespace id " + std::to_string(ns.nsid) + " is used twice");
    ns.device = *t.String("device", true);
    if (ns.device[0] != '/')
        t.Fail(t.Line("device"), "'device': '" + ns.device + "' is not an absolute path");
    auto uuid = [&t](std::string_view key, bool required) -> std::optional<Uuid> {
        std::optional<std::string> s = t.String(key, required);
        if (!s)
            return std::nullopt;
        try {
            return ParseUuid(*s);
        } catch (const std::exception& ex) {
            t.Fail(t.Line(key), "'" + std::string(key) + "': " + ex.what());
        }
    };
    ns.uuid = *uuid("uuid", true);
    if (IsNullUuid(ns.uuid))
        t.Fail(t.Line("uuid"), "'uuid' must not be the null uuid");
    if (!taken.ns_uuids.insert(ns.uuid).second)
        t.Fail(t.Line("uuid"), "'uuid' " + FormatUuid(ns.uuid) + " is used by another namespace");
    ns.nguid = uuid("nguid", false).value_or(ns.uuid);
    ns.ana_group =
        static_cast<uint32_t>(t.Integer("ana_group", 1, kMaxAnaGroups).value_or(cfg.node_id));
    if (has_ana && !std::binary_search(cfg.ana_groups.begin(), cfg.ana_groups.end(), ns.ana_group))
        t.Fail(t.Line("ana_group"), "'ana_group': group " + std::to_string(ns.ana_group) +
                                        " is not listed in [ana] groups");
    t.RejectUnknown();
    return ns;
}

// Without [ana]: this node's group plus every group a namespace names.
std::vector<uint32_t> DefaultAnaGroups(const Config& cfg) {
    std::set<uint32_t> groups = {cfg.node_id};
    for (const auto& ns : cfg.namespaces)
        groups.insert(ns.ana_group);
    return std::vector<uint32_t>(groups.begin(), groups.end());
}

// One [port.LABEL] or [namespace.NSID] table, with where it was written.
struct LabelledTable {
    std::string section;
    std::string label;
    const toml::key* key;
    const toml::table* table;
};

// Every port and namespace in the order they were written, so that the
// first mistake in the file is the one reported and ports get their
// default ids in that order.
std::vector<LabelledTable> PortsAndNamespaces(const toml::table& root) {
    std::vector<LabelledTable> out;
    for (std::string_view section : {"port", "namespace"})
        if (const toml::table* t = Section(root, section))
            for (const auto& [key, node] : InFileOrder(*t))
                out.push_back(
                    {std::string(section), std::string(key->str()), key, node->as_table()});
    std::stable_sort(out.begin(), out.end(), [](const LabelledTable& a, const LabelledTable& b) {
        return a.key->source().begin < b.key->source().begin;
    });
    return out;
}

// The [port] and [namespace] tables, into cfg. A cluster node (no
// [subsystem]) has ports, where the cluster's exports (chorusctl cluster
// export) are reached, but no namespaces of its own.
void ParsePortsAndNamespaces(const std::string& file, const toml::table& root, Config& cfg,
                             bool has_ana) {
    Taken taken;
    for (const LabelledTable& l : PortsAndNamespaces(root)) {
        ConfigTable t(file, *l.table, TableTitle(l.section, l.label));
        if (l.section == "port") {
            auto default_id = static_cast<uint32_t>(cfg.ports.size() + 1);
            cfg.ports.push_back(ParsePort(t, l.label, default_id, taken));
        } else if (!cfg.export_nvmet) {
            t.Fail(t.Line(), t.title() +
                                 " needs a [subsystem] section (in a cluster, namespaces are "
                                 "exported with 'chorusctl cluster export')");
        } else {
            cfg.namespaces.push_back(ParseNamespace(t, l.label, cfg, has_ana, taken));
        }
    }
}

}  // namespace

std::string IscsiPortal::Name() const {
    return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

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
    toml::table root = ParseToml(text, file);
    CheckShape(file, root);
    Config cfg;
    cfg.file = file;

    // [node] first: other defaults depend on the node id.
    const toml::table* node = Section(root, "node");
    if (node == nullptr)
        MissingSection(file, "[node]");
    ConfigTable node_table(file, *node, "[node]");
    ParseNode(node_table, cfg);

    const toml::table* cluster = Section(root, "cluster");
    if (cluster != nullptr) {
        ConfigTable t(file, *cluster, "[cluster]");
        ParseCluster(t, cfg);
    }
    const toml::table* metrics = Section(root, "metrics");
    if (metrics != nullptr) {
        ConfigTable t(file, *metrics, "[metrics]");
        ParseMetrics(t, cfg);
    }

    const toml::table* iscsi = Section(root, "iscsi");
    if (iscsi != nullptr) {
        ConfigTable t(file, *iscsi, "[iscsi]");
        ParseIscsi(t, cfg);
        if (cluster == nullptr)
            Fail(file, TomlLine(*iscsi),
                 "[iscsi] needs a [cluster] section (it serves the cluster's exports)");
    }

    // Without [cluster] or [metrics] chorusd only exports: then [subsystem]
    // is required.
    const toml::table* subsystem = Section(root, "subsystem");
    if (subsystem == nullptr && cluster == nullptr && metrics == nullptr)
        MissingSection(file, "[subsystem]");
    const toml::table* ana = Section(root, "ana");
    if (subsystem != nullptr) {
        cfg.export_nvmet = true;
        ConfigTable t(file, *subsystem, "[subsystem]");
        ParseSubsystem(t, cfg);
        if (ana != nullptr) {
            ConfigTable a(file, *ana, "[ana]");
            ParseAna(a, cfg);
        }
    } else if (ana != nullptr) {
        Fail(file, TomlLine(*ana),
             "[ana] needs a [subsystem] section (in a cluster, namespaces are exported with "
             "'chorusctl cluster export')");
    }

    ParsePortsAndNamespaces(file, root, cfg, ana != nullptr);
    if (!cfg.export_nvmet)
        return cfg;
    if (cfg.ports.empty())
        MissingSection(file, "[port.LABEL] (at least one port is needed to export anything)");
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
