// CRC-32C (Castagnoli), the checksum of the on-disk metadata and of verify.
#ifndef CHORUS_LIB_CRC32C_H_
#define CHORUS_LIB_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace chorus {

// The standard CRC-32C: reflected polynomial 0x82F63B78, initial value ~0,
// final xor ~0; "123456789" gives 0xE3069283. The kernel computes the same
// value as ~crc32c(~0, buf, len).
//
// prev continues a checksum: Crc32c(b, Crc32c(a)) == Crc32c(a followed by b).
uint32_t Crc32c(std::span<const uint8_t> data, uint32_t prev = 0);
uint32_t Crc32c(const void* data, size_t len, uint32_t prev = 0);

}  // namespace chorus

#endif  // CHORUS_LIB_CRC32C_H_
