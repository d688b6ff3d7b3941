#include "chorusctl/args.h"

#include <linux/chorus.h>

#include "chorusctl/command.h"
#include "lib/errors.h"
#include "lib/genl_codec.h"
#include "lib/size.h"
#include "lib/volume_validate.h"

namespace chorus {

namespace {

// A number checked by check once it parsed as a decimal up to max.
std::string CheckNumberArg(std::string_view s, uint64_t max, std::string (*check)(uint64_t)) {
    try {
        uint64_t v = ParseDecimal(s, max);
        return check != nullptr ? check(v) : "";
    } catch (const Error& e) {
        return e.what();
    }
}

}  // namespace

CLI::Validator Check(std::string (*fn)(std::string_view), const char* desc) {
    return CLI::Validator([fn](std::string& s) { return fn(s); }, desc, "");
}

std::string CheckSize(std::string_view s) {
    try {
        if (ParseSize(s) == 0)
            return "size must not be zero";
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

std::string CheckBlockSizeArg(std::string_view s) {
    try {
        return CheckBlockSize(ParseSize(s));
    } catch (const Error& e) {
        return e.what();
    }
}

std::string CheckUuidArg(std::string_view s) {
    try {
        ParseUuid(s);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

std::string CheckNodeIdArg(std::string_view s) {
    return CheckNumberArg(s, UINT64_MAX, CheckNodeId);
}

std::string CheckConnsArg(std::string_view s) {
    return CheckNumberArg(s, UINT64_MAX, CheckNrConns);
}

std::string CheckPortArg(std::string_view s) {
    return CheckNumberArg(s, UINT64_MAX, CheckPort);
}

std::string CheckU32Arg(std::string_view s) {
    return CheckNumberArg(s, UINT32_MAX, nullptr);
}

std::string CheckU64Arg(std::string_view s) {
    return CheckNumberArg(s, UINT64_MAX, nullptr);
}

std::string CheckTransportArg(std::string_view s) {
    try {
        ParseTransport(s);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

std::string CheckRateArg(std::string_view s) {
    try {
        ParseSize(s);
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

uint32_t NodeIdOf(const std::string& s) {
    return static_cast<uint32_t>(ParseDecimal(s, CHORUS_NODE_ID_MAX));
}

uint16_t PortOf(const std::string& s) {
    return s.empty() ? CHORUS_DEFAULT_PORT : static_cast<uint16_t>(ParseDecimal(s, 65535));
}

void AddVolumeName(CLI::App& cmd, std::string& name, const std::string& help) {
    cmd.add_option("NAME", name, help)->required()->check(Check(CheckVolumeName, "NAME"));
}

void AddBacking(CLI::App& cmd, std::string& backing, const std::string& help) {
    cmd.add_option("--backing", backing, help)->required()->check(Check(CheckBackingPath, "PATH"));
}

void VolumePeerArgs::AddTo(CLI::App& cmd) {
    cmd.add_option("VOLUME", volume, "Volume name")
        ->required()
        ->check(Check(CheckVolumeName, "VOLUME"));
    cmd.add_option("NODE_ID", node_id, "The peer's node id, 1..32")
        ->required()
        ->check(Check(CheckNodeIdArg, "NODE_ID"));
}

void ShapeOptions::AddTo(CLI::App& cmd) {
    cmd.add_option("--size", size, "Volume size (512, 4k, 64M, 1G, 1GiB); default: all")
        ->check(Check(CheckSize, "SIZE"));
    cmd.add_option("--block-size", block_size,
                   "Logical block size: 512, 1024, 2048 or 4096; default: the backing's")
        ->check(Check(CheckBlockSizeArg, "N"));
    cmd.add_option("--uuid", uuid, "Volume uuid; default: random")
        ->check(Check(CheckUuidArg, "UUID"));
}

VolumeShape ShapeOptions::Parse() const {
    VolumeShape v;
    if (!block_size.empty())
        v.block_size = static_cast<uint32_t>(ParseSize(block_size));
    if (!size.empty()) {
        v.size = ParseSize(size);
        // A device's own block size is checked once it is known.
        uint32_t unit = v.block_size.value_or(512);
        if (*v.size % unit != 0)
            throw UsageError("--size: " + std::to_string(*v.size) +
                             " bytes is not a multiple of the block size (" + std::to_string(unit) +
                             ")");
    }
    if (!uuid.empty())
        v.uuid = ParseUuid(uuid);
    return v;
}

}  // namespace chorus
