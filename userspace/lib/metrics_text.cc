#include "lib/metrics_text.h"

#include <charconv>
#include <cmath>

#include "lib/errors.h"

namespace chorus {

void MetricsWriter::Family(std::string_view name, std::string_view type, std::string_view help) {
    text_ += "# HELP ";
    text_ += name;
    text_ += ' ';
    text_ += EscapeHelp(help);
    text_ += "\n# TYPE ";
    text_ += name;
    text_ += ' ';
    text_ += type;
    text_ += '\n';
}

void MetricsWriter::Sample(std::string_view name, const MetricLabels& labels, uint64_t value) {
    // Integers exactly: a double would round counters above 2^53.
    Line(name, labels, std::to_string(value));
}

void MetricsWriter::Sample(std::string_view name, const MetricLabels& labels, double value) {
    Line(name, labels, FormatDouble(value));
}

void MetricsWriter::Histogram(std::string_view name, const MetricLabels& labels,
                              std::span<const double> bounds, std::span<const uint64_t> counts,
                              double sum) {
    if (bounds.size() != counts.size() || bounds.empty() || !std::isinf(bounds.back()))
        throw Error("histogram " + std::string(name) + ": bounds and counts do not match");
    std::string bucket = std::string(name) + "_bucket";
    MetricLabels with_le = labels;
    with_le.emplace_back("le", "");
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds.size(); i++) {
        cumulative += counts[i];
        with_le.back().second = FormatDouble(bounds[i]);
        Sample(bucket, with_le, cumulative);
    }
    Sample(std::string(name) + "_sum", labels, sum);
    Sample(std::string(name) + "_count", labels, cumulative);
}

void MetricsWriter::Line(std::string_view name, const MetricLabels& labels,
                         std::string_view value) {
    text_ += name;
    if (!labels.empty()) {
        text_ += '{';
        for (size_t i = 0; i < labels.size(); i++) {
            if (i > 0)
                text_ += ',';
            text_ += labels[i].first;
            text_ += "=\"";
            text_ += EscapeLabelValue(labels[i].second);
            text_ += '"';
        }
        text_ += '}';
    }
    text_ += ' ';
    text_ += value;
    text_ += '\n';
}

std::string MetricsWriter::EscapeLabelValue(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string MetricsWriter::EscapeHelp(std::string_view help) {
    std::string out;
    out.reserve(help.size());
    for (char c : help) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string MetricsWriter::FormatDouble(double value) {
    if (std::isnan(value))
        return "NaN";
    if (std::isinf(value))
        return value > 0 ? "+Inf" : "-Inf";
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
    if (ec != std::errc())
        throw Error("cannot format a number");
    return std::string(buf, end);
}

}  // namespace chorus
