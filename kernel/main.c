// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: module init/exit and the registry of
 * volumes on this node.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "auth.h"
#include "chorus.h"

unsigned int chorus_queue_depth = 128;
module_param_named(queue_depth, chorus_queue_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth, "blk-mq queue depth of each volume (default 128)");

/*
 * The registry: chorus_volumes_lock protects chorus_volumes_idr, the
 * uniqueness of names and chorus_unloading. It is held across the whole of
 * a create or destroy, so a volume found under it stays valid until it is
 * released. It nests outside chorus_volume.lock and the gendisk's
 * open_mutex; the I/O path never takes it.
 */
DEFINE_MUTEX(chorus_volumes_lock);
static DEFINE_IDR(chorus_volumes_idr);
struct workqueue_struct *chorus_wq;	/* sessions, resync; see chorus_init() */
struct workqueue_struct *chorus_reply_wq;	/* answers on connections */
static bool chorus_unloading;

/* One minor per volume; the registry id is the minor. */
#define CHORUS_MAX_VOLUMES	BIT(MINORBITS)

/**
 * chorus_volume_name_valid() - check a volume name
 * @name: NUL-terminated candidate
 *
 * Names become file names (/dev/chorus/<name>) and nvmet configfs entries,
 * so they are restricted to 1..63 characters of [A-Za-z0-9._-] and may not
 * start with '.'.
 *
 * Return: true when @name may be used.
 */
bool chorus_volume_name_valid(const char *name)
{
	size_t len = strnlen(name, CHORUS_VOLUME_NAME_MAX);
	size_t i;

	if (len == 0 || len >= CHORUS_VOLUME_NAME_MAX || name[0] == '.')
		return false;
	for (i = 0; i < len; i++) {
		if (!isalnum(name[i]) && !strchr("._-", name[i]))
			return false;
	}
	return true;
}

/**
 * chorus_volume_find() - look a volume up by name
 * @name: volume name
 *
 * Context: chorus_volumes_lock held.
 * Return: the volume, or NULL.
 */
struct chorus_volume *chorus_volume_find(const char *name)
{
	struct chorus_volume *vol;
	int id;

	lockdep_assert_held(&chorus_volumes_lock);
	idr_for_each_entry(&chorus_volumes_idr, vol, id) {
		if (!strcmp(vol->name, name))
			return vol;
	}
	return NULL;
}

/**
 * chorus_volume_find_uuid() - look a volume up by uuid
 * @uuid: the volume's uuid
 *
 * Context: chorus_volumes_lock held.
 * Return: the volume, or NULL.
 */
struct chorus_volume *chorus_volume_find_uuid(const uuid_t *uuid)
{
	struct chorus_volume *vol;
	int id;

	lockdep_assert_held(&chorus_volumes_lock);
	idr_for_each_entry(&chorus_volumes_idr, vol, id) {
		if (uuid_equal(&vol->uuid, uuid))
			return vol;
	}
	return NULL;
}

/**
 * chorus_volume_next() - iterate over the volumes in registry order
 * @index: in: the first id to consider; out: the id of the volume returned
 *
 * Context: chorus_volumes_lock held.
 * Return: the volume with the lowest id >= *@index, or NULL.
 */
struct chorus_volume *chorus_volume_next(int *index)
{
	lockdep_assert_held(&chorus_volumes_lock);
	return idr_get_next(&chorus_volumes_idr, index);
}

/**
 * chorus_volume_state() - what the volume can do now
 * @vol: the volume
 *
 * Return: %CHORUS_VOLUME_STATE_FAILED once its disk failed (disk.c),
 * else %CHORUS_VOLUME_STATE_ONLINE.
 */
enum chorus_volume_state chorus_volume_state(struct chorus_volume *vol)
{
	return chorus_disk_failed(vol) ? CHORUS_VOLUME_STATE_FAILED :
					 CHORUS_VOLUME_STATE_ONLINE;
}

