// Exports of the cluster (Documentation/access.md, Documentation/iscsi.md):
// which volumes a subsystem shows as namespaces (and iSCSI LUNs), over which
// protocols, and which hosts may connect, in one key per subsystem,
// /chorus/exports/<nqn>. Every node's chorusd exports the subsystem through
// its own nvmet (and LIO) with the same identity; chorusctl writes the key.
// Changes are read-modify-write transactions guarded by the key's
// mod_revision, so two administrators cannot lose each other's change.
#ifndef CHORUS_LIB_CLUSTER_EXPORT_H_
#define CHORUS_LIB_CLUSTER_EXPORT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/cluster_store.h"
#include "lib/etcd_client.h"

namespace chorus {

inline constexpr uint32_t kMaxExportNsid = 1024;  // NVMET_MAX_NAMESPACES in Linux 6.1

// The protocols an export may be reached by, in the order kept in a spec.
inline constexpr const char* kProtocolIscsi = "iscsi";
inline constexpr const char* kProtocolNvmeRdma = "nvme-rdma";
inline constexpr const char* kProtocolNvmeTcp = "nvme-tcp";

struct ExportNamespace {
    uint32_t nsid = 0;
    std::string volume;

    bool operator==(const ExportNamespace&) const = default;
};

struct ExportSpec {
    std::string nqn;
    // Hosts (their NQNs) allowed to connect; ignored with allow_any_host,
    // and then empty (nvmet refuses both at once).
    std::vector<std::string> hosts;
    bool allow_any_host = false;
    std::vector<ExportNamespace> namespaces;  // ascending nsid
    // Who owns its volumes (lib/access_strategy.h): balance, inherit or none.
    std::string strategy = "balance";
    // How hosts reach it: any of "iscsi", "nvme-rdma", "nvme-tcp",
    // ascending, at least one. A value without "protocols" (written before
    // iSCSI existed) has both NVMe-oF transports.
    std::vector<std::string> protocols = {kProtocolNvmeRdma, kProtocolNvmeTcp};
    // iSCSI initiators (their IQNs) allowed to log in; ignored with
    // allow_any_host, and then empty.
    std::vector<std::string> initiators{};

    bool operator==(const ExportSpec&) const = default;
};

// Whether spec is reached by protocol ("iscsi", "nvme-tcp", ...).
bool ExportsBy(const ExportSpec& spec, std::string_view protocol);
// Whether spec is reached by NVMe-oF over any transport.
bool ExportsNvme(const ExportSpec& spec);
// Why protocols cannot be an export's, or "" if they can (sorted or not).
std::string ProtocolsProblem(const std::vector<std::string>& protocols);

std::string ExportKey(std::string_view nqn);  // /chorus/exports/<nqn>

std::string EncodeExportSpec(const ExportSpec& spec);
// Throws StoreValueError naming the key and what is wrong: an NQN that is
// not the key's or not valid, a host or initiator listed twice or with
// allow_any_host, an nsid out of 1..1024 or twice, a volume twice, an
// unknown strategy or protocol, iSCSI for an NQN that makes no IQN.
// A value without "strategy" (written before it existed) is "balance";
// without "protocols", NVMe-oF over RDMA and TCP.
ExportSpec DecodeExportSpec(const std::string& key, std::string_view value);

// The same checks on a spec about to be written; "" if it is sound.
std::string ExportSpecProblem(const ExportSpec& spec);

// The lowest nsid the export does not use (1 for an empty one).
uint32_t FreeNsid(const ExportSpec& spec);

class ExportStore {
public:
    explicit ExportStore(EtcdClient& etcd) : etcd_(etcd) {}

    std::optional<Revisioned<ExportSpec>> Get(std::string_view nqn);
    // Creates the key if absent; false if the export exists.
    bool Create(const ExportSpec& spec);
    // Replaces the key if it is still at mod_revision; false otherwise.
    bool Replace(const ExportSpec& spec, int64_t mod_revision);
    // Deletes the key if it is still at mod_revision; false otherwise.
    bool Delete(std::string_view nqn, int64_t mod_revision);

private:
    EtcdClient& etcd_;
};

}  // namespace chorus

#endif  // CHORUS_LIB_CLUSTER_EXPORT_H_
