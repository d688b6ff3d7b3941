// chorusctl's argument checks, and the arguments several commands share.
//
// CLI11 runs the checks while it parses, so a bad argument is a usage error
// (exit status 2) before anything is sent; the commands then parse the
// checked strings, which cannot fail any more.
#ifndef CHORUS_CHORUSCTL_ARGS_H_
#define CHORUS_CHORUSCTL_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "lib/uuid.h"

namespace chorus {

// CLI11 validator from a check returning "" when fine, else the reason.
CLI::Validator Check(std::string (*fn)(std::string_view), const char* desc);

// Checks for Check(): each returns "" or why the text is not acceptable.
std::string CheckSize(std::string_view s);          // a size, not zero
std::string CheckBlockSizeArg(std::string_view s);  // 512, 1024, 2048 or 4096
std::string CheckUuidArg(std::string_view s);
std::string CheckNodeIdArg(std::string_view s);     // 1..32
std::string CheckConnsArg(std::string_view s);      // 1..8
std::string CheckPortArg(std::string_view s);       // 1..65535
std::string CheckU32Arg(std::string_view s);        // a decimal up to UINT32_MAX
std::string CheckU64Arg(std::string_view s);        // a decimal up to UINT64_MAX
std::string CheckTransportArg(std::string_view s);  // tcp, rdma or rdma+tcp
std::string CheckRateArg(std::string_view s);       // a size, zero allowed

// Arguments CLI11 has checked, as numbers.
uint32_t NodeIdOf(const std::string& s);
uint16_t PortOf(const std::string& s);  // CHORUS_DEFAULT_PORT if s is empty

// The required NAME positional of the volume commands.
void AddVolumeName(CLI::App& cmd, std::string& name, const std::string& help = "Volume name");

// The required --backing option.
void AddBacking(CLI::App& cmd, std::string& backing, const std::string& help);

// A volume and one of its peers, named by two positionals.
struct VolumePeerArgs {
    std::string volume;
    std::string node_id;  // as typed; NodeId() parses it

    void AddTo(CLI::App& cmd);
    uint32_t NodeId() const { return NodeIdOf(node_id); }
    // "vol0 2", for error messages.
    std::string Subject() const { return volume + " " + node_id; }
};

// A volume's size, block size and uuid; whatever is not given is chosen
// from the backing device (or at random, the uuid).
struct VolumeShape {
    std::optional<uint64_t> size;
    std::optional<uint32_t> block_size;
    std::optional<Uuid> uuid;
};

// --size, --block-size and --uuid, which create and format share.
struct ShapeOptions {
    std::string size;
    std::string block_size;
    std::string uuid;

    void AddTo(CLI::App& cmd);
    // Parses what CLI11 has checked one by one, and checks the values
    // against each other. Throws UsageError.
    VolumeShape Parse() const;
};

}  // namespace chorus

#endif  // CHORUS_CHORUSCTL_ARGS_H_
