// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the on-disk metadata of a replica.
 *
 * The layout is defined in include/uapi/linux/chorus_meta.h; chorusctl
 * writes it when a volume is first made ("chorusctl volume format") and
 * every attach checks it here before the volume exists. Checking writes
 * nothing: a refused attach leaves the backing device as it was.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/crc32c.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "chorus.h"

enum chorus_meta_copy_state {
	CHORUS_META_COPY_EMPTY,		/* no magic: never formatted */
	CHORUS_META_COPY_CORRUPT,	/* magic, but bad crc */
	CHORUS_META_COPY_VALID,
};

static u32 chorus_meta_crc(const struct chorus_meta_super *sb)
{
	return ~crc32c(~0U, sb, offsetof(struct chorus_meta_super, crc));
}

/* A metadata bio submitted and waited for from a work item. */
struct chorus_meta_io_work {
	struct work_struct work;
	struct bio *bio;
	int ret;
};

static void chorus_meta_io_workfn(struct work_struct *work)
{
	struct chorus_meta_io_work *w =
		container_of(work, struct chorus_meta_io_work, work);

	w->ret = submit_bio_wait(w->bio);
}

static int chorus_meta_rw_block(struct block_device *bdev, sector_t sector,
				void *buf, blk_opf_t opf)
{
	struct chorus_meta_io_work w = {};
	struct bio_vec bvec;
	struct bio bio;

	bio_init(&bio, bdev, &bvec, 1, opf | REQ_SYNC | REQ_META);
	bio.bi_iter.bi_sector = sector;
	__bio_add_page(&bio, virt_to_page(buf), CHORUS_META_BLOCK,
		       offset_in_page(buf));
	w.bio = &bio;
	if (current->bio_list) {
		/*
		 * Inside someone's submit_bio (a bitmap write of a request
		 * started from queue_rq) a bio we submit
		 * would only start once that submitter returns, and we
		 * would wait for it forever: submit it from a work item.
		 */
		INIT_WORK_ONSTACK(&w.work, chorus_meta_io_workfn);
		queue_work(chorus_wq, &w.work);
		flush_work(&w.work);
		destroy_work_on_stack(&w.work);
	} else {
		chorus_meta_io_workfn(&w.work);
	}
	bio_uninit(&bio);
	return w.ret;
}

static enum chorus_meta_copy_state
chorus_meta_copy_state(const struct chorus_meta_super *sb)
{
	if (le64_to_cpu(sb->magic) != CHORUS_META_MAGIC)
		return CHORUS_META_COPY_EMPTY;
	if (le32_to_cpu(sb->crc) != chorus_meta_crc(sb))
		return CHORUS_META_COPY_CORRUPT;
	return CHORUS_META_COPY_VALID;
}

/* Sector of superblock copy 0 (A) or 1 (B), from the rounded device end. */
static sector_t chorus_meta_copy_sector(u64 end_bytes, int copy)
{
	static const unsigned int from_end[2] = {
		CHORUS_META_SUPER_A_FROM_END, CHORUS_META_SUPER_B_FROM_END,
	};

	return (end_bytes - from_end[copy]) >> SECTOR_SHIFT;
}

/* The areas must tile the metadata area exactly as chorus_meta.h says. */
static bool chorus_meta_geometry_ok(const struct chorus_meta_super *sb,
				    struct block_device *bdev, sector_t end)
{
	u32 bs = le32_to_cpu(sb->block_size);
	u32 bm_shift = le32_to_cpu(sb->bm_shift);
	u32 al_slots = le32_to_cpu(sb->al_slots);
	u32 max_peers = le32_to_cpu(sb->max_peers);
	u64 data = le64_to_cpu(sb->data_sectors);
	u64 md = le64_to_cpu(sb->md_sectors);
	u64 al_off = le64_to_cpu(sb->al_offset_sectors);
	u64 bm_off = le64_to_cpu(sb->bm_offset_sectors);
	u64 bm_slot = le64_to_cpu(sb->bm_slot_sectors);
	const u64 block_sectors = CHORUS_META_BLOCK >> SECTOR_SHIFT;

