#include "lib/cluster_session.h"

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "lib/errors.h"

namespace chorus {

namespace {

constexpr int kStateVersion = 1;
constexpr int kNodeRecordVersion = 1;

// The state file's content, or nothing if it is absent or unusable (then a
// new lease is granted; a damaged file is reported).
struct SavedSession {
    uint32_t node_id = 0;
    int64_t lease_id = 0;
    bool arms_kernel = false;
};

std::optional<SavedSession> ReadState(const std::string& path, const LogFn& log) {
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    std::stringstream buf;
    buf << in.rdbuf();
    try {
        nlohmann::json j = nlohmann::json::parse(buf.str());
        if (j.at("version").get<int>() != kStateVersion)
            throw std::runtime_error("version " + j.at("version").dump() + " is not " +
                                     std::to_string(kStateVersion));
        SavedSession s;
        s.node_id = j.at("node_id").get<uint32_t>();
        s.lease_id = j.at("lease_id").get<int64_t>();
        s.arms_kernel = j.at("arms_kernel").get<bool>();
        return s;
    } catch (const std::exception& e) {
        if (log)
            log(Severity::kWarn, "session state " + path + " ignored: " + e.what());
        return std::nullopt;
    }
}

}  // namespace

std::string NodeKey(uint32_t node_id) {
    return "/chorus/nodes/" + std::to_string(node_id);
}

uint64_t BoottimeNs() {
    timespec ts{};
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
        throw Error(std::string("clock_gettime(CLOCK_BOOTTIME): ") + std::strerror(errno), errno);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

ClusterSession::ClusterSession(EtcdClient& etcd, SessionOptions options, LogFn log)
    : etcd_(etcd), options_(std::move(options)), log_(std::move(log)) {
    if (options_.node_id == 0)
        throw Error("a cluster session needs a node id");
}

void ClusterSession::Log(Severity s, const std::string& msg) const {
    if (log_)
        log_(s, msg);
}

void ClusterSession::Start(const std::function<bool()>& arm_if_new) {
    adopted_ = Adopt();
    if (!adopted_) {
        arms_kernel_ = arm_if_new();
        Grant();
    }
    SaveState();
    Register();
    Log(Severity::kInfo, std::string("session ") + (adopted_ ? "adopted" : "started") + ": lease " +
                             std::to_string(lease_id_) + ", TTL " + std::to_string(ttl_) +
                             " s, node " + std::to_string(options_.node_id) +
                             (arms_kernel_ ? "" : "; it gives the kernel no lease deadline"));
}

bool ClusterSession::Adopt() {
    if (options_.state_file.empty())
        return false;
    std::optional<SavedSession> saved = ReadState(options_.state_file, log_);
    if (!saved)
        return false;
    if (saved->node_id != options_.node_id) {
        Log(Severity::kWarn, "session state " + options_.state_file + " is of node " +
                                 std::to_string(saved->node_id) + ", not " +
                                 std::to_string(options_.node_id) + ": not adopted");
        return false;
    }
    EtcdKeepAlive ka = etcd_.LeaseKeepAliveOnce(saved->lease_id);
    if (!ka.alive) {
        Log(Severity::kInfo, "the earlier session's lease " + std::to_string(saved->lease_id) +
                                 " is gone: starting a new session");
        return false;
    }
    lease_id_ = saved->lease_id;
    ttl_ = ka.ttl;
    arms_kernel_ = saved->arms_kernel;
    return true;
}

void ClusterSession::Grant() {
    EtcdLease lease = etcd_.LeaseGrant(options_.ttl.count());
    lease_id_ = lease.id;
    ttl_ = lease.ttl;
    if (lease.ttl != options_.ttl.count())
        Log(Severity::kInfo, "etcd granted a TTL of " + std::to_string(lease.ttl) + " s for the " +
                                 std::to_string(options_.ttl.count()) +
                                 " s asked (its minimum is 1.5 election timeouts)");
}

// Written to a temporary file and renamed, so a crash leaves the old state
// or the new one, never half of one.
void ClusterSession::AllowArming() {
    if (arms_kernel_)
        return;
    arms_kernel_ = true;
    SaveState();
    Log(Severity::kInfo, "lease " + std::to_string(lease_id_) +
                             ": every volume this node owns is owned under this session; it "
                             "gives the kernel lease deadlines from now on");
}

void ClusterSession::SaveState() const {
    if (options_.state_file.empty())
        return;
    namespace fs = std::filesystem;
    fs::path path(options_.state_file);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    std::string tmp = options_.state_file + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        out << nlohmann::json{{"version", kStateVersion},
                              {"node_id", options_.node_id},
                              {"lease_id", lease_id_},
                              {"arms_kernel", arms_kernel_}}
                   .dump()
            << '\n';
        if (!out.flush())
            throw Error("cannot write the session state " + tmp);
    }
    fs::rename(tmp, path, ec);
    if (ec)
        throw Error("cannot rename " + tmp + " to " + options_.state_file + ": " + ec.message());
}

// The node's key, created if absent or rewritten if it is bound to this
// session's lease (an adopted session): a repeat of the transaction after
// a timed-out attempt finds its own key and succeeds again.
bool ClusterSession::TryRegister(std::string* holder) {
    const std::string key = NodeKey(options_.node_id);
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    const std::string record = nlohmann::json{
        {"version", kNodeRecordVersion},
        {"node_id", options_.node_id},
        {"address", options_.address},
        {"port", options_.port},
        {"hostname", host},
        {"pid", getpid()}}.dump();
    EtcdTxnResult mine =
        etcd_.Txn({EtcdCompare::Lease(key, EtcdCompare::Result::kEqual, lease_id_)},
                  {EtcdOp::Put(key, record, lease_id_)}, {EtcdOp::Range(EtcdKeys::Key(key))});
    if (mine.succeeded)
        return true;
    const std::vector<EtcdKeyValue>& kvs = mine.responses.at(0).kvs;
    if (kvs.empty()) {
        EtcdTxnResult created =
            etcd_.Txn({EtcdCompare::Absent(key)}, {EtcdOp::Put(key, record, lease_id_)});
        if (created.succeeded)
            return true;
        *holder = "a concurrent registration";
        return false;
    }
    *holder = "lease " + std::to_string(kvs[0].lease) + " (" + kvs[0].value + ")";
    return false;
}

void ClusterSession::Register() {
    using Clock = std::chrono::steady_clock;
    const Clock::time_point give_up = Clock::now() + options_.register_wait;
    std::string holder;
    bool waited = false;
    while (!TryRegister(&holder)) {
        if (Clock::now() >= give_up)
            throw Error("node id " + std::to_string(options_.node_id) +
                        " is registered by another live chorusd: " + NodeKey(options_.node_id) +
                        " is bound to " + holder + "; is the same node id configured twice?");
        if (!waited)
            Log(Severity::kInfo, NodeKey(options_.node_id) + " is held by " + holder +
                                     ": waiting for that lease to expire");
        waited = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
}

std::optional<uint64_t> ClusterSession::KeepAlive() {
    if (lost_)
        return std::nullopt;
    // Measured before the request leaves: etcd renews the lease no earlier
    // than this, so the lease lasts at least TTL from here.
    const uint64_t sent = BoottimeNs();
    EtcdKeepAlive ka;
    try {
        ka = etcd_.LeaseKeepAliveOnce(lease_id_);
    } catch (const EtcdError& e) {
        // Unreachable, or an answer refusing or garbling the call: the next
        // keepalive tries again; a lease etcd no longer has reads as such.
        Log(Severity::kWarn,
            std::string("keepalive failed, the kernel deadline stands: ") + e.what());
        return std::nullopt;
    }
    if (!ka.alive) {
        lost_ = true;
        Log(Severity::kError, "session lost: etcd no longer has lease " +
                                  std::to_string(lease_id_) +
                                  "; the volumes this node owned stay held");
        return std::nullopt;
    }
    const uint64_t ttl_ns = static_cast<uint64_t>(ka.ttl) * 1000000000u;
    const uint64_t margin_ns = static_cast<uint64_t>(options_.margin.count()) * 1000000u;
    if (ttl_ns <= margin_ns)
        return std::nullopt;
    return sent + ttl_ns - margin_ns;
}

}  // namespace chorus
