// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: per-peer dirty bitmaps.
 *
 * One bit per region (2^bm_shift bytes, 64 KiB as formatted) per peer: set
 * means the peer may lack the owner's data of that region. Bits live in
 * memory in the on-disk layout (little-endian bit order, whole
 * CHORUS_META_BLOCK blocks) and are written to the peer's slot of the
 * metadata area with FUA before any write they describe is acknowledged;
 * clearing them is written lazily, since a stale set bit only costs a
 * needless copy.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "chorus.h"

#define CHORUS_BITS_PER_BLOCK	(CHORUS_META_BLOCK * BITS_PER_BYTE)

static unsigned long chorus_bitmap_blocks(struct chorus_peer *peer)
{
	return DIV_ROUND_UP(peer->nr_bits, CHORUS_BITS_PER_BLOCK);
}

/**
 * chorus_bitmap_alloc() - allocate a peer's in-memory bitmap, all clear
 * @peer: the peer
 *
 * Return: 0 or -ENOMEM.
 */
int chorus_bitmap_alloc(struct chorus_peer *peer)
{
	struct chorus_volume *vol = peer->vol;

	peer->nr_bits = DIV_ROUND_UP(vol->nr_sectors, vol->repl.region_sectors);
	if (chorus_bitmap_blocks(peer) > chorus_meta_bitmap_blocks(vol))
		return -EINVAL;
	peer->bits = kvzalloc(chorus_bitmap_blocks(peer) * CHORUS_META_BLOCK,
			      GFP_KERNEL);
	return peer->bits ? 0 : -ENOMEM;
}

void chorus_bitmap_free(struct chorus_peer *peer)
{
	kvfree(peer->bits);
	peer->bits = NULL;
}

/**
 * chorus_bitmap_load() - read a peer's bitmap from its slot
 * @peer: the peer, with its bitmap allocated
 *
 * Context: process context, before the peer is visible to the I/O path.
 * Return: 0 or a negative errno.
 */
