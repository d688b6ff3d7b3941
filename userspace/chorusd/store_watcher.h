// Watches the cluster store for chorusd's control loop: a change under the
// prefix wakes a pass (PassTrigger). The watch starts after the revision
// the loop's first pass read the store at, so that no change between that
// read and the watch is missed; a change the loop has read already (at or
// below the revision of its latest read) wakes nothing. When etcd has
// compacted the revision the watch needs, the watcher wakes a pass, which
// reads the whole store again, and watches anew from after that read.
//
// The watch has a stream of its own (EtcdWatch: resumes on the next
// endpoint when a stream breaks, backs off when every endpoint fails, so
// an unreachable etcd costs no busy loop here).
#ifndef CHORUS_CHORUSD_STORE_WATCHER_H_
#define CHORUS_CHORUSD_STORE_WATCHER_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "chorusd/pass_trigger.h"
#include "lib/etcd_client.h"
#include "lib/etcd_types.h"

namespace chorus {

class StoreWatcher {
public:
    // Watches the keys under prefix; a change of a key under one of
    // ignored (what only others read, such as the nodes' status) wakes
    // nothing. trigger must outlive the watcher.
    StoreWatcher(const EtcdOptions& options, std::string prefix, std::vector<std::string> ignored,
                 PassTrigger& trigger);
    // Stops the thread at once (the watch is canceled).
    ~StoreWatcher();
    StoreWatcher(const StoreWatcher&) = delete;
    StoreWatcher& operator=(const StoreWatcher&) = delete;

    // The thread waits for the first Read() before it watches.
    void Start();
    // A pass has read the store at revision. Thread-safe.
    void Read(int64_t revision);

private:
    void Run(std::stop_token stop);
    // The revision of a read at or after min_revision, once there is one;
    // 0 if stopped first.
    int64_t WaitForRead(std::stop_token stop, int64_t min_revision);
    // Watches from revision `from` until stopped; throws EtcdCompactedError.
    void Watch(std::stop_token stop, int64_t from);
    void Pause(std::stop_token stop);
    // True if one of events is a change no pass has read yet.
    bool Unread(const std::vector<EtcdEvent>& events);

    EtcdOptions options_;
    std::string prefix_;
    std::vector<std::string> ignored_;
    PassTrigger& trigger_;
    std::mutex mutex_;
    std::condition_variable_any read_cv_;
    int64_t read_revision_ = 0;  // protected by mutex_
    std::jthread thread_;        // last: stopped and joined first
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_STORE_WATCHER_H_
