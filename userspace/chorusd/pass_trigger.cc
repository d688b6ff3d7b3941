#include "chorusd/pass_trigger.h"

namespace chorus {

void PassTrigger::Wake(const std::string& why) {
    {
        std::lock_guard lock(mutex_);
        if (!woken_)
            woken_ = why;
        ++requests_;
    }
    changed_.notify_all();
}

void PassTrigger::WakeBy(Clock::time_point when, const std::string& why) {
    {
        std::lock_guard lock(mutex_);
        if (due_ && *due_ <= when)
            return;
        due_ = when;
        due_why_ = why;
        ++requests_;
    }
    changed_.notify_all();
}

std::string PassTrigger::Wait(std::stop_token stop, Clock::duration period) {
    const Clock::time_point period_end = Clock::now() + period;
    std::unique_lock lock(mutex_);
    for (;;) {
        if (stop.stop_requested())
            return {};
        std::string why;
        if (woken_) {
            why = std::move(*woken_);
        } else if (due_ && *due_ <= Clock::now()) {
            why = due_why_;
        } else if (Clock::now() >= period_end) {
            why = "period";
        } else {
            const Clock::time_point until = due_ ? std::min(*due_, period_end) : period_end;
            const uint64_t seen = requests_;
            changed_.wait_until(lock, stop, until, [&] { return requests_ != seen; });
            continue;
        }
        woken_.reset();
        due_.reset();
        return why;
    }
}

}  // namespace chorus
