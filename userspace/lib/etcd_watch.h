// A watch on a key or a prefix that outlives its stream: when the stream
// breaks, the watch opens a new one on the next endpoint, starting at the
// revision after the last event it delivered, so no event is lost or
// delivered twice.
//
// Made for a daemon's loop: Next() waits up to a timeout for the next
// events. The usual pattern is to Range the prefix (its state at revision
// R), watch from R + 1, and on EtcdCompactedError do both again.
#ifndef CHORUS_LIB_ETCD_WATCH_H_
#define CHORUS_LIB_ETCD_WATCH_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "lib/etcd_client.h"
#include "lib/etcd_curl.h"
#include "lib/etcd_failover.h"
#include "lib/etcd_types.h"

namespace chorus {

class EtcdWatch {
public:
    // Watches keys from start_revision on. start_revision 0 means from the
    // next change on; the watch then fixes its start when etcd confirms it,
    // so a write racing with that confirmation may be missed: give a
    // revision when every change counts. Connects on the first Next().
    // Throws chorus::Error if an endpoint is not "http(s)://host[:port]".
    EtcdWatch(const EtcdOptions& options, EtcdKeys keys, int64_t start_revision);
    EtcdWatch(const EtcdWatch&) = delete;
    EtcdWatch& operator=(const EtcdWatch&) = delete;

    // Waits up to timeout for events and returns the first that arrive, in
    // revision order; nothing on timeout or after Cancel(). Throws
    //  - EtcdCompactedError when the revision to start or resume from is
    //    compacted; the watch is over, every later call throws it again;
    //  - EtcdUnreachableError when every endpoint failed in a row to start
    //    the watch; the next call tries again, after a pause;
    //  - EtcdRequestError when etcd refuses the watch.
    // Events received before an error are returned first.
    std::vector<EtcdEvent> Next(std::chrono::milliseconds timeout);

    // Where the watch resumes: the revision after the last event returned.
    int64_t next_revision() const { return next_revision_; }

    // The endpoint of the stream etcd has confirmed, empty when none.
    std::string endpoint() const;

    // From any thread: a Next() in progress returns at once, and every
    // later one returns nothing.
    void Cancel();

private:
    using Clock = std::chrono::steady_clock;

    bool OpenStream(Clock::time_point deadline);
    void PollStream(Clock::time_point deadline, std::vector<EtcdEvent>& events);
    void HandleLine(const std::string& line, std::vector<EtcdEvent>& events);
    void Confirmed(int64_t header_revision);
    void Refused(int grpc_code, const std::string& message);
    void FailStream(std::string reason);
    void ThrowPendingError();

    EtcdOptions options_;
    EtcdEndpoints endpoints_;
    EtcdKeys keys_;
    int64_t next_revision_;
    HttpLineStream stream_;
    size_t current_ = 0;    // the endpoint of the stream, or of the next one
    bool created_ = false;  // etcd has confirmed the watch on this stream
    Clock::time_point opened_at_;
    EtcdAttempts failures_;  // of streams that never started, since the last that did
    EtcdBackoff backoff_;
    Clock::time_point retry_at_;  // after a whole round failed: no stream before
    std::exception_ptr error_;    // thrown once the events before it are out
    bool compacted_ = false;      // error_ is final
    std::atomic<bool> canceled_{false};
};

}  // namespace chorus

#endif  // CHORUS_LIB_ETCD_WATCH_H_
