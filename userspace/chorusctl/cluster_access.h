// How chorusctl reaches the cluster store: the etcd endpoints from
// --etcd, else $CHORUS_ETCD, else the [cluster] section of chorusd's config
// (--config, default /etc/chorus/chorusd.conf); for https endpoints the
// TLS files from --etcd-cacert/--etcd-cert/--etcd-key, else
// $CHORUS_ETCD_CACERT/_CERT/_KEY, else that same [cluster] section when
// the endpoints came from it. Each request to one member has
// --etcd-timeout ms, else $CHORUS_ETCD_TIMEOUT_MS, else 2000, before the
// next member is tried; a whole call has three of those and at least 5 s.
#ifndef CHORUS_CHORUSCTL_CLUSTER_ACCESS_H_
#define CHORUS_CHORUSCTL_CLUSTER_ACCESS_H_

#include <cstdint>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "lib/etcd_client.h"

namespace chorus {

struct ClusterAccess {
    std::string etcd;  // "http://a:2379,http://b:2379"
    std::string config = "/etc/chorus/chorusd.conf";
    EtcdTls tls;              // as given on the command line
    uint32_t timeout_ms = 0;  // --etcd-timeout; 0: not given

    // Adds --etcd, --config, --etcd-timeout and the TLS options to a
    // cluster command.
    void AddOptions(CLI::App& cmd);
    // A client for the endpoints found; throws UsageError naming the three
    // places it looked when none has them, a TLS file it cannot read, or
    // a $CHORUS_ETCD_TIMEOUT_MS that is not a number of ms in 100..30000.
    std::unique_ptr<EtcdClient> Connect() const;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSCTL_CLUSTER_ACCESS_H_