#define CHORUS_STAT(_name, _attr) \
	{ #_name, _attr, offsetof(struct chorus_stats, _name) }

/* The one list of counters: sysfs and netlink both walk it. */
const struct chorus_stat_desc chorus_stat_descs[CHORUS_NR_STATS] = {
	CHORUS_STAT(reads, CHORUS_STAT_READS),
	CHORUS_STAT(read_bytes, CHORUS_STAT_READ_BYTES),
	CHORUS_STAT(writes, CHORUS_STAT_WRITES),
	CHORUS_STAT(write_bytes, CHORUS_STAT_WRITE_BYTES),
	CHORUS_STAT(flushes, CHORUS_STAT_FLUSHES),
	CHORUS_STAT(fua_writes, CHORUS_STAT_FUA_WRITES),
	CHORUS_STAT(discards, CHORUS_STAT_DISCARDS),
	CHORUS_STAT(write_zeroes, CHORUS_STAT_WRITE_ZEROES),
	CHORUS_STAT(errors, CHORUS_STAT_ERRORS),
	CHORUS_STAT(stale_epoch, CHORUS_STAT_STALE_EPOCH),
	CHORUS_STAT(forwarded, CHORUS_STAT_FORWARDED),
	CHORUS_STAT(forward_resent, CHORUS_STAT_FORWARD_RESENT),
	CHORUS_STAT(forward_expired, CHORUS_STAT_FORWARD_EXPIRED),
	CHORUS_STAT(forward_served, CHORUS_STAT_FORWARD_SERVED),
	CHORUS_STAT(degraded_reads, CHORUS_STAT_DEGRADED_READS),
	CHORUS_STAT(payload_crc_checked, CHORUS_STAT_PAYLOAD_CRC_CHECKED),
	CHORUS_STAT(payload_crc_errors, CHORUS_STAT_PAYLOAD_CRC_ERRORS),
};

/**
 * chorus_volume_stats() - sum a volume's per-CPU counters
 * @vol: the volume
 * @sum: filled with the totals
 */
void chorus_volume_stats(struct chorus_volume *vol, struct chorus_stats *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct chorus_stats *s = per_cpu_ptr(vol->stats, cpu);

		sum->reads += READ_ONCE(s->reads);
		sum->read_bytes += READ_ONCE(s->read_bytes);
		sum->writes += READ_ONCE(s->writes);
		sum->write_bytes += READ_ONCE(s->write_bytes);
		sum->flushes += READ_ONCE(s->flushes);
		sum->fua_writes += READ_ONCE(s->fua_writes);
		sum->discards += READ_ONCE(s->discards);
		sum->write_zeroes += READ_ONCE(s->write_zeroes);
		sum->errors += READ_ONCE(s->errors);
		sum->stale_epoch += READ_ONCE(s->stale_epoch);
		sum->forwarded += READ_ONCE(s->forwarded);
		sum->forward_resent += READ_ONCE(s->forward_resent);
		sum->forward_expired += READ_ONCE(s->forward_expired);
		sum->forward_served += READ_ONCE(s->forward_served);
		sum->degraded_reads += READ_ONCE(s->degraded_reads);
		sum->payload_crc_checked += READ_ONCE(s->payload_crc_checked);
		sum->payload_crc_errors += READ_ONCE(s->payload_crc_errors);
	}
}

/* What the metadata says of the volume: node id, region size, epoch, role. */
static void chorus_volume_take_meta(struct chorus_volume *vol)
{
	const struct chorus_meta_super *sb = vol->meta.super;
	int i;

	vol->node_id = le32_to_cpu(sb->node_id);
	vol->repl.region_sectors = 1ULL << (le32_to_cpu(sb->bm_shift) -
					    SECTOR_SHIFT);
	vol->repl.epoch = le64_to_cpu(sb->highest_epoch);
	/*
	 * A volume that never had peers is a standalone owner; one that had
	 * some may be behind its owner, so it waits to be told its role.
	 */
	for (i = 0; i < le32_to_cpu(sb->max_peers); i++)
		if (le32_to_cpu(sb->peers[i].node_id))
			vol->repl.role = CHORUS_ROLE_REPLICA;
}

/*
 * A diskless access point has nothing to open: its metadata is what it was
 * told, and it starts, and stays, a non-owner that forwards.
 */
static int chorus_volume_open_diskless(struct chorus_volume *vol,
				       const struct chorus_volume_config *cfg)
{
	int ret;

	vol->diskless = true;
	ret = chorus_meta_init_diskless(vol, cfg);
	if (ret)
		return ret;
	chorus_volume_take_meta(vol);
	vol->repl.role = CHORUS_ROLE_REPLICA;
	return 0;
}

/*
 * Open what a volume keeps on its backing device: the device itself, the
 * metadata and the activity log. On failure nothing is left open.
 */
static int chorus_volume_open_storage(struct chorus_volume *vol,
				      const struct chorus_volume_config *cfg,
				      struct netlink_ext_ack *extack)
{
	int ret;

	if (cfg->diskless)
		return chorus_volume_open_diskless(vol, cfg);
	ret = chorus_backing_open(&vol->backing, cfg->backing_path, vol, extack);
	if (ret)
		return ret;
	ret = chorus_meta_load(vol, cfg, extack);
	if (ret)
		goto close_backing;
	chorus_volume_take_meta(vol);
	ret = chorus_meta_open(vol, extack);
	if (ret)
		goto release_meta;
	ret = chorus_al_attach(vol);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot load the activity log");
		goto detach_al;
	}
	return 0;

