// What starts a pass of chorusd's control loop (Documentation/cluster.md,
// "When a pass runs"). The watchers of the store and of the kernel and the
// session keeper ask for a pass at once; the loop itself asks for one by a
// time when something it tends changes without telling (a resync's
// progress, held writes, a failed step to retry). The loop waits for the
// first of these, or for its safety-net period, whichever comes first.
// Requests made while a pass runs are kept: the next Wait() returns at once.
#ifndef CHORUS_CHORUSD_PASS_TRIGGER_H_
#define CHORUS_CHORUSD_PASS_TRIGGER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

namespace chorus {

class PassTrigger {
public:
    using Clock = std::chrono::steady_clock;

    // A pass as soon as possible; why names the cause ("etcd watch"), for
    // the debug log. Thread-safe.
    void Wake(const std::string& why);
    // A pass no later than when. Only the earliest time asked since the
    // last Wait() returned counts: each pass asks again for what it still
    // needs. Thread-safe.
    void WakeBy(Clock::time_point when, const std::string& why);
    // Waits for a Wake(), the earliest WakeBy() time or period, whichever
    // comes first, and returns its cause ("period" for the last); an empty
    // string if stop was requested.
    std::string Wait(std::stop_token stop, Clock::duration period);

private:
    std::mutex mutex_;
    std::condition_variable_any changed_;
    std::optional<std::string> woken_;  // the first Wake() not yet waited for
    std::optional<Clock::time_point> due_;
    std::string due_why_;
    uint64_t requests_ = 0;  // counts Wake() and WakeBy(): a waiter sees a new one
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_PASS_TRIGGER_H_
