// PassTrigger: what wakes chorusd's control loop, and when.
#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include "chorusd/pass_trigger.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

TEST(PassTriggerTest, AWakeBeforeTheWaitIsKeptAndReturnedAtOnce) {
    PassTrigger trigger;
    std::stop_source stop;
    trigger.Wake("first");
    trigger.Wake("second");  // coalesced: one pass for both
    const Clock::time_point start = Clock::now();
    EXPECT_EQ(trigger.Wait(stop.get_token(), std::chrono::seconds(10)), "first");
    EXPECT_LT(Clock::now() - start, milliseconds(100));
    // Consumed: the next wait lasts its period.
    EXPECT_EQ(trigger.Wait(stop.get_token(), milliseconds(50)), "period");
}

TEST(PassTriggerTest, AWakeFromAnotherThreadEndsTheWait) {
    PassTrigger trigger;
    std::stop_source stop;
    std::jthread waker([&] {
        std::this_thread::sleep_for(milliseconds(100));
        trigger.Wake("etcd watch");
    });
    const Clock::time_point start = Clock::now();
    EXPECT_EQ(trigger.Wait(stop.get_token(), std::chrono::seconds(10)), "etcd watch");
    EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(PassTriggerTest, ThePeriodEndsAQuietWait) {
    PassTrigger trigger;
    std::stop_source stop;
    const Clock::time_point start = Clock::now();
    EXPECT_EQ(trigger.Wait(stop.get_token(), milliseconds(200)), "period");
    EXPECT_GE(Clock::now() - start, milliseconds(200));
}

TEST(PassTriggerTest, TheEarliestWakeByCountsAndIsForgottenAfterThePass) {
    PassTrigger trigger;
    std::stop_source stop;
    const Clock::time_point start = Clock::now();
    trigger.WakeBy(start + milliseconds(400), "pool");
    trigger.WakeBy(start + milliseconds(100), "resync progress");
    trigger.WakeBy(start + milliseconds(300), "retry");
    EXPECT_EQ(trigger.Wait(stop.get_token(), std::chrono::seconds(10)), "resync progress");
    const auto waited = Clock::now() - start;
    EXPECT_GE(waited, milliseconds(100));
    EXPECT_LT(waited, milliseconds(300));
    // The later times were for that pass to ask again: not kept.
    EXPECT_EQ(trigger.Wait(stop.get_token(), milliseconds(500)), "period");
}

TEST(PassTriggerTest, AWakeByPastThePeriodWaitsThePeriodOnly) {
    PassTrigger trigger;
    std::stop_source stop;
    trigger.WakeBy(Clock::now() + std::chrono::seconds(30), "pool");
    EXPECT_EQ(trigger.Wait(stop.get_token(), milliseconds(100)), "period");
}

TEST(PassTriggerTest, StopEndsTheWaitAtOnce) {
    PassTrigger trigger;
    std::stop_source stop;
    std::jthread stopper([&] {
        std::this_thread::sleep_for(milliseconds(100));
        stop.request_stop();
    });
    const Clock::time_point start = Clock::now();
    EXPECT_EQ(trigger.Wait(stop.get_token(), std::chrono::seconds(10)), "");
    EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

}  // namespace
}  // namespace chorus
