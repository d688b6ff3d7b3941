// Running a helper program (lvm, wipefs) and collecting what it said:
// posix_spawn, so that a multi-threaded daemon never runs code between
// fork and exec.
#ifndef CHORUS_LIB_PROCESS_H_
#define CHORUS_LIB_PROCESS_H_

#include <chrono>
#include <string>
#include <vector>

namespace chorus {

struct ProcessResult {
    int exit_status = -1;  // the exit status; -1 if killed by a signal
    std::string out;       // standard output
    std::string err;       // standard error, trailing newlines removed

    bool ok() const { return exit_status == 0; }
};

// Runs argv[0] (looked up in PATH) with argv, standard input /dev/null, and
// waits for it. A program still running after timeout is killed (SIGKILL)
// and reported as such in err. Throws chorus::Error if it cannot be started.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout = std::chrono::seconds(60));

// "lvcreate -n x vg" for messages.
std::string JoinArgv(const std::vector<std::string>& argv);

}  // namespace chorus

#endif  // CHORUS_LIB_PROCESS_H_
