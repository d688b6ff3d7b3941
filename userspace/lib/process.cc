#include "lib/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "lib/errors.h"
#include "lib/fd.h"

extern char** environ;

namespace chorus {

namespace {

struct Pipe {
    Fd read;
    Fd write;
};

Pipe MakePipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) < 0)
        throw Error(std::string("pipe: ") + std::strerror(errno), errno);
    return {Fd(fds[0]), Fd(fds[1])};
}

// posix_spawn's file actions, freed on every path.
class SpawnActions {
public:
    SpawnActions() { posix_spawn_file_actions_init(&actions_); }
    ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
    SpawnActions(const SpawnActions&) = delete;
    SpawnActions& operator=(const SpawnActions&) = delete;
    posix_spawn_file_actions_t* get() { return &actions_; }

private:
    posix_spawn_file_actions_t actions_;
};

// Reads both pipes until they close or the deadline passes; false on timeout.
bool Drain(Fd& out_fd, Fd& err_fd, std::string* out, std::string* err,
           std::chrono::steady_clock::time_point deadline) {
    std::array<Fd*, 2> fds{&out_fd, &err_fd};
    std::array<std::string*, 2> bufs{out, err};
    while (out_fd.valid() || err_fd.valid()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return false;
        std::array<pollfd, 2> p{};
        for (size_t i = 0; i < 2; i++)
            p[i] = {fds[i]->valid() ? fds[i]->get() : -1, POLLIN, 0};
        int n = poll(p.data(), p.size(), static_cast<int>(left.count()));
        if (n < 0 && errno != EINTR)
            throw Error(std::string("poll: ") + std::strerror(errno), errno);
        for (size_t i = 0; n > 0 && i < 2; i++) {
            if (p[i].revents == 0)
                continue;
            char buf[4096];
            ssize_t r = read(fds[i]->get(), buf, sizeof(buf));
            if (r > 0)
                bufs[i]->append(buf, static_cast<size_t>(r));
            else if (r == 0 || errno != EINTR)
                fds[i]->Reset();
        }
    }
    return true;
}

}  // namespace

std::string JoinArgv(const std::vector<std::string>& argv) {
    std::string s;
    for (const auto& a : argv)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

ProcessResult RunProcess(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    if (argv.empty())
        throw Error("RunProcess: no program", EINVAL);
    Pipe out = MakePipe(), err = MakePipe();
    SpawnActions actions;
    posix_spawn_file_actions_addopen(actions.get(), 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(actions.get(), out.write.get(), 1);
    posix_spawn_file_actions_adddup2(actions.get(), err.write.get(), 2);
    // Sockets of libcurl and libnl are not close-on-exec: the helper gets
    // none of our descriptors (LVM even complains of each).
    posix_spawn_file_actions_addclosefrom_np(actions.get(), 3);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid;
    int rc = posix_spawnp(&pid, args[0], actions.get(), nullptr, args.data(), environ);
    if (rc != 0)
        throw Error("cannot run " + argv[0] + ": " + std::strerror(rc), rc);
    out.write.Reset();
    err.write.Reset();

    ProcessResult result;
    bool finished = Drain(out.read, err.read, &result.out, &result.err,
                          std::chrono::steady_clock::now() + timeout);
    if (!finished)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    while (!result.err.empty() && result.err.back() == '\n')
        result.err.pop_back();
    if (!finished)
        result.err += (result.err.empty() ? "" : "; ") + std::string("killed after ") +
                      std::to_string(timeout.count()) + " ms";
    result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

}  // namespace chorus
