// chorusd's configuration file, TOML (Documentation/chorusd.rst): which
// subsystem, namespaces and ports this node exports through nvmet, its etcd
// session and its metrics endpoint.
#ifndef CHORUS_LIB_CONFIG_H_
#define CHORUS_LIB_CONFIG_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lib/nqn.h"
#include "lib/uuid.h"

namespace chorus {

// A config error; what() is "FILE:LINE: message" naming the key (or "FILE:
// message" when no single line is at fault, e.g. a missing section). TOML
// syntax errors, which toml++ finds, read the same.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct PortConfig {
    std::string label;      // from "[port.LABEL]"
    std::string transport;  // "tcp" or "rdma" (nvmet addr_trtype)
    std::string address;    // nvmet addr_traddr
    std::string adrfam;     // "ipv4" or "ipv6", derived from the address
    uint16_t service = 4420;
    uint32_t id = 0;  // nvmet port id
};

struct NamespaceConfig {
    uint32_t nsid = 0;
    std::string device;
    Uuid uuid{};
    Uuid nguid{};
    uint32_t ana_group = 0;
};

// [cluster]: chorusd's session in etcd (Documentation/cluster.md).
struct ClusterConfig {
    std::vector<std::string> etcd;  // "http(s)://host:port", one per member, as listed
    // TLS towards the https members (Documentation/etcd.md, "TLS"): the CA
    // that signs their certificates (empty: the system's) and this node's
    // client certificate and key (empty: none). Readable when loaded.
    std::string etcd_ca_file;
    std::string etcd_cert_file;
    std::string etcd_key_file;
    uint32_t lease_ttl_s = 5;         // the session lease's TTL, as asked
    uint32_t lease_margin_ms = 1000;  // the kernel deadline is this much before the lease's end
    uint32_t keepalive_ms = 1000;     // default: a fifth of the TTL
    // One request to one etcd member before the next is tried (EtcdOptions::
    // attempt_timeout); default: 2000 or keepalive_ms, whichever is less;
    // a value given is at most a quarter of the TTL.
    uint32_t etcd_attempt_timeout_ms = 1000;
    std::string state_file = "/run/chorus/session.json";  // the lease to adopt after a restart
    // Replication: where this node listens and its peers dial it. Empty:
    // the node takes no part in volumes (a member that only runs chorusctl).
    std::string address;
    uint16_t port = 7788;
    // Replication authentication (Documentation/admin-guide.md, "Peer
    // authentication"): the cluster's shared secret, a root-owned file of
    // mode 0600, checked when loaded and read again on every pass (empty:
    // authentication is left as the kernel has it, off at load), and how
    // long the secret it replaces stays accepted when the file changes.
    std::string peer_secret_file;
    uint32_t peer_secret_keep_previous_s = 0;
    // Every volume this node attaches sends a CRC-32C with each payload
    // (CHORUS_A_PAYLOAD_CRC); chorusd sets it on each pass.
    bool payload_crc = false;
    // The storage pool: the LVM volume group holding this node's replicas.
    // Empty: the node holds none.
    std::string pool;
};

// [metrics]: where chorusd serves Prometheus metrics (Documentation/metrics.rst).
struct MetricsConfig {
    std::string address;  // as written: "127.0.0.1:9653", "[::1]:9653"
    std::string host;     // the IP literal, without brackets
    uint16_t port = 0;
};

// [iscsi]: where this node's LIO serves the cluster's exports that name
// iSCSI (Documentation/iscsi.md). Without the section the node serves none.
struct IscsiPortal {
    std::string host;  // the IP literal, without brackets
    uint16_t port = 3260;
    bool ipv6 = false;

    // As LIO names a portal: "10.0.0.1:3260", "[fd00::1]:3260".
    std::string Name() const;
    bool operator==(const IscsiPortal&) const = default;
};

struct IscsiConfig {
    std::vector<IscsiPortal> portals;  // in the file's order, at least one
    // CHAP (Documentation/iscsi.md, "CHAP"): the name initiators log in
    // with and a root-only file holding the secret, read again on every
    // pass; both or neither (no CHAP).
    std::string chap_user;
    std::string chap_secret_file;
};

struct Config {
    std::string file;  // where it was read from, for messages
    uint32_t node_id = 0;
    uint16_t cntlid_min = 0;
    uint16_t cntlid_max = 0;
    std::string nqn;
    std::string serial;
    std::string model;
    std::vector<std::string> hosts;           // host NQNs allowed to connect, in the file's order
    bool allow_any_host = false;              // every host may connect; only without hosts
    std::vector<PortConfig> ports;            // in the file's order
    std::vector<uint32_t> ana_groups;         // ascending, unique
    std::vector<NamespaceConfig> namespaces;  // in the file's order
    bool export_nvmet = false;                // a [subsystem] section is there
    std::optional<ClusterConfig> cluster;     // a [cluster] section is there
    std::optional<MetricsConfig> metrics;     // a [metrics] section is there; off without
    std::optional<IscsiConfig> iscsi;         // an [iscsi] section is there; no iSCSI without
};

inline constexpr uint32_t kMaxNodeId = 32;
inline constexpr uint32_t kMaxAnaGroups = 128;  // NVMET_MAX_ANAGRPS in Linux 6.1
inline constexpr uint16_t kMaxCntlid = 0xffef;  // NVME_CNTLID_MAX
inline constexpr size_t kMaxSerialLen = 20;
inline constexpr size_t kMaxModelLen = 40;

// Parses the text of a config file; file is used only in messages.
// Throws ConfigError.
Config ParseConfig(std::string_view text, const std::string& file);

// Reads and parses path. Throws ConfigError (also when it cannot be read).
Config LoadConfig(const std::string& path);

// The serial number used when the config sets none: a hash of the NQN, so
// every node derives the same one, as multipath requires.
std::string DefaultSerial(std::string_view nqn);

}  // namespace chorus

#endif  // CHORUS_LIB_CONFIG_H_
