// Human-readable sizes: "512", "4k", "64M", "1G", "1GiB".
#ifndef CHORUS_LIB_SIZE_H_
#define CHORUS_LIB_SIZE_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace chorus {

// Parses a byte count. Suffixes are binary (powers of 1024) and
// case-insensitive: k, m, g, t, p, e, each optionally followed by "b" or
// "ib" ("4k" == "4K" == "4KiB" == "4kb" == 4096); a bare "b" means bytes.
// Storage tools (lvm, fio, qemu-img) use binary units, so "1G" here is what
// an administrator means by it. Throws chorus::Error on a malformed value or
// on overflow of 64 bits.
uint64_t ParseSize(std::string_view text);

// "1.00 GiB", "512 B", "4.00 KiB": for people, not for parsing back.
std::string FormatSize(uint64_t bytes);

}  // namespace chorus

#endif  // CHORUS_LIB_SIZE_H_