int chorus_bitmap_load(struct chorus_peer *peer)
{
	unsigned long b, nr = chorus_bitmap_blocks(peer), bit;
	u8 *bytes = (u8 *)peer->bits;
	void *buf;
	int ret = 0;

	buf = kmalloc(CHORUS_META_BLOCK, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (b = 0; b < nr && !ret; b++) {
		ret = chorus_meta_bitmap_io(peer->vol, peer->meta_slot, b, buf,
					    REQ_OP_READ);
		if (!ret)
			memcpy(bytes + b * CHORUS_META_BLOCK, buf,
			       CHORUS_META_BLOCK);
	}
	kfree(buf);
	if (ret)
		return ret;
	/* Bits past the volume's end mean nothing. */
	for (bit = peer->nr_bits; bit < nr * CHORUS_BITS_PER_BLOCK; bit++)
		__clear_bit_le(bit, peer->bits);
	peer->dirty = 0;
	for (bit = find_next_bit_le(peer->bits, peer->nr_bits, 0);
	     bit < peer->nr_bits;
	     bit = find_next_bit_le(peer->bits, peer->nr_bits, bit + 1))
		peer->dirty++;
	return 0;
}

static int chorus_bitmap_write_block(struct chorus_peer *peer, unsigned long b,
				     void *buf)
{
	lockdep_assert_held(&peer->bm_mutex);
	spin_lock_irq(&peer->lock);
	memcpy(buf, (u8 *)peer->bits + b * CHORUS_META_BLOCK, CHORUS_META_BLOCK);
	spin_unlock_irq(&peer->lock);
	return chorus_meta_bitmap_io(peer->vol, peer->meta_slot, b, buf,
				     REQ_OP_WRITE | REQ_FUA);
}

static int chorus_bitmap_write_blocks(struct chorus_peer *peer,
				      unsigned long first, unsigned long last)
{
	unsigned long b;
	void *buf;
	int ret = 0;

	lockdep_assert_held(&peer->bm_mutex);
	buf = kmalloc(CHORUS_META_BLOCK, GFP_NOIO);
	if (!buf)
		return -ENOMEM;
	for (b = first; b <= last && !ret; b++)
		ret = chorus_bitmap_write_block(peer, b, buf);
	kfree(buf);
	if (ret)
		pr_err_ratelimited("%s: peer %u: cannot write the bitmap (%d)\n",
				   peer->vol->name, peer->node_id, ret);
	return ret;
}

/**
 * chorus_bitmap_write_range() - make the bits of a sector range durable
 * @peer: the peer, chorus_peer.bm_mutex held
 * @start: first sector
 * @nr: sectors, at least one
 *
 * Whoever sets bits holds bm_mutex until they are written, so a writer
 * that finds its bits already set knows they are on disk.
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int chorus_bitmap_write_range(struct chorus_peer *peer, sector_t start,
			      sector_t nr)
{
	sector_t rs = peer->vol->repl.region_sectors;
	unsigned long first = div64_u64(start, rs);
	unsigned long last = div64_u64(start + nr - 1, rs);

	return chorus_bitmap_write_blocks(peer, first / CHORUS_BITS_PER_BLOCK,
					  last / CHORUS_BITS_PER_BLOCK);
}

/**
 * chorus_bitmap_write_all() - write the whole bitmap
 * @peer: the peer, chorus_peer.bm_mutex held
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int chorus_bitmap_write_all(struct chorus_peer *peer)
{
	return chorus_bitmap_write_blocks(peer, 0,
					  chorus_bitmap_blocks(peer) - 1);
}

/**
 * chorus_bitmap_sync() - write the whole bitmap, taking bm_mutex
 * @peer: the peer
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int chorus_bitmap_sync(struct chorus_peer *peer)
{
	int ret;

	mutex_lock(&peer->bm_mutex);
	ret = chorus_bitmap_write_all(peer);
	mutex_unlock(&peer->bm_mutex);
	return ret;
}

/**
 * chorus_bitmap_set_locked() - mark a sector range dirty
 * @peer: the peer, chorus_peer.lock held
 * @start: first sector
 * @nr: sectors, at least one
 *
 * Return: how many bits were clear before.
 */
unsigned long chorus_bitmap_set_locked(struct chorus_peer *peer, sector_t start,
				       sector_t nr)
{
	unsigned long set = 0;

	sector_t rs = peer->vol->repl.region_sectors;
	unsigned long bit = div64_u64(start, rs);
	unsigned long last = div64_u64(start + nr - 1, rs);

	lockdep_assert_held(&peer->lock);
	for (; bit <= last && bit < peer->nr_bits; bit++) {
		if (!test_bit_le(bit, peer->bits)) {
			__set_bit_le(bit, peer->bits);
			peer->dirty++;
			set++;
		}
	}
	return set;
}

void chorus_bitmap_set_all_locked(struct chorus_peer *peer)
{
	chorus_bitmap_set_locked(peer, 0, peer->vol->nr_sectors);
}

void chorus_bitmap_clear_bit_locked(struct chorus_peer *peer, unsigned long bit)
{
	lockdep_assert_held(&peer->lock);
	if (test_bit_le(bit, peer->bits)) {
		__clear_bit_le(bit, peer->bits);
		peer->dirty--;
	}
}

/**
 * chorus_bitmap_next() - the next dirty region
 * @peer: the peer
 * @from: first bit to look at
 *
 * Return: the bit, or chorus_peer.nr_bits when none is set from @from on.
 */
unsigned long chorus_bitmap_next(struct chorus_peer *peer, unsigned long from)
{
	unsigned long bit;

	spin_lock_irq(&peer->lock);
	bit = find_next_bit_le(peer->bits, peer->nr_bits, from);
	spin_unlock_irq(&peer->lock);
	return bit;
}
