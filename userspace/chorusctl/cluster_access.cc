#include "chorusctl/cluster_access.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "chorusctl/command.h"
#include "lib/config.h"

namespace chorus {

namespace {

std::vector<std::string> SplitList(const std::string& list) {
    std::vector<std::string> out;
    std::stringstream ss(list);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty())
            out.push_back(item);
    return out;
}

// The option's value, else the environment variable's, else fallback.
std::string FirstOf(const std::string& option, const char* env, const std::string& fallback) {
    if (!option.empty())
        return option;
    if (const char* v = std::getenv(env); v != nullptr && v[0] != '\0')
        return v;
    return fallback;
}

// A TLS file named on the command line or in the environment is checked
// as chorusd checks the config's: readable, and a certificate with its key.
void CheckTls(const EtcdTls& tls) {
    for (const auto& [name, path] :
         {std::pair{"--etcd-cacert", &tls.ca_file}, std::pair{"--etcd-cert", &tls.cert_file},
          std::pair{"--etcd-key", &tls.key_file}})
        if (!path->empty())
            if (std::string why = UnreadableFile(*path); !why.empty())
                throw UsageError(std::string(name) + ": " + why);
    if (tls.cert_file.empty() != tls.key_file.empty())
        throw UsageError("--etcd-cert and --etcd-key go together (a certificate and its key)");
}

constexpr uint32_t kMinTimeoutMs = 100;
constexpr uint32_t kMaxTimeoutMs = 30000;
constexpr uint32_t kDefaultTimeoutMs = 2000;

// One attempt's time: the option's, else $CHORUS_ETCD_TIMEOUT_MS's, else
// the default. A slow cluster (the debug lab kernel's) needs more.
std::chrono::milliseconds AttemptTimeout(uint32_t option) {
    if (option != 0)
        return std::chrono::milliseconds(option);
    const char* env = std::getenv("CHORUS_ETCD_TIMEOUT_MS");
    if (env == nullptr || env[0] == '\0')
        return std::chrono::milliseconds(kDefaultTimeoutMs);
    uint32_t ms = 0;
    const char* end = env + std::strlen(env);
    auto [ptr, ec] = std::from_chars(env, end, ms);
    if (ec != std::errc() || ptr != end || ms < kMinTimeoutMs || ms > kMaxTimeoutMs)
        throw UsageError("CHORUS_ETCD_TIMEOUT_MS: '" + std::string(env) +
                         "' is not a number of milliseconds in " + std::to_string(kMinTimeoutMs) +
                         ".." + std::to_string(kMaxTimeoutMs));
    return std::chrono::milliseconds(ms);
}

}  // namespace

void ClusterAccess::AddOptions(CLI::App& cmd) {
    cmd.add_option("--etcd", etcd,
                   "etcd endpoints, http(s)://HOST:PORT[,...] (default: $CHORUS_ETCD, else the "
                   "[cluster] section of --config)");
    cmd.add_option("--config", config,
                   "chorusd's config, read for its etcd endpoints and TLS files")
        ->capture_default_str();
    cmd.add_option("--etcd-timeout", timeout_ms,
                   "ms one etcd member has to answer before the next is tried (default: "
                   "$CHORUS_ETCD_TIMEOUT_MS, else 2000); a call has three such attempts and at "
                   "least 5 s")
        ->type_name("MS")
        ->check(CLI::Range(kMinTimeoutMs, kMaxTimeoutMs));
    cmd.add_option("--etcd-cacert", tls.ca_file,
                   "CA file for https endpoints (default: $CHORUS_ETCD_CACERT, else etcd_ca_file "
                   "of --config)");
    cmd.add_option("--etcd-cert", tls.cert_file,
                   "client certificate for https endpoints (default: $CHORUS_ETCD_CERT, else "
                   "etcd_cert_file of --config)");
    cmd.add_option("--etcd-key", tls.key_file,
                   "the client certificate's key (default: $CHORUS_ETCD_KEY, else etcd_key_file "
                   "of --config)");
}

std::unique_ptr<EtcdClient> ClusterAccess::Connect() const {
    std::vector<std::string> endpoints = SplitList(etcd);
    if (endpoints.empty()) {
        if (const char* env = std::getenv("CHORUS_ETCD"))
            endpoints = SplitList(env);
    }
    EtcdTls from_config;
    struct stat st;
    if (endpoints.empty() && stat(config.c_str(), &st) == 0) {
        Config cfg = LoadConfig(config);  // ConfigError names the file and line
        if (cfg.cluster) {
            endpoints = cfg.cluster->etcd;
            from_config = {cfg.cluster->etcd_ca_file, cfg.cluster->etcd_cert_file,
                           cfg.cluster->etcd_key_file};
        }
    }
    if (endpoints.empty())
        throw UsageError(
            "no etcd endpoints: give --etcd, set CHORUS_ETCD or add a [cluster] "
            "section to " +
            config);
    EtcdOptions o;
    o.endpoints = endpoints;
    o.tls.ca_file = FirstOf(tls.ca_file, "CHORUS_ETCD_CACERT", from_config.ca_file);
    o.tls.cert_file = FirstOf(tls.cert_file, "CHORUS_ETCD_CERT", from_config.cert_file);
    o.tls.key_file = FirstOf(tls.key_file, "CHORUS_ETCD_KEY", from_config.key_file);
    CheckTls(o.tls);
    o.attempt_timeout = AttemptTimeout(timeout_ms);
    o.call_timeout =
        std::max<std::chrono::milliseconds>(std::chrono::seconds(5), 3 * o.attempt_timeout);
    return std::make_unique<EtcdClient>(o);
}

}  // namespace chorus
