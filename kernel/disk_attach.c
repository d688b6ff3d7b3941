// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: a new disk for a volume whose disk
 * failed, attached while the volume stays (its /dev/chorusN, its openers,
 * its NVMe-oF export).
 *
 * Only a node that is not the owner takes a new disk: its block device
 * forwards every request to the owner and touches no local disk, so the
 * disk can change under it without freezing the queue. The node's sessions
 * are closed while the disk changes, so that no replicated write, resync,
 * replica read or handshake reaches either disk meanwhile; what the node
 * forwarded is held and resent on the new sessions, as on any reconnect.
 * The new disk must have been formatted for this volume (uuid, size and
 * block size); it holds none of the volume's data, and the owner sees its
 * new disk id in the handshake and copies every region to it
 * (chorus_peer_take_disk()).
 *
 * The old disk is released without a write: it failed, and its metadata
 * stays as it was at the failure. If the new disk fails while its
 * metadata is written, it is failed in turn and the volume is as before:
 * running, with a failed disk.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <net/netlink.h>

#include "chorus.h"

/* Whether @vol may take a new disk now; says why not in @extack. */
static int chorus_disk_attach_check(struct chorus_volume *vol,
				    struct netlink_ext_ack *extack)
{
	int inflight = atomic_read(&vol->health.inflight);

	lockdep_assert_held(&vol->repl.conf_lock);
	if (vol->diskless) {
		NL_SET_ERR_MSG(extack,
			       "a diskless access point has no disk to replace");
		return -EINVAL;
	}
	if (!chorus_disk_failed(vol)) {
		NL_SET_ERR_MSG(extack,
			       "the volume's disk works: only a failed disk is replaced");
		return -EBUSY;
	}
	if (vol->repl.role == CHORUS_ROLE_OWNER) {
		NL_SET_ERR_MSG(extack,
			       "this node owns the volume: hand it over before its disk is replaced");
		return -EBUSY;
	}
	if (!vol->repl.nr_peers) {
		NL_SET_ERR_MSG(extack,
			       "the volume has no peers: no copy is left to fill a new disk from");
		return -EINVAL;
	}
	if (inflight) {
		pr_info("%s: the failed disk still holds %d I/Os\n", vol->name,
			inflight);
		NL_SET_ERR_MSG(extack,
			       "the failed disk still holds I/Os: retry once they complete");
		return -EBUSY;
	}
	return 0;
}

/*
 * Open @path and read its metadata, which must be this volume's with the
 * volume's geometry. Nothing of @vol changes.
 */
static int chorus_disk_attach_open(struct chorus_volume *vol, const char *path,
				   struct chorus_backing *backing,
				   struct chorus_meta *meta,
				   struct netlink_ext_ack *extack)
{
	struct chorus_volume_config cfg = {
		.name = vol->name,
		.backing_path = path,
		.size_bytes = (u64)vol->nr_sectors << SECTOR_SHIFT,
		.block_size = vol->block_size,
		.uuid = vol->uuid,
		.uuid_set = true,
		.node_id = vol->node_id,
	};
	u32 bm_shift;
	int ret;

	ret = chorus_backing_open(backing, path, vol, extack);
	if (ret)
		return ret;
	ret = chorus_meta_read(backing, &cfg, meta, extack);
	if (ret)
		goto close_backing;
	bm_shift = le32_to_cpu(meta->super->bm_shift);
	if (bm_shift < SECTOR_SHIFT || bm_shift >= 64 ||
	    1ULL << (bm_shift - SECTOR_SHIFT) != vol->repl.region_sectors) {
		NL_SET_ERR_MSG(extack,
			       "the new disk was formatted with another region size than the volume's");
		ret = -EINVAL;
		goto release_meta;
	}
	return 0;

release_meta:
	chorus_meta_release(meta);
close_backing:
	chorus_backing_close(backing);
	return ret;
}

/* Forget that the disk failed: the volume has a new one. */
static void chorus_disk_health_reset(struct chorus_volume *vol)
{
	struct chorus_disk_health *disk = &vol->health;

	spin_lock_irq(&disk->lock);
	disk->error[0] = '\0';
	disk->failed_at = 0;
	WRITE_ONCE(disk->failed, false);
	spin_unlock_irq(&disk->lock);
	spin_lock_irq(&vol->held_lock);
	WRITE_ONCE(vol->disk_left_writeset, false);
	spin_unlock_irq(&vol->held_lock);
}

