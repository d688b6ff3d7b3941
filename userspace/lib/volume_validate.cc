#include "lib/volume_validate.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <linux/chorus.h>

#include "lib/errors.h"

namespace chorus {

std::string CheckVolumeName(std::string_view name) {
    if (name.empty())
        return "volume name is empty";
    if (name.size() >= CHORUS_VOLUME_NAME_MAX)
        return "volume name '" + std::string(name) + "' is longer than " +
               std::to_string(CHORUS_VOLUME_NAME_MAX - 1) + " characters";
    if (name[0] == '.')
        return "volume name '" + std::string(name) + "' starts with '.'";
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return "volume name '" + std::string(name) +
                   "' contains a character outside [A-Za-z0-9._-]";
    }
    return "";
}

std::string CheckBackingPath(std::string_view path) {
    if (path.empty() || path[0] != '/')
        return "backing path '" + std::string(path) + "' is not an absolute path";
    if (path.size() >= CHORUS_BACKING_PATH_MAX)
        return "backing path is longer than " + std::to_string(CHORUS_BACKING_PATH_MAX - 1) +
               " bytes";
    if (path.find('\0') != std::string_view::npos)
        return "backing path contains a NUL byte";
    return "";
}

std::string CheckBlockSize(uint64_t bs) {
    if (bs != 512 && bs != 1024 && bs != 2048 && bs != 4096)
        return "block size " + std::to_string(bs) + " is not one of 512, 1024, 2048, 4096";
    return "";
}

std::string CheckNodeId(uint64_t node_id) {
    if (node_id < 1 || node_id > CHORUS_NODE_ID_MAX)
        return "node id " + std::to_string(node_id) + " is not in 1.." +
               std::to_string(CHORUS_NODE_ID_MAX);
    return "";
}

std::string CheckNrConns(uint64_t nr_conns) {
    if (nr_conns < 1 || nr_conns > CHORUS_MAX_CONNS)
        return "connection count " + std::to_string(nr_conns) + " is not in 1.." +
               std::to_string(CHORUS_MAX_CONNS);
    return "";
}

std::string CheckPort(uint64_t port) {
    if (port < 1 || port > 65535)
        return "port " + std::to_string(port) + " is not in 1..65535";
    return "";
}

std::string CheckAddress(std::string_view address) {
    const std::string quoted = "'" + std::string(address) + "'";
    if (address.size() >= CHORUS_ADDRESS_MAX)
        return "address " + quoted + " is longer than " + std::to_string(CHORUS_ADDRESS_MAX - 1) +
               " characters";
    std::string text(address);
    in6_addr buf;
    if (text.find('\0') == std::string::npos && (inet_pton(AF_INET, text.c_str(), &buf) == 1 ||
                                                 inet_pton(AF_INET6, text.c_str(), &buf) == 1))
        return "";
    return "address " + quoted + " is not an IPv4 or IPv6 address literal";
}

uint64_t ParseDecimal(std::string_view text, uint64_t max) {
    const std::string quoted = "'" + std::string(text) + "'";
    if (text.empty())
        throw Error("'' is not a decimal number");
    uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9')
            throw Error(quoted + " is not a decimal number");
        uint64_t digit = static_cast<uint64_t>(c - '0');
        if (digit > max || value > (max - digit) / 10)
            throw Error(quoted + " is larger than " + std::to_string(max));
        value = value * 10 + digit;
    }
    return value;
}

}  // namespace chorus
