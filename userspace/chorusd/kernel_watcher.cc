#include "chorusd/kernel_watcher.h"

#include <chrono>
#include <string>

namespace chorus {

namespace {

// The longest wait for an event: EventListener::Next() cannot be
// interrupted, so this bounds how long stopping chorusd waits for the
// thread (the loop's own pause was 250 ms before it had watchers).
constexpr auto kStopLatency = std::chrono::milliseconds(250);
// How often a missing module (or a listener that failed) is tried again.
constexpr auto kReopenPause = std::chrono::seconds(1);

}  // namespace

KernelWatcher::KernelWatcher(PassTrigger& trigger, const Logger& log)
    : trigger_(trigger), log_(log) {}

KernelWatcher::~KernelWatcher() {
    if (thread_.joinable()) {
        thread_.request_stop();
        thread_.join();
    }
}

void KernelWatcher::Start() {
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void KernelWatcher::Run(std::stop_token stop) {
    std::optional<EventListener> listener;
    while (!stop.stop_requested()) {
        if (reopen_.exchange(false))
            listener.reset();
        if (!listener && !Open(listener)) {
            Pause(stop);
            continue;
        }
        if (!Listen(*listener)) {
            listener.reset();
            Pause(stop);
        }
    }
}

bool KernelWatcher::Open(std::optional<EventListener>& listener) {
    try {
        listener.emplace(EventListener::Open());
    } catch (const ModuleNotLoadedError& e) {
        if (!missing_logged_)
            log_.Info(std::string("kernel events: ") + e.what() + "; looking for it every second");
        missing_logged_ = true;
        module_missing_ = true;
        return false;
    } catch (const Error& e) {
        log_.Error(std::string("cannot listen to the kernel's events: ") + e.what());
        return false;
    }
    // The module has come: a pass attaches what it must. Not when the loop
    // asked for a new socket (Reopen): it retries its failed pass itself,
    // and a wake-up here would make a failure that lasts a busy loop.
    if (module_missing_)
        trigger_.Wake("chorus.ko is loaded");
    module_missing_ = false;
    missing_logged_ = false;
    return true;
}

bool KernelWatcher::Listen(EventListener& listener) {
    try {
        if (listener.Next(kStopLatency))
            trigger_.Wake("kernel event");
        return true;
    } catch (const Error& e) {
        trigger_.Wake("kernel events lost");
        if (IsRecoverableEventError(e))
            return true;
        log_.Error(std::string("kernel events: ") + e.what() + "; listening anew");
        return false;
    }
}

void KernelWatcher::Pause(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    pause_.wait_for(lock, stop, kReopenPause, [] { return false; });
}

}  // namespace chorus
