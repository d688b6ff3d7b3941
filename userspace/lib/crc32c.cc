#include "lib/crc32c.h"

#include <array>

namespace chorus {

namespace {

// One byte at a time is plenty: metadata is checksummed a few KiB at a time.
constexpr std::array<uint32_t, 256> MakeTable() {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int bit = 0; bit < 8; bit++)
            c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
    return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

}  // namespace

uint32_t Crc32c(std::span<const uint8_t> data, uint32_t prev) {
    uint32_t crc = ~prev;
    for (uint8_t b : data)
        crc = kTable[(crc ^ b) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t Crc32c(const void* data, size_t len, uint32_t prev) {
    return Crc32c(std::span<const uint8_t>(static_cast<const uint8_t*>(data), len), prev);
}

}  // namespace chorus
