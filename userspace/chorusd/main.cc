// chorusd: exports this node's chorus volumes through the kernel NVMe target
// (nvmet configfs) and takes the export down again on exit.
// Documentation/chorusd.rst describes the options and the config file.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include <systemd/sd-daemon.h>
#include <CLI/CLI.hpp>

#include "chorusd/log.h"
#include "chorusd/metrics_scrape.h"
#include "chorusd/metrics_server.h"
#include "chorusd/pass_trigger.h"
#include "chorusd/reconciler.h"
#include "chorusd/session_keeper.h"
#include "lib/config.h"
#include "lib/configfs.h"
#include "lib/errors.h"
#include "lib/fd.h"
#include "lib/nvmet_plan.h"

namespace chorus {
namespace {

enum ExitCode {
    kExitOk = 0,
    kExitFailed = 1,  // applying or tearing down failed
    kExitUsage = 2,   // bad command line or config file
};

struct Args {
    std::string config = "/etc/chorus/chorusd.conf";
    std::string configfs = kDefaultConfigfsRoot;
    std::string state_file = kDefaultStateFile;
    std::string cluster_state_file = kDefaultClusterStateFile;
    std::string lio_state_file = kDefaultLioStateFile;
    bool once = false;
    bool teardown = false;
    bool print_plan = false;
    std::string log_level = "info";
};

// Blocks the signals we handle and returns a signalfd for them. Daemon mode
// only (--once and --teardown keep the default actions, so Ctrl-C stops
// them). Blocking happens before anything is applied, so a SIGTERM that
// arrives mid-apply waits in the queue and still triggers an orderly
// teardown.
Fd OpenSignalFd() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    if (sigprocmask(SIG_BLOCK, &set, nullptr) < 0)
        throw Error(std::string("sigprocmask: ") + std::strerror(errno), errno);
    Fd fd(signalfd(-1, &set, SFD_CLOEXEC));
    if (!fd.valid())
        throw Error(std::string("signalfd: ") + std::strerror(errno), errno);
    return fd;
}

// Waits for SIGTERM or SIGINT; returns its name.
std::string WaitForStop(const Fd& sfd, const Logger& log) {
    for (;;) {
        signalfd_siginfo si;
        ssize_t n = read(sfd.get(), &si, sizeof(si));
        if (n < 0 && errno == EINTR)
            continue;
        if (n != static_cast<ssize_t>(sizeof(si)))
            throw Error(std::string("read signalfd: ") + std::strerror(errno), errno);
        if (si.ssi_signo == SIGHUP) {
            log.Info("SIGHUP ignored: restart chorusd to apply a changed config");
            continue;
        }
        return si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT";
    }
}

int Teardown(ConfigfsApplier& applier, const Logger& log) {
    TeardownResult r = applier.Teardown();
    if (r.failed > 0) {
        log.Error("teardown incomplete: " + std::to_string(r.failed) +
                  " changes could not be undone (kept in the state file for a retry)");
        return kExitFailed;
    }
    log.Info("teardown done: undid " + std::to_string(r.undone) + " changes");
    return kExitOk;
}

int Export(const Config& cfg, const std::vector<ConfigfsOp>& plan, ConfigfsApplier& applier,
           const Args& args, const Logger& log) {
    log.Info("node " + std::to_string(cfg.node_id) + ": exporting " + cfg.nqn + " (" +
             std::to_string(cfg.namespaces.size()) + " namespaces, " +
             std::to_string(cfg.ports.size()) + " ports) under " + args.configfs);
    try {
        ApplyResult r = applier.Apply(plan);
        log.Info("nvmet export applied: " + std::to_string(r.changed) + " changes, " +
                 std::to_string(r.skipped) + " already in place");
    } catch (const Error& e) {
        log.Error("applying the nvmet export failed: " + std::string(e.what()));
        sd_notifyf(0, "STATUS=failed: %s", e.what());
        return kExitFailed;
    }
    return kExitOk;
}

// The metrics server of a [metrics] section, or null without one. Its
// scrapes read the session keeper once keeper points to it.
std::unique_ptr<MetricsServer> StartMetrics(const Config& cfg,
                                            const std::atomic<const SessionKeeper*>& keeper,
                                            const Logger& log) {
    if (!cfg.metrics)
        return nullptr;
    auto server = std::make_unique<MetricsServer>(
        cfg.metrics->host, cfg.metrics->port,
        [&cfg, &keeper, &log] { return ScrapeNode(cfg, keeper, log); });
    log.Info("serving metrics on http://" + cfg.metrics->address + "/metrics");
    return server;
}

int Run(const Args& args, const Logger& log) {
    Fd sfd;
    if (!args.once && !args.teardown && !args.print_plan)
        sfd = OpenSignalFd();
    ConfigfsApplier applier(args.configfs, args.state_file,
                            [&log](Severity s, const std::string& msg) { log.Log(s, msg); });

    if (args.teardown) {
        // The cluster's iSCSI and NVMe-oF exports, then the static one.
        auto log_fn = [&log](Severity s, const std::string& msg) { log.Log(s, msg); };
        ConfigfsApplier lio_applier(args.configfs, args.lio_state_file, log_fn);
        ConfigfsApplier cluster_applier(args.configfs, args.cluster_state_file, log_fn);
        int rc = Teardown(lio_applier, log);
        if (Teardown(cluster_applier, log) != kExitOk)
            rc = kExitFailed;
        return Teardown(applier, log) == kExitOk ? rc : kExitFailed;
    }

    Config cfg;
    try {
        cfg = LoadConfig(args.config);
    } catch (const ConfigError& e) {
        log.Error(e.what());
        return kExitUsage;
    }
    if (!cfg.export_nvmet && (args.once || args.print_plan)) {
        log.Error(cfg.file + ": no [subsystem] section: nothing to export");
        return kExitUsage;
    }
    std::vector<ConfigfsOp> plan;
    if (cfg.export_nvmet)
        plan = PlanNvmetExport(cfg);
    if (args.print_plan) {
        for (const auto& op : plan)
            std::cout << DescribeOp(op) << '\n';
        return kExitOk;
    }

    // The trigger outlives both: the keeper wakes the reconciler's passes
    // through it when the session changes. Both are declared before the
    // metrics server, which reads the keeper: it goes first.
    PassTrigger trigger;
    std::unique_ptr<SessionKeeper> keeper;
    std::unique_ptr<Reconciler> reconciler;
    // Before the export, so that an address that cannot be bound changes nothing.
    std::atomic<const SessionKeeper*> metrics_keeper = nullptr;
    std::unique_ptr<MetricsServer> metrics;
    if (!args.once)
        metrics = StartMetrics(cfg, metrics_keeper, log);
    if (cfg.export_nvmet && Export(cfg, plan, applier, args, log) != kExitOk)
        return kExitFailed;
    if (args.once)
        return kExitOk;

    // The session is kept in a thread of its own while this one waits for
    // signals; it stops (leaving the lease for a restarted chorusd to adopt)
    // before the export is torn down.
    if (cfg.cluster) {
        keeper = std::make_unique<SessionKeeper>(cfg, log,
                                                 [&trigger] { trigger.Wake("session changed"); });
        keeper->Start();
        reconciler = std::make_unique<Reconciler>(cfg, log, *keeper, trigger, args.configfs,
                                                  args.cluster_state_file, args.lio_state_file);
        reconciler->Start();
        metrics_keeper = keeper.get();
    }
    // Harmless (returns 0) when not started by systemd.
    sd_notifyf(0, "READY=1\nSTATUS=node %u%s%s", cfg.node_id,
               cfg.export_nvmet ? ", exporting " : "", cfg.export_nvmet ? cfg.nqn.c_str() : "");
    log.Info("ready; waiting for SIGTERM");
    std::string sig = WaitForStop(sfd, log);
    log.Info(sig + " received" + (cfg.export_nvmet ? ", tearing down the nvmet export" : ""));
    sd_notify(0, "STOPPING=1");
    // The reconciler first: it uses the keeper. Volumes stay attached and
    // keep serving, the cluster's exports stay in nvmet; a restarted
    // chorusd adopts them.
    metrics.reset();  // its scrapes read the keeper
    reconciler.reset();
    keeper.reset();
    return cfg.export_nvmet ? Teardown(applier, log) : kExitOk;
}

int Main(int argc, char** argv) {
    Args args;
    CLI::App app{"chorusd - chorus node daemon: nvmet export of this node's volumes", "chorusd"};
    app.set_version_flag("--version", std::string("chorusd ") + CHORUS_VERSION);
    app.add_option("--config", args.config, "Config file")->capture_default_str();
    app.add_option("--configfs", args.configfs, "configfs mount point")->capture_default_str();
    app.add_option("--state-file", args.state_file, "Record of what chorusd created")
        ->capture_default_str();
    app.add_option("--cluster-state-file", args.cluster_state_file,
                   "Record of what chorusd created for the cluster's NVMe-oF exports")
        ->capture_default_str();
    app.add_option("--lio-state-file", args.lio_state_file,
                   "Record of what chorusd created for the cluster's iSCSI exports")
        ->capture_default_str();
    CLI::Option* once = app.add_flag("--once", args.once, "Apply the export and exit");
    CLI::Option* teardown =
        app.add_flag("--teardown", args.teardown, "Undo what the state files record and exit");
    CLI::Option* print = app.add_flag("--print-plan", args.print_plan,
                                      "Print the configfs operations and exit (changes nothing)");
    once->excludes(teardown);
    print->excludes(teardown);
    print->excludes(once);
    app.add_option("--log-level", args.log_level, "debug, info, warn or error")
        ->check(CLI::IsMember({"debug", "info", "warn", "error"}))
        ->capture_default_str();

    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "chorusd: " << e.what() << "\nRun with --help for more information."
                  << std::endl;
        return kExitUsage;
    }

    Logger log(*ParseLogLevel(args.log_level));
    try {
        return Run(args, log);
    } catch (const std::exception& e) {
        log.Error(e.what());
        return kExitFailed;
    }
}

}  // namespace
}  // namespace chorus

int main(int argc, char** argv) {
    return chorus::Main(argc, argv);
}
