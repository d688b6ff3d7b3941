// How serious a log message is; shared by the library's log callbacks and
// chorusd's logger.
#ifndef CHORUS_LIB_SEVERITY_H_
#define CHORUS_LIB_SEVERITY_H_

#include <functional>
#include <string>

namespace chorus {

enum class Severity { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Where the library sends what it has to say.
using LogFn = std::function<void(Severity, const std::string&)>;

}  // namespace chorus

#endif  // CHORUS_LIB_SEVERITY_H_