	if (bs < SECTOR_SIZE || bs > CHORUS_META_BLOCK || !is_power_of_2(bs) ||
	    bs < bdev_logical_block_size(bdev))
		return false;
	/* A bitmap region must fit one wire message (resync). */
	if (bm_shift < 12 || bm_shift > 20 || max_peers > CHORUS_META_MAX_PEERS ||
	    al_slots == 0 || al_slots > 1024)
		return false;
	if (md > end || al_off + al_slots * block_sectors + 2 * block_sectors != md)
		return false;
	if (bm_off + max_peers * bm_slot > al_off)
		return false;
	/* One bitmap slot must cover the data: bits in a slot << bm_shift. */
	if (max_peers && (bm_slot << (SECTOR_SHIFT + 3)) <
	    DIV_ROUND_UP(data << SECTOR_SHIFT, 1ULL << bm_shift))
		return false;
	return data && IS_ALIGNED(data << SECTOR_SHIFT, bs) && data <= end - md;
}

/* Refuse a superblock that does not fit this device or this request. */
static int chorus_meta_check(const struct chorus_meta_super *sb,
			     struct block_device *bdev, sector_t end,
			     const struct chorus_volume_config *cfg,
			     struct netlink_ext_ack *extack)
{
	u64 device = le64_to_cpu(sb->device_sectors);
	uuid_t uuid;

	if (le32_to_cpu(sb->version) != CHORUS_META_VERSION) {
		NL_SET_ERR_MSG(extack, "unsupported chorus metadata version");
		return -EINVAL;
	}
	if (device > bdev_nr_sectors(bdev)) {
		NL_SET_ERR_MSG(extack,
			       "backing device is smaller than the device its metadata was formatted on");
		return -EINVAL;
	}
	if (device < bdev_nr_sectors(bdev)) {
		NL_SET_ERR_MSG(extack,
			       "backing device is larger than when it was formatted; resizing is not supported");
		return -EINVAL;
	}
	if (!chorus_meta_geometry_ok(sb, bdev, end)) {
		NL_SET_ERR_MSG(extack, "chorus metadata geometry is inconsistent");
		return -EUCLEAN;
	}

	import_uuid(&uuid, sb->volume_uuid);
	if (cfg->uuid_set && !uuid_equal(&uuid, &cfg->uuid)) {
		NL_SET_ERR_MSG(extack,
			       "volume uuid does not match the backing device's metadata");
		return -EINVAL;
	}
	if (cfg->size_bytes &&
	    cfg->size_bytes != le64_to_cpu(sb->data_sectors) << SECTOR_SHIFT) {
		NL_SET_ERR_MSG(extack,
			       "size differs from the size the backing device was formatted with");
		return -EINVAL;
	}
	if (cfg->block_size && cfg->block_size != le32_to_cpu(sb->block_size)) {
		NL_SET_ERR_MSG(extack,
			       "block size differs from the one the backing device was formatted with");
		return -EINVAL;
	}
	return 0;
}

/**
 * chorus_meta_read() - read and check the metadata of a backing device
 * @backing: the device, open
 * @cfg: the attach request; its uuid, size, block size and node id, when
 *	given, must match the metadata
 * @meta: filled on success; chorus_meta_release() frees it
 * @extack: where to say what was wrong
 *
 * Reads both superblock copies and keeps the valid one with the higher
 * seq. Writes nothing.
 *
 * Context: process context.
 * Return: 0; -ENODATA when the device was never formatted, -EUCLEAN when
 * the metadata is damaged, -EINVAL when it does not fit the device or the
 * request, -EIO on a read error; with a message in @extack.
 */
int chorus_meta_read(struct chorus_backing *backing,
		     const struct chorus_volume_config *cfg,
		     struct chorus_meta *meta, struct netlink_ext_ack *extack)
{
	struct block_device *bdev = backing->bdev;
	u64 end_bytes = round_down(bdev_nr_bytes(bdev), CHORUS_META_BLOCK);
	struct chorus_meta_super *copy[2] = {};
	enum chorus_meta_copy_state state[2];
	int cur = -1, i, ret;

	BUILD_BUG_ON(sizeof(struct chorus_meta_super) != CHORUS_META_BLOCK);

	if (end_bytes < CHORUS_META_SUPER_A_FROM_END) {
		NL_SET_ERR_MSG(extack, "backing device is too small for chorus metadata");
		return -EINVAL;
	}

	for (i = 0; i < 2; i++) {
		copy[i] = kmalloc(CHORUS_META_BLOCK, GFP_KERNEL);
		if (!copy[i]) {
			ret = -ENOMEM;
			goto free_copies;
		}
		ret = chorus_meta_rw_block(bdev, chorus_meta_copy_sector(end_bytes, i),
					   copy[i], REQ_OP_READ);
		if (ret) {
			NL_SET_ERR_MSG(extack, "cannot read the chorus metadata");
			goto free_copies;
		}
		state[i] = chorus_meta_copy_state(copy[i]);
		if (state[i] == CHORUS_META_COPY_VALID &&
		    (cur < 0 || le64_to_cpu(copy[i]->seq) > le64_to_cpu(copy[cur]->seq)))
			cur = i;
	}

