// The on-disk metadata: layout arithmetic, superblock encoding, and reading
// and formatting a regular file standing in for the backing device.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "lib/errors.h"
#include "lib/fd.h"
#include "lib/meta.h"
#include "lib/uuid.h"
#include "test_util.h"

namespace chorus {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;
// 32 activity log blocks and 2 superblocks.
constexpr uint64_t kFixedMd = (CHORUS_META_AL_SLOTS + 2) * 4096;

const Uuid kUuid = ParseUuid("3f1c4b6e-0d2a-4b8e-9c1f-2a3b4c5d6e7f");

// The message of the chorus::Error fn throws; fails the test if it throws
// none or one without EINVAL.
template <typename Fn>
std::string InvalidMessage(Fn fn) {
    try {
        fn();
    } catch (const Error& e) {
        EXPECT_EQ(e.errnum(), EINVAL) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
}

bool Contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

TEST(ComputeLayout, OneGiB512) {
    MetaLayout l = ComputeLayout(kGiB, 512, 0, 0);
    EXPECT_EQ(l.device_bytes, kGiB);
    EXPECT_EQ(l.end_bytes, kGiB);
    EXPECT_EQ(l.block_size, 512u);
    // 16384 bits of 64 KiB = 2 KiB, rounded up to one 4 KiB block per peer.
    EXPECT_EQ(l.bm_slot_bytes, 4096u);
    EXPECT_EQ(l.al_offset, 8 * 4096u);
    EXPECT_EQ(l.md_bytes, 8 * 4096 + kFixedMd);
    EXPECT_EQ(l.md_bytes, 168 * kKiB);
    EXPECT_EQ(l.md_start, kGiB - 168 * kKiB);
    EXPECT_EQ(l.max_data_bytes, l.md_start);
    EXPECT_EQ(l.data_bytes, l.max_data_bytes);
}

TEST(ComputeLayout, FourKLbsDeviceNotBlockAligned) {
    // 100 GiB and three 4 KiB blocks: the bitmaps need one more bit.
    const uint64_t dev = 100 * kGiB + 3 * 4096;
    MetaLayout l = ComputeLayout(dev, 4096, 0, 0);
    EXPECT_EQ(l.block_size, 4096u);
    EXPECT_EQ(l.end_bytes, dev);
    const uint64_t bits = 100 * kGiB / (64 * kKiB) + 1;
    const uint64_t slot = (bits / 8 + 1 + 4095) / 4096 * 4096;
    EXPECT_EQ(l.bm_slot_bytes, slot);
    EXPECT_EQ(l.al_offset, 8 * slot);
    EXPECT_EQ(l.md_bytes, 8 * slot + kFixedMd);
    EXPECT_EQ(l.md_start, dev - l.md_bytes);
    EXPECT_EQ(l.md_start % 4096, 0u);
    EXPECT_EQ(l.max_data_bytes % 4096, 0u);
    EXPECT_EQ(l.data_bytes, l.max_data_bytes);
}

TEST(ComputeLayout, EndRoundedDownToFourK) {
    MetaLayout l = ComputeLayout(kGiB + 3 * 512, 512, 0, 0);
    EXPECT_EQ(l.device_bytes, kGiB + 3 * 512);
    EXPECT_EQ(l.end_bytes, kGiB);
    EXPECT_EQ(l.md_start, kGiB - 168 * kKiB);
}

TEST(ComputeLayout, RequestedSizeAndBlockSize) {
    MetaLayout l = ComputeLayout(kGiB, 512, 512 * kMiB, 4096);
    EXPECT_EQ(l.data_bytes, 512 * kMiB);
    EXPECT_EQ(l.block_size, 4096u);
    EXPECT_EQ(l.max_data_bytes, kGiB - 168 * kKiB);
    // The largest size is allowed exactly.
    EXPECT_EQ(ComputeLayout(kGiB, 512, kGiB - 168 * kKiB, 0).data_bytes, kGiB - 168 * kKiB);
}

TEST(ComputeLayout, ZeroSizeMeansAll) {
    EXPECT_EQ(ComputeLayout(kGiB, 512, 0, 0).data_bytes, kGiB - 168 * kKiB);
}

TEST(ComputeLayout, SizeTooBig) {
    std::string m = InvalidMessage([] { ComputeLayout(kGiB, 512, kGiB, 0); });
    EXPECT_TRUE(Contains(m, "does not fit")) << m;
    EXPECT_TRUE(Contains(m, std::to_string(kGiB - 168 * kKiB))) << m;
    InvalidMessage([] { ComputeLayout(kGiB, 512, kGiB - 168 * kKiB + 512, 0); });
}

TEST(ComputeLayout, SizeNotBlockMultiple) {
    std::string m = InvalidMessage([] { ComputeLayout(kGiB, 512, 1000, 0); });
    EXPECT_TRUE(Contains(m, "multiple of the block size 512")) << m;
    m = InvalidMessage([] { ComputeLayout(kGiB, 512, 6 * kKiB, 4096); });
    EXPECT_TRUE(Contains(m, "multiple of the block size 4096")) << m;
    // The device's block size is the default.
    InvalidMessage([] { ComputeLayout(kGiB, 4096, 6 * kKiB, 0); });
}

TEST(ComputeLayout, BlockSizeBelowDevice) {
    std::string m = InvalidMessage([] { ComputeLayout(kGiB, 4096, 0, 512); });
    EXPECT_TRUE(Contains(m, "smaller than the device's logical block size 4096")) << m;
}

TEST(ComputeLayout, BadBlockSizes) {
    InvalidMessage([] { ComputeLayout(kGiB, 512, 0, 3000); });
    InvalidMessage([] { ComputeLayout(kGiB, 512, 0, 8192); });
    InvalidMessage([] { ComputeLayout(kGiB, 8192, 0, 0); });
    InvalidMessage([] { ComputeLayout(kGiB, 0, 0, 0); });
}

TEST(ComputeLayout, DeviceTooSmall) {
    std::string m = InvalidMessage([] { ComputeLayout(100 * kKiB, 512, 0, 0); });
    EXPECT_TRUE(Contains(m, "too small")) << m;
    EXPECT_TRUE(Contains(m, "102400 bytes")) << m;
    EXPECT_TRUE(Contains(m, "172032 bytes")) << m;
    // Room for the metadata but not one block of data.
    InvalidMessage([] { ComputeLayout(168 * kKiB, 512, 0, 0); });
    InvalidMessage([] { ComputeLayout(168 * kKiB + 512, 512, 0, 0); });
    EXPECT_EQ(ComputeLayout(168 * kKiB + 4096, 512, 0, 0).data_bytes, 4096u);
    InvalidMessage([] { ComputeLayout(0, 512, 0, 0); });
}

MetaSuper SampleSuper() {
    MetaSuper s = NewSuper(ComputeLayout(kGiB, 512, 0, 0), kUuid, 0x1122334455667788ull);
    s.seq = 42;
    s.node_id = 3;
    s.highest_epoch = 7;
    s.peers[1] = {2, CHORUS_META_PEER_OUT_OF_DATE, 0xabcdefull};
    s.peers[7] = {9, CHORUS_META_PEER_FULL_SYNC, 1};
    return s;
}

TEST(Super, NewSuperFields) {
    MetaSuper s = NewSuper(ComputeLayout(kGiB + 512, 512, 0, 0), kUuid, 5);
    EXPECT_EQ(s.version, 1u);
    EXPECT_EQ(s.flags, CHORUS_META_F_CLEAN);
    EXPECT_EQ(s.seq, 1u);
    EXPECT_EQ(s.node_id, 0u);
    EXPECT_EQ(s.highest_epoch, 0u);
    EXPECT_EQ(s.current_gen, 5u);
    EXPECT_EQ(s.device_sectors, kGiB / 512 + 1);  // as the kernel sees it, not rounded
    EXPECT_EQ(s.md_sectors, 168 * kKiB / 512);
    EXPECT_EQ(s.data_sectors, (kGiB - 168 * kKiB) / 512);
    EXPECT_EQ(s.bm_offset_sectors, 0u);
    EXPECT_EQ(s.bm_slot_sectors, 8u);
    EXPECT_EQ(s.al_offset_sectors, 64u);
    EXPECT_EQ(s.bm_shift, 16u);
    EXPECT_EQ(s.al_extent_shift, 22u);
    EXPECT_EQ(s.al_slots, 32u);
    EXPECT_EQ(s.max_peers, 8u);
}

TEST(Super, RoundTrip) {
    MetaSuper s = SampleSuper();
    DecodeResult r = DecodeSuper(EncodeSuper(s));
    ASSERT_TRUE(r.ok()) << r.reason;
    EXPECT_EQ(r.super, s);
}

TEST(Super, LittleEndianOnDisk) {
    MetaBlock b = EncodeSuper(SampleSuper());
    for (int i = 0; i < 8; i++)  // magic, least significant byte first
        EXPECT_EQ(b[i], (CHORUS_META_MAGIC >> (8 * i)) & 0xff) << i;
    EXPECT_EQ(b[8], 1);  // version
    EXPECT_EQ(b[9], 0);
    EXPECT_EQ(b[16], 42);    // seq
    EXPECT_EQ(b[24], 0x3f);  // uuid, as bytes
    // crc, the last 4 bytes, little-endian.
    uint32_t crc = b[4092] | b[4093] << 8 | b[4094] << 16 | static_cast<uint32_t>(b[4095]) << 24;
    EXPECT_NE(crc, 0u);
}

TEST(Super, NoMagic) {
    MetaBlock zeros{};
    DecodeResult r = DecodeSuper(zeros);
    EXPECT_EQ(r.status, DecodeStatus::kNoMagic);
    MetaBlock b = EncodeSuper(SampleSuper());
    b[0] ^= 1;
    EXPECT_EQ(DecodeSuper(b).status, DecodeStatus::kNoMagic);
}

TEST(Super, FlippedByteIsBadCrc) {
    for (size_t off : {8, 100, 3000, 4091, 4092}) {
        MetaBlock b = EncodeSuper(SampleSuper());
        b[off] ^= 0x40;
        DecodeResult r = DecodeSuper(b);
        EXPECT_EQ(r.status, DecodeStatus::kBadCrc) << off;
        EXPECT_TRUE(Contains(r.reason, "bad crc")) << r.reason;
    }
}

TEST(Super, UnknownVersion) {
    MetaSuper s = SampleSuper();
    s.version = 2;
    DecodeResult r = DecodeSuper(EncodeSuper(s));
    EXPECT_EQ(r.status, DecodeStatus::kBadVersion);
    EXPECT_TRUE(Contains(r.reason, "version 2")) << r.reason;
}

TEST(Super, InconsistentGeometry) {
    auto expect_bad = [](const char* what, void (*change)(MetaSuper&)) {
        MetaSuper s = SampleSuper();
        change(s);
        DecodeResult r = DecodeSuper(EncodeSuper(s));
        EXPECT_EQ(r.status, DecodeStatus::kBadGeometry) << what;
        EXPECT_TRUE(Contains(r.reason, "inconsistent geometry")) << r.reason;
    };
    expect_bad("md size", [](MetaSuper& s) { s.md_sectors += 8; });
    expect_bad("al offset", [](MetaSuper& s) { s.al_offset_sectors -= 8; });
    expect_bad("bitmap overlaps al", [](MetaSuper& s) { s.bm_offset_sectors = 8; });
    expect_bad("bitmap too small", [](MetaSuper& s) { s.bm_shift = 12; });
    expect_bad("data overlaps md", [](MetaSuper& s) { s.data_sectors += 1; });
    expect_bad("no data", [](MetaSuper& s) { s.data_sectors = 0; });
    expect_bad("data not blocks", [](MetaSuper& s) {
        s.block_size = 4096;
        s.data_sectors -= 1;
    });
    expect_bad("block size", [](MetaSuper& s) { s.block_size = 3000; });
    expect_bad("peers", [](MetaSuper& s) { s.max_peers = 9; });
    expect_bad("al slots", [](MetaSuper& s) { s.al_slots = 0; });
    expect_bad("md beyond device", [](MetaSuper& s) { s.device_sectors = 100; });
    expect_bad("huge device", [](MetaSuper& s) { s.device_sectors = UINT64_MAX; });
}

// A regular file standing in for a backing device.
class FakeDevice {
public:
    explicit FakeDevice(uint64_t bytes) : bytes_(bytes) {
        fd_.Reset(::open((dir_ / "dev").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        if (!fd_.valid() || ::ftruncate(fd_.get(), static_cast<off_t>(bytes)) < 0)
            throw std::runtime_error("cannot make the fake device");
    }

    int fd() const { return fd_.get(); }
    uint64_t bytes() const { return bytes_; }
    std::string Contents() const { return test::ReadFile(dir_ / "dev"); }

    void Write(uint64_t offset, const void* data, size_t len) {
        ASSERT_EQ(::pwrite(fd_.get(), data, len, static_cast<off_t>(offset)),
                  static_cast<ssize_t>(len));
    }
    void Fill(uint64_t offset, uint64_t len, char c) {
        std::string s(len, c);
        Write(offset, s.data(), s.size());
    }
    // Copy A or B, from the end rounded down to 4 KiB.
    void WriteSuper(int copy, const MetaBlock& b) {
        uint64_t end = bytes_ / 4096 * 4096;
        Write(end - (copy == 0 ? 8192 : 4096), b.data(), b.size());
    }

private:
    test::TempDir dir_;
    Fd fd_;
    uint64_t bytes_;
};

constexpr uint64_t kDevBytes = 16 * kMiB + 512;  // not 4 KiB aligned on purpose

MetaSuper DevSuper(uint64_t seq) {
    MetaSuper s = NewSuper(ComputeLayout(kDevBytes, 512, 0, 0), kUuid, 77);
    s.seq = seq;
    return s;
}

TEST(ReadMeta, BothValidHigherSeqWins) {
    FakeDevice dev(kDevBytes);
    dev.WriteSuper(0, EncodeSuper(DevSuper(5)));
    dev.WriteSuper(1, EncodeSuper(DevSuper(6)));
    MetaRead m = ReadMeta(dev.fd(), dev.bytes());
    ASSERT_EQ(m.state, MetaRead::State::kValid);
    EXPECT_EQ(m.current, 1);
    EXPECT_EQ(m.super.seq, 6u);
    EXPECT_TRUE(m.copies[0].ok());
    EXPECT_TRUE(m.copies[1].ok());
    EXPECT_EQ(m.Problems(), "");

    dev.WriteSuper(0, EncodeSuper(DevSuper(7)));
    m = ReadMeta(dev.fd(), dev.bytes());
    EXPECT_EQ(m.current, 0);
    EXPECT_EQ(m.super.seq, 7u);
}

TEST(ReadMeta, CorruptAUsesB) {
    FakeDevice dev(kDevBytes);
    MetaBlock a = EncodeSuper(DevSuper(9));
    a[200] ^= 1;
    dev.WriteSuper(0, a);
    dev.WriteSuper(1, EncodeSuper(DevSuper(8)));
    MetaRead m = ReadMeta(dev.fd(), dev.bytes());
    ASSERT_EQ(m.state, MetaRead::State::kValid);
    EXPECT_EQ(m.current, 1);
    EXPECT_EQ(m.super, DevSuper(8));
    EXPECT_EQ(m.copies[0].status, DecodeStatus::kBadCrc);
    EXPECT_TRUE(Contains(m.Problems(), "superblock A: bad crc")) << m.Problems();
}

TEST(ReadMeta, BothCorrupt) {
    FakeDevice dev(kDevBytes);
    MetaBlock a = EncodeSuper(DevSuper(1));
    a[300] ^= 1;
    MetaSuper v2 = DevSuper(2);
    v2.version = 2;
    dev.WriteSuper(0, a);
    dev.WriteSuper(1, EncodeSuper(v2));
    MetaRead m = ReadMeta(dev.fd(), dev.bytes());
    EXPECT_EQ(m.state, MetaRead::State::kCorrupt);
    EXPECT_EQ(m.current, -1);
    EXPECT_TRUE(Contains(m.Problems(), "superblock A: bad crc")) << m.Problems();
    EXPECT_TRUE(Contains(m.Problems(), "superblock B: unknown metadata version 2")) << m.Problems();
}

TEST(ReadMeta, OneEmptyOneCorruptIsCorrupt) {
    FakeDevice dev(kDevBytes);
    MetaBlock b = EncodeSuper(DevSuper(1));
    b[300] ^= 1;
    dev.WriteSuper(1, b);
    EXPECT_EQ(ReadMeta(dev.fd(), dev.bytes()).state, MetaRead::State::kCorrupt);
}

TEST(ReadMeta, ZerosAreNotFormatted) {
    FakeDevice dev(kDevBytes);
    MetaRead m = ReadMeta(dev.fd(), dev.bytes());
    EXPECT_EQ(m.state, MetaRead::State::kNotFormatted);
    EXPECT_EQ(m.copies[0].status, DecodeStatus::kNoMagic);
    EXPECT_EQ(m.copies[1].status, DecodeStatus::kNoMagic);
}

TEST(ReadMeta, TinyDeviceIsNotFormatted) {
    FakeDevice dev(4096);
    EXPECT_EQ(ReadMeta(dev.fd(), dev.bytes()).state, MetaRead::State::kNotFormatted);
}

TEST(ReadMeta, OtherDeviceSizeIsNotValid) {
    // Formatted for this device, read as if it had grown by one sector:
    // the copies are where they were, but chorus.ko would refuse them.
    FakeDevice dev(kDevBytes + 512);
    dev.WriteSuper(0, EncodeSuper(DevSuper(1)));
    dev.WriteSuper(1, EncodeSuper(DevSuper(1)));
    MetaRead m = ReadMeta(dev.fd(), dev.bytes());
    EXPECT_EQ(m.state, MetaRead::State::kCorrupt);
    EXPECT_TRUE(Contains(m.Problems(), "formatted for a device of")) << m.Problems();
}

TEST(ReadMeta, ReadErrorThrows) {
    FakeDevice dev(kDevBytes);
    // The file is shorter than the size we claim.
    EXPECT_THROW(ReadMeta(dev.fd(), 64 * kMiB), Error);
}

TEST(FormatDevice, WritesMetadataOnly) {
    FakeDevice dev(kDevBytes);
    dev.Fill(0, kDevBytes, 'x');
    FormatOptions opt;
    opt.uuid = kUuid;
    Formatted f = FormatDevice(dev.fd(), dev.bytes(), 512, opt);
    EXPECT_EQ(f.layout.data_bytes, 16 * kMiB - 168 * kKiB);
    EXPECT_EQ(f.super.volume_uuid, kUuid);
    EXPECT_NE(f.super.current_gen, 0u);

    MetaRead m = ReadMeta(dev.fd(), dev.bytes());
    ASSERT_EQ(m.state, MetaRead::State::kValid) << m.Problems();
    EXPECT_EQ(m.super, f.super);
    EXPECT_TRUE(m.copies[0].ok());
    EXPECT_TRUE(m.copies[1].ok());
    EXPECT_EQ(m.super.seq, 1u);
    EXPECT_EQ(m.super.flags, CHORUS_META_F_CLEAN);
    EXPECT_EQ(m.super.node_id, 0u);
    EXPECT_EQ(m.super.highest_epoch, 0u);

    std::string bytes = dev.Contents();
    ASSERT_EQ(bytes.size(), kDevBytes);
    const uint64_t md = f.layout.md_start;
    const uint64_t end = 16 * kMiB;
    EXPECT_EQ(bytes.find_first_not_of('x'), md) << "data area changed";
    const uint64_t zeros = end - 8192 - md;  // bitmaps and activity log
    EXPECT_EQ(bytes.substr(md, zeros), std::string(zeros, '\0'));
    EXPECT_EQ(bytes.substr(end), std::string(512, 'x')) << "bytes past the 4 KiB end changed";
}

TEST(FormatDevice, RandomUuidAndGen) {
    FakeDevice dev(kDevBytes);
    Formatted f = FormatDevice(dev.fd(), dev.bytes(), 512, {});
    EXPECT_FALSE(IsNullUuid(f.super.volume_uuid));
    EXPECT_EQ(f.super.volume_uuid[6] >> 4, 4);  // version 4
    EXPECT_NE(f.super.current_gen, 0u);
}

TEST(FormatDevice, RefusesFormattedDeviceWithoutForce) {
    FakeDevice dev(kDevBytes);
    FormatOptions opt;
    opt.uuid = kUuid;
    FormatDevice(dev.fd(), dev.bytes(), 512, opt);
    const std::string before = dev.Contents();

    FormatOptions again;
    again.size = 4 * kMiB;
    try {
        FormatDevice(dev.fd(), dev.bytes(), 512, again);
        FAIL() << "formatted twice";
    } catch (const Error& e) {
        EXPECT_EQ(e.errnum(), EEXIST);
        EXPECT_TRUE(Contains(e.what(), FormatUuid(kUuid))) << e.what();
    }
    EXPECT_TRUE(dev.Contents() == before) << "a refused format wrote";

    again.force = true;
    Formatted f = FormatDevice(dev.fd(), dev.bytes(), 512, again);
    MetaRead m = ReadMeta(dev.fd(), dev.bytes());
    ASSERT_EQ(m.state, MetaRead::State::kValid);
    EXPECT_EQ(m.super.data_sectors, 4 * kMiB / 512);
    EXPECT_NE(m.super.volume_uuid, kUuid);
    EXPECT_EQ(m.super, f.super);
}

TEST(FormatDevice, CorruptMetadataNeedsNoForce) {
    FakeDevice dev(kDevBytes);
    MetaBlock b = EncodeSuper(DevSuper(1));
    b[300] ^= 1;
    dev.WriteSuper(0, b);
    dev.WriteSuper(1, b);
    FormatDevice(dev.fd(), dev.bytes(), 512, {});
    EXPECT_EQ(ReadMeta(dev.fd(), dev.bytes()).state, MetaRead::State::kValid);
}

TEST(FormatDevice, BadRequestWritesNothing) {
    FakeDevice dev(kDevBytes);
    dev.Fill(0, kDevBytes, 'x');
    FormatOptions opt;
    opt.size = 32 * kMiB;
    EXPECT_THROW(FormatDevice(dev.fd(), dev.bytes(), 512, opt), Error);
    opt.size = 0;
    opt.uuid = Uuid{};
    EXPECT_THROW(FormatDevice(dev.fd(), dev.bytes(), 512, opt), Error);
    EXPECT_EQ(dev.Contents(), std::string(kDevBytes, 'x'));
}

}  // namespace
}  // namespace chorus
