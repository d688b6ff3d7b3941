// Size and uuid parsing, and the volume and peer argument checks chorusctl
// uses.
#include <gtest/gtest.h>

#include "lib/errors.h"
#include "lib/size.h"
#include "lib/uuid.h"
#include "lib/volume_validate.h"

namespace chorus {
namespace {

TEST(ParseSize, PlainBytes) {
    EXPECT_EQ(ParseSize("0"), 0u);
    EXPECT_EQ(ParseSize("512"), 512u);
    EXPECT_EQ(ParseSize("512b"), 512u);
    EXPECT_EQ(ParseSize("18446744073709551615"), UINT64_MAX);
}

TEST(ParseSize, BinarySuffixesAnyCase) {
    EXPECT_EQ(ParseSize("4k"), 4096u);
    EXPECT_EQ(ParseSize("4K"), 4096u);
    EXPECT_EQ(ParseSize("4KiB"), 4096u);
    EXPECT_EQ(ParseSize("4kb"), 4096u);
    EXPECT_EQ(ParseSize("64M"), 64ull << 20);
    EXPECT_EQ(ParseSize("1G"), 1ull << 30);
    EXPECT_EQ(ParseSize("1GiB"), 1ull << 30);
    EXPECT_EQ(ParseSize("1g"), 1ull << 30);
    EXPECT_EQ(ParseSize("2T"), 2ull << 40);
    EXPECT_EQ(ParseSize("3P"), 3ull << 50);
    EXPECT_EQ(ParseSize("15E"), 15ull << 60);
}

TEST(ParseSize, RejectsMalformed) {
    for (const char* bad : {"", "k", "G1", "1x", "1.5G", "-1", "1 G", "1GB2", "1Gi", "1KiBB"})
        EXPECT_THROW(ParseSize(bad), Error) << bad;
}

TEST(ParseSize, RejectsOverflow) {
    EXPECT_THROW(ParseSize("18446744073709551616"), Error);
    EXPECT_THROW(ParseSize("16E"), Error);
    EXPECT_THROW(ParseSize("99999999999999999999999"), Error);
}

TEST(ParseSize, ErrorNamesTheValue) {
    try {
        ParseSize("12q");
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'12q'"), std::string::npos) << e.what();
    }
}

TEST(FormatSize, Human) {
    EXPECT_EQ(FormatSize(0), "0 B");
    EXPECT_EQ(FormatSize(512), "512 B");
    EXPECT_EQ(FormatSize(4096), "4.00 KiB");
    EXPECT_EQ(FormatSize(1ull << 30), "1.00 GiB");
    EXPECT_EQ(FormatSize(1536ull << 20), "1.50 GiB");
}

TEST(Uuid, RoundTrip) {
    const std::string text = "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f";
    Uuid u = ParseUuid(text);
    EXPECT_EQ(u[0], 0x3f);
    EXPECT_EQ(u[15], 0x7f);
    EXPECT_EQ(FormatUuid(u), text);
}

TEST(Uuid, UpperCaseAndUndashed) {
    Uuid a = ParseUuid("3F1C4B6E-0D2A-4B8E-9C1F-2A3B4C5D6E7F");
    Uuid b = ParseUuid("3f1c4b6e0d2a4b8e9c1f2a3b4c5d6e7f");
    EXPECT_EQ(a, b);
    EXPECT_EQ(FormatUuid(a), "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");
}

TEST(Uuid, RejectsMalformed) {
    for (const char* bad :
         {"", "zz", "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7", "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f0",
          "3f1c4b6e00d2a-4b8e-9c1f-2a3b4c5d6e7f", "3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7g",
          "3f1c4b6e0d2a4b8e9c1f2a3b4c5d6e7-"})
        EXPECT_THROW(ParseUuid(bad), Error) << bad;
}

TEST(Uuid, Null) {
    EXPECT_TRUE(IsNullUuid(Uuid{}));
    EXPECT_FALSE(IsNullUuid(ParseUuid("00000000-0000-0000-0000-000000000001")));
}

TEST(VolumeValidate, Names) {
    EXPECT_EQ(CheckVolumeName("vol0"), "");
    EXPECT_EQ(CheckVolumeName("a.b_c-D9"), "");
    EXPECT_EQ(CheckVolumeName(std::string(63, 'a')), "");
    EXPECT_NE(CheckVolumeName(std::string(64, 'a')), "");
    EXPECT_NE(CheckVolumeName(""), "");
    EXPECT_NE(CheckVolumeName(".hidden"), "");
    EXPECT_NE(CheckVolumeName("a/b"), "");
    EXPECT_NE(CheckVolumeName("a b"), "");
    EXPECT_NE(CheckVolumeName("vol\xc3\xa9"), "");
}

TEST(VolumeValidate, BackingAndBlockSize) {
    EXPECT_EQ(CheckBackingPath("/dev/vdb"), "");
    EXPECT_NE(CheckBackingPath("dev/vdb"), "");
    EXPECT_NE(CheckBackingPath("/" + std::string(255, 'x')), "");
    for (uint64_t ok : {512, 1024, 2048, 4096})
        EXPECT_EQ(CheckBlockSize(ok), "");
    for (uint64_t bad : {0, 256, 513, 8192})
        EXPECT_NE(CheckBlockSize(bad), "");
}

TEST(VolumeValidate, NodeIdConnsAndPort) {
    for (uint64_t ok : {1, 2, 31, 32})
        EXPECT_EQ(CheckNodeId(ok), "") << ok;
    for (uint64_t bad : {0ull, 33ull, 1ull << 32})
        EXPECT_NE(CheckNodeId(bad), "") << bad;
    EXPECT_EQ(CheckNodeId(33), "node id 33 is not in 1..32");
    for (uint64_t ok : {1, 2, 8})
        EXPECT_EQ(CheckNrConns(ok), "") << ok;
    for (uint64_t bad : {0, 9})
        EXPECT_NE(CheckNrConns(bad), "") << bad;
    EXPECT_EQ(CheckNrConns(9), "connection count 9 is not in 1..8");
    for (uint64_t ok : {1, 7788, 65535})
        EXPECT_EQ(CheckPort(ok), "") << ok;
    for (uint64_t bad : {0, 65536})
        EXPECT_NE(CheckPort(bad), "") << bad;
}

TEST(VolumeValidate, Addresses) {
    for (const char* ok :
         {"10.0.0.1", "0.0.0.0", "192.168.100.254", "::", "::1", "fd00::2", "fe80::1:2:3:4",
          "::ffff:10.0.0.1", "2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff"})
        EXPECT_EQ(CheckAddress(ok), "") << ok;
    for (const char* bad :
         {"", "node2", "node2.example.com", "10.0.0", "10.0.0.256", "10.0.0.1:7788", "[fd00::2]",
          "fd00::2%eth0", "fd00:::2", " 10.0.0.1", "10.0.0.1 "})
        EXPECT_NE(CheckAddress(bad), "") << bad;
    EXPECT_EQ(CheckAddress("node2"), "address 'node2' is not an IPv4 or IPv6 address literal");
    EXPECT_NE(CheckAddress(std::string("10.0.0.1\0x", 10)), "");
    EXPECT_NE(CheckAddress(std::string(48, '1')).find("longer than 47"), std::string::npos);
}

TEST(VolumeValidate, ParseDecimal) {
    EXPECT_EQ(ParseDecimal("0", 10), 0u);
    EXPECT_EQ(ParseDecimal("10", 10), 10u);
    EXPECT_EQ(ParseDecimal("007", 10), 7u);
    EXPECT_EQ(ParseDecimal("18446744073709551615", UINT64_MAX), UINT64_MAX);
    EXPECT_EQ(ParseDecimal("4294967295", UINT32_MAX), UINT32_MAX);
    for (const char* bad : {"", "-1", "+1", "1.5", "0x10", "1k", " 1", "1 ", "abc"})
        EXPECT_THROW(ParseDecimal(bad, UINT64_MAX), Error) << bad;
    EXPECT_THROW(ParseDecimal("11", 10), Error);
    EXPECT_THROW(ParseDecimal("5", 0), Error);
    EXPECT_THROW(ParseDecimal("4294967296", UINT32_MAX), Error);
    EXPECT_THROW(ParseDecimal("18446744073709551616", UINT64_MAX), Error);
    EXPECT_THROW(ParseDecimal("99999999999999999999999", UINT64_MAX), Error);
    try {
        ParseDecimal("12x", 100);
        FAIL();
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "'12x' is not a decimal number");
    }
    try {
        ParseDecimal("101", 100);
        FAIL();
    } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "'101' is larger than 100");
    }
}

TEST(Errors, NetlinkErrorText) {
    EXPECT_STREQ(NetlinkError(EBUSY, "backing device /dev/vdb is in use").what(),
                 "backing device /dev/vdb is in use (EBUSY)");
    EXPECT_STREQ(NetlinkError(ENOENT, "").what(), "No such file or directory (ENOENT)");
    EXPECT_NE(std::string(ModuleNotLoadedError().what()).find("not loaded"), std::string::npos);
}

}  // namespace
}  // namespace chorus
