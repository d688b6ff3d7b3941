// The Prometheus text exposition format (version 0.0.4), written family by
// family: a writer that knows the syntax (comments, labels and their
// escaping, numbers, histograms) and nothing of chorus.
#ifndef CHORUS_LIB_METRICS_TEXT_H_
#define CHORUS_LIB_METRICS_TEXT_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chorus {

// The Content-Type of what MetricsWriter writes.
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// Label names and values of one sample, in the order they are written.
using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class MetricsWriter {
public:
    // Starts a family: its HELP and TYPE lines. type is "counter", "gauge"
    // or "histogram". Every sample of a family must follow its Family()
    // before the next family starts: the format wants them together.
    void Family(std::string_view name, std::string_view type, std::string_view help);

    // One sample; name includes any suffix (_total, _bucket, ...).
    void Sample(std::string_view name, const MetricLabels& labels, uint64_t value);
    void Sample(std::string_view name, const MetricLabels& labels, double value);

    // A histogram's samples: name_bucket per bound (cumulative, as the format
    // wants, with le last among the labels), name_sum and name_count. counts
    // are per bucket, not cumulative; bounds are ascending and the last is
    // +Inf; both have the same size.
    void Histogram(std::string_view name, const MetricLabels& labels,
                   std::span<const double> bounds, std::span<const uint64_t> counts, double sum);

    const std::string& text() const { return text_; }

    // A label value with backslash, double quote and newline escaped.
    static std::string EscapeLabelValue(std::string_view value);
    // HELP text: backslash and newline escaped.
    static std::string EscapeHelp(std::string_view help);
    // A number as the format writes it: shortest round trip, +Inf, -Inf, NaN.
    static std::string FormatDouble(double value);

private:
    void Line(std::string_view name, const MetricLabels& labels, std::string_view value);

    std::string text_;
};

}  // namespace chorus

#endif  // CHORUS_LIB_METRICS_TEXT_H_
