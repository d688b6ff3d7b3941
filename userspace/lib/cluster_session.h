// chorusd's session in the cluster store: one etcd lease per daemon, the
// node's membership key bound to it, and the kernel lease deadline that
// each successful keepalive earns (Documentation/cluster.md, "Timing").
//
// The session survives a restart of the daemon: the lease id is kept in a
// state file, and a new daemon that finds the lease still alive adopts it,
// so whatever was bound to it (the membership key; later, owner keys) stays
// and the kernel's deadline is renewed before it passes.
//
// A session that etcd no longer has is lost for good: the kernel is never
// given a deadline from a later session, because what this node owned
// under the lost one may belong to another node by now. Only the decisions
// of the control plane (or an operator) may release I/O held from then on.
#ifndef CHORUS_LIB_CLUSTER_SESSION_H_
#define CHORUS_LIB_CLUSTER_SESSION_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "lib/etcd_client.h"
#include "lib/severity.h"

namespace chorus {

struct SessionOptions {
    uint32_t node_id = 0;
    std::chrono::seconds ttl{5};             // asked of etcd; it may grant more
    std::chrono::milliseconds margin{1000};  // deadline = keepalive sent + TTL - margin
    std::string state_file;                  // where the lease id is kept; "" for none
    // How long Start() waits for an earlier holder of this node's key (a
    // daemon that crashed without a state file) to lose its lease.
    std::chrono::milliseconds register_wait{15000};
    std::string address;   // this node's replication address; may be empty
    uint16_t port = 7788;  // and port
};

// The key of a node's membership record.
std::string NodeKey(uint32_t node_id);

// CLOCK_BOOTTIME in ns: the kernel's lease clock.
uint64_t BoottimeNs();

class ClusterSession {
public:
    // etcd must outlive the session.
    ClusterSession(EtcdClient& etcd, SessionOptions options, LogFn log);

    // Adopts the lease of the state file if etcd still has it, else grants
    // a new one; then registers the node's key, bound to the lease (waiting
    // up to register_wait for a key left by an earlier lease). Throws
    // chorus::Error (EtcdError from etcd) if it cannot.
    //
    // arm_if_new: asked only when a new lease is granted, whether the new
    // session may give the kernel deadlines. An adopted session keeps what
    // the state file says, so that a restart never turns a session that
    // must not arm the kernel into one that does.
    void Start(const std::function<bool()>& arm_if_new);

    // One keepalive. Returns the kernel deadline (CLOCK_BOOTTIME ns) this
    // renewal earns, or nothing: etcd unreachable (the previous deadline
    // stands and will pass), or the lease is gone (lost() from then on).
    std::optional<uint64_t> KeepAlive();

    // From now on the session gives the kernel deadlines (kept in the state
    // file): the control plane found that every volume the kernel owns is
    // owned under this session, so no deadline can extend a stale owner.
    void AllowArming();

    int64_t lease_id() const { return lease_id_; }
    int64_t ttl_seconds() const { return ttl_; }
    bool adopted() const { return adopted_; }  // Start() found its lease alive
    bool arms_kernel() const { return arms_kernel_; }
    bool lost() const { return lost_; }

private:
    bool Adopt();
    void Grant();
    void Register();
    bool TryRegister(std::string* holder);
    void SaveState() const;
    void Log(Severity s, const std::string& msg) const;

    EtcdClient& etcd_;
    SessionOptions options_;
    LogFn log_;
    int64_t lease_id_ = 0;
    int64_t ttl_ = 0;  // seconds, as granted
    bool adopted_ = false;
    bool arms_kernel_ = false;
    bool lost_ = false;
};

}  // namespace chorus

#endif  // CHORUS_LIB_CLUSTER_SESSION_H_
