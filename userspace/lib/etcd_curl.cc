#include "lib/etcd_curl.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <mutex>
#include <utility>

#include "lib/errors.h"

namespace chorus {

namespace {

using std::chrono::milliseconds;

// A stream message longer than this is not etcd's: stop reading.
constexpr size_t kMaxBuffered = size_t{64} << 20;

void GlobalInit() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
            throw Error("curl_global_init failed");
    });
}

CurlEasyPtr NewEasy() {
    GlobalInit();
    CurlEasyPtr easy(curl_easy_init());
    if (!easy)
        throw Error("curl_easy_init failed", ENOMEM);
    return easy;
}

CurlSlistPtr GatewayHeaders() {
    // Expect: curl would otherwise wait for "100 Continue" before a large
    // body. hasleader: a member that has lost its leader answers at once
    // with "no leader" (and cancels its watches) instead of hanging until
    // its own timeout, so the caller fails over to a member that can serve.
    CurlSlistPtr list;
    for (const char* h :
         {"Content-Type: application/json", "Expect:", "Grpc-Metadata-hasleader: true"}) {
        curl_slist* grown = curl_slist_append(list.get(), h);
        if (grown == nullptr)
            throw Error("curl_slist_append failed", ENOMEM);
        list.release();
        list.reset(grown);
    }
    return list;
}

// At least 1: curl reads 0 as "no timeout".
long Millis(milliseconds ms) {
    return static_cast<long>(std::clamp<milliseconds::rep>(ms.count(), 1, INT_MAX));
}

void SetPostOptions(CURL* easy, const curl_slist* headers, const EtcdTls& tls,
                    const std::string& url, const std::string& body, milliseconds connect_timeout,
                    char* error) {
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, body.data());
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, Millis(connect_timeout));
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error);
    // The endpoints are the cluster's own: never through an http_proxy
    // from the environment. No signals: timeouts must work in threads.
    curl_easy_setopt(easy, CURLOPT_PROXY, "");
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    SetTlsOptions(easy, tls);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    error[0] = '\0';
}

// curl's reason for a failed transfer on easy, with TLS failures explained.
CurlFailure Describe(CURL* easy, CURLcode code, const char* error, const EtcdTls& tls) {
    const char* url = nullptr;
    curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &url);
    curl_off_t handshake_us = 0;
    curl_easy_getinfo(easy, CURLINFO_APPCONNECT_TIME_T, &handshake_us);
    // Only a handshake of this transfer's own new connection: a cached
    // connection that breaks is a member that went away, not a refusal.
    long new_connections = 0;
    curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &new_connections);
    const bool https = url != nullptr && std::string_view(url).rfind("https://", 0) == 0;
    return DescribeCurlFailure(code, error[0] != '\0' ? error : curl_easy_strerror(code), https,
                               handshake_us > 0 && new_connections > 0, tls);
}

size_t AppendToString(char* data, size_t size, size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
}

}  // namespace

HttpPoster::HttpPoster(EtcdTls tls)
    : tls_(std::move(tls)), easy_(NewEasy()), headers_(GatewayHeaders()) {}

HttpReply HttpPoster::Post(const std::string& url, const std::string& body,
                           milliseconds connect_timeout, milliseconds timeout) {
    HttpReply reply;
    char error[CURL_ERROR_SIZE];
    CURL* easy = easy_.get();
    SetPostOptions(easy, headers_.get(), tls_, url, body, connect_timeout, error);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, Millis(timeout));
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, AppendToString);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &reply.body);
    CURLcode code = curl_easy_perform(easy);
    if (code != CURLE_OK) {
        CurlFailure failure = Describe(easy, code, error, tls_);
        reply.failure = std::move(failure.reason);
        reply.tls_failure = failure.tls;
    }
    // error and reply live on this stack frame only.
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, nullptr);
    if (code != CURLE_OK)
        return reply;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &reply.status);
    reply.answered = true;
    return reply;
}

// libcurl 7.88 has no option for the number of probes (CURLOPT_TCP_KEEPCNT
// came in 8.9): set on the socket, after curl's own keepalive options.
int HttpLineStream::SetKeepaliveProbes(void*, curl_socket_t fd, curlsocktype) {
    const int probes = 3;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
    return CURL_SOCKOPT_OK;
}

