#include "chorusd/deadline_giver.h"

#include <string>

namespace chorus {

DeadlineGiver::DeadlineGiver(const Logger& log)
    : log_(log), thread_([this](std::stop_token stop) { Run(stop); }) {}

DeadlineGiver::~DeadlineGiver() {
    thread_.request_stop();
    posted_.notify_all();
}

void DeadlineGiver::Post(uint64_t deadline_ns) {
    {
        std::lock_guard lock(mutex_);
        pending_ = deadline_ns;
    }
    posted_.notify_all();
}

void DeadlineGiver::Run(std::stop_token stop) {
    for (;;) {
        uint64_t deadline;
        {
            std::unique_lock lock(mutex_);
            if (!posted_.wait(lock, stop, [this] { return pending_.has_value(); }))
                return;
            deadline = *pending_;
            pending_.reset();
        }
        Give(deadline);
    }
}

VolumeClient* DeadlineGiver::Kernel() {
    if (kernel_)
        return &*kernel_;
    try {
        kernel_.emplace(GenlSocket::Open());
        module_missing_logged_ = false;
    } catch (const ModuleNotLoadedError& e) {
        if (!module_missing_logged_)
            log_.Warn(std::string("no lease deadline for the kernel: ") + e.what());
        module_missing_logged_ = true;
        return nullptr;
    }
    return &*kernel_;
}

void DeadlineGiver::Give(uint64_t deadline_ns) {
    VolumeClient* kernel = Kernel();
    if (kernel == nullptr)
        return;
    try {
        kernel->LeaseSet(deadline_ns);
    } catch (const Error& e) {
        log_.Error(std::string("cannot give the kernel its lease deadline: ") + e.what());
        kernel_.reset();  // reopened next time (the module may have been reloaded)
    }
}

}  // namespace chorus
