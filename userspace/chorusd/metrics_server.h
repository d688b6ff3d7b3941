// chorusd's Prometheus endpoint: GET /metrics on the [metrics] address,
// served by cpp-httplib in a thread the server owns. The body comes from a
// callback run for each scrape, so the kernel is read when Prometheus asks.
#ifndef CHORUS_CHORUSD_METRICS_SERVER_H_
#define CHORUS_CHORUSD_METRICS_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace chorus {

class MetricsServer {
public:
    // Returns the exposition text; may throw, the scrape then fails with
    // HTTP 500 and the message. Called from the server's threads, possibly
    // concurrently.
    using Source = std::function<std::string()>;

    // Binds host:port (port 0: any free port) and starts serving. Throws
    // chorus::Error naming the address if it cannot bind.
    MetricsServer(const std::string& host, uint16_t port, Source source);
    // Stops accepting, waits for the scrapes in progress and the thread.
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    // The port bound, useful when 0 was asked.
    uint16_t port() const { return port_; }

private:
    std::unique_ptr<httplib::Server> server_;
    uint16_t port_ = 0;
    std::atomic<bool> ended_ = false;  // the serving thread returned
    std::thread thread_;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_METRICS_SERVER_H_
