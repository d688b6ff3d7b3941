#include "exposition_check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace chorus::test {

namespace {

const std::regex kName("[a-zA-Z_:][a-zA-Z0-9_:]*");
const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");

struct Sample {
    std::string name;
    std::vector<std::pair<std::string, std::string>> labels;
    double value = 0;
};

std::optional<double> ParseValue(const std::string& s) {
    if (s == "+Inf")
        return INFINITY;
    if (s == "-Inf")
        return -INFINITY;
    if (s == "NaN")
        return NAN;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || std::isinf(v) || std::isnan(v))
        return std::nullopt;
    return v;
}

// name="value",... up to the closing brace; "" or what is wrong.
std::string ParseLabels(const std::string& s, size_t& i, Sample& out) {
    while (i < s.size() && s[i] != '}') {
        size_t eq = s.find('=', i);
        if (eq == std::string::npos)
            return "label without '='";
        std::string name = s.substr(i, eq - i);
        if (!std::regex_match(name, kLabelName))
            return "bad label name '" + name + "'";
        i = eq + 1;
        if (i >= s.size() || s[i] != '"')
            return "label value not quoted";
        std::string value;
        for (i++; i < s.size() && s[i] != '"'; i++) {
            if (s[i] == '\\') {
                char e = i + 1 < s.size() ? s[++i] : '\0';
                if (e != '\\' && e != '"' && e != 'n')
                    return "bad escape in a label value";
                value += e == 'n' ? '\n' : e;
            } else {
                value += s[i];
            }
        }
        if (i >= s.size())
            return "unterminated label value";
        for (const auto& [n, v] : out.labels)
            if (n == name)
                return "label '" + name + "' twice";
        out.labels.emplace_back(name, value);
        i++;
        if (i < s.size() && s[i] == ',')
            i++;
    }
    if (i >= s.size())
        return "no closing '}'";
    i++;
    return "";
}

std::string ParseSample(const std::string& line, Sample& out) {
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ')
        i++;
    out.name = line.substr(0, i);
    if (!std::regex_match(out.name, kName))
        return "bad metric name '" + out.name + "'";
    if (i < line.size() && line[i] == '{')
        if (std::string why = ParseLabels(line, ++i, out); !why.empty())
            return why;
    if (i >= line.size() || line[i] != ' ')
        return "no value";
    std::optional<double> v = ParseValue(line.substr(i + 1));
    if (!v)
        return "bad value '" + line.substr(i + 1) + "'";
    out.value = *v;
    return "";
}

std::string SeriesKey(const Sample& s, bool without_le) {
    std::string key = s.name;
    for (const auto& [n, v] : s.labels)
        if (!(without_le && n == "le"))
            key += "|" + n + "=" + v;
    return key;
}

// Buckets of one histogram series: le -> count, in order of appearance.
struct HistogramSeries {
    std::vector<std::pair<double, double>> buckets;
    std::optional<double> count;
    bool sum = false;
};

std::string CheckHistograms(const std::map<std::string, HistogramSeries>& series) {
    for (const auto& [key, h] : series) {
        if (h.buckets.empty() || !std::isinf(h.buckets.back().first))
            return key + ": no +Inf bucket last";
        for (size_t i = 1; i < h.buckets.size(); i++)
            if (h.buckets[i].first <= h.buckets[i - 1].first ||
                h.buckets[i].second < h.buckets[i - 1].second)
                return key + ": buckets not ascending or not cumulative";
        if (!h.count || *h.count != h.buckets.back().second)
            return key + ": _count missing or not the +Inf bucket";
        if (!h.sum)
            return key + ": _sum missing";
    }
    return "";
}

}  // namespace

std::string CheckExposition(const std::string& text) {
    std::map<std::string, std::string> types;  // family -> type
    std::string family;                        // the one being written
    std::set<std::string> series;
    std::map<std::string, HistogramSeries> histograms;
    std::istringstream in(text);
    std::string line;
    int n = 0;
    if (!text.empty() && text.back() != '\n')
        return "no newline at the end";
    while (std::getline(in, line)) {
        std::string where = "line " + std::to_string(++n) + ": ";
        std::smatch m;
        if (std::regex_match(line, m, std::regex("# TYPE (\\S+) (counter|gauge|histogram)"))) {
            if (types.count(m[1]))
                return where + "family " + m[1].str() + " declared twice";
            types[m[1]] = m[2];
            family = m[1];
            continue;
        }
        if (std::regex_match(line, std::regex("# HELP \\S+ .*")))
            continue;
        if (line.empty() || line[0] == '#')
            return where + "unexpected '" + line + "'";
        Sample s;
        if (std::string why = ParseSample(line, s); !why.empty())
            return where + why;
        std::string type = types.count(family) ? types[family] : "";
        bool histogram = type == "histogram";
        std::string base = s.name;
        for (const char* suffix : {"_bucket", "_sum", "_count"})
            if (histogram && s.name == family + suffix)
                base = family;
        if (base != family)
            return where + s.name + " outside of its family (now " + family + ")";
        if (!series.insert(SeriesKey(s, false)).second)
            return where + "series written twice";
        if (type == "counter" && s.value < 0)
            return where + "negative counter";
        if (!histogram)
            continue;
        HistogramSeries& h = histograms[family + SeriesKey(s, true).substr(s.name.size())];
        if (s.name == family + "_bucket") {
            auto le = std::find_if(s.labels.begin(), s.labels.end(),
                                   [](const auto& l) { return l.first == "le"; });
            std::optional<double> bound =
                le == s.labels.end() ? std::nullopt : ParseValue(le->second);
            if (!bound)
                return where + "bucket without a numeric le";
            h.buckets.emplace_back(*bound, s.value);
        } else if (s.name == family + "_count") {
            h.count = s.value;
        } else if (s.name == family + "_sum") {
            h.sum = true;
        } else {
            return where + "a histogram's sample without _bucket, _sum or _count";
        }
    }
    return CheckHistograms(histograms);
}

}  // namespace chorus::test
