// How chorusctl reaches the cluster store: the etcd endpoints from
// --etcd, else $CHORUS_ETCD, else the [cluster] section of chorusd's config
// (--config, default /etc/chorus/chorusd.conf); for https endpoints the
// TLS files from --etcd-cacert/--etcd-cert/--etcd-key, else
// $CHORUS_ETCD_CACERT/_CERT/_KEY, else that same [cluster] section when
// the endpoints came from it.
#ifndef CHORUS_CHORUSCTL_CLUSTER_ACCESS_H_
#define CHORUS_CHORUSCTL_CLUSTER_ACCESS_H_

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "lib/etcd_client.h"

namespace chorus {

struct ClusterAccess {
    std::string etcd;  // "http://a:2379,http://b:2379"
    std::string config = "/etc/chorus/chorusd.conf";
    EtcdTls tls;  // as given on the command line

    // Adds --etcd, --config and the TLS options to a cluster command.
    void AddOptions(CLI::App& cmd);
    // A client for the endpoints found; throws UsageError naming the three
    // places it looked when none has them, or a TLS file it cannot read.
    std::unique_ptr<EtcdClient> Connect() const;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSCTL_CLUSTER_ACCESS_H_
