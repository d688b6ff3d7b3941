// chorusd config file parsing.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <regex>
#include <string>

#include "lib/config.h"
#include "test_util.h"

namespace chorus {
namespace {

// Line numbers matter: tests below refer to them.
const char kValid[] =
    "# /etc/chorus/chorusd.conf\n"                       // 1
    "[node]\n"                                           // 2
    "id = 2                 # this node\n"               // 3
    "\n"                                                 // 4
    "[subsystem]\n"                                      // 5
    "nqn = \"nqn.2026-11.org.chorus:demo\"\n"            // 6
    "hosts = [\"nqn.2026-11.org.chorus:host1\"]\n"       // 7
    "[port.tcp1]\n"                                      // 8
    "transport = \"tcp\"\n"                              // 9
    "address = \"10.99.0.2\"\n"                          // 10
    "\n"                                                 // 11
    "[port.rdma1]\n"                                     // 12
    "transport = \"rdma\"\n"                             // 13
    "address = \"fd00::2\"\n"                            // 14
    "service = 4421\n"                                   // 15
    "\n"                                                 // 16
    "[ana]\n"                                            // 17
    "groups = [1, 2,3]\n"                                // 18
    "\n"                                                 // 19
    "[namespace.1]\n"                                    // 20
    "device = \"/dev/chorus/vol0\"\n"                    // 21
    "uuid = \"3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f\"\n"  // 22
    "\n"                                                 // 23
    "[namespace.7]\n"                                    // 24
    "device = \"/dev/chorus/vol1\"\n"                    // 25
    "uuid = \"11111111-2222-3333-4444-555555555555\"\n"  // 26
    "nguid = \"66666666777788889999aaaaaaaaaaaa\"\n"     // 27
    "ana_group = 3\n";                                   // 28

Config Parse(const std::string& text) {
    return ParseConfig(text, "test.conf");
}

// Expects a ConfigError whose message matches the regex.
void ExpectError(const std::string& text, const std::string& pattern) {
    try {
        Parse(text);
        ADD_FAILURE() << "no error, expected /" << pattern << "/ for:\n" << text;
    } catch (const ConfigError& e) {
        EXPECT_TRUE(std::regex_search(e.what(), std::regex(pattern)))
            << "message: " << e.what() << "\nexpected: /" << pattern << "/";
    }
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
    size_t pos = text.find(from);
    EXPECT_NE(pos, std::string::npos) << from;
    return text.replace(pos, from.size(), to);
}

TEST(Config, ParsesFullExample) {
    Config c = Parse(kValid);
    EXPECT_EQ(c.node_id, 2u);
    EXPECT_EQ(c.cntlid_min, 2001);
    EXPECT_EQ(c.cntlid_max, 4000);
    EXPECT_EQ(c.nqn, "nqn.2026-11.org.chorus:demo");
    EXPECT_EQ(c.serial, DefaultSerial(c.nqn));
    EXPECT_EQ(c.serial.size(), 16u);
    EXPECT_EQ(c.model, "chorus");
    EXPECT_EQ(c.hosts, (std::vector<std::string>{"nqn.2026-11.org.chorus:host1"}));
    EXPECT_FALSE(c.allow_any_host);

    ASSERT_EQ(c.ports.size(), 2u);
    EXPECT_EQ(c.ports[0].label, "tcp1");
    EXPECT_EQ(c.ports[0].transport, "tcp");
    EXPECT_EQ(c.ports[0].address, "10.99.0.2");
    EXPECT_EQ(c.ports[0].adrfam, "ipv4");
    EXPECT_EQ(c.ports[0].service, 4420);
    EXPECT_EQ(c.ports[0].id, 1u);
    EXPECT_EQ(c.ports[1].transport, "rdma");
    EXPECT_EQ(c.ports[1].adrfam, "ipv6");
    EXPECT_EQ(c.ports[1].service, 4421);
    EXPECT_EQ(c.ports[1].id, 2u);

    EXPECT_EQ(c.ana_groups, (std::vector<uint32_t>{1, 2, 3}));

    ASSERT_EQ(c.namespaces.size(), 2u);
    EXPECT_EQ(c.namespaces[0].nsid, 1u);
    EXPECT_EQ(c.namespaces[0].device, "/dev/chorus/vol0");
    EXPECT_EQ(FormatUuid(c.namespaces[0].uuid), "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
    EXPECT_EQ(c.namespaces[0].nguid, c.namespaces[0].uuid);  // default
    EXPECT_EQ(c.namespaces[0].ana_group, 2u);                // default: node id
    EXPECT_EQ(c.namespaces[1].nsid, 7u);
    EXPECT_EQ(FormatUuid(c.namespaces[1].nguid), "66666666-7777-8888-9999-aaaaaaaaaaaa");
    EXPECT_EQ(c.namespaces[1].ana_group, 3u);
}

TEST(Config, ExplicitValuesOverrideDefaults) {
    std::string text = Replace(kValid, "id = 2                 # this node\n",
                               "id = 32\ncntlid_min = 100\ncntlid_max = 0xffef\n");
    text = Replace(text, "org.chorus:demo\"\n",
                   "org.chorus:demo\"\nserial = \"SN1\"\nmodel = \"chorus test\"\n"
                   "allow_any_host = false\n");
    text = Replace(text, "service = 4421\n", "service = 4421\nid = 9\n");
    text = Replace(text, "groups = [1, 2,3]", "groups = [1, 2, 3, 32]");
    Config c = Parse(text);
    EXPECT_EQ(c.node_id, 32u);
    EXPECT_EQ(c.cntlid_min, 100);
    EXPECT_EQ(c.cntlid_max, 0xffef);
    EXPECT_EQ(c.serial, "SN1");
    EXPECT_EQ(c.model, "chorus test");
    EXPECT_FALSE(c.allow_any_host);
    EXPECT_EQ(c.ports[1].id, 9u);
}

// Who may connect: a host list or allow_any_host, exactly one of them.
TEST(Config, HostsOrAllowAnyHost) {
    const std::string hosts = "hosts = [\"nqn.2026-11.org.chorus:host1\"]\n";
    Config any = Parse(Replace(kValid, hosts, "allow_any_host = true\n"));
    EXPECT_TRUE(any.allow_any_host);
    EXPECT_TRUE(any.hosts.empty());
    Config two = Parse(Replace(
        kValid, hosts, "hosts = [\"nqn.2026-11.org.chorus:b\", \"nqn.2026-11.org.chorus:a\"]\n"));
    EXPECT_EQ(two.hosts,
              (std::vector<std::string>{"nqn.2026-11.org.chorus:b", "nqn.2026-11.org.chorus:a"}));

    ExpectError(Replace(kValid, hosts, "\n"),
                "^test\\.conf:5: no host may connect: list the hosts' NQNs in 'hosts' \\(or set "
                "allow_any_host = true to admit every host\\)$");
    ExpectError(Replace(kValid, hosts, "allow_any_host = false\n"), "^test\\.conf:5: no host may");
    ExpectError(Replace(kValid, hosts, "hosts = []\n"), "^test\\.conf:5: no host may");
    ExpectError(Replace(kValid, "[port.tcp1]", "allow_any_host = true\n[port.tcp1]"),
                "^test\\.conf:8: 'allow_any_host' is true and 'hosts' are listed: give one or "
                "the other$");
    ExpectError(Replace(kValid, hosts, "hosts = [\"host1\"]\n"),
                "^test\\.conf:7: 'hosts': host host1: .*'nqn\\.'");
    ExpectError(
        Replace(kValid, hosts,
                "hosts = [\"nqn.2026-11.org.chorus:a\",\n  \"nqn.2026-11.org.chorus:a\"]\n"),
        "^test\\.conf:8: 'hosts': host nqn.2026-11.org.chorus:a listed twice$");
    ExpectError(Replace(kValid, hosts, "hosts = \"nqn.2026-11.org.chorus:a\"\n"),
                "^test\\.conf:7: 'hosts': ");
}

TEST(Config, DefaultCntlidRangesAreDisjoint) {
    uint32_t prev_max = 0;
    for (int id = 1; id <= 32; id++) {
        std::string text = Replace(kValid, "[ana]\ngroups = [1, 2,3]\n", "");
        text = Replace(text, "ana_group = 3\n", "");
        Config c = Parse(Replace(text, "id = 2 ", "id = " + std::to_string(id) + " "));
        EXPECT_GT(c.cntlid_min, prev_max);
        EXPECT_LT(c.cntlid_min, c.cntlid_max);
        EXPECT_LE(c.cntlid_max, kMaxCntlid);
        prev_max = c.cntlid_max;
    }
}

TEST(Config, SerialDefaultIsStable) {
    // Every node must derive the same serial from the same NQN.
    EXPECT_EQ(DefaultSerial("nqn.2026-11.org.chorus:demo"),
              DefaultSerial("nqn.2026-11.org.chorus:demo"));
    EXPECT_NE(DefaultSerial("nqn.2026-11.org.chorus:demo"),
              DefaultSerial("nqn.2026-11.org.chorus:demo2"));
}

TEST(Config, WithoutAnaSectionGroupsComeFromNodeAndNamespaces) {
    std::string text = Replace(kValid, "[ana]\ngroups = [1, 2,3]\n", "");
    Config c = Parse(text);
    EXPECT_EQ(c.ana_groups, (std::vector<uint32_t>{2, 3}));
}

// Ports get their default ids, and errors are reported, in the order the
// file lists them, not in toml++'s (sorted by key).
TEST(Config, PortsAndNamespacesKeepTheFilesOrder) {
    Config c = Parse(std::string(kValid) +
                     "[port.a0]\ntransport = \"tcp\"\naddress = \"10.99.0.9\"\n"
                     "[namespace.3]\ndevice = \"/dev/x\"\n"
                     "uuid = \"22222222-2222-3333-4444-555555555555\"\n");
    ASSERT_EQ(c.ports.size(), 3u);
    EXPECT_EQ(c.ports[0].label, "tcp1");
    EXPECT_EQ(c.ports[1].label, "rdma1");
    EXPECT_EQ(c.ports[2].label, "a0");
    EXPECT_EQ(c.ports[2].id, 3u);
    ASSERT_EQ(c.namespaces.size(), 3u);
    EXPECT_EQ(c.namespaces[2].nsid, 3u);
    // Two mistakes: the one on the earlier line is reported.
    ExpectError(Replace(Replace(kValid, "transport = \"rdma\"", "transport = \"fc\""),
                        "/dev/chorus/vol0", "vol0"),
                "^test\\.conf:13: 'transport'");
}

struct MissingCase {
    const char* name;     // test name suffix
    const char* remove;   // line to delete from kValid
    const char* pattern;  // expected message
};

class ConfigMissingKey : public testing::TestWithParam<MissingCase> {};

TEST_P(ConfigMissingKey, NamesFileLineAndKey) {
    ExpectError(Replace(kValid, GetParam().remove, ""), GetParam().pattern);
}

INSTANTIATE_TEST_SUITE_P(
    Required, ConfigMissingKey,
    testing::Values(
        MissingCase{"NodeId", "id = 2                 # this node\n",
                    "^test\\.conf:2: \\[node\\]: missing required key 'id'$"},
        MissingCase{"SubsystemNqn", "nqn = \"nqn.2026-11.org.chorus:demo\"\n",
                    "^test\\.conf:5: \\[subsystem\\]: missing required key 'nqn'$"},
        MissingCase{"PortTransport", "transport = \"tcp\"\n",
                    "^test\\.conf:8: \\[port\\.tcp1\\]: missing required key 'transport'$"},
        MissingCase{"PortAddress", "address = \"fd00::2\"\n",
                    "^test\\.conf:12: \\[port\\.rdma1\\]: missing required key 'address'$"},
        MissingCase{"AnaGroups", "groups = [1, 2,3]\n",
                    "^test\\.conf:17: \\[ana\\]: missing required key 'groups'$"},
        MissingCase{"NamespaceDevice", "device = \"/dev/chorus/vol0\"\n",
                    "^test\\.conf:20: \\[namespace\\.1\\]: missing required key 'device'$"},
        MissingCase{"NamespaceUuid", "uuid = \"11111111-2222-3333-4444-555555555555\"\n",
                    "^test\\.conf:24: \\[namespace\\.7\\]: missing required key 'uuid'$"}),
    [](const testing::TestParamInfo<MissingCase>& info) { return std::string(info.param.name); });

TEST(Config, MissingSections) {
    ExpectError(Replace(kValid, "[node]\nid = 2                 # this node\n", ""),
                "^test\\.conf: missing required section \\[node\\]");
    ExpectError(Replace(kValid,
                        "[subsystem]\nnqn = \"nqn.2026-11.org.chorus:demo\"\n"
                        "hosts = [\"nqn.2026-11.org.chorus:host1\"]\n",
                        ""),
                "^test\\.conf: missing required section \\[subsystem\\]");
    std::string no_ports =
        Replace(kValid, "[port.tcp1]\ntransport = \"tcp\"\naddress = \"10.99.0.2\"\n", "");
    no_ports =
        Replace(no_ports,
                "[port.rdma1]\ntransport = \"rdma\"\naddress = \"fd00::2\"\nservice = 4421\n", "");
    ExpectError(no_ports, "^test\\.conf: missing required section \\[port\\.LABEL\\]");
}

const char kClusterOnly[] =
    "[node]\n"
    "id = 3\n"
    "[cluster]\n"
    "etcd = [\"http://10.99.0.1:2379\", \"http://10.99.0.2:2379\"]\n";

TEST(Config, ClusterSectionWithDefaultsAndNoExport) {
    Config c = Parse(kClusterOnly);
    ASSERT_TRUE(c.cluster);
    EXPECT_FALSE(c.export_nvmet);
    EXPECT_EQ(c.cluster->etcd,
              (std::vector<std::string>{"http://10.99.0.1:2379", "http://10.99.0.2:2379"}));
    EXPECT_EQ(c.cluster->lease_ttl_s, 5u);
    EXPECT_EQ(c.cluster->lease_margin_ms, 1000u);
    EXPECT_EQ(c.cluster->keepalive_ms, 1000u);
    EXPECT_EQ(c.cluster->state_file, "/run/chorus/session.json");
    EXPECT_FALSE(Parse(kValid).cluster);
    EXPECT_TRUE(Parse(kValid).export_nvmet);
}

TEST(Config, ClusterTimingIsChecked) {
    Config c = Parse(std::string(kClusterOnly) + "lease_ttl = 10\n");
    EXPECT_EQ(c.cluster->keepalive_ms, 2000u);  // a fifth of the TTL
    ExpectError(std::string(kClusterOnly) + "lease_ttl = 1\n",
                "^test\\.conf:5: 'lease_ttl': 1 is not in 2\\.\\.60$");
    ExpectError(std::string(kClusterOnly) + "lease_margin_ms = 3000\n",
                "^test\\.conf:5: 'lease_margin_ms' \\(3000\\) must be at most half of lease_ttl");
    ExpectError(std::string(kClusterOnly) + "keepalive_ms = 4500\n",
                "^test\\.conf:5: 'keepalive_ms' \\(4500\\) plus lease_margin_ms must be below");
    // Default: 2000 or keepalive_ms, whichever is less, never refused.
    EXPECT_EQ(
        Parse(std::string(kClusterOnly) + "lease_ttl = 20\n").cluster->etcd_attempt_timeout_ms,
        2000u);
    EXPECT_EQ(Parse(kClusterOnly).cluster->etcd_attempt_timeout_ms, 1000u);
    EXPECT_EQ(Parse(std::string(kClusterOnly) +
                    "lease_ttl = 2\nlease_margin_ms = 100\nkeepalive_ms = 1500\n")
                  .cluster->etcd_attempt_timeout_ms,
              1500u);
    EXPECT_EQ(Parse(std::string(kClusterOnly) + "lease_ttl = 20\netcd_attempt_timeout_ms = 5000\n")
                  .cluster->etcd_attempt_timeout_ms,
              5000u);
    ExpectError(std::string(kClusterOnly) + "etcd_attempt_timeout_ms = 1500\n",
                "^test\\.conf:5: 'etcd_attempt_timeout_ms' \\(1500\\) must be at most a quarter of "
                "lease_ttl \\(5 s\\): a call to etcd has half of it, time for two members$");
    ExpectError(std::string(kClusterOnly) + "etcd_attempt_timeout_ms = 50\n",
                "^test\\.conf:5: 'etcd_attempt_timeout_ms': 50 is not in 100\\.\\.30000$");
    ExpectError(std::string(kClusterOnly) + "state_file = \"run/x\"\n",
                "^test\\.conf:5: 'state_file': 'run/x' is not an absolute path$");
    ExpectError(std::string(kClusterOnly) + "frobnicate = 1\n",
                "^test\\.conf:5: unknown key 'frobnicate' in \\[cluster\\]$");
}

TEST(Config, ClusterEndpointsAreChecked) {
    ExpectError(Replace(kClusterOnly, "http://10.99.0.2:2379", "10.99.0.2:2379"),
                "^test\\.conf:4: 'etcd': '10.99.0.2:2379' is not an http://HOST:PORT or "
                "https://HOST:PORT endpoint$");
    ExpectError(Replace(kClusterOnly, "http://10.99.0.2:2379", "http://10.99.0.1:2379"),
                "^test\\.conf:4: 'etcd': 'http://10.99.0.1:2379' is listed twice$");
    ExpectError("[node]\nid = 1\n[cluster]\n",
                "^test\\.conf:3: \\[cluster\\]: missing required key 'etcd'$");
    ExpectError("[node]\nid = 1\n[cluster]\netcd = []\n",
                "^test\\.conf:4: 'etcd' lists no endpoint$");
    // One string is not a list: the old comma-separated spelling.
    ExpectError("[node]\nid = 1\n[cluster]\netcd = \"http://a:1, http://b:2\"\n",
                "^test\\.conf:4: 'etcd': expected an array of strings, e.g. .*, got a string$");
    ExpectError("[node]\nid = 1\n[cluster]\netcd = [\"http://a:1\", 2]\n",
                "^test\\.conf:4: 'etcd': expected a string \\(in quotes\\), got an integer$");
    // An element on its own line is named by its line.
    ExpectError("[node]\nid = 1\n[cluster]\netcd = [\n  \"http://a:1\",\n  \"b:2\",\n]\n",
                "^test\\.conf:6: 'etcd': 'b:2' is not");
}

// payload_crc: off unless the [cluster] section says so; a boolean only.
TEST(Config, ClusterPayloadCrc) {
    const std::string head = std::string(kClusterOnly);
    EXPECT_FALSE(Parse(head).cluster->payload_crc);
    EXPECT_TRUE(Parse(head + "payload_crc = true\n").cluster->payload_crc);
    EXPECT_FALSE(Parse(head + "payload_crc = false\n").cluster->payload_crc);
    ExpectError(head + "payload_crc = \"on\"\n", "^test\\.conf:5: 'payload_crc': expected");
}

// The replication peer secret: a root-owned file of mode 0600, checked when
// the config is loaded, and the rotation window.
TEST(Config, ClusterPeerSecret) {
    if (geteuid() != 0)
        GTEST_SKIP() << "a peer secret file must be owned by root";
    test::TempDir dir;
    std::string key = dir / "peer.key";
    test::WriteFile(key, "0123456789abcdef0123456789abcdef\n");
    ASSERT_EQ(chmod(key.c_str(), 0600), 0);
    const std::string head = std::string(kClusterOnly);
    Config c =
        Parse(head + "peer_secret_file = \"" + key + "\"\npeer_secret_keep_previous = 600\n");
    EXPECT_EQ(c.cluster->peer_secret_file, key);
    EXPECT_EQ(c.cluster->peer_secret_keep_previous_s, 600u);
    c = Parse(head);
    EXPECT_TRUE(c.cluster->peer_secret_file.empty());
    EXPECT_EQ(c.cluster->peer_secret_keep_previous_s, 0u);

    ASSERT_EQ(chmod(key.c_str(), 0644), 0);
    ExpectError(head + "peer_secret_file = \"" + key + "\"\n",
                "^test\\.conf:5: 'peer_secret_file': peer secret file '.*/peer\\.key' has mode "
                "0644: it must be readable by its owner only, mode 0600");
    ASSERT_EQ(chmod(key.c_str(), 0600), 0);
    ASSERT_EQ(chown(key.c_str(), 65534, 0), 0);
    ExpectError(head + "peer_secret_file = \"" + key + "\"\n",
                "^test\\.conf:5: 'peer_secret_file': peer secret file '.*' is owned by uid 65534: "
                "it must be owned by root");
    ExpectError(head + "peer_secret_file = \"peer.key\"\n",
                "^test\\.conf:5: 'peer_secret_file': 'peer\\.key' is not an absolute path");
    ExpectError(head + "peer_secret_keep_previous = 60\n",
                "^test\\.conf:5: 'peer_secret_keep_previous' needs 'peer_secret_file'");
}

// etcd over TLS: https endpoints and the files, checked when the config is
// loaded (Documentation/etcd.md, "TLS").
TEST(Config, ClusterEtcdOverTls) {
    test::TempDir dir;
    for (const char* f : {"ca.crt", "c.crt", "c.key"})
        test::WriteFile(dir / f, "PEM\n");
    const std::string head =
        "[node]\nid = 1\n[cluster]\netcd = [\"https://10.99.0.1:2379\", \"https://b:2379\"]\n";
    auto line = [](const char* key, const std::string& path) {
        return std::string(key) + " = \"" + path + "\"\n";
    };
    Config c = Parse(head + line("etcd_ca_file", dir / "ca.crt") +
                     line("etcd_cert_file", dir / "c.crt") + line("etcd_key_file", dir / "c.key"));
    EXPECT_EQ(c.cluster->etcd[1], "https://b:2379");
    EXPECT_EQ(c.cluster->etcd_ca_file, dir / "ca.crt");
    EXPECT_EQ(c.cluster->etcd_cert_file, dir / "c.crt");
    EXPECT_EQ(c.cluster->etcd_key_file, dir / "c.key");
    // Without files: the system's CAs, no client certificate.
    c = Parse(head);
    EXPECT_TRUE(c.cluster->etcd_ca_file.empty());
    EXPECT_TRUE(c.cluster->etcd_cert_file.empty());
    EXPECT_TRUE(Parse(kClusterOnly).cluster->etcd_ca_file.empty());

    ExpectError(head + line("etcd_ca_file", dir / "missing.crt"),
                "^test\\.conf:5: 'etcd_ca_file': cannot read '.*/missing\\.crt': No such file or "
                "directory$");
    ExpectError(head + line("etcd_cert_file", dir.path()) + line("etcd_key_file", dir / "c.key"),
                "^test\\.conf:5: 'etcd_cert_file': cannot read '.*': it is a directory$");
    ExpectError(head + line("etcd_key_file", "c.key"),
                "^test\\.conf:5: 'etcd_key_file': 'c\\.key' is not an absolute path$");
    ExpectError(head + line("etcd_cert_file", dir / "c.crt"),
                "^test\\.conf:5: 'etcd_cert_file' needs 'etcd_key_file': a client certificate "
                "goes with its key$");
    ExpectError(head + line("etcd_key_file", dir / "c.key"),
                "^test\\.conf:5: 'etcd_key_file' needs 'etcd_cert_file'");
    ExpectError(std::string(kClusterOnly) + line("etcd_ca_file", dir / "ca.crt"),
                "^test\\.conf:5: 'etcd_ca_file' is set but no 'etcd' endpoint is https://");
    ExpectError(
        head + "etcd_ca_file = 1\n",
        "^test\\.conf:5: 'etcd_ca_file': expected a string \\(in quotes\\), got an integer$");
    ExpectError(Replace(head, "https://b:2379", "https://"),
                "^test\\.conf:4: 'etcd': 'https://' is not an http://HOST:PORT or "
                "https://HOST:PORT endpoint$");
}

TEST(Config, ClusterAddressAndPool) {
    Config c =
        Parse(std::string(kClusterOnly) + "address = \"10.99.0.3\"\npool = \"chorus_pool\"\n");
    EXPECT_EQ(c.cluster->address, "10.99.0.3");
    EXPECT_EQ(c.cluster->port, 7788);
    EXPECT_EQ(c.cluster->pool, "chorus_pool");
    EXPECT_EQ(
        Parse(std::string(kClusterOnly) + "address = \"fd00::3\"\nport = 7790\n").cluster->port,
        7790);
    EXPECT_TRUE(Parse(kClusterOnly).cluster->pool.empty());
    ExpectError(std::string(kClusterOnly) + "address = \"vm3\"\n",
                "^test\\.conf:5: 'address': .*vm3");
    ExpectError(std::string(kClusterOnly) + "pool = \"chorus_pool\"\n",
                "^test\\.conf:5: 'pool' needs 'address'");
    ExpectError(std::string(kClusterOnly) + "address = \"10.99.0.3\"\npool = \"my/vg\"\n",
                "^test\\.conf:6: 'pool': 'my/vg' is not a volume group name");
    ExpectError(std::string(kClusterOnly) + "address = \"10.99.0.3\"\nport = 0\n",
                "^test\\.conf:6: 'port': 0 is not in 1\\.\\.65535$");
}

TEST(Config, AClusterNodesPortsNeedNoSubsystem) {
    Config c = Parse(std::string(kClusterOnly) +
                     "[port.tcp1]\ntransport = \"tcp\"\naddress = \"10.0.0.1\"\n"
                     "[port.rdma1]\ntransport = \"rdma\"\naddress = \"10.0.0.1\"\n"
                     "service = 4421\n");
    EXPECT_FALSE(c.export_nvmet);
    ASSERT_EQ(c.ports.size(), 2u);
    EXPECT_EQ(c.ports[1].label, "rdma1");
    EXPECT_EQ(c.ports[1].id, 2u);
    EXPECT_EQ(c.ports[1].service, 4421);
    ExpectError(std::string(kClusterOnly) + "[namespace.1]\ndevice = \"/dev/x\"\n",
                "^test\\.conf:5: \\[namespace\\.1\\] needs a \\[subsystem\\] section \\(in a "
                "cluster, namespaces are exported with 'chorusctl cluster export'\\)");
    ExpectError(std::string(kClusterOnly) + "[ana]\ngroups = [1]\n",
                "^test\\.conf:5: \\[ana\\] needs a \\[subsystem\\] section");
    Config both = Parse(std::string(kValid) + "[cluster]\netcd = [\"http://127.0.0.1:2379\"]\n");
    EXPECT_TRUE(both.export_nvmet);
    EXPECT_TRUE(both.cluster);
}

struct BadValueCase {
    std::string name;  // test name suffix
    std::string from;
    std::string to;
    std::string pattern;
};

class ConfigBadValue : public testing::TestWithParam<BadValueCase> {};

TEST_P(ConfigBadValue, IsRejectedWithFileLineAndKey) {
    ExpectError(Replace(kValid, GetParam().from, GetParam().to), GetParam().pattern);
}

const char kUuid1[] = "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f";

INSTANTIATE_TEST_SUITE_P(
    Values, ConfigBadValue,
    testing::Values(
        BadValueCase{"NodeIdZero", "id = 2 ", "id = 0 ",
                     "^test\\.conf:3: 'id': 0 is not in 1\\.\\.32$"},
        BadValueCase{"NodeIdTooBig", "id = 2 ", "id = 33 ", "^test\\.conf:3: 'id': 33 is not in"},
        BadValueCase{"NodeIdNegative", "id = 2 ", "id = -1 ", "^test\\.conf:3: 'id': -1 is not"},
        BadValueCase{"NodeIdString", "id = 2 ", "id = \"2\" ",
                     "^test\\.conf:3: 'id': expected an integer in 1\\.\\.32, got a string$"},
        BadValueCase{"NodeIdFloat", "id = 2 ", "id = 2.5 ",
                     "^test\\.conf:3: 'id': expected an integer in 1\\.\\.32, got a "
                     "floating-point number$"},
        BadValueCase{"CntlidMinAboveMax", "id = 2 ",
                     "id = 2\ncntlid_min = 5000\ncntlid_max = 4000\n#",
                     "^test\\.conf:5: cntlid_min \\(5000\\) must be below cntlid_max"},
        BadValueCase{"CntlidMaxTooBig", "id = 2 ", "id = 2\ncntlid_max = 65520\n#",
                     "^test\\.conf:4: 'cntlid_max': 65520 is not in 1\\.\\.65519$"},
        BadValueCase{"NqnPrefix", "nqn = \"nqn.2026", "nqn = \"iqn.2026",
                     "^test\\.conf:6: 'nqn'.*'nqn\\.'"},
        BadValueCase{"NqnSlash", "org.chorus:demo\"", "org.chorus:demo/x\"",
                     "^test\\.conf:6: 'nqn': '.*demo/x' contains a blank, '/'"},
        BadValueCase{"NqnTooLong", "org.chorus:demo\"",
                     "org.chorus:demo" + std::string(200, 'x') + "\"",
                     "^test\\.conf:6: 'nqn': '.*' is 2[0-9][0-9] bytes, at most 223"},
        BadValueCase{"NqnEmpty", "nqn = \"nqn.2026-11.org.chorus:demo\"", "nqn = \"\"",
                     "^test\\.conf:6: 'nqn' must not be empty$"},
        BadValueCase{"NqnNotString", "nqn = \"nqn.2026-11.org.chorus:demo\"", "nqn = 1",
                     "^test\\.conf:6: 'nqn': expected a string \\(in quotes\\), got an integer$"},
        BadValueCase{"SerialTooLong", "org.chorus:demo\"\n",
                     "org.chorus:demo\"\nserial = \"012345678901234567890\"\n",
                     "^test\\.conf:7: 'serial' must be 1\\.\\.20 printable"},
        BadValueCase{"SerialNotPrintable", "org.chorus:demo\"\n",
                     "org.chorus:demo\"\nserial = \"a\\tb\"\n",
                     "^test\\.conf:7: 'serial' must be 1\\.\\.20 printable"},
        BadValueCase{"ModelTooLong", "org.chorus:demo\"\n",
                     "org.chorus:demo\"\nmodel = \"01234567890123456789012345678901234567890\"\n",
                     "^test\\.conf:7: 'model' must be 1\\.\\.40 printable"},
        BadValueCase{"AllowAnyHostNotBool", "org.chorus:demo\"\n",
                     "org.chorus:demo\"\nallow_any_host = \"yes\"\n",
                     "^test\\.conf:7: 'allow_any_host': expected true or false, got a string$"},
        BadValueCase{"Transport", "transport = \"tcp\"", "transport = \"fc\"",
                     "^test\\.conf:9: 'transport': 'fc' is not tcp or rdma$"},
        BadValueCase{"Address", "address = \"10.99.0.2\"", "address = \"10.99.0.256\"",
                     "^test\\.conf:10: 'address': '10\\.99\\.0\\.256' is not an IPv4 or IPv6"},
        BadValueCase{"Service", "service = 4421", "service = 70000",
                     "^test\\.conf:15: 'service': 70000 is not in 1\\.\\.65535$"},
        BadValueCase{"PortId", "service = 4421", "service = 4421\nid = 0",
                     "^test\\.conf:16: 'id': 0 is not in 1\\.\\.65535$"},
        BadValueCase{"PortIdTaken", "service = 4421", "service = 4421\nid = 1",
                     "^test\\.conf:16: port id 1 of \\[port\\.rdma1\\] is used by another port$"},
        BadValueCase{"AnaGroupZero", "groups = [1, 2,3]", "groups = [1, 0]",
                     "^test\\.conf:18: 'groups': 0 is not in 1\\.\\.128$"},
        BadValueCase{"AnaGroupTooBig", "groups = [1, 2,3]", "groups = [1, 2, 3, 129]",
                     "^test\\.conf:18: 'groups': 129 is not in 1\\.\\.128$"},
        BadValueCase{"AnaGroupTwice", "groups = [1, 2,3]", "groups = [1, 2, 3, 2]",
                     "^test\\.conf:18: 'groups': group 2 listed twice$"},
        BadValueCase{"AnaGroupsNotArray", "groups = [1, 2,3]", "groups = \"1,2,3\"",
                     "^test\\.conf:18: 'groups': expected an array of integers"},
        BadValueCase{"AnaGroupNotInteger", "groups = [1, 2,3]", "groups = [1, \"2\"]",
                     "^test\\.conf:18: 'groups': expected an integer in 1\\.\\.128, got a string$"},
        BadValueCase{"NamespaceGroupNotListed", "groups = [1, 2,3]", "groups = [1, 2]",
                     "^test\\.conf:28: 'ana_group': group 3 is not listed in \\[ana\\] groups$"},
        BadValueCase{"NamespaceGroupRange", "ana_group = 3", "ana_group = 200",
                     "^test\\.conf:28: 'ana_group': 200 is not in 1\\.\\.128$"},
        BadValueCase{"DeviceRelative", "device = \"/dev/chorus/vol0\"", "device = \"vol0\"",
                     "^test\\.conf:21: 'device': 'vol0' is not an absolute path$"},
        BadValueCase{"DeviceEmpty", "device = \"/dev/chorus/vol0\"", "device = \"\"",
                     "^test\\.conf:21: 'device' must not be empty$"},
        BadValueCase{"UuidMalformed", kUuid1, "3f1c4b6e", "^test\\.conf:22: 'uuid': invalid uuid"},
        BadValueCase{"UuidNull", kUuid1, "00000000-0000-0000-0000-000000000000",
                     "^test\\.conf:22: 'uuid' must not be the null uuid$"},
        BadValueCase{"UuidTaken", "11111111-2222-3333-4444-555555555555", kUuid1,
                     "^test\\.conf:26: 'uuid' .* is used by another namespace$"},
        BadValueCase{"NguidMalformed", "66666666777788889999aaaaaaaaaaaa", "6666",
                     "^test\\.conf:27: 'nguid': invalid uuid"},
        BadValueCase{"NsidZero", "[namespace.7]", "[namespace.0]",
                     "^test\\.conf:24: \\[namespace\\.0\\]: '0' is not a namespace id in "
                     "1\\.\\.4294967294$"},
        BadValueCase{"NsidNotNumber", "[namespace.7]", "[namespace.vol1]",
                     "^test\\.conf:24: \\[namespace\\.vol1\\]: 'vol1' is not a namespace id"},
        BadValueCase{"NsidTaken", "[namespace.7]", "[namespace.01]",
                     "^test\\.conf:24: namespace id 1 is used twice$"},
        BadValueCase{"NsidHexTaken", "[namespace.7]", "[namespace.0x1]",
                     "^test\\.conf:24: namespace id 1 is used twice$"}),
    [](const testing::TestParamInfo<BadValueCase>& info) { return info.param.name; });

// What TOML itself refuses, toml++ reports; the message still names the
// line and, for a "key = value" line, the key.
TEST(Config, TomlRefusesDuplicates) {
    ExpectError(std::string(kValid) + "[node]\nid = 3\n",
                "^test\\.conf:29: .*cannot redefine existing table 'node'");
    ExpectError(std::string(kValid) + "[port.tcp1]\ntransport = \"tcp\"\n",
                "^test\\.conf:29: .*cannot redefine existing table 'port.tcp1'");
    ExpectError(std::string(kValid) + "[namespace.1]\n",
                "^test\\.conf:29: .*cannot redefine existing table 'namespace.1'");
    ExpectError(
        Replace(kValid, "transport = \"tcp\"\n", "transport = \"tcp\"\ntransport = \"rdma\"\n"),
        "^test\\.conf:10: 'transport': .*cannot redefine existing string 'transport'");
}

TEST(Config, AnotherPortOnTheSameEndpoint) {
    ExpectError(
        std::string(kValid) + "[port.again]\ntransport = \"tcp\"\naddress = \"10.99.0.2\"\n",
        "^test\\.conf:29: \\[port\\.again\\]: another port already listens on tcp "
        "10\\.99\\.0\\.2:4420$");
}

TEST(Config, UnknownKeysAndSections) {
    ExpectError(Replace(kValid, "id = 2 ", "id = 2\nfoo = \"bar\"\n#"),
                "^test\\.conf:4: unknown key 'foo' in \\[node\\]$");
    ExpectError(Replace(kValid, "device = \"/dev/chorus/vol0\"\n",
                        "device = \"/dev/chorus/vol0\"\nsize = \"1G\"\n"),
                "^test\\.conf:22: unknown key 'size' in \\[namespace\\.1\\]$");
    // Of two unknown keys, the first in the file, not in sorted order.
    ExpectError(Replace(kValid, "id = 2 ", "id = 2\nzz = 1\naa = 1\n#"),
                "^test\\.conf:4: unknown key 'zz' in \\[node\\]$");
    ExpectError(std::string(kValid) + "[host]\n", "^test\\.conf:29: unknown section \\[host\\]$");
    ExpectError(std::string(kValid) + "[host.h1]\n",
                "^test\\.conf:29: unknown section \\[host\\]$");
    ExpectError("verbose = true\n" + std::string(kValid),
                "^test\\.conf:1: key 'verbose' outside of any section$");
    ExpectError(std::string(kValid) + "[port]\ntransport = \"tcp\"\n",
                "^test\\.conf:30: key 'transport' in \\[port\\]: each port is a section of its "
                "own, e.g. \\[port\\.tcp1\\]$");
    ExpectError(std::string(kValid) + "[node.2]\n",
                "^test\\.conf:29: unknown section \\[node\\.2\\]$");
    ExpectError(std::string(kValid) + "[namespace.7.x]\n",
                "^test\\.conf:29: unknown section \\[namespace\\.7\\.x\\]$");
    ExpectError("node = 1\n",
                "^test\\.conf:1: 'node' must be a section, \\[node\\], not an integer$");
    ExpectError(std::string(kValid) + "[[port]]\n", "^test\\.conf:29: .*'port'");
}

// The INI format chorusd read before TOML fails on its first difference,
// with a hint.
TEST(Config, SyntaxErrorsNameLineAndKey) {
    ExpectError("[node]\nid = 1\n[subsystem]\nnqn = nqn.2026-11.org.chorus:demo\n",
                "^test\\.conf:4: 'nqn': .*\\(strings need quotes, key = \"value\"; booleans are "
                "true or false\\)$");
    ExpectError("[node]\nid = 1\n[subsystem]\nallow_any_host = yes\n",
                "^test\\.conf:4: 'allow_any_host': .*strings need quotes");
    ExpectError("[node]\nid = 1\n[port tcp1]\n",
                "^test\\.conf:3: .*\\(a label is written \\[section\\.LABEL\\], e\\.g\\. "
                "\\[port\\.tcp1\\], \\[namespace\\.1\\]\\)$");
    ExpectError("[node\n", "^test\\.conf:1: .*table header");
    ExpectError("[node]\nid =\n", "^test\\.conf:2: 'id': ");
    ExpectError("[node]\n= 1\n", "^test\\.conf:2: ");
    ExpectError("[node]\nid = 99999999999999999999\n", "^test\\.conf:2: 'id': ");
}

TEST(Config, TomlSpellingsAreEquivalent) {
    // Comments, indentation, dotted keys and inline tables are TOML's own.
    Config c = Parse(
        "  # indented comment\n"
        "node.id = 2\n"
        "subsystem = { nqn = \"nqn.2026-11.org.chorus:demo\", allow_any_host = true }\n"
        "  [port.tcp1]   # trailing comment\n"
        "  transport = 'tcp'\n"
        "\taddress = \"10.99.0.2\"   # the lab\n"
        "[port.\"rdma 1\"]\n"
        "transport = \"rdma\"\n"
        "address = \"10.99.0.2\"\n"
        "service = 0x1145\n");
    EXPECT_EQ(c.node_id, 2u);
    EXPECT_TRUE(c.allow_any_host);
    ASSERT_EQ(c.ports.size(), 2u);
    EXPECT_EQ(c.ports[0].label, "tcp1");
    EXPECT_EQ(c.ports[0].transport, "tcp");
    EXPECT_EQ(c.ports[0].address, "10.99.0.2");
    EXPECT_EQ(c.ports[1].label, "rdma 1");
    EXPECT_EQ(c.ports[1].service, 0x1145);
    // A port written before [node] is still checked, on its own line.
    ExpectError(
        "[port.\"rdma 1\"]\ntransport = \"x\"\n[node]\nid = 1\n[subsystem]\n"
        "nqn = \"nqn.x:y\"\nallow_any_host = true\n",
        "^test\\.conf:2: 'transport': 'x'");
    ExpectError("[node]\nid = 1\n[cluster]\netcd = [\"http://a:1\"]\n[port.\"a b\"]\n",
                "^test\\.conf:5: \\[port\\.\"a b\"\\]: missing required key 'transport'$");
}

TEST(Config, AnEmptySectionIsStillASection) {
    // [ana] with no keys is read and wants its groups.
    ExpectError(Replace(kValid, "groups = [1, 2,3]\n", ""),
                "^test\\.conf:17: \\[ana\\]: missing required key 'groups'$");
}

TEST(Config, LoadFromFile) {
    test::TempDir dir;
    test::WriteFile(dir / "chorusd.conf", kValid);
    Config c = LoadConfig(dir / "chorusd.conf");
    EXPECT_EQ(c.file, dir / "chorusd.conf");
    EXPECT_EQ(c.node_id, 2u);

    test::WriteFile(dir / "bad.conf", "[node]\nid = 99\n");
    try {
        LoadConfig(dir / "bad.conf");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(dir / "bad.conf:2: 'id'", 0), 0u) << e.what();
    }
    try {
        LoadConfig(dir / "missing.conf");
        FAIL();
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()),
                  dir / "missing.conf: cannot open: No such file or directory");
    }
}

