// Checks on volume and peer arguments, done in userspace before anything is sent so
// that a typo gets a message naming the argument instead of a bare EINVAL.
// The rules mirror the ABI comments in <linux/chorus.h>; the kernel checks
// them again and stays the authority.
#ifndef CHORUS_LIB_VOLUME_VALIDATE_H_
#define CHORUS_LIB_VOLUME_VALIDATE_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace chorus {

// Each returns an empty string when the value is acceptable and otherwise
// the reason it is not (without the argument's name).
std::string CheckVolumeName(std::string_view name);
std::string CheckBackingPath(std::string_view path);
std::string CheckBlockSize(uint64_t block_size);
// 1..CHORUS_NODE_ID_MAX.
std::string CheckNodeId(uint64_t node_id);
// Connections per peer, 1..CHORUS_MAX_CONNS.
std::string CheckNrConns(uint64_t nr_conns);
// A TCP port, 1..65535.
std::string CheckPort(uint64_t port);
// An IPv4 or IPv6 address literal, as inet_pton(3) reads it ("10.0.0.1",
// "fd00::1"); no host names, brackets, ports or zone ids.
std::string CheckAddress(std::string_view address);

// A decimal number from 0 to max: digits only, no sign, unit or base
// prefix. Throws chorus::Error naming the text if it is anything else.
uint64_t ParseDecimal(std::string_view text, uint64_t max);

}  // namespace chorus

#endif  // CHORUS_LIB_VOLUME_VALIDATE_H_
