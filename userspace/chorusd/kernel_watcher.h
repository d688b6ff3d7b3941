// Listens to chorus.ko's events for chorusd's control loop: each event
// (a peer connected or lost, a resync started or done, a role, write-set
// or volume change, a lease deadline passed) wakes a pass (PassTrigger).
// Events lost to a full receive buffer wake one too: the pass reads the
// kernel's state, not the events.
//
// Before chorus.ko is loaded the watcher looks for it every second and
// wakes a pass when it comes. A reloaded module forgets the old socket's
// membership of its events group: Reopen() (the loop calls it when its
// own netlink socket failed) listens anew.
#ifndef CHORUS_CHORUSD_KERNEL_WATCHER_H_
#define CHORUS_CHORUSD_KERNEL_WATCHER_H_

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

#include "chorusd/log.h"
#include "chorusd/pass_trigger.h"
#include "lib/genl_client.h"

namespace chorus {

class KernelWatcher {
public:
    // trigger and log must outlive the watcher.
    KernelWatcher(PassTrigger& trigger, const Logger& log);
    // Stops the thread, within 250 ms (kStopLatency).
    ~KernelWatcher();
    KernelWatcher(const KernelWatcher&) = delete;
    KernelWatcher& operator=(const KernelWatcher&) = delete;

    void Start();
    // Listens on a new socket (the module may have been reloaded). Thread-safe.
    void Reopen() { reopen_ = true; }

private:
    void Run(std::stop_token stop);
    // Opens the listener, if the module is there; false if not.
    bool Open(std::optional<EventListener>& listener);
    // Waits for one event (or kStopLatency) and wakes a pass for it; false
    // if the listener is broken.
    bool Listen(EventListener& listener);
    void Pause(std::stop_token stop);

    PassTrigger& trigger_;
    const Logger& log_;
    std::atomic<bool> reopen_{false};
    // Not known to be loaded (at first: events before the listener are
    // unseen). Used by the thread only.
    bool module_missing_ = true;
    bool missing_logged_ = false;  // used by the thread only
    std::mutex mutex_;             // for pause_ only
    std::condition_variable_any pause_;
    std::jthread thread_;  // last: stopped and joined first
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_KERNEL_WATCHER_H_
