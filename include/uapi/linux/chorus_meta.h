/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * chorus - replicated block storage: on-disk metadata layout.
 *
 * Shared by chorus.ko, which checks it on every attach, and chorusctl,
 * which writes it when a volume is first made ("chorusctl volume format").
 * All fields are little-endian. Documentation/replication.md explains the
 * areas; this header is their only definition.
 *
 * The metadata occupies the last md_sectors of the backing device, whose
 * end is taken rounded down to CHORUS_META_BLOCK:
 *
 *   | data (sector 0 ...) | ... | bitmaps | activity log | super A | super B |
 *                               ^ end - md_sectors                   ^ end
 *
 * Within the metadata area, from its start: max_peers bitmaps of
 * bm_slot_sectors each (one bit per 2^bm_shift bytes of data, rounded up to
 * CHORUS_META_BLOCK), then al_slots activity log blocks, then the two
 * superblock copies. md_sectors covers all of it. chorusctl sizes the
 * bitmaps for the whole device, so they cover any data size.
 *
 * The two superblock copies are written alternately; the valid copy (magic
 * and crc) with the higher seq is current, so a torn write of one copy
 * leaves the other intact.
 */
#ifndef _UAPI_LINUX_CHORUS_META_H
#define _UAPI_LINUX_CHORUS_META_H

#include <linux/types.h>

#define CHORUS_META_MAGIC		0x444d5355524f4843ULL	/* "CHORUSMD" */
#define CHORUS_META_VERSION		1
#define CHORUS_META_BLOCK		4096
#define CHORUS_META_MAX_PEERS		8
#define CHORUS_META_AL_SLOTS		32
#define CHORUS_META_BM_SHIFT		16	/* 64 KiB per bitmap bit */
#define CHORUS_META_AL_EXTENT_SHIFT	22	/* 4 MiB per AL extent */

/* Offsets of the superblock copies from the (rounded) end of the device. */
#define CHORUS_META_SUPER_A_FROM_END	(2 * CHORUS_META_BLOCK)
#define CHORUS_META_SUPER_B_FROM_END	(1 * CHORUS_META_BLOCK)

/* chorus_meta_super.flags */
#define CHORUS_META_F_CLEAN		(1U << 0)	/* shut down cleanly */

/* chorus_meta_peer.flags */
#define CHORUS_META_PEER_OUT_OF_DATE	(1U << 0)
#define CHORUS_META_PEER_FULL_SYNC	(1U << 1)

#define CHORUS_META_AL_MAGIC		0x4c4153555248434fULL	/* "OCHRUSAL" */
#define CHORUS_META_AL_MAX_EXTENTS	1000

/**
 * struct chorus_meta_al - one activity log transaction, CHORUS_META_BLOCK bytes
 * @magic: CHORUS_META_AL_MAGIC
 * @seq: transaction number on this device; transaction n is in AL block
 *	n % al_slots, and the valid one with the highest seq is current
 * @epoch: epoch of the owner whose writes the extents describe
 * @owner_node: node id of that owner (this node, or the owner that
 *	shipped it in a STATE message)
 * @nr_extents: entries used in @extents
 * @extents: extents (2^al_extent_shift bytes each) that may have writes in
 *	flight; every transaction lists the whole active set
 * @reserved: zero
 * @crc: crc32c (Castagnoli, seed ~0, final ~) of the bytes before it
 */
struct chorus_meta_al {
	__le64 magic;
	__le64 seq;
	__le64 epoch;
	__le32 owner_node;
	__le32 nr_extents;
	__le32 extents[CHORUS_META_AL_MAX_EXTENTS];
	__u8 reserved[60];
	__le32 crc;
};

/**
 * struct chorus_meta_peer - what this replica knows of one peer
 * @node_id: the peer's node id; 0 for an unused slot
 * @flags: CHORUS_META_PEER_*
 * @bitmap_gen: the peer's disk this slot's bitmap counts against: the
 *	current_gen its HELLO carried (the id its disk got when formatted), 0
 *	until the first session. A peer that comes with another one has a new
 *	disk, which needs every region: the kernel sets them all
 */
struct chorus_meta_peer {
	__le32 node_id;
	__le32 flags;
	__le64 bitmap_gen;
};

/**
 * struct chorus_meta_super - one superblock copy, CHORUS_META_BLOCK bytes
 * @magic: CHORUS_META_MAGIC
 * @version: CHORUS_META_VERSION
 * @flags: CHORUS_META_F_*
 * @seq: incremented on every superblock write
 * @volume_uuid: identity of the volume this replica belongs to
 * @node_id: node id of this replica, 0 until it joins a cluster
 * @block_size: logical block size of the volume
 * @data_sectors: size of the volume in 512-byte sectors, from sector 0
 * @md_sectors: size of the metadata area at the end of the device
 * @device_sectors: size of the backing device when it was formatted
 * @highest_epoch: highest owner epoch accepted
 * @current_gen: current data generation id
 * @bm_shift: log2 of the bytes one bitmap bit covers
 * @al_extent_shift: log2 of the bytes one activity log extent covers
 * @al_slots: number of activity log blocks
 * @max_peers: number of peer slots (bitmaps)
 * @al_offset_sectors: start of the activity log, from the metadata start
 * @bm_offset_sectors: start of the first bitmap, from the metadata start
 * @bm_slot_sectors: size of one peer's bitmap
 * @peers: one slot per peer
 * @reserved: zero
 * @crc: crc32c (Castagnoli, seed ~0, final ~) of the bytes before it
 */
struct chorus_meta_super {
	__le64 magic;
	__le32 version;
	__le32 flags;
	__le64 seq;
	__u8 volume_uuid[16];
	__le32 node_id;
	__le32 block_size;
	__le64 data_sectors;
	__le64 md_sectors;
	__le64 device_sectors;
	__le64 highest_epoch;
	__le64 current_gen;
	__le32 bm_shift;
	__le32 al_extent_shift;
	__le32 al_slots;
	__le32 max_peers;
	__le64 al_offset_sectors;
	__le64 bm_offset_sectors;
	__le64 bm_slot_sectors;
	struct chorus_meta_peer peers[CHORUS_META_MAX_PEERS];
	__u8 reserved[3836];
	__le32 crc;
};

#endif /* _UAPI_LINUX_CHORUS_META_H */
