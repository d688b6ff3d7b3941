// lease set and lease show: the node's lease deadline in chorus.ko. chorusd
// sets it after every keepalive of its session lease; by hand these commands
// are for tests and for an operator who must release or inspect held I/O.
#include <time.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <string>

#include <linux/chorus.h>

#include "chorusctl/command.h"
#include "chorusctl/commands.h"
#include "lib/errors.h"

namespace chorus {

namespace {

// CLOCK_BOOTTIME in ns, the kernel's lease clock.
uint64_t BoottimeNs() {
    timespec ts{};
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
        throw Error(std::string("clock_gettime(CLOCK_BOOTTIME): ") + std::strerror(errno), errno);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

nlohmann::json LeaseJson(const LeaseInfo& lease) {
    nlohmann::json j = {{"state", LeaseStateName(lease.state)},
                        {"deadline_ns", lease.deadline_ns},
                        {"now_ns", lease.now_ns},
                        {"expiries", lease.expiries}};
    if (lease.state == CHORUS_LEASE_VALID)
        j["remaining_ms"] = (lease.deadline_ns - lease.now_ns) / 1000000;
    else if (lease.state == CHORUS_LEASE_EXPIRED)
        j["expired_ms_ago"] = (lease.now_ns - lease.deadline_ns) / 1000000;
    return j;
}

void PrintLease(const GlobalOptions& global, const LeaseInfo& lease) {
    if (global.json) {
        PrintJson(LeaseJson(lease));
        return;
    }
    std::cout << "lease: " << LeaseStateName(lease.state);
    if (lease.state == CHORUS_LEASE_VALID)
        std::cout << ", " << (lease.deadline_ns - lease.now_ns) / 1000000 << " ms left";
    else if (lease.state == CHORUS_LEASE_EXPIRED)
        std::cout << " " << (lease.now_ns - lease.deadline_ns) / 1000000
                  << " ms ago: owned volumes hold their I/O";
    std::cout << " (deadlines passed since load: " << lease.expiries << ")" << std::endl;
}

class LeaseSet : public Command {
public:
    void AddOptions(CLI::App& cmd) override {
        auto* valid = cmd.add_option("--valid-for", valid_for_ms_,
                                     "Deadline MS milliseconds from now (0: expired at once), at "
                                     "most 60000")
                          ->check(CLI::Range(0, 60000));
        auto* disarm = cmd.add_flag("--disarm", disarm_,
                                    "No deadline: owners serve without a lease (use without "
                                    "chorusd only)");
        valid->excludes(disarm);
        cmd.require_option(1);
    }

    int Run(const GlobalOptions& global) override {
        VolumeClient client = Connect();
        uint64_t deadline = 0;
        if (!disarm_)
            deadline = BoottimeNs() + static_cast<uint64_t>(valid_for_ms_) * 1000000u;
        // A deadline of 0 would disarm: "expired at once" is one ns old.
        if (!disarm_ && deadline == 0)
            deadline = 1;
        client.LeaseSet(deadline);
        PrintLease(global, client.LeaseGet());
        return kExitOk;
    }

private:
    int valid_for_ms_ = -1;
    bool disarm_ = false;
};

class LeaseShow : public Command {
public:
    void AddOptions(CLI::App&) override {}

    int Run(const GlobalOptions& global) override {
        PrintLease(global, Connect().LeaseGet());
        return kExitOk;
    }
};

}  // namespace

std::unique_ptr<Command> NewLeaseSet() {
    return std::make_unique<LeaseSet>();
}

std::unique_ptr<Command> NewLeaseShow() {
    return std::make_unique<LeaseShow>();
}

}  // namespace chorus
