// StoreWatcher and PassTrigger together, against a real etcd 3.4: what
// wakes chorusd's control loop from the store. Each test plays the loop:
// waits on the trigger and, for each pass, reads the prefix and tells the
// watcher the revision it read.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "chorusd/pass_trigger.h"
#include "chorusd/store_watcher.h"
#include "etcd_server.h"
#include "lib/etcd_client.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class StoreWatcherTest : public ::testing::Test {
protected:
    EtcdOptions LoggingOptions() {
        EtcdOptions options = etcd_.Options();
        options.log = [this](Severity, const std::string& msg) {
            std::lock_guard<std::mutex> lock(log_mutex_);
            log_ += msg + "\n";
        };
        return options;
    }
    std::string Log() {
        std::lock_guard<std::mutex> lock(log_mutex_);
        return log_;
    }
    // A pass: reads everything under /chorus/, as ReadClusterView does.
    int64_t Pass(StoreWatcher& watcher) {
        const int64_t revision = client_.Range(EtcdKeys::Prefix("/chorus/")).revision;
        watcher.Read(revision);
        return revision;
    }
    // Waits for the next wake-up that is not the safety net.
    std::string NextWake(milliseconds within = milliseconds(5000)) {
        return trigger_.Wait(stop_.get_token(), within);
    }

    test::EtcdCluster etcd_;
    EtcdClient client_{etcd_.Options()};
    PassTrigger trigger_;
    std::stop_source stop_;
    std::mutex log_mutex_;
    std::string log_;
};

TEST_F(StoreWatcherTest, APutUnderThePrefixWakesAPassAtOnce) {
    StoreWatcher watcher(etcd_.Options(), "/chorus/", {"/chorus/status/"}, trigger_);
    watcher.Start();
    Pass(watcher);
    // Written between the first read and the watch's start: not missed.
    client_.Put("/chorus/volumes/early", "x");
    EXPECT_EQ(NextWake(), "etcd watch");
    Pass(watcher);

    client_.Put("/elsewhere", "x");        // not watched
    client_.Put("/chorus/status/1", "x");  // ignored: no pass reads it
    EXPECT_EQ(NextWake(milliseconds(500)), "period");
    const Clock::time_point put = Clock::now();
    client_.DeleteRange(EtcdKeys::Key("/chorus/volumes/early"));  // an owner key's expiry, say
    EXPECT_EQ(NextWake(), "etcd watch");
    EXPECT_LT(Clock::now() - put, milliseconds(500));
}

// The loop's own writes, once a pass has read them, wake nothing more.
TEST_F(StoreWatcherTest, AChangeAPassHasReadWakesNothing) {
    StoreWatcher watcher(etcd_.Options(), "/chorus/", {}, trigger_);
    watcher.Start();
    Pass(watcher);
    // Let the watch start before the write, so its event is not replayed
    // before the pass below reads it.
    EXPECT_EQ(NextWake(milliseconds(500)), "period");
    client_.Put("/chorus/owner/vol0", "mine");
    Pass(watcher);  // reads it before the event can be handled, most likely
    const std::string wake = NextWake(milliseconds(500));
    // The event may have won the race with the read; never a second wake.
    if (wake != "period") {
        EXPECT_EQ(NextWake(milliseconds(500)), "period");
    }
}

TEST_F(StoreWatcherTest, ACompactedRevisionWakesAPassAndTheWatchStartsAfterIt) {
    const int64_t first = client_.Put("/chorus/volumes/a", "1");
    client_.Put("/chorus/volumes/a", "2");
    client_.Compact(client_.Put("/chorus/volumes/a", "3"));
    StoreWatcher watcher(LoggingOptions(), "/chorus/", {}, trigger_);
    watcher.Start();
    watcher.Read(first);  // a pass read the store before the compaction

    EXPECT_EQ(NextWake(), "etcd compacted the watched revision");
    EXPECT_NE(Log().find("reading the whole store again"), std::string::npos) << Log();
    Pass(watcher);  // the re-read
    EXPECT_EQ(NextWake(milliseconds(500)), "period");
    client_.Put("/chorus/volumes/a", "4");
    EXPECT_EQ(NextWake(), "etcd watch");
}

// The member under the watch dies and comes back: the watch resumes, and
// a pass runs for whatever failed meanwhile.
TEST_F(StoreWatcherTest, EtcdBackWakesAPass) {
    StoreWatcher watcher(LoggingOptions(), "/chorus/", {}, trigger_);
    watcher.Start();
    Pass(watcher);
    EXPECT_EQ(NextWake(milliseconds(500)), "period");
    etcd_.Kill(0);
    EXPECT_EQ(NextWake(milliseconds(1500)), "period");  // no busy wake-ups meanwhile
    etcd_.Restart(0);
    const std::string wake = NextWake();
    EXPECT_TRUE(wake == "etcd reachable again" || wake == "etcd watch") << wake << "\n" << Log();
    client_.Put("/chorus/volumes/b", "1");
    std::string next = NextWake();
    if (next == "etcd reachable again")
        next = NextWake();
    EXPECT_EQ(next, "etcd watch") << Log();
}

TEST_F(StoreWatcherTest, StopsPromptlyWhileWaitingForARead) {
    Clock::time_point start;
    {
        StoreWatcher watcher(etcd_.Options(), "/chorus/", {}, trigger_);
        watcher.Start();
        start = Clock::now();
    }
    EXPECT_LT(Clock::now() - start, milliseconds(500));
}

TEST_F(StoreWatcherTest, StopsPromptlyWhileWatching) {
    Clock::time_point start;
    {
        StoreWatcher watcher(etcd_.Options(), "/chorus/", {}, trigger_);
        watcher.Start();
        Pass(watcher);
        EXPECT_EQ(NextWake(milliseconds(300)), "period");  // the stream is up by now
        start = Clock::now();
    }
    EXPECT_LT(Clock::now() - start, milliseconds(500));
}

}  // namespace
}  // namespace chorus