// The examples the project ships parse: the packaged default config and
// the one the command-line tests use.
TEST(Config, ShippedExamplesParse) {
    for (const char* path : {CHORUS_SOURCE_ROOT "/debian/chorusd.conf",
                             CHORUS_SOURCE_ROOT "/tests/unit/data/chorusd.conf"}) {
        SCOPED_TRACE(path);
        EXPECT_NO_THROW(LoadConfig(path));
    }
}

}  // namespace
}  // namespace chorus

namespace chorus {
namespace {

TEST(Config, MetricsAreOffWithoutTheirSection) {
    EXPECT_FALSE(Parse(kValid).metrics.has_value());
}

TEST(Config, MetricsAddress) {
    Config c = Parse(std::string(kValid) + "[metrics]\naddress = \"127.0.0.1:9653\"\n");
    ASSERT_TRUE(c.metrics.has_value());
    EXPECT_EQ(c.metrics->address, "127.0.0.1:9653");
    EXPECT_EQ(c.metrics->host, "127.0.0.1");
    EXPECT_EQ(c.metrics->port, 9653);
    c = Parse(std::string(kValid) + "[metrics]\naddress = \"[::1]:80\"\n");
    EXPECT_EQ(c.metrics->host, "::1");
    EXPECT_EQ(c.metrics->port, 80);
}

// A node that only serves metrics (volumes set up with chorusctl) needs
// neither [subsystem] nor [cluster].
TEST(Config, MetricsAloneAreEnough) {
    Config c = Parse("[node]\nid = 1\n[metrics]\naddress = \"0.0.0.0:9653\"\n");
    EXPECT_FALSE(c.export_nvmet);
    EXPECT_FALSE(c.cluster.has_value());
    EXPECT_EQ(c.metrics->port, 9653);
}

TEST(Config, BadMetricsAddressNamesKeyAndValue) {
    const std::string head = "[node]\nid = 1\n[metrics]\n";
    for (const char* bad : {"localhost:9653", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:65536",
                            "127.0.0.1:http", "::1:9653", "[127.0.0.1]:9653", "10.0.0.300:1"})
        ExpectError(head + "address = \"" + bad + "\"\n",
                    std::string("^test\\.conf:4: 'address': '") +
                        std::regex_replace(bad, std::regex(R"([.\[\]])"), R"(\$&)") +
                        "' is not IPV4:PORT or \\[IPV6\\]:PORT \\(port 1\\.\\.65535\\)");
    ExpectError(head, "^test\\.conf:3: \\[metrics\\]: missing required key 'address'");
    ExpectError(head + "address = \"127.0.0.1:1\"\nport = 2\n",
                "^test\\.conf:5: unknown key 'port' in \\[metrics\\]");
    ExpectError(head + "address = \"127.0.0.1:1\"\n[metrics.x]\n",
                "^test\\.conf:5: unknown section \\[metrics\\.x\\]$");
}

// [iscsi] CHAP: a user and a root-only secret file of 12..255 printable
// bytes, both or neither.
TEST(Config, IscsiChap) {
    if (geteuid() != 0)
        GTEST_SKIP() << "a CHAP secret file must be owned by root";
    test::TempDir dir;
    std::string key = dir / "chap.key";
    test::WriteFile(key, "chorus-lab-chap\n");
    ASSERT_EQ(chmod(key.c_str(), 0600), 0);
    const std::string head =
        "[node]\nid = 1\n[cluster]\netcd = [\"http://10.99.0.1:2379\"]\n"
        "[iscsi]\nportals = [\"10.99.0.1\"]\n";
    Config c = Parse(head + "chap_user = \"lab\"\nchap_secret_file = \"" + key + "\"\n");
    EXPECT_EQ(c.iscsi->chap_user, "lab");
    EXPECT_EQ(c.iscsi->chap_secret_file, key);
    EXPECT_TRUE(Parse(head).iscsi->chap_user.empty());
    ExpectError(head + "chap_user = \"lab\"\n",
                "^test\\.conf:7: 'chap_user' and 'chap_secret_file' go together");
    ExpectError(head + "chap_user = \"a b\"\nchap_secret_file = \"" + key + "\"\n",
                "^test\\.conf:7: 'chap_user': 'a b' is not 1 to 255 printable ASCII");
    test::WriteFile(key, "short\n");
    ExpectError(head + "chap_user = \"lab\"\nchap_secret_file = \"" + key + "\"\n",
                "^test\\.conf:8: 'chap_secret_file': CHAP secret file '.*' must hold 12 to 255 "
                "bytes .*; it holds 5");
    test::WriteFile(key, "twelve bytes with blanks\n");
    ExpectError(head + "chap_user = \"lab\"\nchap_secret_file = \"" + key + "\"\n",
                "^test\\.conf:8: 'chap_secret_file': CHAP secret file '.*' holds a blank");
    test::WriteFile(key, "chorus-lab-chap\n");
    ASSERT_EQ(chmod(key.c_str(), 0640), 0);
    ExpectError(head + "chap_user = \"lab\"\nchap_secret_file = \"" + key + "\"\n",
                "^test\\.conf:8: 'chap_secret_file': CHAP secret file '.*' has mode 0640");
}

// [iscsi] portals: IPv4 or bracketed IPv6, port 3260 unless given, each
// once; the section serves the cluster's exports, so it needs [cluster].
TEST(Config, IscsiPortals) {
    const std::string head =
        "[node]\nid = 1\n[cluster]\netcd = [\"http://10.99.0.1:2379\"]\n[iscsi]\n";
    EXPECT_FALSE(Parse(std::string(kValid)).iscsi.has_value());
    Config c = Parse(head + "portals = [\"10.99.0.1\", \"10.99.0.1:3261\", \"[fd00::1]\"]\n");
    ASSERT_TRUE(c.iscsi.has_value());
    ASSERT_EQ(c.iscsi->portals.size(), 3u);
    EXPECT_EQ(c.iscsi->portals[0].Name(), "10.99.0.1:3260");
    EXPECT_EQ(c.iscsi->portals[1].Name(), "10.99.0.1:3261");
    EXPECT_EQ(c.iscsi->portals[2].Name(), "[fd00::1]:3260");
    EXPECT_TRUE(c.iscsi->portals[2].ipv6);
    EXPECT_EQ(Parse(head + "portals = [\"[::1]:860\"]\n").iscsi->portals[0].Name(), "[::1]:860");
    for (const char* bad : {"host4", "10.99.0.1:0", "::1", "10.0.0.300", "[::1]:x"})
        ExpectError(head + "portals = [\"" + bad + "\"]\n",
                    std::string("^test\\.conf:6: 'portals': '") +
                        std::regex_replace(bad, std::regex(R"([.\[\]])"), R"(\$&)") +
                        "' is not IPV4\\[:PORT\\] or \\[IPV6\\]\\[:PORT\\]");
    ExpectError(head + "portals = [\"10.99.0.1\", \"10.99.0.1:3260\"]\n",
                "^test\\.conf:6: 'portals': 10\\.99\\.0\\.1:3260 is listed twice");
    ExpectError(head + "portals = []\n", "^test\\.conf:6: 'portals' lists no portal");
    ExpectError(head, "^test\\.conf:5: \\[iscsi\\]: missing required key 'portals'");
    ExpectError(
        "[node]\nid = 1\n[metrics]\naddress = \"127.0.0.1:1\"\n[iscsi]\n"
        "portals = [\"10.99.0.1\"]\n",
        "^test\\.conf:5: \\[iscsi\\] needs a \\[cluster\\] section");
}

}  // namespace
}  // namespace chorus
