#include "etcd_server.h"

#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "lib/etcd_curl.h"
#include "lib/fd.h"

extern char** environ;

namespace chorus::test {

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kStartTries = 3;
constexpr milliseconds kHealthyTimeout{20000};

std::string Url(int port) {
    return "http://127.0.0.1:" + std::to_string(port);
}

// The environment without ETCD_* variables: etcd would read them as flags.
std::vector<std::string> EnvironmentWithoutEtcd() {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        if (std::string_view(*e).substr(0, 5) != "ETCD_")
            env.emplace_back(*e);
    }
    return env;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// Runs argv with stdout and stderr to log_path. The child dies with this
// process, so a crashed test leaves no etcd behind.
pid_t Spawn(std::vector<std::string> argv, const std::string& log_path) {
    std::vector<std::string> env = EnvironmentWithoutEtcd();
    std::vector<char*> c_argv = CStrings(argv);
    std::vector<char*> c_env = CStrings(env);
    Fd log(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    Fd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!log.valid() || !null.valid())
        throw std::runtime_error("cannot open " + log_path);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent)
            ::_exit(127);
        ::dup2(null.get(), 0);
        ::dup2(log.get(), 1);
        ::dup2(log.get(), 2);
        ::execvpe(c_argv[0], c_argv.data(), c_env.data());
        ::_exit(127);
    }
    return pid;
}

size_t AppendBody(char* data, size_t size, size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
}

// GET /health: {"health":"true"} once the member has a leader.
bool Healthy(const std::string& client_url, const EtcdTls& tls) {
    CurlEasyPtr easy(curl_easy_init());
    if (!easy)
        return false;
    std::string body;
    const std::string url = client_url + "/health";
    curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
    SetTlsOptions(easy.get(), tls);
    curl_easy_setopt(easy.get(), CURLOPT_PROXY, "");
    curl_easy_setopt(easy.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy.get(), CURLOPT_TIMEOUT_MS, 500L);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, AppendBody);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &body);
    return curl_easy_perform(easy.get()) == CURLE_OK &&
           body.find("\"health\":\"true\"") != std::string::npos;
}

}  // namespace

