#include "chorusd/metrics_scrape.h"

#include <vector>

#include "lib/errors.h"
#include "lib/genl_client.h"
#include "lib/metrics_collector.h"

namespace chorus {

std::string ScrapeNode(const Config& cfg, const std::atomic<const SessionKeeper*>& keeper,
                       const Logger& log) {
    NodeHealth node;
    node.version = CHORUS_VERSION;
    node.node_id = cfg.node_id;
    std::vector<VolumeInfo> volumes;
    try {
        // A socket per scrape: scrapes may run concurrently, and one
        // every few seconds costs nothing next to the dump itself.
        VolumeClient client(GenlSocket::Open());
        volumes = client.List();
        node.lease_state = client.LeaseGet().state;
        node.kernel_up = true;
    } catch (const Error& e) {
        log.Debug(std::string("metrics: cannot read the kernel: ") + e.what());
        volumes.clear();
    }
    if (cfg.cluster) {
        const SessionKeeper* k = keeper.load();
        node.session_held = k != nullptr && k->Current().has_value();
    }
    return MetricsCollector::Collect(node, volumes);
}

}  // namespace chorus