HttpLineStream::HttpLineStream(EtcdTls tls) : tls_(std::move(tls)), headers_(GatewayHeaders()) {
    GlobalInit();
    multi_.reset(curl_multi_init());
    if (!multi_)
        throw Error("curl_multi_init failed", ENOMEM);
}

HttpLineStream::~HttpLineStream() {
    Close();
}

void HttpLineStream::Open(const std::string& url, const std::string& body,
                          milliseconds connect_timeout) {
    Close();
    CurlEasyPtr easy = NewEasy();
    SetPostOptions(easy.get(), headers_.get(), tls_, url, body, connect_timeout, error_);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, &HttpLineStream::Receive);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, this);
    // A watch may be quiet for hours: probe the connection so that a
    // member that vanished without a FIN (its machine died, its link was
    // cut) is noticed within about 5 s (2 s idle, then 3 probes 1 s
    // apart), and the watch resumes on another endpoint. chorusd's passes
    // wait for the watch, so a stream hung on a dead member would delay
    // what it should announce until TCP's default gave up (minutes).
    curl_easy_setopt(easy.get(), CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy.get(), CURLOPT_TCP_KEEPIDLE, 2L);
    curl_easy_setopt(easy.get(), CURLOPT_TCP_KEEPINTVL, 1L);
    curl_easy_setopt(easy.get(), CURLOPT_SOCKOPTFUNCTION, &SetKeepaliveProbes);
    if (curl_multi_add_handle(multi_.get(), easy.get()) != CURLM_OK)
        throw Error("curl_multi_add_handle failed");
    easy_ = std::move(easy);
}

void HttpLineStream::Close() {
    if (!easy_)
        return;
    curl_multi_remove_handle(multi_.get(), easy_.get());
    easy_.reset();
    buffer_.clear();
    overflow_ = false;
}

HttpLineStream::Chunk HttpLineStream::Poll(milliseconds wait) {
    Chunk chunk;
    if (!easy_)
        return chunk;
    int running = 0;
    curl_multi_perform(multi_.get(), &running);
    TakeLines(chunk.lines);
    if (chunk.lines.empty() && running > 0) {
        curl_multi_poll(multi_.get(), nullptr, 0, static_cast<int>(Millis(wait)), nullptr);
        curl_multi_perform(multi_.get(), &running);
        TakeLines(chunk.lines);
    }
    if (running == 0 && Finished(chunk.end_reason)) {
        chunk.ended = true;
        if (!buffer_.empty() && !overflow_)
            chunk.lines.push_back(std::move(buffer_));
        buffer_.clear();
    }
    return chunk;
}

void HttpLineStream::Sleep(milliseconds wait) {
    curl_multi_poll(multi_.get(), nullptr, 0, static_cast<int>(Millis(wait)), nullptr);
}

void HttpLineStream::Wake() {
    curl_multi_wakeup(multi_.get());
}

size_t HttpLineStream::Receive(char* data, size_t size, size_t count, void* self) {
    auto* stream = static_cast<HttpLineStream*>(self);
    if (stream->buffer_.size() + size * count > kMaxBuffered) {
        stream->overflow_ = true;
        return 0;  // curl ends the transfer with a write error
    }
    stream->buffer_.append(data, size * count);
    return size * count;
}

void HttpLineStream::TakeLines(std::vector<std::string>& lines) {
    size_t start = 0;
    for (size_t nl; (nl = buffer_.find('\n', start)) != std::string::npos; start = nl + 1) {
        if (nl > start)
            lines.push_back(buffer_.substr(start, nl - start));
    }
    buffer_.erase(0, start);
}

bool HttpLineStream::Finished(std::string& reason) {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_.get(), &left)) {
        if (msg->msg != CURLMSG_DONE || msg->easy_handle != easy_.get())
            continue;
        CURLcode code = msg->data.result;
        long status = 0;
        curl_easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &status);
        if (overflow_)
            reason = "a stream message longer than " + std::to_string(kMaxBuffered >> 20) + " MiB";
        else if (code != CURLE_OK)
            reason = Describe(easy_.get(), code, error_, tls_).reason;
        else
            reason = "the server ended the stream (HTTP " + std::to_string(status) + ")";
        return true;
    }
    return false;
}

}  // namespace chorus
