#include "chorusd/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace chorus {

std::optional<Severity> ParseLogLevel(std::string_view name) {
    if (name == "debug")
        return Severity::kDebug;
    if (name == "info")
        return Severity::kInfo;
    if (name == "warn")
        return Severity::kWarn;
    if (name == "error")
        return Severity::kError;
    return std::nullopt;
}

bool IsJournalStream(const char* journal_stream, int fd) {
    if (journal_stream == nullptr)
        return false;
    unsigned long long dev = 0, ino = 0;
    int end = 0;
    if (std::sscanf(journal_stream, "%llu:%llu%n", &dev, &ino, &end) != 2 ||
        journal_stream[end] != '\0')
        return false;
    struct stat st;
    if (::fstat(fd, &st) < 0)
        return false;
    return st.st_dev == static_cast<dev_t>(dev) && st.st_ino == static_cast<ino_t>(ino);
}

Logger::Logger(Severity min_level)
    : min_level_(min_level),
      journal_(IsJournalStream(std::getenv("JOURNAL_STREAM"), STDERR_FILENO)) {}

void Logger::Log(Severity level, const std::string& msg) const {
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
