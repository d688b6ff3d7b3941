// events: the module's volume events, printed as they happen.
#include <chrono>
#include <iostream>
#include <limits>
#include <optional>
#include <string>

#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "chorusctl/output.h"

namespace chorus {

namespace {

std::string CheckTimeoutArg(std::string& s) {
    double v = 0;
    if (!CLI::detail::lexical_cast(s, v) || !(v > 0) || v > 1e9)
        return "timeout '" + s + "' is not a positive number of seconds";
    return "";
}

class Events : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        cmd.add_option("--count", count_, "Exit after N events")
            ->check(CLI::Range(1, std::numeric_limits<int>::max()));
        cmd.add_option("--timeout", timeout_, "Exit after SECS seconds (fractions allowed)")
            ->check(CLI::Validator(CheckTimeoutArg, "SECS", ""));
    }

    int Run(const GlobalOptions& global) override {
        EventListener listener = EventListener::Open();
        std::optional<Clock::time_point> deadline;
        if (timeout_ > 0)
            deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(timeout_));
        int seen = 0;
        while (count_ == 0 || seen < count_) {
            std::optional<std::chrono::milliseconds> left;
            if (deadline) {
                left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
                if (left->count() <= 0)
                    break;
            }
            std::optional<VolumeInfo> v;
            try {
                v = listener.Next(left);
            } catch (const Error& e) {
                // Lost or malformed events should not end a long-running
                // stream: report them once and go on. Anything else ends it.
                if (!IsRecoverableEventError(e))
                    throw;
                std::cerr << "chorusctl: events: " << e.what() << std::endl;
                continue;
            }
            if (!v)
                break;  // timeout
            Print(global, *v);
            seen++;
        }
        return kExitOk;
    }

private:
    using Clock = std::chrono::steady_clock;

    static void Print(const GlobalOptions& global, const VolumeInfo& v) {
        std::string time = NowIso8601();
        if (global.json) {
            nlohmann::json j = VolumeToJson(v);  // with "peer" and "reason" if sent
            j["event"] = EventName(v.event);
            j["time"] = time;
            std::cout << j.dump() << std::endl;  // one object per line
        } else {
            std::cout << FormatEventLine(time, v) << std::endl;
        }
    }

    int count_ = 0;       // 0: no limit
    double timeout_ = 0;  // seconds; 0: no limit
};

}  // namespace

std::unique_ptr<Command> NewEvents() {
    return std::make_unique<Events>();
}

}  // namespace chorus