/*
 * Put @backing and @meta in place of the volume's failed disk, whose are
 * returned in them. Context: conf_lock held, every session closed.
 */
static void chorus_disk_swap(struct chorus_volume *vol,
			     struct chorus_backing *backing,
			     struct chorus_meta *meta)
{
	lockdep_assert_held(&vol->repl.conf_lock);
	mutex_lock(&vol->repl.meta_lock);
	swap(vol->backing, *backing);
	swap(vol->meta, *meta);
	mutex_unlock(&vol->repl.meta_lock);
	chorus_disk_health_reset(vol);
}

/*
 * Write what the new disk must say before any session uses it: opened (not
 * clean), the highest epoch this node accepted, a slot for every peer, an
 * activity log of its own. Context: conf_lock held, every session closed.
 */
static int chorus_disk_attach_write(struct chorus_volume *vol,
				    struct netlink_ext_ack *extack)
{
	struct chorus_repl *repl = &vol->repl;
	int i, ret;

	ret = chorus_meta_open(vol, extack);
	if (ret)
		return ret;
	ret = chorus_meta_set_epoch(vol, READ_ONCE(repl->epoch));
	for (i = 0; i < CHORUS_MAX_PEERS && !ret; i++)
		if (repl->peers[i])
			ret = chorus_peer_new_disk(repl->peers[i]);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot write the new disk's metadata");
		return ret;
	}
	chorus_al_detach(vol);
	ret = chorus_al_attach(vol);
	if (ret)
		NL_SET_ERR_MSG(extack, "cannot load the new disk's activity log");
	return ret;
}

/**
 * chorus_disk_attach() - replace a volume's failed disk while it runs
 * @vol: the volume; not the owner, its disk failed, with peers
 * @path: the new backing device, formatted for this volume
 * @extack: where to say what was wrong
 *
 * Refused, with nothing changed, while the node owns the volume, while the
 * disk works, or while the failed disk still holds I/O; and when @path
 * cannot be opened exclusively or is not formatted for this volume with its
 * geometry. Once the new disk is in place, a failure to write its
 * metadata fails that disk (chorus_disk_fail()) and is returned.
 *
 * Context: process context, chorus_volumes_lock and chorus_repl.conf_lock
 * held.
 * Return: 0 or a negative errno with a message in @extack.
 */
int chorus_disk_attach(struct chorus_volume *vol, const char *path,
		       struct netlink_ext_ack *extack)
{
	struct chorus_repl *repl = &vol->repl;
	bool redial[CHORUS_MAX_PEERS] = {};
	struct chorus_backing backing = {};
	struct chorus_meta meta = {};
	int i, ret;

	lockdep_assert_held(&chorus_volumes_lock);
	lockdep_assert_held(&repl->conf_lock);
	ret = chorus_disk_attach_check(vol, extack);
	if (ret)
		return ret;
	ret = chorus_disk_attach_open(vol, path, &backing, &meta, extack);
	if (ret)
		return ret;
	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		if (!repl->peers[i])
			continue;
		redial[i] = READ_ONCE(repl->peers[i]->want_connect);
		chorus_peer_disconnect(repl->peers[i]);
	}
	/* A session's last bios to the failed disk may have just ended. */
	ret = chorus_disk_attach_check(vol, extack);
	if (ret) {
		chorus_meta_release(&meta);
		chorus_backing_close(&backing);
		goto redial;
	}
	chorus_disk_stop(vol);
	chorus_disk_swap(vol, &backing, &meta);
	pr_info("%s: new disk %s attached in place of %s, which failed\n",
		vol->name, vol->backing.path, backing.path);
	chorus_meta_release(&meta);
	chorus_backing_close(&backing);
	ret = chorus_disk_attach_write(vol, extack);
	if (ret)
		chorus_disk_fail(vol, "new disk: metadata write failed (%d)", ret);
	else
		chorus_genl_notify_peer(vol, CHORUS_EVENT_VOLUME_STATE, NULL,
					"new disk attached: a full resync follows");
	/* Announces the new disk's failure, if it failed already. */
	chorus_disk_start(vol);
redial:
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (repl->peers[i] && redial[i])
			chorus_peer_connect(repl->peers[i]);
	return ret;
}
