#include "lib/etcd_watch.h"

#include <algorithm>
#include <utility>

#include "lib/etcd_codec.h"
#include "lib/etcd_errors.h"

namespace chorus {

namespace {

using std::chrono::milliseconds;

milliseconds Until(std::chrono::steady_clock::time_point t) {
    return std::max(milliseconds(0),
                    std::chrono::ceil<milliseconds>(t - std::chrono::steady_clock::now()));
}

}  // namespace

EtcdWatch::EtcdWatch(const EtcdOptions& options, EtcdKeys keys, int64_t start_revision)
    : options_(options),
      endpoints_(options_.endpoints),
      keys_(std::move(keys)),
      next_revision_(start_revision),
      stream_(options_.tls),
      failures_(endpoints_, "watch", options_.log) {}

std::string EtcdWatch::endpoint() const {
    return stream_.open() && created_ ? endpoints_[current_] : std::string();
}

void EtcdWatch::Cancel() {
    canceled_ = true;
    stream_.Wake();
}

std::vector<EtcdEvent> EtcdWatch::Next(milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    std::vector<EtcdEvent> events;
    for (;;) {
        if (canceled_) {
            stream_.Close();
            return events;
        }
        ThrowPendingError();
        if (stream_.open() || OpenStream(deadline))
            PollStream(deadline, events);
        if (!events.empty() || Clock::now() >= deadline)
            return events;
    }
}

void EtcdWatch::ThrowPendingError() {
    if (!error_)
        return;
    std::exception_ptr error = error_;
    if (!compacted_)
        error_ = nullptr;
    std::rethrow_exception(error);
}

bool EtcdWatch::OpenStream(Clock::time_point deadline) {
    if (Clock::now() < retry_at_) {
        stream_.Sleep(Until(std::min(retry_at_, deadline)));
        if (Clock::now() < retry_at_)
            return false;
    }
    const std::string body = etcd::EncodeWatchCreate(keys_, next_revision_).dump();
    stream_.Open(endpoints_[current_] + "/v3/watch", body, options_.connect_timeout);
    opened_at_ = Clock::now();
    created_ = false;
    return true;
}

void EtcdWatch::PollStream(Clock::time_point deadline, std::vector<EtcdEvent>& events) {
    // Until etcd confirms the watch, the attempt has attempt_timeout.
    const Clock::time_point confirm_by = opened_at_ + options_.attempt_timeout;
    HttpLineStream::Chunk chunk =
        stream_.Poll(Until(created_ ? deadline : std::min(deadline, confirm_by)));
    for (const std::string& line : chunk.lines) {
        HandleLine(line, events);
        if (!stream_.open())
            return;  // that line ended this stream
    }
    if (chunk.ended)
        FailStream(std::move(chunk.end_reason));
    else if (!created_ && Clock::now() >= confirm_by)
        FailStream("no answer within " + std::to_string(options_.attempt_timeout.count()) + " ms");
}

void EtcdWatch::HandleLine(const std::string& line, std::vector<EtcdEvent>& events) {
    etcd::WatchMessage message;
    try {
        etcd::Json json = etcd::ParseObject(line);
        if (std::optional<etcd::GatewayError> error = etcd::DecodeGatewayError(json)) {
            Refused(error->code, error->message);
            return;
        }
        message = etcd::DecodeWatchMessage(json);
    } catch (const EtcdResponseError& e) {
        FailStream("malformed watch message: " + e.detail());
        return;
    }
    if (message.canceled && message.compact_revision > 0) {
        error_ = std::make_exception_ptr(
            EtcdCompactedError(endpoints_[current_], next_revision_, message.compact_revision));
        compacted_ = true;
        stream_.Close();
        return;
    }
    if (message.canceled) {
        FailStream("etcd canceled the watch: " +
                   (message.cancel_reason.empty() ? "no reason given" : message.cancel_reason));
        return;
    }
    if (message.created)
        Confirmed(message.revision);
    for (EtcdEvent& e : message.events) {
        next_revision_ = std::max(next_revision_, e.kv.mod_revision + 1);
        events.push_back(std::move(e));
    }
}

void EtcdWatch::Confirmed(int64_t header_revision) {
    created_ = true;
    failures_.Clear();
    backoff_.Reset();
    endpoints_.Prefer(current_);
    if (next_revision_ == 0)
        next_revision_ = header_revision + 1;
}

// An error message in the stream: a member that cannot serve (no leader)
// is a failed stream; anything else is etcd refusing the watch.
void EtcdWatch::Refused(int grpc_code, const std::string& message) {
    if (IsUnavailableAnswer(500, grpc_code)) {
        FailStream(message + " (" + GrpcCodeName(grpc_code) + ")");
        return;
    }
    error_ = std::make_exception_ptr(
        EtcdRequestError(endpoints_[current_], "watch", grpc_code, message));
    stream_.Close();
}

// The stream is over. One that etcd had confirmed is simply resumed on the
// next endpoint; one that never started counts as a failed attempt, and
// when every endpoint has failed in a row Next() reports it and the next
// round waits for the back-off.
void EtcdWatch::FailStream(std::string reason) {
    stream_.Close();
    const size_t failed = current_;
    current_ = (current_ + 1) % endpoints_.size();
    if (created_) {
        created_ = false;
        if (options_.log)
            options_.log(Severity::kWarn,
                         "etcd " + endpoints_[failed] + ": watch stream lost: " + reason +
                             "; resuming from revision " + std::to_string(next_revision_) + " on " +
                             endpoints_[current_]);
        return;
    }
    failures_.Failed(failed, std::move(reason));
    if (failures_.endpoints_failed() < endpoints_.size())
        return;
    error_ = std::make_exception_ptr(failures_.Unreachable());
    failures_.Clear();
    retry_at_ = Clock::now() + backoff_.Next();
}

}  // namespace chorus
