#include "lib/meta.h"

#include <endian.h>
#include <errno.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>

#include "lib/crc32c.h"
#include "lib/errors.h"
#include "lib/fd.h"
#include "lib/size.h"
#include "lib/volume_validate.h"

namespace chorus {

namespace {

static_assert(sizeof(chorus_meta_super) == CHORUS_META_BLOCK);
static_assert(sizeof(chorus_meta_peer) == 16);

constexpr uint64_t kBlock = CHORUS_META_BLOCK;
constexpr uint64_t kSector = 512;
constexpr uint64_t kBlockSectors = kBlock / kSector;
constexpr uint64_t kSupersBytes = 2 * kBlock;

uint64_t RoundDown(uint64_t v, uint64_t unit) {
    return v / unit * unit;
}

uint64_t DivRoundUp(uint64_t v, uint64_t unit) {
    return v / unit + (v % unit != 0 ? 1 : 0);
}

// "168.00 KiB (172032 bytes)": people read the first, scripts grep the second.
std::string Bytes(uint64_t n) {
    return FormatSize(n) + " (" + std::to_string(n) + " bytes)";
}

std::string Hex32(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "0x%08x", v);
    return buf;
}

// The superblocks are read and written with one buffer that also works for
// an O_DIRECT fd: aligned to the largest logical block size chorus accepts.
struct alignas(CHORUS_META_BLOCK) SuperPair {
    MetaBlock copy[2];
};
static_assert(sizeof(SuperPair) == kSupersBytes);

// Zeroes for the bitmaps and the activity log, written a chunk at a time.
struct alignas(CHORUS_META_BLOCK) ZeroChunk {
    uint8_t bytes[1 << 20];
};

void PreadAll(int fd, void* buf, size_t len, uint64_t offset) {
    auto* p = static_cast<uint8_t*>(buf);
    while (len > 0) {
        ssize_t n = ::pread(fd, p, len, static_cast<off_t>(offset));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error("cannot read the chorus metadata at byte " + std::to_string(offset) + ": " +
                            DescribeErrno(errno),
                        errno);
        if (n == 0)
            throw Error("cannot read the chorus metadata: the device ends before byte " +
                            std::to_string(offset),
                        EIO);
        p += n;
        len -= static_cast<size_t>(n);
        offset += static_cast<uint64_t>(n);
    }
}

void WriteMeta(int fd, const void* buf, size_t len, uint64_t offset) {
    if (int err = PwriteAll(fd, buf, len, offset))
        throw Error("cannot write the chorus metadata at byte " + std::to_string(offset) + ": " +
                        DescribeErrno(err),
                    err);
}

void RandomBytes(void* buf, size_t len) {
    auto* p = static_cast<uint8_t*>(buf);
    while (len > 0) {
        ssize_t n = ::getrandom(p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw Error("getrandom: " + DescribeErrno(errno), errno);
        p += n;
        len -= static_cast<size_t>(n);
    }
}

void Sync(int fd) {
    if (::fsync(fd) < 0)
        throw Error("cannot sync the chorus metadata to the device: " + DescribeErrno(errno),
                    errno);
}

// The checks chorus.ko makes on a superblock (chorus_meta_geometry_ok()),
// less those that need the device itself: the data size and the areas must
// fit the device the superblock names. Returns the first problem, or "".
std::string GeometryProblem(const MetaSuper& s) {
    const uint64_t bs = s.block_size;
    if (std::string why = CheckBlockSize(bs); !why.empty())
        return why;
    if (s.bm_shift < 12 || s.bm_shift > 30)
        return "bitmap granularity 2^" + std::to_string(s.bm_shift) + " is outside 2^12..2^30";
    if (s.max_peers > CHORUS_META_MAX_PEERS)
        return std::to_string(s.max_peers) + " peer slots, at most " +
               std::to_string(CHORUS_META_MAX_PEERS) + " fit";
    if (s.al_slots == 0 || s.al_slots > 1024)
        return std::to_string(s.al_slots) + " activity log slots, expected 1..1024";
    // Bounded first so that the sums below cannot overflow.
    if (s.device_sectors > (UINT64_MAX >> 12))
        return "device size of " + std::to_string(s.device_sectors) + " sectors is impossible";
    const uint64_t end = RoundDown(s.device_sectors, kBlockSectors);
    if (s.md_sectors > end)
        return "metadata area of " + std::to_string(s.md_sectors) +
               " sectors is larger than the device (" + std::to_string(end) + " sectors)";
    if (s.al_offset_sectors > s.md_sectors ||
        s.al_offset_sectors + (s.al_slots + 2) * kBlockSectors != s.md_sectors)
        return "activity log at sector " + std::to_string(s.al_offset_sectors) + " with " +
               std::to_string(s.al_slots) + " slots and 2 superblocks do not end the " +
               std::to_string(s.md_sectors) + "-sector metadata area";
    if (s.bm_offset_sectors > s.al_offset_sectors || s.bm_slot_sectors > s.al_offset_sectors ||
        s.bm_offset_sectors + s.max_peers * s.bm_slot_sectors > s.al_offset_sectors)
        return "bitmaps overlap the activity log";
    const uint64_t bits = DivRoundUp(s.data_sectors, uint64_t{1} << (s.bm_shift - 9));
    if (s.max_peers > 0 && s.bm_slot_sectors * kSector * 8 < bits)
        return "a bitmap of " + std::to_string(s.bm_slot_sectors) +
               " sectors does not cover the data";
    if (s.data_sectors == 0)
        return "no data";
    if (s.data_sectors * kSector % bs != 0)
        return "data size is not a multiple of the block size " + std::to_string(bs);
    if (s.data_sectors > end - s.md_sectors)
        return "data (" + std::to_string(s.data_sectors) + " sectors) overlaps the metadata at " +
               "sector " + std::to_string(end - s.md_sectors);
    return "";
}

}  // namespace

MetaLayout ComputeLayout(uint64_t device_bytes, uint32_t device_lbs, uint64_t requested_size,
                         uint32_t requested_block_size) {
    if (!CheckBlockSize(device_lbs).empty())
        throw Error("device logical block size " + std::to_string(device_lbs) +
                        " is not supported (chorus volumes use 512, 1024, 2048 or 4096)",
                    EINVAL);
    MetaLayout l;
    l.block_size = requested_block_size != 0 ? requested_block_size : device_lbs;
    if (std::string why = CheckBlockSize(l.block_size); !why.empty())
        throw Error(why, EINVAL);
    if (l.block_size < device_lbs)
        throw Error("block size " + std::to_string(l.block_size) +
                        " is smaller than the device's logical block size " +
                        std::to_string(device_lbs),
                    EINVAL);

    l.device_bytes = device_bytes;
    l.end_bytes = RoundDown(device_bytes, kBlock);
    // Bitmaps for the whole device, not just the data: any --size fits them.
    const uint64_t bits = DivRoundUp(l.end_bytes, uint64_t{1} << CHORUS_META_BM_SHIFT);
    l.bm_slot_bytes = DivRoundUp(DivRoundUp(bits, 8), kBlock) * kBlock;
    l.al_offset = CHORUS_META_MAX_PEERS * l.bm_slot_bytes;
    l.md_bytes = l.al_offset + CHORUS_META_AL_SLOTS * kBlock + kSupersBytes;
    const std::string too_small = "device of " + Bytes(device_bytes) +
                                  " is too small: chorus metadata takes " + Bytes(l.md_bytes) +
                                  " and at least one block of data must remain";
    if (l.end_bytes <= l.md_bytes)
        throw Error(too_small, EINVAL);
    l.md_start = l.end_bytes - l.md_bytes;
    l.max_data_bytes = RoundDown(l.md_start, l.block_size);
    if (l.max_data_bytes == 0)
        throw Error(too_small, EINVAL);

    if (requested_size == 0) {
        l.data_bytes = l.max_data_bytes;
    } else if (requested_size % l.block_size != 0) {
        throw Error("size of " + std::to_string(requested_size) +
                        " bytes is not a multiple of the block size " +
                        std::to_string(l.block_size),
                    EINVAL);
    } else if (requested_size > l.max_data_bytes) {
        throw Error("size of " + Bytes(requested_size) + " does not fit: the device of " +
                        Bytes(device_bytes) + " has room for " + Bytes(l.max_data_bytes) +
                        " of data besides " + FormatSize(l.md_bytes) + " of chorus metadata",
                    EINVAL);
    } else {
        l.data_bytes = requested_size;
    }
    return l;
}

MetaSuper NewSuper(const MetaLayout& l, const Uuid& volume_uuid, uint64_t current_gen) {
    MetaSuper s;
    s.version = CHORUS_META_VERSION;
    s.flags = CHORUS_META_F_CLEAN;
    s.seq = 1;
    s.volume_uuid = volume_uuid;
    s.block_size = l.block_size;
    s.data_sectors = l.data_bytes / kSector;
    s.md_sectors = l.md_bytes / kSector;
    // The size as the kernel sees it (bdev_nr_sectors), not rounded: attach
    // compares the two to notice a resized device.
    s.device_sectors = l.device_bytes / kSector;
    s.current_gen = current_gen;
    s.bm_shift = CHORUS_META_BM_SHIFT;
    s.al_extent_shift = CHORUS_META_AL_EXTENT_SHIFT;
    s.al_slots = CHORUS_META_AL_SLOTS;
    s.max_peers = CHORUS_META_MAX_PEERS;
    s.al_offset_sectors = l.al_offset / kSector;
    s.bm_offset_sectors = 0;
    s.bm_slot_sectors = l.bm_slot_bytes / kSector;
    return s;
}

MetaBlock EncodeSuper(const MetaSuper& s) {
    chorus_meta_super d;
    std::memset(&d, 0, sizeof(d));
    d.magic = htole64(CHORUS_META_MAGIC);
    d.version = htole32(s.version);
    d.flags = htole32(s.flags);
    d.seq = htole64(s.seq);
    std::memcpy(d.volume_uuid, s.volume_uuid.data(), sizeof(d.volume_uuid));
    d.node_id = htole32(s.node_id);
    d.block_size = htole32(s.block_size);
    d.data_sectors = htole64(s.data_sectors);
    d.md_sectors = htole64(s.md_sectors);
    d.device_sectors = htole64(s.device_sectors);
    d.highest_epoch = htole64(s.highest_epoch);
    d.current_gen = htole64(s.current_gen);
    d.bm_shift = htole32(s.bm_shift);
    d.al_extent_shift = htole32(s.al_extent_shift);
    d.al_slots = htole32(s.al_slots);
    d.max_peers = htole32(s.max_peers);
    d.al_offset_sectors = htole64(s.al_offset_sectors);
    d.bm_offset_sectors = htole64(s.bm_offset_sectors);
    d.bm_slot_sectors = htole64(s.bm_slot_sectors);
    for (size_t i = 0; i < s.peers.size(); i++) {
        d.peers[i].node_id = htole32(s.peers[i].node_id);
        d.peers[i].flags = htole32(s.peers[i].flags);
        d.peers[i].bitmap_gen = htole64(s.peers[i].bitmap_gen);
    }
    d.crc = htole32(Crc32c(&d, offsetof(chorus_meta_super, crc)));
    MetaBlock out;
    std::memcpy(out.data(), &d, sizeof(d));
    return out;
}

DecodeResult DecodeSuper(std::span<const uint8_t, CHORUS_META_BLOCK> block) {
    chorus_meta_super d;
    std::memcpy(&d, block.data(), sizeof(d));
    DecodeResult r;
    if (le64toh(d.magic) != CHORUS_META_MAGIC) {
        r.status = DecodeStatus::kNoMagic;
        r.reason = "no chorus metadata (no magic)";
        return r;
    }
    const uint32_t stored = le32toh(d.crc);
    const uint32_t computed = Crc32c(block.data(), offsetof(chorus_meta_super, crc));
    if (stored != computed) {
        r.status = DecodeStatus::kBadCrc;
        r.reason = "bad crc (stored " + Hex32(stored) + ", computed " + Hex32(computed) + ")";
        return r;
    }
    MetaSuper& s = r.super;
    s.version = le32toh(d.version);
    if (s.version != CHORUS_META_VERSION) {
        r.status = DecodeStatus::kBadVersion;
        r.reason = "unknown metadata version " + std::to_string(s.version) +
                   " (supported: " + std::to_string(CHORUS_META_VERSION) + ")";
        return r;
    }
    s.flags = le32toh(d.flags);
    s.seq = le64toh(d.seq);
    std::memcpy(s.volume_uuid.data(), d.volume_uuid, s.volume_uuid.size());
    s.node_id = le32toh(d.node_id);
    s.block_size = le32toh(d.block_size);
    s.data_sectors = le64toh(d.data_sectors);
    s.md_sectors = le64toh(d.md_sectors);
    s.device_sectors = le64toh(d.device_sectors);
    s.highest_epoch = le64toh(d.highest_epoch);
    s.current_gen = le64toh(d.current_gen);
    s.bm_shift = le32toh(d.bm_shift);
    s.al_extent_shift = le32toh(d.al_extent_shift);
    s.al_slots = le32toh(d.al_slots);
    s.max_peers = le32toh(d.max_peers);
    s.al_offset_sectors = le64toh(d.al_offset_sectors);
    s.bm_offset_sectors = le64toh(d.bm_offset_sectors);
    s.bm_slot_sectors = le64toh(d.bm_slot_sectors);
    for (size_t i = 0; i < s.peers.size(); i++) {
        s.peers[i].node_id = le32toh(d.peers[i].node_id);
        s.peers[i].flags = le32toh(d.peers[i].flags);
        s.peers[i].bitmap_gen = le64toh(d.peers[i].bitmap_gen);
    }
    if (std::string why = GeometryProblem(s); !why.empty()) {
        r.status = DecodeStatus::kBadGeometry;
        r.reason = "inconsistent geometry: " + why;
        return r;
    }
    r.status = DecodeStatus::kOk;
    return r;
}

std::string MetaRead::Problems() const {
    std::string out;
    for (int i = 0; i < 2; i++) {
        if (copies[i].ok())
            continue;
        if (!out.empty())
            out += "; ";
        out += std::string("superblock ") + static_cast<char>('A' + i) + ": " + copies[i].reason;
    }
    return out;
}

MetaRead ReadMeta(int fd, uint64_t device_bytes) {
    MetaRead m;
    const uint64_t end = RoundDown(device_bytes, kBlock);
    if (end < kSupersBytes) {
        for (auto& c : m.copies)
            c.reason = "device of " + Bytes(device_bytes) + " is too small for chorus metadata";
        return m;
    }
    auto pair = std::make_unique<SuperPair>();
    PreadAll(fd, pair.get(), sizeof(*pair), end - kSupersBytes);
    bool magic = false;
    for (int i = 0; i < 2; i++) {
        DecodeResult& c = m.copies[i];
        c = DecodeSuper(pair->copy[i]);
        if (c.status != DecodeStatus::kNoMagic)
            magic = true;
        // chorus.ko refuses a resized device; a copy for another size is
        // not this device's metadata.
        if (c.ok() && c.super.device_sectors != device_bytes / kSector) {
            c.status = DecodeStatus::kBadGeometry;
            c.reason = "formatted for a device of " + Bytes(c.super.device_sectors * kSector) +
                       ", but the device has " + Bytes(device_bytes);
        }
        if (c.ok() && (m.current < 0 || c.super.seq > m.copies[m.current].super.seq))
            m.current = i;
    }
    if (m.current >= 0) {
        m.state = MetaRead::State::kValid;
        m.super = m.copies[m.current].super;
    } else {
        m.state = magic ? MetaRead::State::kCorrupt : MetaRead::State::kNotFormatted;
    }
    return m;
}

Formatted FormatDevice(int fd, uint64_t device_bytes, uint32_t device_lbs,
                       const FormatOptions& options) {
    Formatted f;
    f.layout = ComputeLayout(device_bytes, device_lbs, options.size, options.block_size);
    if (options.uuid && IsNullUuid(*options.uuid))
        throw Error("volume uuid must not be all zeroes", EINVAL);

    MetaRead old = ReadMeta(fd, device_bytes);
    if (old.state == MetaRead::State::kValid && !options.force)
        throw Error("device already holds chorus metadata of volume " +
                        FormatUuid(old.super.volume_uuid) + " (" +
                        FormatSize(old.super.data_sectors * kSector) + " of data, seq " +
                        std::to_string(old.super.seq) + ")",
                    EEXIST);

    f.super = NewSuper(f.layout, options.uuid ? *options.uuid : RandomUuid(), RandomNonzero64());

    // Bitmaps and activity log first, synced, so that no superblock on the
    // device ever points at stale bitmaps from an earlier format.
    auto zeros = std::make_unique<ZeroChunk>();
    const uint64_t zero_end =
        f.layout.md_start + f.layout.al_offset + CHORUS_META_AL_SLOTS * kBlock;
    for (uint64_t off = f.layout.md_start; off < zero_end;) {
        const uint64_t len = std::min<uint64_t>(sizeof(zeros->bytes), zero_end - off);
        WriteMeta(fd, zeros->bytes, len, off);
        off += len;
    }
    Sync(fd);

    auto pair = std::make_unique<SuperPair>();
    pair->copy[0] = EncodeSuper(f.super);
    pair->copy[1] = pair->copy[0];
    WriteMeta(fd, pair.get(), sizeof(*pair), f.layout.end_bytes - kSupersBytes);
    Sync(fd);
    return f;
}

Uuid RandomUuid() {
    Uuid u;
    RandomBytes(u.data(), u.size());
    u[6] = static_cast<uint8_t>((u[6] & 0x0f) | 0x40);  // version 4
    u[8] = static_cast<uint8_t>((u[8] & 0x3f) | 0x80);  // RFC 4122 variant
    return u;
}

uint64_t RandomNonzero64() {
    uint64_t v = 0;
    while (v == 0)
        RandomBytes(&v, sizeof(v));
    return v;
}

uint64_t DeviceBytesFor(uint64_t data_bytes) {
    if (data_bytes == 0)
        throw Error("a volume of 0 bytes needs no device", EINVAL);
    // The metadata grows with the device (bitmaps cover all of it), so
    // grow the guess until the data fits; two or three rounds at most.
    uint64_t device = RoundDown(data_bytes, kBlock) + 2 * kBlock;
    for (;;) {
        const uint64_t bits = DivRoundUp(device, uint64_t{1} << CHORUS_META_BM_SHIFT);
        const uint64_t slot = DivRoundUp(DivRoundUp(bits, 8), kBlock) * kBlock;
        const uint64_t md =
            CHORUS_META_MAX_PEERS * slot + CHORUS_META_AL_SLOTS * kBlock + kSupersBytes;
        const uint64_t need = DivRoundUp(data_bytes, kBlock) * kBlock + md;
        if (need <= device)
            return device;
        device = need;
    }
}

}  // namespace chorus
