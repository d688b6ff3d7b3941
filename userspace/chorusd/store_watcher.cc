#include "chorusd/store_watcher.h"

#include <utility>

#include "lib/etcd_errors.h"
#include "lib/etcd_watch.h"

namespace chorus {

namespace {

// How long one wait for events lasts. Any length will do: Cancel() ends a
// wait at once, and a quiet watch costs nothing while it waits.
constexpr auto kEventWait = std::chrono::seconds(30);
// While etcd cannot be reached: how soon a watch confirmed again is noticed.
constexpr auto kLostEventWait = std::chrono::seconds(1);
// After etcd refused the watch (not a failure to reach it) or the watch
// failed otherwise: the pause before trying again, so that a failure
// repeated costs no busy loop.
constexpr auto kRefusedPause = std::chrono::seconds(5);

bool StartsWith(const std::string& s, const std::string& prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

void Log(const EtcdOptions& options, Severity s, const std::string& msg) {
    if (options.log)
        options.log(s, msg);
}

}  // namespace

StoreWatcher::StoreWatcher(const EtcdOptions& options, std::string prefix,
                           std::vector<std::string> ignored, PassTrigger& trigger)
    : options_(options),
      prefix_(std::move(prefix)),
      ignored_(std::move(ignored)),
      trigger_(trigger) {}

StoreWatcher::~StoreWatcher() {
    if (thread_.joinable()) {
        thread_.request_stop();
        thread_.join();
    }
}

void StoreWatcher::Start() {
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void StoreWatcher::Read(int64_t revision) {
    {
        std::lock_guard lock(mutex_);
        if (revision <= read_revision_)
            return;
        read_revision_ = revision;
    }
    read_cv_.notify_all();
}

int64_t StoreWatcher::WaitForRead(std::stop_token stop, int64_t min_revision) {
    std::unique_lock lock(mutex_);
    if (!read_cv_.wait(lock, stop, [&] { return read_revision_ >= min_revision; }))
        return 0;
    return read_revision_;
}

void StoreWatcher::Run(std::stop_token stop) {
    int64_t need = 1;
    for (;;) {
        const int64_t read = WaitForRead(stop, need);
        if (read == 0)
            return;
        try {
            Watch(stop, read + 1);
            return;
        } catch (const EtcdCompactedError& e) {
            // What changed since is lost to the watch: a pass reads it all
            // (a read is at or after the compaction), and the watch starts
            // again after that read.
            Log(options_, Severity::kWarn,
                std::string(e.what()) + ": reading the whole store again, then watching anew");
            need = e.compact_revision();
            trigger_.Wake("etcd compacted the watched revision");
        } catch (const Error& e) {
            // Not one of the watch's documented failures (curl could not
            // set up a stream): the safety net's passes go on meanwhile.
            Log(options_, Severity::kError, std::string("watching the store: ") + e.what());
            Pause(stop);
        }
    }
}

void StoreWatcher::Pause(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    read_cv_.wait_for(lock, stop, kRefusedPause, [] { return false; });
}

void StoreWatcher::Watch(std::stop_token stop, int64_t from) {
    EtcdWatch watch(options_, EtcdKeys::Prefix(prefix_), from);
    std::stop_callback cancel(stop, [&watch] { watch.Cancel(); });
    bool lost = false;
    while (!stop.stop_requested()) {
        std::vector<EtcdEvent> events;
        try {
            events = watch.Next(lost ? kLostEventWait : kEventWait);
        } catch (const EtcdUnreachableError&) {
            lost = true;  // logged per endpoint by the watch; it backs off
            continue;
        } catch (const EtcdRequestError& e) {
            Log(options_, Severity::kError, std::string("watching the store: ") + e.what());
            lost = true;
            Pause(stop);
            continue;
        }
        if (lost && !watch.endpoint().empty()) {
            // Passes failed meanwhile; what they could not do waits no longer.
            lost = false;
            Log(options_, Severity::kInfo, "watching the store again on " + watch.endpoint());
            trigger_.Wake("etcd reachable again");
        }
        if (Unread(events))
            trigger_.Wake("etcd watch");
    }
}

bool StoreWatcher::Unread(const std::vector<EtcdEvent>& events) {
    int64_t read;
    {
        std::lock_guard lock(mutex_);
        read = read_revision_;
    }
    for (const EtcdEvent& e : events) {
        if (e.kv.mod_revision <= read)
            continue;
        bool ignored = false;
        for (const std::string& p : ignored_)
            ignored = ignored || StartsWith(e.kv.key, p);
        if (!ignored)
            return true;
    }
    return false;
}

}  // namespace chorus
