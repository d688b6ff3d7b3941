#include "chorusd/configfs_converger.h"

#include "lib/errors.h"

namespace chorus {

namespace {

// A plan unchanged is applied again this often (a hand-made change put right).
constexpr auto kReapplyPeriod = std::chrono::seconds(10);

}  // namespace

ConfigfsConverger::ConfigfsConverger(std::string what, const Logger& log,
                                     const std::string& configfs, const std::string& state_file)
    : what_(std::move(what)),
      log_(log),
      applier_(configfs, state_file, [&log](Severity s, const std::string& m) { log.Log(s, m); }) {}

void ConfigfsConverger::Converge(const std::vector<ConfigfsOp>& ops, const std::string& summary) {
    auto now = std::chrono::steady_clock::now();
    if (error_.empty() && ops == applied_ && now - applied_at_ < kReapplyPeriod)
        return;
    applied_at_ = now;
    try {
        TeardownResult pruned = applier_.Prune(ops);
        ApplyResult r = applier_.Apply(ops);
        if (pruned.undone > 0 || r.changed > 0)
            log_.Info(what_ + ": " + std::to_string(r.changed) + " changes applied, " +
                      std::to_string(pruned.undone) + " undone (" + summary + ")");
        if (pruned.failed > 0)
            throw Error(std::to_string(pruned.failed) +
                            " changes no longer wanted could not be undone (see the log)",
                        EBUSY);
        applied_ = ops;
        if (!error_.empty())
            log_.Info(what_ + ": the export is applied again");
        error_.clear();
    } catch (const Error& e) {
        Fail(e.what());
    }
}

void ConfigfsConverger::Fail(const std::string& why) {
    if (error_ != why)
        log_.Error(what_ + ": " + why);
    error_ = why;
    applied_.clear();
}

std::optional<std::chrono::steady_clock::time_point> ConfigfsConverger::ReapplyDue() const {
    if (applied_.empty())
        return std::nullopt;
    return applied_at_ + kReapplyPeriod;
}

}  // namespace chorus
