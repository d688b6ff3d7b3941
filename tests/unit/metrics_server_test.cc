// chorusd's metrics endpoint over real HTTP on loopback.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

#include <httplib.h>

#include "chorusd/metrics_server.h"
#include "lib/errors.h"
#include "lib/metrics_text.h"

namespace chorus {
namespace {

TEST(MetricsServer, ServesEachScrapeFromTheSource) {
    std::atomic<int> scrapes = 0;
    MetricsServer server("127.0.0.1", 0,
                         [&] { return "# TYPE a counter\na " + std::to_string(++scrapes) + "\n"; });
    ASSERT_NE(server.port(), 0);
    httplib::Client client("127.0.0.1", server.port());
    for (int i = 1; i <= 2; i++) {
        auto res = client.Get("/metrics");
        ASSERT_TRUE(res) << httplib::to_string(res.error());
        EXPECT_EQ(res->status, 200);
        EXPECT_EQ(res->get_header_value("Content-Type"), kMetricsContentType);
        EXPECT_EQ(res->body, "# TYPE a counter\na " + std::to_string(i) + "\n");
    }
    auto missing = client.Get("/nothing");
    ASSERT_TRUE(missing);
    EXPECT_EQ(missing->status, 404);
}

TEST(MetricsServer, AFailedScrapeIsA500WithTheReason) {
    MetricsServer server("127.0.0.1", 0,
                         []() -> std::string { throw std::runtime_error("netlink went away"); });
    httplib::Client client("127.0.0.1", server.port());
    auto res = client.Get("/metrics");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 500);
    EXPECT_EQ(res->body, "chorusd: netlink went away\n");
}

TEST(MetricsServer, StopsOnDestructionAndFreesThePort) {
    uint16_t port = 0;
    {
        MetricsServer server("127.0.0.1", 0, [] { return std::string(); });
        port = server.port();
        // The port is taken while it runs: a second server names the address.
        try {
            MetricsServer second("127.0.0.1", port, [] { return std::string(); });
            ADD_FAILURE() << "bound twice";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1 port " +
                                                 std::to_string(port)),
                      std::string::npos)
                << e.what();
        }
    }
    httplib::Client client("127.0.0.1", port);
    EXPECT_FALSE(client.Get("/metrics"));
    MetricsServer again("127.0.0.1", port, [] { return std::string("ok"); });
    EXPECT_EQ(again.port(), port);
}

TEST(MetricsServer, AnAddressNotOfThisNodeIsRefused) {
    EXPECT_THROW(MetricsServer("192.0.2.1", 9653, [] { return std::string(); }), Error);
}

}  // namespace
}  // namespace chorus