detach_al:
	chorus_al_detach(vol);
	chorus_meta_close(vol);
release_meta:
	chorus_meta_release(&vol->meta);
close_backing:
	chorus_backing_close(&vol->backing);
	return ret;
}

/* Undo chorus_volume_open_storage(). */
static void chorus_volume_close_storage(struct chorus_volume *vol)
{
	if (vol->diskless) {
		chorus_meta_release(&vol->meta);
		return;
	}
	chorus_al_detach(vol);
	chorus_meta_close(vol);
	chorus_meta_release(&vol->meta);
	chorus_backing_close(&vol->backing);
}

/**
 * chorus_volume_create() - attach a formatted backing device as a volume
 * @cfg: what to attach; the name must already be valid
 * @extack: where to say what was wrong
 * @out: the new volume on success
 *
 * Context: process context, chorus_volumes_lock held.
 * Return: 0, or a negative errno with a message in @extack; on failure
 * nothing is left behind and no other volume is touched.
 */
int chorus_volume_create(const struct chorus_volume_config *cfg,
			 struct netlink_ext_ack *extack,
			 struct chorus_volume **out)
{
	struct chorus_volume *vol;
	int ret;

	lockdep_assert_held(&chorus_volumes_lock);

	if (chorus_unloading) {
		NL_SET_ERR_MSG(extack, "chorus module is unloading");
		return -ENODEV;
	}
	if (chorus_volume_find(cfg->name)) {
		NL_SET_ERR_MSG(extack, "a volume with this name exists");
		return -EEXIST;
	}

	vol = kzalloc(sizeof(*vol), GFP_KERNEL);
	if (!vol)
		return -ENOMEM;
	strscpy(vol->name, cfg->name, sizeof(vol->name));
	/* Another object at the same uuid and epoch is another incarnation. */
	vol->incarnation = get_random_u64() | 1;
	mutex_init(&vol->lock);
	spin_lock_init(&vol->held_lock);
	INIT_LIST_HEAD(&vol->held_start);
	INIT_LIST_HEAD(&vol->held_done);
	INIT_LIST_HEAD(&vol->held_disk);
	chorus_repl_init(vol);
	chorus_disk_init(vol);

	vol->stats = alloc_percpu(struct chorus_stats);
	if (!vol->stats) {
		ret = -ENOMEM;
		goto free_vol;
	}
	ret = chorus_lat_alloc(vol);
	if (ret)
		goto free_stats;

	/* Reserve the id; lookups skip it until the volume is complete. */
	ret = idr_alloc(&chorus_volumes_idr, NULL, 0, CHORUS_MAX_VOLUMES,
			GFP_KERNEL);
	if (ret < 0) {
		if (ret == -ENOSPC)
			NL_SET_ERR_MSG(extack, "too many volumes");
		goto free_lat;
	}
	vol->index = ret;

	ret = chorus_volume_open_storage(vol, cfg, extack);
	if (ret)
		goto remove_id;

	ret = chorus_dev_create(vol, extack);
	if (ret)
		goto close_storage;

	/* Complete: a disk failure (even one of the attach) is announced. */
	chorus_disk_start(vol);
	idr_replace(&chorus_volumes_idr, vol, vol->index);
	pr_info("%s: created as %s on %s, %llu bytes, block size %u\n",
		vol->name, vol->disk->disk_name,
		vol->diskless ? "no local replica (diskless)" : vol->backing.path,
		(u64)vol->nr_sectors << SECTOR_SHIFT, vol->block_size);
	*out = vol;
	return 0;

close_storage:
	chorus_volume_close_storage(vol);
remove_id:
	idr_remove(&chorus_volumes_idr, vol->index);
free_lat:
	chorus_lat_free(vol);
free_stats:
	free_percpu(vol->stats);
free_vol:
	mutex_destroy(&vol->lock);
	kfree(vol);
	return ret;
}

/**
 * chorus_volume_destroy() - destroy a volume that nobody has open
 * @vol: the volume
 * @extack: where to say why not
 *
 * Announces the destruction, removes the block device (waiting for the
 * I/O in flight) and releases the backing device.
 *
 * Context: process context, chorus_volumes_lock held.
 * Return: 0, or -EBUSY while the block device is open (nothing changed).
 */
int chorus_volume_destroy(struct chorus_volume *vol,
			  struct netlink_ext_ack *extack)
{
	lockdep_assert_held(&chorus_volumes_lock);

