// The Prometheus text-format writer, and the checker the other metrics
// tests use.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "exposition_check.h"
#include "lib/metrics_text.h"

namespace chorus {
namespace {

using test::CheckExposition;

TEST(MetricsWriter, FamilyAndSamples) {
    MetricsWriter w;
    w.Family("chorus_x_total", "counter", "Things.\nWith a \\ in the help.");
    w.Sample("chorus_x_total", {}, uint64_t{18446744073709551615u});
    w.Sample("chorus_x_total", {{"volume", "a"}, {"peer", "2"}}, uint64_t{0});
    w.Sample("chorus_x_total", {{"volume", "b"}}, 0.25);
    EXPECT_EQ(w.text(),
              "# HELP chorus_x_total Things.\\nWith a \\\\ in the help.\n"
              "# TYPE chorus_x_total counter\n"
              "chorus_x_total 18446744073709551615\n"
              "chorus_x_total{volume=\"a\",peer=\"2\"} 0\n"
              "chorus_x_total{volume=\"b\"} 0.25\n");
    EXPECT_EQ(CheckExposition(w.text()), "");
}

TEST(MetricsWriter, LabelValuesAreEscaped) {
    EXPECT_EQ(MetricsWriter::EscapeLabelValue("plain-1.x"), "plain-1.x");
    EXPECT_EQ(MetricsWriter::EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    MetricsWriter w;
    w.Family("m", "gauge", "h");
    w.Sample("m", {{"volume", "we\"ird\\\n"}}, uint64_t{1});
    EXPECT_EQ(w.text(), "# HELP m h\n# TYPE m gauge\nm{volume=\"we\\\"ird\\\\\\n\"} 1\n");
    EXPECT_EQ(CheckExposition(w.text()), "");
}

TEST(MetricsWriter, Numbers) {
    EXPECT_EQ(MetricsWriter::FormatDouble(16e-6), "1.6e-05");
    EXPECT_EQ(MetricsWriter::FormatDouble(0.001024), "0.001024");
    EXPECT_EQ(MetricsWriter::FormatDouble(16.777216), "16.777216");
    EXPECT_EQ(MetricsWriter::FormatDouble(3), "3");
    EXPECT_EQ(MetricsWriter::FormatDouble(INFINITY), "+Inf");
    EXPECT_EQ(MetricsWriter::FormatDouble(-INFINITY), "-Inf");
    EXPECT_EQ(MetricsWriter::FormatDouble(NAN), "NaN");
}

TEST(MetricsWriter, HistogramBucketsAreCumulative) {
    MetricsWriter w;
    w.Family("lat_seconds", "histogram", "Latency.");
    const std::vector<double> bounds = {0.001, 0.01, INFINITY};
    const std::vector<uint64_t> counts = {2, 0, 5};
    w.Histogram("lat_seconds", {{"volume", "v"}}, bounds, counts, 1.5);
    EXPECT_EQ(w.text(),
              "# HELP lat_seconds Latency.\n"
              "# TYPE lat_seconds histogram\n"
              "lat_seconds_bucket{volume=\"v\",le=\"0.001\"} 2\n"
              "lat_seconds_bucket{volume=\"v\",le=\"0.01\"} 2\n"
              "lat_seconds_bucket{volume=\"v\",le=\"+Inf\"} 7\n"
              "lat_seconds_sum{volume=\"v\"} 1.5\n"
              "lat_seconds_count{volume=\"v\"} 7\n");
    EXPECT_EQ(CheckExposition(w.text()), "");
}

TEST(MetricsWriter, HistogramNeedsMatchingBoundsEndingInInf) {
    MetricsWriter w;
    const std::vector<double> finite = {0.1, 1};
    const std::vector<uint64_t> two = {1, 2}, one = {1};
    EXPECT_THROW(w.Histogram("h", {}, finite, two, 0), std::exception);
    const std::vector<double> inf = {0.1, INFINITY};
    EXPECT_THROW(w.Histogram("h", {}, inf, one, 0), std::exception);
}

// The checker must refuse what Prometheus refuses, or the tests prove nothing.
TEST(ExpositionCheck, RefusesMalformedText) {
    const std::string ok = "# HELP a x\n# TYPE a gauge\na 1\n";
    EXPECT_EQ(CheckExposition(ok), "");
    EXPECT_NE(CheckExposition("a 1\n"), "");                                     // no TYPE
    EXPECT_NE(CheckExposition(ok + "a 2\n"), "");                                // twice
    EXPECT_NE(CheckExposition(ok + "# TYPE b gauge\nb 1\na{x=\"1\"} 1\n"), "");  // split
    EXPECT_NE(CheckExposition(ok + "# TYPE a gauge\n"), "");                     // redeclared
    EXPECT_NE(CheckExposition("# TYPE a gauge\na{x=\"\\t\"} 1\n"), "");          // escape
    EXPECT_NE(CheckExposition("# TYPE a gauge\na{x=\"1} 1\n"), "");              // quote
    EXPECT_NE(CheckExposition("# TYPE a gauge\na one\n"), "");                   // value
    EXPECT_NE(CheckExposition("# TYPE a gauge\na 1"), "");                       // newline
    const std::string h = "# TYPE h histogram\nh_bucket{le=\"1\"} 2\n";
    EXPECT_NE(CheckExposition(h + "h_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n"), "");
    EXPECT_NE(CheckExposition(h + "h_sum 1\nh_count 2\n"), "");  // no +Inf
    EXPECT_NE(CheckExposition(h + "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 3\n"), "");
    EXPECT_EQ(CheckExposition(h + "h_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 2\n"), "");
}

}  // namespace
}  // namespace chorus
