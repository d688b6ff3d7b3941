#include "chorusctl/cluster_access.h"

#include <sys/stat.h>
#include <cstdlib>
#include <sstream>

#include "chorusctl/command.h"
#include "lib/config.h"

namespace chorus {

namespace {

std::vector<std::string> SplitList(const std::string& list) {
    std::vector<std::string> out;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty())
            out.push_back(item);
    return out;
}

}  // namespace

void ClusterAccess::AddOptions(CLI::App& cmd) {
    cmd.add_option("--etcd", etcd,
                   "etcd endpoints, http://HOST:PORT[,...] (default: $CHORUS_ETCD, else the "
                   "[cluster] section of --config)");
    cmd.add_option("--config", config, "chorusd's config, read for its etcd endpoints")
        ->capture_default_str();
}

std::unique_ptr<EtcdClient> ClusterAccess::Connect() const {
    std::vector<std::string> endpoints = SplitList(etcd);
    if (endpoints.empty()) {
        if (const char* env = std::getenv("CHORUS_ETCD"))
            endpoints = SplitList(env);
    }
    struct stat st;
    if (endpoints.empty() && stat(config.c_str(), &st) == 0) {
        Config cfg = LoadConfig(config);  // ConfigError names the file and line
        if (cfg.cluster)
            endpoints = cfg.cluster->etcd;
    }
    if (endpoints.empty())
        throw UsageError(
            "no etcd endpoints: give --etcd, set CHORUS_ETCD or add a [cluster] "
            "section to " +
            config);
    EtcdOptions o;
    o.endpoints = endpoints;
    o.call_timeout = std::chrono::seconds(5);
    return std::make_unique<EtcdClient>(o);
}

}  // namespace chorus