	mutex_lock(&vol->lock);
	if (vol->open_count) {
		mutex_unlock(&vol->lock);
		NL_SET_ERR_MSG(extack, "volume is open");
		return -EBUSY;
	}
	vol->dying = true;
	mutex_unlock(&vol->lock);

	chorus_genl_notify(vol, CHORUS_EVENT_VOLUME_DESTROYED);
	idr_remove(&chorus_volumes_idr, vol->index);
	pr_info("%s: destroyed\n", vol->name);

	/*
	 * Nobody has the device open; what it serves for access points may
	 * still be in flight: chorus_repl_stop() ends it. A served request an
	 * expired lease holds would never end: it fails first, and so does
	 * any the lease would hold from now on (held_fail).
	 */
	chorus_dev_release_held(vol, true);
	chorus_repl_stop(vol);
	chorus_dev_destroy(vol);
	/* No work for a failure from here on: the clean mark may fail it. */
	chorus_disk_stop(vol);
	chorus_volume_close_storage(vol);
	chorus_lat_free(vol);
	free_percpu(vol->stats);
	mutex_destroy(&vol->lock);
	kfree(vol);
	return 0;
}

static int __init chorus_init(void)
{
	int ret;

	if (chorus_queue_depth < 1 || chorus_queue_depth > BLK_MQ_MAX_DEPTH) {
		pr_err("queue_depth must be 1..%u\n", BLK_MQ_MAX_DEPTH);
		return -EINVAL;
	}

	chorus_sysfs_init();
	/* Sessions, replies and resync: may be needed to write back memory. */
	chorus_wq = alloc_workqueue("chorus", WQ_MEM_RECLAIM, 0);
	if (!chorus_wq)
		return -ENOMEM;
	/*
	 * Requests served for access points wait for tags of the volume's
	 * queue: not on chorus_wq, whose work (conflicts, the activity log)
	 * frees them.
	 */
	chorus_fwd_wq = alloc_workqueue("chorus_fwd", WQ_MEM_RECLAIM, 0);
	if (!chorus_fwd_wq) {
		ret = -ENOMEM;
		goto destroy_wq;
	}
	/*
	 * Acks and answers: a session's teardown (on chorus_wq) waits for
	 * them, which it may not do for work of its own workqueue (its
	 * rescuer could be the one thread left to run both).
	 */
	chorus_reply_wq = alloc_workqueue("chorus_reply", WQ_MEM_RECLAIM, 0);
	if (!chorus_reply_wq) {
		ret = -ENOMEM;
		goto destroy_fwd_wq;
	}
	ret = chorus_transports_init();
	if (ret)
		goto destroy_reply_wq;
	ret = chorus_dev_major_register();
	if (ret)
		goto exit_transports;

	ret = chorus_genl_register();
	if (ret)
		goto unregister_major;

	pr_info("loaded, generic netlink family \"%s\"\n", CHORUS_GENL_NAME);
	return 0;

unregister_major:
	chorus_dev_major_unregister();
exit_transports:
	chorus_transports_exit();
destroy_reply_wq:
	destroy_workqueue(chorus_reply_wq);
destroy_fwd_wq:
	destroy_workqueue(chorus_fwd_wq);
destroy_wq:
	destroy_workqueue(chorus_wq);
	return ret;
}

static void __exit chorus_exit(void)
{
	struct chorus_volume *vol;
	int id;

	/* Handshakes under way take chorus_volumes_lock: finish them first. */
	chorus_transports_unlisten();

	/*
	 * An open volume holds a reference on the module, so every volume
	 * left here is idle and its destruction cannot fail.
	 */
	mutex_lock(&chorus_volumes_lock);
	chorus_unloading = true;
	idr_for_each_entry(&chorus_volumes_idr, vol, id)
		WARN_ON(chorus_volume_destroy(vol, NULL));
	mutex_unlock(&chorus_volumes_lock);

	chorus_genl_unregister();
	/* Nothing can set the lease any more. */
	chorus_lease_exit();
	chorus_dev_major_unregister();
	chorus_transports_exit();
	/* No handshake and no netlink request left: zero the secrets. */
	chorus_auth_exit();
	destroy_workqueue(chorus_reply_wq);
	destroy_workqueue(chorus_fwd_wq);
	destroy_workqueue(chorus_wq);
	/* Every payload's pages are back: the workqueues above are gone. */
	chorus_pages_exit();
	idr_destroy(&chorus_volumes_idr);
	pr_info("unloaded\n");
}

module_init(chorus_init);
module_exit(chorus_exit);

MODULE_DESCRIPTION("chorus replicated block storage");
MODULE_AUTHOR("The chorus authors");
MODULE_LICENSE("GPL");
