// chorusd's logging: leveled lines on stderr with a timestamp. When stderr
// is the journal (JOURNAL_STREAM names it) each line also gets a "<N>"
// priority prefix so the journal records the level.
#ifndef CHORUS_CHORUSD_LOG_H_
#define CHORUS_CHORUSD_LOG_H_

#include <optional>
#include <string>
#include <string_view>

#include "lib/severity.h"

namespace chorus {

// "debug", "info", "warn", "error".
std::optional<Severity> ParseLogLevel(std::string_view name);

// True if journal_stream (the value of $JOURNAL_STREAM, "<dev>:<inode>",
// may be null) names the file open on fd, as sd-daemon checks it: a child
// that inherited the variable but not the journal stream must not use
// "<N>" prefixes.
bool IsJournalStream(const char* journal_stream, int fd);

class Logger {
public:
    explicit Logger(Severity min_level);

    void Log(Severity level, const std::string& msg) const;
    void Debug(const std::string& msg) const { Log(Severity::kDebug, msg); }
    void Info(const std::string& msg) const { Log(Severity::kInfo, msg); }
    void Warn(const std::string& msg) const { Log(Severity::kWarn, msg); }
    void Error(const std::string& msg) const { Log(Severity::kError, msg); }

private:
    Severity min_level_;
    bool journal_;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_LOG_H_
