// What a chorusctl command is: an object that declares its own options and
// runs once CLI11 has parsed them into its members. main.cc's table says
// where each command sits in the command tree.
#ifndef CHORUS_CHORUSCTL_COMMAND_H_
#define CHORUS_CHORUSCTL_COMMAND_H_

#include <cerrno>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "lib/errors.h"
#include "lib/genl_client.h"

namespace chorus {

// Documented in Documentation/chorusctl.rst; scripts depend on them.
enum ExitCode {
    kExitOk = 0,
    kExitFailed = 1,      // the operation failed (the kernel said no)
    kExitUsage = 2,       // bad command line
    kExitNoModule = 3,    // chorus.ko is not loaded
    kExitNotFound = 4,    // no such volume or peer
    kExitPermission = 5,  // permission denied
};

// A command-line problem found after CLI11 accepted the arguments.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What a command was asked about does not exist (a volume of the cluster):
// exit status kExitNotFound.
class NotFoundError : public Error {
public:
    explicit NotFoundError(const std::string& what) : Error(what, ENOENT) {}
};

// The options every command accepts, given before or after its name.
struct GlobalOptions {
    bool json = false;  // print machine-readable JSON instead of text
};

class Command {
public:
    virtual ~Command() = default;

    // Adds the command's positionals and options to cmd, bound to members
    // of this object, which must outlive the parse.
    virtual void AddOptions(CLI::App& cmd) = 0;

    // The arguments that say what the command works on, as typed ("vol0 2"),
    // or "". Error messages name the command by its path and these.
    virtual std::string Subject() const { return ""; }

    // Returns the exit status. Throws UsageError for a bad combination of
    // arguments, chorus::Error (or another std::exception) if it failed.
    virtual int Run(const GlobalOptions& global) = 0;
};

// What commands share once they run.

// A client of chorus.ko; throws ModuleNotLoadedError if it is not loaded.
VolumeClient Connect();

// Pretty-printed, on stdout.
void PrintJson(const nlohmann::json& j);

// After a command changed a volume: with --json the volume as the kernel
// now reports it (as create prints it), else the one-line confirmation.
int ReportVolume(const GlobalOptions& global, VolumeClient& client, const std::string& volume,
                 const std::string& line);

// EBUSY opening a backing device exclusively, from chorusctl or the kernel.
Error InUseError(const std::string& path);

}  // namespace chorus

#endif  // CHORUS_CHORUSCTL_COMMAND_H_