	if (cur < 0) {
		if (state[0] == CHORUS_META_COPY_EMPTY && state[1] == CHORUS_META_COPY_EMPTY) {
			NL_SET_ERR_MSG(extack,
				       "backing device has no chorus metadata: run chorusctl volume format");
			ret = -ENODATA;
		} else {
			NL_SET_ERR_MSG(extack,
				       "chorus metadata is corrupt: both superblock copies fail their checksum");
			ret = -EUCLEAN;
		}
		goto free_copies;
	}
	if (state[!cur] != CHORUS_META_COPY_VALID)
		pr_warn("%s: superblock copy %c on %s is damaged, using copy %c\n",
			cfg->name, 'A' + !cur, backing->path, 'A' + cur);

	ret = chorus_meta_check(copy[cur], bdev, end_bytes >> SECTOR_SHIFT, cfg, extack);
	if (ret)
		goto free_copies;
	if (cfg->node_id && le32_to_cpu(copy[cur]->node_id) &&
	    le32_to_cpu(copy[cur]->node_id) != cfg->node_id) {
		NL_SET_ERR_MSG(extack, "node id differs from the one recorded in the metadata");
		ret = -EINVAL;
		goto free_copies;
	}
	/* Recorded by chorus_meta_open(), the first write. */
	if (cfg->node_id)
		copy[cur]->node_id = cpu_to_le32(cfg->node_id);

	meta->super = copy[cur];
	meta->current_copy = cur;
	meta->end_bytes = end_bytes;
	meta->md_start = (end_bytes >> SECTOR_SHIFT) -
			 le64_to_cpu(copy[cur]->md_sectors);
	kfree(copy[!cur]);
	if (!(le32_to_cpu(meta->super->flags) & CHORUS_META_F_CLEAN))
		pr_warn("%s: %s was not detached cleanly last time\n",
			cfg->name, backing->path);
	return 0;

free_copies:
	kfree(copy[0]);
	kfree(copy[1]);
	return ret;
}

/**
 * chorus_meta_load() - read and check a volume's metadata, take its geometry
 * @vol: volume whose backing device is open
 * @cfg: the attach request, as for chorus_meta_read()
 * @extack: where to say what was wrong
 *
 * chorus_meta_read() into the volume, then sets the volume's uuid, size and
 * block size from the metadata. Writes nothing.
 *
 * Context: process context.
 * Return: as chorus_meta_read().
 */
int chorus_meta_load(struct chorus_volume *vol,
		     const struct chorus_volume_config *cfg,
		     struct netlink_ext_ack *extack)
{
	const struct chorus_meta_super *sb;
	int ret;

	ret = chorus_meta_read(&vol->backing, cfg, &vol->meta, extack);
	if (ret)
		return ret;
	sb = vol->meta.super;
	import_uuid(&vol->uuid, sb->volume_uuid);
	vol->block_size = le32_to_cpu(sb->block_size);
	vol->nr_sectors = le64_to_cpu(sb->data_sectors);
	return 0;
}

