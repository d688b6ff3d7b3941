#include "lib/size.h"

#include <array>
#include <cctype>
#include <cstdio>

#include "lib/errors.h"

namespace chorus {

namespace {

std::string Lower(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Returns the power of 1024 for a suffix, or -1 if it is not one.
int SuffixShift(std::string_view suffix) {
    std::string s = Lower(suffix);
    if (s.empty() || s == "b")
        return 0;
    static constexpr std::string_view kUnits = "kmgtpe";
    size_t pos = kUnits.find(s[0]);
    if (pos == std::string_view::npos)
        return -1;
    std::string_view rest = std::string_view(s).substr(1);
    if (!rest.empty() && rest != "b" && rest != "ib")
        return -1;
    return static_cast<int>(pos + 1);
}

}  // namespace

uint64_t ParseSize(std::string_view text) {
    const std::string quoted = "'" + std::string(text) + "'";
    size_t i = 0;
    uint64_t value = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        uint64_t digit = static_cast<uint64_t>(text[i] - '0');
        if (value > (UINT64_MAX - digit) / 10)
            throw Error("size " + quoted + " is too large");
        value = value * 10 + digit;
        i++;
    }
    if (i == 0)
        throw Error("invalid size " + quoted +
                    " (expected a number with an optional unit: " + "512, 4k, 64M, 1G, 1GiB)");
    int shift = SuffixShift(text.substr(i));
    if (shift < 0)
        throw Error("invalid size " + quoted + ": unknown unit '" + std::string(text.substr(i)) +
                    "' (use k, M, G, T, P or E, optionally with B or iB)");
    for (int n = 0; n < shift; n++) {
        if (value > UINT64_MAX / 1024)
            throw Error("size " + quoted + " is too large");
        value *= 1024;
    }
    return value;
}

std::string FormatSize(uint64_t bytes) {
    static constexpr std::array<const char*, 7> kUnits = {"B",   "KiB", "MiB", "GiB",
                                                          "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    double v = static_cast<double>(bytes);
    size_t unit = 0;
    while (v >= 1024.0 && unit + 1 < kUnits.size()) {
        v /= 1024.0;
        unit++;
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2f %s", v, kUnits[unit]);
    return buf;
}

}  // namespace chorus
