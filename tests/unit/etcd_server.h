// Real etcd servers for the etcd client tests: Debian's etcd 3.4 binary
// (package etcd-server) run on loopback with free ports and a scratch data
// directory, killed and removed on destruction. No mock store: what the
// tests check is what etcd does.
#ifndef CHORUS_TESTS_UNIT_ETCD_SERVER_H_
#define CHORUS_TESTS_UNIT_ETCD_SERVER_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "lib/etcd_client.h"

namespace chorus::test {

// A directory for etcd's data, on tmpfs when /dev/shm is there (etcd
// fsyncs every write, and the data is thrown away), removed with its
// contents.
class ScratchDir {
public:
    ScratchDir();
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// TLS on the members' client port: etcd --cert-file, --key-file and, with
// a trusted CA, --client-cert-auth --trusted-ca-file. With peer_tls, the
// members' raft traffic too: https peer URLs with the same certificate and
// --peer-client-cert-auth --peer-trusted-ca-file (Documentation/etcd.md,
// "The members' own traffic").
struct EtcdServerTls {
    std::string cert_file;
    std::string key_file;
    std::string trusted_ca_file;  // empty: no client certificates asked for
    EtcdTls client;               // what the health check presents
    bool peer_tls = false;
};

// A cluster of etcd members on 127.0.0.1. A single member is tuned for
// fast tests (10 ms heartbeat, so etcd's minimum lease TTL is 1 s); three
// members get more slack (50 ms heartbeat, 500 ms election timeout) so a
// loaded two-core machine does not lose its leader by accident.
class EtcdCluster {
public:
    // Starts the members and waits until every one reports itself healthy.
    // Throws std::runtime_error, with the end of a member's log, if etcd is
    // not installed or does not come up.
    explicit EtcdCluster(int members = 1, std::optional<EtcdServerTls> tls = std::nullopt);
    ~EtcdCluster();
    EtcdCluster(const EtcdCluster&) = delete;
    EtcdCluster& operator=(const EtcdCluster&) = delete;

    int size() const { return static_cast<int>(members_.size()); }
    std::string endpoint(int member) const;
    std::vector<std::string> endpoints() const;
    // A member's peer URL (raft between the members).
    std::string peer_url(int member) const;

    // Client options for these endpoints with short timeouts.
    EtcdOptions Options() const;

    // The member that is the raft leader now, -1 if none answers.
    int Leader() const;

    // SIGKILL, as a crash: no goodbye to the peers or the clients.
    void Kill(int member);
    // Starts a killed member again, same ports and data, and waits until
    // it is healthy.
    void Restart(int member);

private:
    struct Member {
        std::string name;
        int client_port = 0;
        int peer_port = 0;
        pid_t pid = -1;
    };

    std::string ClientUrl(int port) const;
    std::string PeerUrl(int port) const;
    void StartAll();
    void Start(Member& m, bool new_cluster);
    void WaitHealthy(Member& m, std::chrono::milliseconds timeout);
    std::string LogTail(const Member& m) const;
    void KillAll();

    ScratchDir dir_;
    std::vector<Member> members_;
    std::optional<EtcdServerTls> tls_;
};

// A TCP port on 127.0.0.1 that nothing listens on (connections to it are
// refused).
int UnusedPort();

}  // namespace chorus::test

#endif  // CHORUS_TESTS_UNIT_ETCD_SERVER_H_
