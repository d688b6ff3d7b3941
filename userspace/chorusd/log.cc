#include "chorusd/log.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace chorus {

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
    if (name == "debug")
        return LogLevel::kDebug;
    if (name == "info")
        return LogLevel::kInfo;
    if (name == "warn")
        return LogLevel::kWarn;
    if (name == "error")
        return LogLevel::kError;
    return std::nullopt;
}

Logger::Logger(LogLevel min_level)
    : min_level_(min_level), journal_(std::getenv("JOURNAL_STREAM") != nullptr) {}

void Logger::Log(LogLevel level, const std::string& msg) const {
    if (level < min_level_)
        return;
    static constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
    static constexpr int kSyslog[] = {7, 6, 4, 3};  // LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR
    const int i = static_cast<int>(level);

    using namespace std::chrono;
    auto now = system_clock::now();
    std::time_t t = system_clock::to_time_t(now);
    int ms = static_cast<int>(duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000);
    std::tm tm;
    localtime_r(&t, &tm);
    char stamp[40];
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    char zone[8];
    std::strftime(zone, sizeof(zone), "%z", &tm);

    // One fprintf per line keeps concurrent lines from interleaving.
    if (journal_)
        std::fprintf(stderr, "<%d>%s.%03d%s chorusd %s: %s\n", kSyslog[i], stamp, ms, zone,
                     kNames[i], msg.c_str());
    else
        std::fprintf(stderr, "%s.%03d%s chorusd %s: %s\n", stamp, ms, zone, kNames[i], msg.c_str());
}

}  // namespace chorus
