#include "chorusd/metrics_server.h"

#include <sys/socket.h>

#include <chrono>

#include <httplib.h>

#include "lib/errors.h"
#include "lib/metrics_text.h"

namespace chorus {

MetricsServer::MetricsServer(const std::string& host, uint16_t port, Source source)
    : server_(std::make_unique<httplib::Server>()) {
    // A scrape is one small request: a client that dawdles is cut off
    // rather than holding one of the server's threads.
    server_->set_read_timeout(std::chrono::seconds(5));
    server_->set_write_timeout(std::chrono::seconds(5));
    server_->set_keep_alive_max_count(10);
    // Two threads rather than httplib's 8 or more: one Prometheus, maybe a
    // curl by hand. httplib owns what the factory returns (its API wants a
    // raw pointer, which it puts in a unique_ptr at once).
    server_->new_task_queue = [] { return new httplib::ThreadPool(2); };
    // httplib's default is SO_REUSEPORT, which lets a second chorusd (or
    // anything else) listen on the same port and take half the scrapes.
    // SO_REUSEADDR alone still allows a restart while old connections linger.
    server_->set_socket_options([](int sock) {
        int yes = 1;
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    server_->Get("/metrics",
                 [source = std::move(source)](const httplib::Request&, httplib::Response& res) {
                     try {
                         res.set_content(source(), kMetricsContentType);
                     } catch (const std::exception& e) {
                         res.status = 500;
                         res.set_content(std::string("chorusd: ") + e.what() + "\n", "text/plain");
                     }
                 });
    server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
        res.set_content("chorusd: metrics are at /metrics\n", "text/plain");
    });

    bool bound = false;
    if (port == 0) {
        int p = server_->bind_to_any_port(host);
        bound = p > 0;
        port_ = static_cast<uint16_t>(bound ? p : 0);
    } else {
        bound = server_->bind_to_port(host, port);
        port_ = port;
    }
    if (!bound)
        throw Error("metrics: cannot listen on " + host + " port " + std::to_string(port) +
                    " (address in use, or not one of this node's?)");
    thread_ = std::thread([this] {
        server_->listen_after_bind();
        ended_ = true;
    });
    // stop() only ends a loop that has started: wait for it, so that a
    // destructor right after the constructor cannot miss it.
    while (!server_->is_running() && !ended_)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (ended_) {
        thread_.join();
        throw Error("metrics: the server on " + host + " port " + std::to_string(port_) +
                    " stopped at once");
    }
}

MetricsServer::~MetricsServer() {
    server_->stop();
    thread_.join();
}

}  // namespace chorus
