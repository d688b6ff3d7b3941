// chorusd's logging: leveled lines on stderr with a timestamp. Under
// systemd (JOURNAL_STREAM set) each line also gets a "<N>" priority prefix
// so the journal records the level.
#ifndef CHORUS_CHORUSD_LOG_H_
#define CHORUS_CHORUSD_LOG_H_

#include <optional>
#include <string>
#include <string_view>

namespace chorus {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// "debug", "info", "warn", "error".
std::optional<LogLevel> ParseLogLevel(std::string_view name);

class Logger {
public:
    explicit Logger(LogLevel min_level);

    void Log(LogLevel level, const std::string& msg) const;
    void Debug(const std::string& msg) const { Log(LogLevel::kDebug, msg); }
    void Info(const std::string& msg) const { Log(LogLevel::kInfo, msg); }
    void Warn(const std::string& msg) const { Log(LogLevel::kWarn, msg); }
    void Error(const std::string& msg) const { Log(LogLevel::kError, msg); }

private:
    LogLevel min_level_;
    bool journal_;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_LOG_H_
