// CRC-32C against published check values: the kernel must compute the same
// superblock checksum.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lib/crc32c.h"

namespace chorus {
namespace {

uint32_t CrcOf(const std::string& s) {
    return Crc32c(s.data(), s.size());
}

TEST(Crc32c, CheckValue) {
    EXPECT_EQ(CrcOf("123456789"), 0xE3069283u);
}

TEST(Crc32c, Empty) {
    EXPECT_EQ(CrcOf(""), 0u);
}

// RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32c, Rfc3720Vectors) {
    std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xff), inc(32), dec(32);
    for (size_t i = 0; i < 32; i++) {
        inc[i] = static_cast<uint8_t>(i);
        dec[i] = static_cast<uint8_t>(31 - i);
    }
    EXPECT_EQ(Crc32c(zeros), 0x8A9136AAu);
    EXPECT_EQ(Crc32c(ones), 0x62A8AB43u);
    EXPECT_EQ(Crc32c(inc), 0x46DD794Eu);
    EXPECT_EQ(Crc32c(dec), 0x113FDB5Cu);
}

TEST(Crc32c, Continues) {
    EXPECT_EQ(Crc32c("56789", 5, Crc32c("1234", 4)), 0xE3069283u);
}

}  // namespace
}  // namespace chorus
