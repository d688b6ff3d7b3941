// The on-disk metadata of a replica (include/uapi/linux/chorus_meta.h):
// where it goes on a backing device, its superblock encoding, and reading
// and writing it. chorusctl formats and inspects with it; chorus.ko checks
// the same layout on every attach.
#ifndef CHORUS_LIB_META_H_
#define CHORUS_LIB_META_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include <linux/chorus_meta.h>

#include "lib/uuid.h"

namespace chorus {

// Where everything goes on one backing device. Offsets are in bytes; the
// superblock stores the same values in 512-byte sectors.
struct MetaLayout {
    uint64_t device_bytes = 0;    // the backing device as it is
    uint64_t end_bytes = 0;       // device_bytes rounded down to CHORUS_META_BLOCK
    uint32_t block_size = 0;      // logical block size of the volume
    uint64_t data_bytes = 0;      // volume size, from byte 0
    uint64_t max_data_bytes = 0;  // largest data_bytes the device allows
    uint64_t md_start = 0;        // first byte of the metadata area
    uint64_t md_bytes = 0;        // metadata area: bitmaps, activity log, 2 superblocks
    uint64_t bm_slot_bytes = 0;   // one peer's bitmap; bitmaps start at md_start
    uint64_t al_offset = 0;       // activity log, from md_start
};

// Lays out a device of device_bytes with logical block size device_lbs.
// requested_size 0 means as much data as fits; requested_block_size 0 means
// the device's. The bitmaps are sized for the whole device so that any data
// size fits them. Throws chorus::Error (EINVAL) with a message naming the
// sizes when the request does not fit the device.
MetaLayout ComputeLayout(uint64_t device_bytes, uint32_t device_lbs, uint64_t requested_size,
                         uint32_t requested_block_size);

// The smallest device (a multiple of CHORUS_META_BLOCK) whose layout has
// room for data_bytes of data besides the metadata, for a pool that makes
// a device to measure. Throws chorus::Error (EINVAL) for 0.
uint64_t DeviceBytesFor(uint64_t data_bytes);

struct MetaPeer {
    uint32_t node_id = 0;  // 0: unused slot
    uint32_t flags = 0;    // CHORUS_META_PEER_*
    uint64_t bitmap_gen = 0;

    bool operator==(const MetaPeer&) const = default;
};

// struct chorus_meta_super in host byte order, without magic and crc,
// which encoding adds and decoding checks.
struct MetaSuper {
    uint32_t version = CHORUS_META_VERSION;
    uint32_t flags = 0;  // CHORUS_META_F_*
    uint64_t seq = 0;
    Uuid volume_uuid{};
    uint32_t node_id = 0;
    uint32_t block_size = 0;
    uint64_t data_sectors = 0;
    uint64_t md_sectors = 0;
    uint64_t device_sectors = 0;
    uint64_t highest_epoch = 0;
    uint64_t current_gen = 0;
    uint32_t bm_shift = 0;
    uint32_t al_extent_shift = 0;
    uint32_t al_slots = 0;
    uint32_t max_peers = 0;
    uint64_t al_offset_sectors = 0;
    uint64_t bm_offset_sectors = 0;
    uint64_t bm_slot_sectors = 0;
    std::array<MetaPeer, CHORUS_META_MAX_PEERS> peers{};

    bool operator==(const MetaSuper&) const = default;
};

// The superblock a fresh format writes for layout: seq 1, clean, node id
// 0, epoch 0, no peers.
MetaSuper NewSuper(const MetaLayout& layout, const Uuid& volume_uuid, uint64_t current_gen);

using MetaBlock = std::array<uint8_t, CHORUS_META_BLOCK>;

// Little-endian, magic set, reserved zero, crc over the bytes before it.
MetaBlock EncodeSuper(const MetaSuper& super);

enum class DecodeStatus {
    kOk,
    kNoMagic,      // never formatted (or not chorus)
    kBadCrc,       // damaged
    kBadVersion,   // a version this code does not know
    kBadGeometry,  // crc fine, but the areas do not fit together
};

struct DecodeResult {
    DecodeStatus status = DecodeStatus::kNoMagic;
    std::string reason;  // empty when kOk; "bad crc (stored ..., computed ...)"
    MetaSuper super;     // meaningful when kOk

    bool ok() const { return status == DecodeStatus::kOk; }
};

// Checks magic, then crc, then version, then that the areas tile the
// metadata area and fit the device the superblock names, as chorus.ko does.
DecodeResult DecodeSuper(std::span<const uint8_t, CHORUS_META_BLOCK> block);

struct MetaRead {
    enum class State {
        kValid,         // super is the current copy
        kNotFormatted,  // neither copy has the magic
        kCorrupt,       // some copy has the magic, none is valid
    };
    State state = State::kNotFormatted;
    int current = -1;  // 0 for copy A, 1 for copy B, when kValid
    MetaSuper super;
    std::array<DecodeResult, 2> copies;  // A (end - 8 KiB), B (end - 4 KiB)

    // "superblock A: bad crc ...; superblock B: no chorus magic".
    std::string Problems() const;
};

// Reads both superblock copies of the device open as fd, which is
// device_bytes long, and picks the valid one with the higher seq (A on a
// tie). A copy formatted for a device of another size is not valid. fd may
// be open with O_DIRECT. Throws chorus::Error on a read error.
MetaRead ReadMeta(int fd, uint64_t device_bytes);

struct FormatOptions {
    uint64_t size = 0;         // 0: as much as fits
    uint32_t block_size = 0;   // 0: the device's logical block size
    std::optional<Uuid> uuid;  // default: random
    bool force = false;        // overwrite valid chorus metadata
};

struct Formatted {
    MetaLayout layout;
    MetaSuper super;
};

// Makes a fresh replica's metadata on the device open (read-write) as fd:
// zeroes the bitmaps and the activity log, writes both superblock copies
// and syncs. The data area is not touched. Refuses (EEXIST) when the device
// already holds valid chorus metadata unless options.force, and then
// writes nothing. fd may be open with O_DIRECT. Throws chorus::Error.
Formatted FormatDevice(int fd, uint64_t device_bytes, uint32_t device_lbs,
                       const FormatOptions& options);

// 16 random bytes as a version 4 uuid; a random nonzero 64-bit number.
Uuid RandomUuid();
uint64_t RandomNonzero64();

}  // namespace chorus

#endif  // CHORUS_LIB_META_H_
