// Keeps one configfs tree (nvmet's, LIO's) as a plan says: prunes what the
// plan no longer asks for and applies the rest whenever the plan changes,
// and every 10 s besides, so that a change made by hand is put right. The
// changes are recorded in the state file of its ConfigfsApplier, so they
// outlive chorusd (a restart adopts them) and `chorusd --teardown` undoes
// them.
#ifndef CHORUS_CHORUSD_CONFIGFS_CONVERGER_H_
#define CHORUS_CHORUSD_CONFIGFS_CONVERGER_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "chorusd/log.h"
#include "lib/configfs.h"

namespace chorus {

class ConfigfsConverger {
public:
    // what names the tree in the log ("nvmet", "iscsi"); log outlives it.
    ConfigfsConverger(std::string what, const Logger& log, const std::string& configfs,
                      const std::string& state_file);

    // Makes the tree match ops, unless it was made so less than 10 s ago;
    // summary ends the log line of a change ("3 namespaces in 1 export").
    void Converge(const std::vector<ConfigfsOp>& ops, const std::string& summary);

    // The plan could not be made (why: a secret file unreadable): nothing
    // is changed, the tree stays as last applied, error() says why.
    void Fail(const std::string& why);

    // Why the last plan could not be made or applied; "" if it was.
    const std::string& error() const { return error_; }
    // When the applied plan is due to be applied again; nothing if none is.
    std::optional<std::chrono::steady_clock::time_point> ReapplyDue() const;

private:
    const std::string what_;
    const Logger& log_;
    ConfigfsApplier applier_;
    std::vector<ConfigfsOp> applied_;  // the plan last applied without error
    std::chrono::steady_clock::time_point applied_at_{};
    std::string error_;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSD_CONFIGFS_CONVERGER_H_
