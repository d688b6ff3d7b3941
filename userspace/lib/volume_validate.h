// Checks on volume arguments, done in userspace before anything is sent so
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

}  // namespace chorus

#endif  // CHORUS_LIB_VOLUME_VALIDATE_H_
