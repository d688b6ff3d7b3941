// Finding a volume in the cluster view, and waiting for the view to show
// a change: shared by the cluster volume commands.
#ifndef CHORUS_CHORUSCTL_CLUSTER_LOOKUP_H_
#define CHORUS_CHORUSCTL_CLUSTER_LOOKUP_H_

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include "chorusctl/command.h"
#include "lib/cluster_view.h"

namespace chorus {

// The volume called name; throws NotFoundError if there is none, Error
// (EIO) if its keys do not decode.
inline const VolumeState& FindVolume(const ClusterView& view, const std::string& name) {
    auto it = view.volumes.find(name);
    if (it == view.volumes.end()) {
        for (const std::string& d : view.damaged)
            if (d == name)
                throw Error("volume " + name +
                                " has unreadable keys in the store (see "
                                "'chorusctl cluster status')",
                            EIO);
        throw NotFoundError("no volume " + name + " in the cluster");
    }
    return it->second;
}

// Waits up to timeout for done(view); the last view read.
template <typename Done>
ClusterView WaitFor(EtcdClient& etcd, std::chrono::seconds timeout, Done done) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        ClusterView view = ReadClusterView(etcd);
        if (done(view) || std::chrono::steady_clock::now() >= deadline)
            return view;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
}

}  // namespace chorus

#endif  // CHORUS_CHORUSCTL_CLUSTER_LOOKUP_H_