ScratchDir::ScratchDir() {
    const char* base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/chorus-etcd-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

int UnusedPort() {
    Fd sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (!sock.valid() || ::bind(sock.get(), reinterpret_cast<sockaddr*>(&addr), len) < 0 ||
        ::getsockname(sock.get(), reinterpret_cast<sockaddr*>(&addr), &len) < 0)
        throw std::runtime_error("cannot find a free port");
    return ntohs(addr.sin_port);
}

EtcdCluster::EtcdCluster(int members, std::optional<EtcdServerTls> tls)
    : members_(static_cast<size_t>(members)), tls_(std::move(tls)) {
    for (int i = 0; i < members; ++i)
        members_[static_cast<size_t>(i)].name = "m" + std::to_string(i);
    for (int attempt = 1;; ++attempt) {
        try {
            StartAll();
            return;
        } catch (const std::exception&) {
            // Most likely a port taken between UnusedPort() and etcd's
            // bind: start again on other ports.
            KillAll();
            if (attempt == kStartTries)
                throw;
        }
    }
}

EtcdCluster::~EtcdCluster() {
    KillAll();
}

std::string EtcdCluster::ClientUrl(int port) const {
    return tls_ ? "https://127.0.0.1:" + std::to_string(port) : Url(port);
}

std::string EtcdCluster::PeerUrl(int port) const {
    return tls_ && tls_->peer_tls ? "https://127.0.0.1:" + std::to_string(port) : Url(port);
}

std::string EtcdCluster::peer_url(int member) const {
    return PeerUrl(members_.at(static_cast<size_t>(member)).peer_port);
}

std::string EtcdCluster::endpoint(int member) const {
    return ClientUrl(members_.at(static_cast<size_t>(member)).client_port);
}

std::vector<std::string> EtcdCluster::endpoints() const {
    std::vector<std::string> out;
    for (int i = 0; i < size(); ++i)
        out.push_back(endpoint(i));
    return out;
}

EtcdOptions EtcdCluster::Options() const {
    EtcdOptions options;
    options.endpoints = endpoints();
    if (tls_)
        options.tls = tls_->client;
    options.connect_timeout = milliseconds(500);
    options.attempt_timeout = milliseconds(2000);
    options.call_timeout = milliseconds(5000);
    return options;
}

int EtcdCluster::Leader() const {
    HttpPoster http;
    for (int i = 0; i < size(); ++i) {
        if (members_[static_cast<size_t>(i)].pid <= 0)
            continue;
        HttpReply reply = http.Post(endpoint(i) + "/v3/maintenance/status", "{}", milliseconds(500),
                                    milliseconds(1000));
        auto status = nlohmann::json::parse(reply.body, nullptr, false);
        if (!reply.answered || !status.is_object() || !status.contains("leader"))
            continue;
        // Status answers with the member's own id in the header.
        const auto leader = status["leader"];
        for (int j = 0; j < size(); ++j) {
            HttpReply other = http.Post(endpoint(j) + "/v3/maintenance/status", "{}",
                                        milliseconds(500), milliseconds(1000));
            auto id = nlohmann::json::parse(other.body, nullptr, false);
            if (other.answered && id.is_object() && id.contains("header") &&
                id["header"].value("member_id", "") == leader)
                return j;
        }
    }
    return -1;
}

void EtcdCluster::Kill(int member) {
    Member& m = members_.at(static_cast<size_t>(member));
    if (m.pid <= 0)
        return;
    ::kill(m.pid, SIGKILL);
    ::waitpid(m.pid, nullptr, 0);
    m.pid = -1;
}

void EtcdCluster::Restart(int member) {
    Member& m = members_.at(static_cast<size_t>(member));
    Start(m, /*new_cluster=*/false);
    WaitHealthy(m, kHealthyTimeout);
}

void EtcdCluster::StartAll() {
    for (Member& m : members_) {
        m.client_port = UnusedPort();
        m.peer_port = UnusedPort();
    }
    for (Member& m : members_)
        Start(m, /*new_cluster=*/true);
    for (Member& m : members_)
        WaitHealthy(m, kHealthyTimeout);
}

void EtcdCluster::Start(Member& m, bool new_cluster) {
    std::string initial_cluster;
    for (const Member& other : members_)
        initial_cluster +=
            (initial_cluster.empty() ? "" : ",") + other.name + "=" + PeerUrl(other.peer_port);
    const bool single = members_.size() == 1;
    const std::string data = dir_.path() + "/" + m.name;
    if (new_cluster) {
        std::error_code ec;
        std::filesystem::remove_all(data, ec);
    }
    std::vector<std::string> argv = {"etcd",
                                     "--name",
                                     m.name,
                                     "--data-dir",
                                     data,
                                     "--listen-client-urls",
                                     ClientUrl(m.client_port),
                                     "--advertise-client-urls",
                                     ClientUrl(m.client_port),
                                     "--listen-peer-urls",
                                     PeerUrl(m.peer_port),
                                     "--initial-advertise-peer-urls",
                                     PeerUrl(m.peer_port),
                                     "--initial-cluster",
                                     initial_cluster,
                                     "--initial-cluster-state",
                                     "new",
                                     "--initial-cluster-token",
                                     "chorus-test",
                                     "--heartbeat-interval",
                                     single ? "10" : "50",
                                     "--election-timeout",
                                     single ? "100" : "500",
                                     "--logger",
                                     "zap",
                                     "--log-outputs",
                                     "stderr"};
    if (tls_) {
        argv.insert(argv.end(), {"--cert-file", tls_->cert_file, "--key-file", tls_->key_file});
        if (!tls_->trusted_ca_file.empty())
            argv.insert(argv.end(),
                        {"--client-cert-auth", "--trusted-ca-file", tls_->trusted_ca_file});
        if (tls_->peer_tls)
            argv.insert(argv.end(), {"--peer-cert-file", tls_->cert_file, "--peer-key-file",
                                     tls_->key_file, "--peer-client-cert-auth",
                                     "--peer-trusted-ca-file", tls_->trusted_ca_file});
    }
    m.pid = Spawn(std::move(argv), data + ".log");
}

void EtcdCluster::WaitHealthy(Member& m, milliseconds timeout) {
    const Clock::time_point deadline = Clock::now() + timeout;
    while (!Healthy(ClientUrl(m.client_port), tls_ ? tls_->client : EtcdTls{})) {
        int status = 0;
        if (::waitpid(m.pid, &status, WNOHANG) == m.pid) {
            m.pid = -1;
            throw std::runtime_error(
                "etcd " + m.name + " exited (status " + std::to_string(status) +
                "; is package etcd-server installed? make deps)\n" + LogTail(m));
        }
        if (Clock::now() >= deadline)
            throw std::runtime_error("etcd " + m.name + " not healthy in time\n" + LogTail(m));
        std::this_thread::sleep_for(milliseconds(20));
    }
}

std::string EtcdCluster::LogTail(const Member& m) const {
    std::ifstream in(dir_.path() + "/" + m.name + ".log");
    std::stringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    constexpr size_t kTail = 2000;
    return text.size() > kTail ? text.substr(text.size() - kTail) : text;
}

void EtcdCluster::KillAll() {
    for (int i = 0; i < size(); ++i)
        Kill(i);
}

}  // namespace chorus::test
