// Gives the kernel its lease deadline from a thread of its own.
//
// A netlink command can wait behind another one in the kernel (a role
// change, a write-set change writing its bitmap: they hold the module's
// volume list lock for their duration). If the session keeper gave the
// deadline itself, such a wait would delay its next keepalive and could cost
// the node its session. The keeper posts each deadline here instead and goes
// on; this thread gives the newest one it has. A deadline that arrives late
// is only a shorter lease for the kernel, never a longer one: the deadline is
// absolute, earned by a keepalive that succeeded.
#ifndef CHORUS_CHORUSD_DEADLINE_GIVER_H_
#define CHORUS_CHORUSD_DEADLINE_GIVER_H_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stop_token>
#include <thread>

#include "chorusd/log.h"
#include "lib/genl_client.h"

namespace chorus {

class DeadlineGiver {
public:
    explicit DeadlineGiver(const Logger& log);  // log must outlive the giver
    ~DeadlineGiver();                           // stops the thread; a pending deadline is dropped
    DeadlineGiver(const DeadlineGiver&) = delete;
    DeadlineGiver& operator=(const DeadlineGiver&) = delete;

    // Queues @deadline_ns (CLOCK_BOOTTIME) for the kernel, replacing one not
    // given yet. Thread-safe; never blocks on the kernel.
    void Post(uint64_t deadline_ns);

private:
    void Run(std::stop_token stop);
    void Give(uint64_t deadline_ns);
    VolumeClient* Kernel();

    const Logger& log_;
    std::optional<VolumeClient> kernel_;  // used by the thread only
    bool module_missing_logged_ = false;  // used by the thread only

    std::mutex mutex_;
    std::condition_variable_any posted_;
    std::optional<uint64_t> pending_;  // protected by mutex_
    std::jthread thread_;              // last: started once the rest exists
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_DEADLINE_GIVER_H_