/**
 * chorus_meta_init_diskless() - the metadata of a diskless access point
 * @vol: the volume, without a backing device
 * @cfg: its size, block size, uuid, node id and highest accepted epoch
 *
 * A diskless access point keeps nothing on disk. Its superblock lives in
 * memory, with no peer slots (it keeps no bitmaps: it never owns the
 * volume) and no activity log; chorus_meta_write() only changes memory.
 * The epoch it accepts is forgotten when it is detached: the caller gives
 * the highest one it knows at the next attach (see forwarding.md).
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int chorus_meta_init_diskless(struct chorus_volume *vol,
			      const struct chorus_volume_config *cfg)
{
	struct chorus_meta_super *sb = kzalloc(CHORUS_META_BLOCK, GFP_KERNEL);

	if (!sb)
		return -ENOMEM;
	sb->magic = cpu_to_le64(CHORUS_META_MAGIC);
	sb->version = cpu_to_le32(CHORUS_META_VERSION);
	export_uuid(sb->volume_uuid, &cfg->uuid);
	sb->node_id = cpu_to_le32(cfg->node_id);
	sb->block_size = cpu_to_le32(cfg->block_size);
	sb->data_sectors = cpu_to_le64(cfg->size_bytes >> SECTOR_SHIFT);
	sb->highest_epoch = cpu_to_le64(cfg->epoch);
	sb->bm_shift = cpu_to_le32(CHORUS_META_BM_SHIFT);
	vol->uuid = cfg->uuid;
	vol->block_size = cfg->block_size;
	vol->nr_sectors = cfg->size_bytes >> SECTOR_SHIFT;
	vol->meta.super = sb;
	return 0;
}

/**
 * chorus_meta_write() - write the in-memory superblock to disk
 * @vol: volume with loaded metadata
 *
 * Bumps seq and writes the copy that is not current, with a pre-flush (so
 * everything completed before is durable first) and FUA; only once that
 * succeeded does it become current. A torn or failed write leaves the
 * previous copy as the valid one with the higher seq.
 *
 * Context: process context, chorus_repl.meta_lock held.
 * Return: 0 or a negative errno; on failure the in-memory seq is unchanged.
 */
static int chorus_meta_write(struct chorus_volume *vol)
{
	struct chorus_meta *meta = &vol->meta;
	struct chorus_meta_super *sb = meta->super;
	u64 seq = le64_to_cpu(sb->seq);
	int next = !meta->current_copy;
	int ret;

	lockdep_assert_held(&vol->repl.meta_lock);
	/*
	 * A detached disk keeps the metadata it had: it is out of date from
	 * its failure on, and a replacement starts from a full resync.
	 */
	if (vol->diskless || chorus_disk_failed(vol))
		return 0;
	sb->seq = cpu_to_le64(seq + 1);
	sb->crc = cpu_to_le32(chorus_meta_crc(sb));
	ret = chorus_meta_rw_block(vol->backing.bdev,
				   chorus_meta_copy_sector(meta->end_bytes, next), sb,
				   REQ_OP_WRITE | REQ_PREFLUSH | REQ_FUA);
	if (ret) {
		sb->seq = cpu_to_le64(seq);
		/* A disk that fails its metadata fails as for data. */
		if (ret != -ENOMEM)
			chorus_disk_fail(vol, "superblock write failed (%d)", ret);
		return ret;
	}
	meta->current_copy = next;
	return 0;
}

static int chorus_meta_set_clean(struct chorus_volume *vol, bool clean)
{
	struct chorus_meta_super *sb = vol->meta.super;
	u32 flags;
	int ret;

	mutex_lock(&vol->repl.meta_lock);
	flags = le32_to_cpu(sb->flags);
	sb->flags = cpu_to_le32(clean ? flags | CHORUS_META_F_CLEAN :
				flags & ~CHORUS_META_F_CLEAN);
	ret = chorus_meta_write(vol);
	if (ret)
		sb->flags = cpu_to_le32(flags);
	mutex_unlock(&vol->repl.meta_lock);
	return ret;
}

/**
 * chorus_meta_set_epoch() - persist a higher accepted epoch
 * @vol: the volume
 * @epoch: the epoch; nothing is written unless it is higher than the
 *	highest one on disk
 *
 * Context: process context; takes chorus_repl.meta_lock.
 * Return: 0 or a negative errno, with the old epoch kept.
 */
int chorus_meta_set_epoch(struct chorus_volume *vol, u64 epoch)
{
	struct chorus_meta_super *sb = vol->meta.super;
	u64 old;
	int ret = 0;

	mutex_lock(&vol->repl.meta_lock);
	old = le64_to_cpu(sb->highest_epoch);
	if (epoch > old) {
		sb->highest_epoch = cpu_to_le64(epoch);
		ret = chorus_meta_write(vol);
		if (ret)
			sb->highest_epoch = cpu_to_le64(old);
	}
	mutex_unlock(&vol->repl.meta_lock);
	return ret;
}

/**
 * chorus_meta_highest_epoch() - the highest epoch this replica accepted
 * @vol: the volume
 *
 * Return: the epoch as on disk.
 */
u64 chorus_meta_highest_epoch(struct chorus_volume *vol)
{
	u64 epoch;

	mutex_lock(&vol->repl.meta_lock);
	epoch = le64_to_cpu(vol->meta.super->highest_epoch);
	mutex_unlock(&vol->repl.meta_lock);
	return epoch;
}

