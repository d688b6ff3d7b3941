// What chorusd's /metrics says: the kernel's view of this node's volumes and
// their peers (VolumeInfo, read over netlink at scrape time) and the
// daemon's own health, turned into Prometheus samples. Every metric is in
// the one table of Documentation/metrics.rst.
#ifndef CHORUS_LIB_METRICS_COLLECTOR_H_
#define CHORUS_LIB_METRICS_COLLECTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/genl_codec.h"
#include "lib/metrics_text.h"

namespace chorus {

// The daemon's side of a scrape.
struct NodeHealth {
    std::string version;  // chorusd's
    uint32_t node_id = 0;
    bool kernel_up = false;               // chorus.ko answered on netlink
    std::optional<uint32_t> lease_state;  // enum chorus_lease_state, if read
    // With a [cluster] section: chorusd holds its etcd session now (it
    // renewed its lease within the TTL, so etcd was reachable). Absent
    // otherwise.
    std::optional<bool> session_held;
};

class MetricsCollector {
public:
    // The whole exposition for one scrape, volumes in the kernel's order.
    static std::string Collect(const NodeHealth& node, const std::vector<VolumeInfo>& volumes);

    // Every metric family name Collect() can write, for the documentation
    // test: histograms without their _bucket/_sum/_count suffixes.
    static std::vector<std::string> FamilyNames();

private:
    static void CollectNode(MetricsWriter& w, const NodeHealth& node);
    static void CollectVolumes(MetricsWriter& w, const std::vector<VolumeInfo>& volumes);
    static void CollectLatency(MetricsWriter& w, const std::vector<VolumeInfo>& volumes);
    static void CollectPeers(MetricsWriter& w, const std::vector<VolumeInfo>& volumes);
};

}  // namespace chorus

#endif  // CHORUS_LIB_METRICS_COLLECTOR_H_
