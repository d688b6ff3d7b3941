// libcurl for the etcd client: handles owned by unique_ptr, one unary
// HTTP(S) POST with timeouts, and a streaming POST read line by line.
#ifndef CHORUS_LIB_ETCD_CURL_H_
#define CHORUS_LIB_ETCD_CURL_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <curl/curl.h>

#include "lib/etcd_tls.h"

namespace chorus {

struct CurlEasyDeleter {
    void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct CurlMultiDeleter {
    void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct CurlSlistDeleter {
    void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using CurlEasyPtr = std::unique_ptr<CURL, CurlEasyDeleter>;
using CurlMultiPtr = std::unique_ptr<CURLM, CurlMultiDeleter>;
using CurlSlistPtr = std::unique_ptr<curl_slist, CurlSlistDeleter>;

// What one HTTP exchange came to.
struct HttpReply {
    bool answered = false;     // false: no HTTP answer (refused, timed out, reset)
    std::string failure;       // why not, when !answered: curl's message, TLS explained
    bool tls_failure = false;  // failure is TLS's (etcd_tls.h, CurlFailure)
    long status = 0;
    std::string body;
};

// One reusable easy handle for unary POSTs of JSON: its connection cache
// keeps the connections to the endpoints open between calls. Not
// thread-safe.
class HttpPoster {
public:
    // tls applies to https URLs.
    explicit HttpPoster(EtcdTls tls = {});

    // POSTs body to url. connect_timeout bounds the TCP connect, timeout
    // the whole exchange.
    HttpReply Post(const std::string& url, const std::string& body,
                   std::chrono::milliseconds connect_timeout, std::chrono::milliseconds timeout);

private:
    EtcdTls tls_;
    CurlEasyPtr easy_;
    CurlSlistPtr headers_;
};

// A streaming POST whose answer is a sequence of lines (etcd's gateway
// writes one JSON message per line), driven by a multi handle so that the
// owner waits with a timeout and another thread may wake it.
class HttpLineStream {
public:
    // tls applies to https URLs.
    explicit HttpLineStream(EtcdTls tls = {});
    ~HttpLineStream();
    HttpLineStream(const HttpLineStream&) = delete;
    HttpLineStream& operator=(const HttpLineStream&) = delete;

    // Starts the POST; closes the previous one first.
    void Open(const std::string& url, const std::string& body,
              std::chrono::milliseconds connect_timeout);
    void Close();
    bool open() const { return easy_ != nullptr; }

    struct Chunk {
        std::vector<std::string> lines;  // complete lines, without the '\n'
        bool ended = false;              // the transfer is over; Close() it
        std::string end_reason;
    };
    // Moves the transfer on, waiting up to wait for data if nothing is
    // there yet. Returns the lines that completed; at the end of the stream
    // a last unterminated line too.
    Chunk Poll(std::chrono::milliseconds wait);

    // Sleeps up to wait; Wake() ends it early.
    void Sleep(std::chrono::milliseconds wait);

    // Any thread: makes a Poll() or Sleep() in progress return now.
    void Wake();

private:
    static size_t Receive(char* data, size_t size, size_t count, void* self);
    static int SetKeepaliveProbes(void* unused, curl_socket_t fd, curlsocktype purpose);
    void TakeLines(std::vector<std::string>& lines);
    bool Finished(std::string& reason);

    EtcdTls tls_;
    CurlMultiPtr multi_;
    CurlSlistPtr headers_;
    CurlEasyPtr easy_;    // the transfer, in multi_ while open
    std::string buffer_;  // received, not yet a complete line
    bool overflow_ = false;
    char error_[CURL_ERROR_SIZE] = {};
};

}  // namespace chorus

#endif  // CHORUS_LIB_ETCD_CURL_H_