/**
 * chorus_meta_peer_slot() - find or take the superblock slot of a peer
 * @vol: the volume
 * @node_id: the peer's node id
 * @flags: out: the slot's CHORUS_META_PEER_* flags if it existed
 *
 * Context: process context; takes chorus_repl.meta_lock.
 * Return: the slot, with *@flags ~0 when it is free rather than the
 * peer's, or -ENOSPC when every slot is taken.
 */
int chorus_meta_peer_slot(struct chorus_volume *vol, u32 node_id, u32 *flags)
{
	struct chorus_meta_super *sb = vol->meta.super;
	int i, free_slot = -ENOSPC;

	mutex_lock(&vol->repl.meta_lock);
	for (i = 0; i < le32_to_cpu(sb->max_peers); i++) {
		u32 id = le32_to_cpu(sb->peers[i].node_id);

		if (id == node_id) {
			*flags = le32_to_cpu(sb->peers[i].flags);
			mutex_unlock(&vol->repl.meta_lock);
			return i;
		}
		if (!id && free_slot < 0)
			free_slot = i;
	}
	mutex_unlock(&vol->repl.meta_lock);
	*flags = ~0U;
	return free_slot;
}

/**
 * chorus_meta_set_peer() - persist a peer slot
 * @vol: the volume
 * @slot: the slot
 * @node_id: the peer's node id, 0 to free the slot
 * @flags: CHORUS_META_PEER_*
 *
 * Context: process context; takes chorus_repl.meta_lock.
 * Return: 0 or a negative errno with the slot unchanged in memory.
 */
int chorus_meta_set_peer(struct chorus_volume *vol, int slot, u32 node_id,
			 u32 flags)
{
	struct chorus_meta_peer *p = &vol->meta.super->peers[slot];
	struct chorus_meta_peer old;
	int ret;

	mutex_lock(&vol->repl.meta_lock);
	old = *p;
	/* Another peer (or none) in the slot: its disk is not known yet. */
	if (le32_to_cpu(p->node_id) != node_id)
		p->bitmap_gen = 0;
	p->node_id = cpu_to_le32(node_id);
	p->flags = cpu_to_le32(flags);
	ret = chorus_meta_write(vol);
	if (ret)
		*p = old;
	mutex_unlock(&vol->repl.meta_lock);
	return ret;
}

/**
 * chorus_meta_set_peer_disk() - persist the disk a peer slot counts against
 * @vol: the volume
 * @slot: the slot, in use
 * @flags: CHORUS_META_PEER_*, written with it
 * @disk_gen: the peer's current_gen
 *
 * Context: process context; takes chorus_repl.meta_lock.
 * Return: 0 or a negative errno with the slot unchanged in memory.
 */
int chorus_meta_set_peer_disk(struct chorus_volume *vol, int slot, u32 flags,
			      u64 disk_gen)
{
	struct chorus_meta_peer *p = &vol->meta.super->peers[slot];
	struct chorus_meta_peer old;
	int ret;

	mutex_lock(&vol->repl.meta_lock);
	old = *p;
	p->flags = cpu_to_le32(flags);
	p->bitmap_gen = cpu_to_le64(disk_gen);
	ret = chorus_meta_write(vol);
	if (ret)
		*p = old;
	mutex_unlock(&vol->repl.meta_lock);
	return ret;
}

/**
 * chorus_meta_peer_disk() - the disk a peer slot counts against
 * @vol: the volume
 * @slot: the slot
 *
 * Context: any; the value changes under chorus_repl.meta_lock.
 * Return: the peer's current_gen when the slot last saw it, 0 if never.
 */
u64 chorus_meta_peer_disk(struct chorus_volume *vol, int slot)
{
	return le64_to_cpu(READ_ONCE(vol->meta.super->peers[slot].bitmap_gen));
}

/**
 * chorus_meta_bitmap_io() - read or write one block of a peer slot's bitmap
 * @vol: the volume
 * @slot: the peer slot
 * @block: block index within the slot's bitmap
 * @buf: CHORUS_META_BLOCK bytes, kmalloc'ed
 * @opf: REQ_OP_READ, or REQ_OP_WRITE with flags
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int chorus_meta_bitmap_io(struct chorus_volume *vol, int slot,
			  unsigned long block, void *buf, blk_opf_t opf)
{
	const struct chorus_meta_super *sb = vol->meta.super;
	sector_t sector = vol->meta.md_start +
			  le64_to_cpu(sb->bm_offset_sectors) +
			  slot * le64_to_cpu(sb->bm_slot_sectors) +
			  block * (CHORUS_META_BLOCK >> SECTOR_SHIFT);

	int ret;

	/*
	 * As chorus_meta_write(): a detached disk keeps what it had, and a
	 * failed bitmap write detaches it (the bits stay in memory).
	 */
	if (op_is_write(opf) && chorus_disk_failed(vol))
		return 0;
	ret = chorus_meta_rw_block(vol->backing.bdev, sector, buf, opf);
	if (ret && ret != -ENOMEM && op_is_write(opf))
		chorus_disk_fail(vol, "bitmap write failed (%d)", ret);
	return ret;
}

