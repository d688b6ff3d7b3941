// EtcdWatch against a real etcd 3.4: events in order, resuming after the
// stream is lost, compaction reported and recovered from, timeouts and
// Cancel().
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "etcd_server.h"
#include "lib/etcd_client.h"
#include "lib/etcd_watch.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// "PUT key=value @rev" or "DELETE key @rev".
std::string Describe(const EtcdEvent& e) {
    if (e.type == EtcdEvent::Type::kDelete)
        return "DELETE " + e.kv.key + " @" + std::to_string(e.kv.mod_revision);
    return "PUT " + e.kv.key + "=" + e.kv.value + " @" + std::to_string(e.kv.mod_revision);
}

// Calls Next() until count events have arrived or timeout has passed.
std::vector<std::string> Collect(EtcdWatch& watch, size_t count,
                                 milliseconds timeout = milliseconds(5000)) {
    std::vector<std::string> seen;
    const Clock::time_point deadline = Clock::now() + timeout;
    while (seen.size() < count && Clock::now() < deadline) {
        for (const EtcdEvent& e : watch.Next(milliseconds(200)))
            seen.push_back(Describe(e));
    }
    return seen;
}

class EtcdWatchTest : public ::testing::Test {
protected:
    EtcdOptions LoggingOptions() {
        EtcdOptions options = etcd_.Options();
        options.log = [this](Severity, const std::string& msg) {
            std::lock_guard<std::mutex> lock(log_mutex_);
            log_.push_back(msg);
        };
        return options;
    }
    std::string Log() {
        std::lock_guard<std::mutex> lock(log_mutex_);
        std::string all;
        for (const auto& line : log_)
            all += line + "\n";
        return all;
    }

    test::EtcdCluster etcd_;
    EtcdClient client_{etcd_.Options()};
    std::mutex log_mutex_;
    std::vector<std::string> log_;
};

TEST_F(EtcdWatchTest, SeesPutsAndDeletesInOrder) {
    const int64_t start = client_.Range(EtcdKeys::Prefix("w/")).revision + 1;
    EtcdWatch watch(client_.options(), EtcdKeys::Prefix("w/"), start);
    const int64_t a = client_.Put("w/a", "1");
    client_.Put("elsewhere", "x");
    const int64_t b = client_.Put("w/b", "2");
    const int64_t del = client_.DeleteRange(EtcdKeys::Key("w/a")).revision;
    const int64_t a2 = client_.Put("w/a", "3");
    EXPECT_EQ(Collect(watch, 4),
              (std::vector<std::string>{
                  "PUT w/a=1 @" + std::to_string(a), "PUT w/b=2 @" + std::to_string(b),
                  "DELETE w/a @" + std::to_string(del), "PUT w/a=3 @" + std::to_string(a2)}));
    EXPECT_EQ(watch.next_revision(), a2 + 1);
    EXPECT_EQ(watch.endpoint(), etcd_.endpoint(0));
}

TEST_F(EtcdWatchTest, ReplaysFromAPastRevisionWithCreateRevisions) {
    const int64_t first = client_.Put("w/x", "1");
    client_.Put("w/x", "2");
    EtcdWatch watch(client_.options(), EtcdKeys::Key("w/x"), first);
    std::vector<EtcdEvent> events;
    const Clock::time_point deadline = Clock::now() + milliseconds(5000);
    while (events.size() < 2 && Clock::now() < deadline) {
        for (EtcdEvent& e : watch.Next(milliseconds(200)))
            events.push_back(std::move(e));
    }
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].kv.value, "2");
    EXPECT_EQ(events[1].kv.create_revision, first);
    EXPECT_EQ(events[1].kv.version, 2);
}

// The member dies under the watch and comes back; meanwhile the store
// moves on. The watch resumes from the revision after its last event:
// nothing lost, nothing twice.
TEST_F(EtcdWatchTest, ResumesFromTheNextRevisionAfterTheStreamIsLost) {
    EtcdWatch watch(LoggingOptions(), EtcdKeys::Prefix("w/"),
                    client_.Range(EtcdKeys::Prefix("w/")).revision + 1);
    const int64_t a = client_.Put("w/a", "1");
    ASSERT_EQ(Collect(watch, 1), (std::vector<std::string>{"PUT w/a=1 @" + std::to_string(a)}));

    etcd_.Kill(0);
    etcd_.Restart(0);
    const int64_t b = client_.Put("w/b", "2");
    const int64_t del = client_.DeleteRange(EtcdKeys::Key("w/a")).revision;

    EXPECT_EQ(Collect(watch, 2), (std::vector<std::string>{"PUT w/b=2 @" + std::to_string(b),
                                                           "DELETE w/a @" + std::to_string(del)}));
    EXPECT_TRUE(watch.Next(milliseconds(100)).empty());  // and nothing else
    EXPECT_NE(Log().find("watch stream lost"), std::string::npos) << Log();
    EXPECT_NE(Log().find("resuming from revision " + std::to_string(a + 1)), std::string::npos)
        << Log();
}

TEST_F(EtcdWatchTest, CompactedStartIsReportedAndTheCallerRecovers) {
    const int64_t first = client_.Put("w/k", "1");
    client_.Put("w/k", "2");
    const int64_t third = client_.Put("w/k", "3");
    client_.Compact(third);

    EtcdWatch stale(client_.options(), EtcdKeys::Prefix("w/"), first);
    try {
        stale.Next(milliseconds(2000));
        FAIL() << "a watch from a compacted revision started";
    } catch (const EtcdCompactedError& e) {
        EXPECT_EQ(e.start_revision(), first);
        EXPECT_EQ(e.compact_revision(), third);
        EXPECT_EQ(e.endpoint(), etcd_.endpoint(0));
    }
    EXPECT_THROW(stale.Next(milliseconds(100)), EtcdCompactedError);  // for good

    // Recovery: read the state, watch from the revision after it.
    EtcdRangeResult state = client_.Range(EtcdKeys::Prefix("w/"));
    ASSERT_EQ(state.kvs.size(), 1u);
    EXPECT_EQ(state.kvs[0].value, "3");
    EtcdWatch fresh(client_.options(), EtcdKeys::Prefix("w/"), state.revision + 1);
    const int64_t fourth = client_.Put("w/k", "4");
    EXPECT_EQ(Collect(fresh, 1),
              (std::vector<std::string>{"PUT w/k=4 @" + std::to_string(fourth)}));
}

TEST_F(EtcdWatchTest, QuietWatchTimesOutAndCancelEndsAWait) {
    EtcdWatch watch(client_.options(), EtcdKeys::Prefix("w/"), 0);
    Clock::time_point start = Clock::now();
    EXPECT_TRUE(watch.Next(milliseconds(300)).empty());
    EXPECT_GE(Clock::now() - start, milliseconds(300));
    EXPECT_GT(watch.next_revision(), 0);  // fixed once etcd confirmed the watch

    std::thread canceler([&] {
        std::this_thread::sleep_for(milliseconds(200));
        watch.Cancel();
    });
    start = Clock::now();
    EXPECT_TRUE(watch.Next(milliseconds(10000)).empty());
    EXPECT_LT(Clock::now() - start, milliseconds(2000));
    canceler.join();
    client_.Put("w/after", "x");
    EXPECT_TRUE(watch.Next(milliseconds(100)).empty());
}

}  // namespace
}  // namespace chorus