/**
 * chorus_meta_bitmap_blocks() - blocks in one peer slot's bitmap
 * @vol: the volume
 *
 * Return: the count, as formatted.
 */
unsigned long chorus_meta_bitmap_blocks(struct chorus_volume *vol)
{
	return le64_to_cpu(vol->meta.super->bm_slot_sectors) /
	       (CHORUS_META_BLOCK >> SECTOR_SHIFT);
}

/**
 * chorus_meta_open() - mark the metadata in use before the volume serves I/O
 * @vol: volume whose metadata chorus_meta_load() accepted
 * @extack: where to say what failed
 *
 * Clears the clean flag on disk, so that a crash from now on is seen at
 * the next attach.
 *
 * Context: process context, chorus_volumes_lock held.
 * Return: 0 or a negative errno with a message in @extack.
 */
int chorus_meta_open(struct chorus_volume *vol, struct netlink_ext_ack *extack)
{
	int ret;

	lockdep_assert_held(&chorus_volumes_lock);
	ret = chorus_meta_set_clean(vol, false);
	if (ret)
		NL_SET_ERR_MSG(extack, "cannot write the chorus metadata");
	return ret;
}

/**
 * chorus_meta_close() - mark the metadata clean after the last I/O
 * @vol: volume opened with chorus_meta_open(), with no I/O left
 *
 * A failure is logged and leaves the metadata marked unclean, which the
 * next attach reports; detaching goes on regardless.
 *
 * Context: process context, chorus_volumes_lock held.
 */
void chorus_meta_close(struct chorus_volume *vol)
{
	int ret;

	lockdep_assert_held(&chorus_volumes_lock);
	ret = chorus_meta_set_clean(vol, true);
	if (ret)
		pr_err("%s: cannot mark the metadata on %s clean (%d)\n",
		       vol->name, vol->backing.path, ret);
}

/**
 * chorus_meta_release() - drop the in-memory metadata of a volume
 * @meta: filled by chorus_meta_load()
 */
void chorus_meta_release(struct chorus_meta *meta)
{
	kfree(meta->super);
	meta->super = NULL;
}

/**
 * chorus_meta_al_io() - read or write the activity log block of a transaction
 * @vol: the volume
 * @seq: the transaction; its block is seq % al_slots
 * @buf: CHORUS_META_BLOCK bytes, kmalloc'ed
 * @opf: REQ_OP_READ, or REQ_OP_WRITE with flags
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int chorus_meta_al_io(struct chorus_volume *vol, u64 seq, void *buf,
		      blk_opf_t opf)
{
	const struct chorus_meta_super *sb = vol->meta.super;
	u32 slot = do_div(seq, le32_to_cpu(sb->al_slots));
	sector_t sector = vol->meta.md_start +
			  le64_to_cpu(sb->al_offset_sectors) +
			  slot * (CHORUS_META_BLOCK >> SECTOR_SHIFT);

	int ret;

	/*
	 * As chorus_meta_write(). An owner whose disk failed goes on logging
	 * to its write set, which keeps the log a next owner needs. A failed
	 * log write detaches the disk, as a failed data write does.
	 */
	if (op_is_write(opf) && chorus_disk_failed(vol))
		return 0;
	ret = chorus_meta_rw_block(vol->backing.bdev, sector, buf, opf);
	if (ret && ret != -ENOMEM)
		chorus_disk_fail(vol, "activity log %s failed (%d)",
				 op_is_write(opf) ? "write" : "read", ret);
	return ret;
}

u32 chorus_meta_al_slots(struct chorus_volume *vol)
{
	return le32_to_cpu(vol->meta.super->al_slots);
}

/* crc32c as the metadata uses it: seed ~0, final ~. */
u32 chorus_meta_crc_of(const void *buf, size_t len)
{
	return ~crc32c(~0U, buf, len);
}
