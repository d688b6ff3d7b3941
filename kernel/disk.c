// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the health of a volume's local disk.
 *
 * Every bio chorus sends to a volume's backing device for data (a request's
 * clones in dev.c, a replica's applied writes in replica.c) is counted
 * here. The first one that fails, or a disk that completes nothing for the
 * disk timeout while bios are outstanding, fails the disk for good: it is
 * detached. A replica whose disk is detached applies, stores and compares
 * nothing more and answers every request of its owner with
 * CHORUS_WIRE_DISK_FAILED, so that the owner holds its part until the
 * control plane has recorded it out of date and taken it out of the write
 * set (DESIGN.md invariant 4); no error reaches the application while an
 * up-to-date copy remains. Its metadata is not written again: a new disk
 * starts from a full resync.
 *
 * A stall is "no completion at all for the timeout", not "one bio older
 * than the timeout": a slow disk that keeps completing is not failed. The
 * bios a stalled disk holds stay with it (their pages are the replica's
 * own); they complete whenever the device gives them back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/timekeeping.h>
#include <net/netlink.h>

#include "chorus.h"

static void chorus_disk_watch_workfn(struct work_struct *work);
static void chorus_disk_failed_workfn(struct work_struct *work);

/**
 * chorus_disk_init() - initialise the disk health of a new volume
 * @vol: the volume
 */
void chorus_disk_init(struct chorus_volume *vol)
{
	struct chorus_disk_health *disk = &vol->health;

	spin_lock_init(&disk->lock);
	atomic_set(&disk->inflight, 0);
	disk->timeout_ms = CHORUS_DISK_TIMEOUT_MS_DEFAULT;
	INIT_DELAYED_WORK(&disk->watch, chorus_disk_watch_workfn);
	INIT_WORK(&disk->failed_work, chorus_disk_failed_workfn);
}

/**
 * chorus_disk_start() - announce disk failures from now on
 * @vol: the volume, complete
 *
 * A failure recorded before (during the attach) is announced now.
 */
void chorus_disk_start(struct chorus_volume *vol)
{
	struct chorus_disk_health *disk = &vol->health;
	bool failed;

	spin_lock_irq(&disk->lock);
	disk->started = true;
	failed = disk->failed;
	spin_unlock_irq(&disk->lock);
	if (failed)
		schedule_work(&disk->failed_work);
}

/**
 * chorus_disk_stop() - stop watching and announcing the disk
 * @vol: the volume; no request is in flight
 *
 * A failure from here on (the clean mark of a detach, the metadata of a
 * new disk) is recorded but not announced until chorus_disk_start(): the
 * work that announces it reads the whole volume.
 */
void chorus_disk_stop(struct chorus_volume *vol)
{
	struct chorus_disk_health *disk = &vol->health;

	spin_lock_irq(&disk->lock);
	disk->started = false;
	spin_unlock_irq(&disk->lock);
	cancel_delayed_work_sync(&disk->watch);
	cancel_work_sync(&disk->failed_work);
}

/* How often a busy disk is checked: a quarter of the timeout. */
static unsigned long chorus_disk_period(unsigned int timeout_ms)
{
	return msecs_to_jiffies(max(timeout_ms / 4, 250U));
}

/**
 * chorus_disk_io_start() - count a bio about to be submitted to the disk
 * @vol: the volume
 *
 * Context: any.
 */
void chorus_disk_io_start(struct chorus_volume *vol)
{
	struct chorus_disk_health *disk = &vol->health;
	unsigned int timeout_ms;

	if (atomic_inc_return(&disk->inflight) != 1)
		return;
	WRITE_ONCE(disk->progress, jiffies);
	timeout_ms = READ_ONCE(disk->timeout_ms);
	if (timeout_ms && !chorus_disk_failed(vol))
		queue_delayed_work(chorus_wq, &disk->watch,
				   chorus_disk_period(timeout_ms));
}

/**
 * chorus_disk_io_end() - count a completed bio, and fail the disk on error
 * @vol: the volume
 * @bio: the bio, before it is put
 *
 * An operation the device does not support (a discard, write zeroes) is
 * no failure of the disk.
 *
 * Context: any, including hard irq (bio completion).
 */
void chorus_disk_io_end(struct chorus_volume *vol, struct bio *bio)
{
	struct chorus_disk_health *disk = &vol->health;
	blk_status_t status = bio->bi_status;

	WRITE_ONCE(disk->progress, jiffies);
	atomic_dec(&disk->inflight);
	if (status && status != BLK_STS_NOTSUPP)
		chorus_disk_fail(vol, "%s failed (%d)",
				 blk_op_str(bio_op(bio)),
				 blk_status_to_errno(status));
}

/**
 * chorus_disk_fail() - fail and detach the local disk, once
 * @vol: the volume
 * @fmt: why, printf-style
 *
 * The first call records why and when; the log line and the netlink event
 * follow from a work item, once the volume is complete (chorus_disk_start()).
 *
 * Context: any, including hard irq.
 */
void chorus_disk_fail(struct chorus_volume *vol, const char *fmt, ...)
{
	struct chorus_disk_health *disk = &vol->health;
	unsigned long flags;
	bool announce;
	va_list args;

	spin_lock_irqsave(&disk->lock, flags);
	if (disk->failed) {
		spin_unlock_irqrestore(&disk->lock, flags);
		return;
	}
	va_start(args, fmt);
	vscnprintf(disk->error, sizeof(disk->error), fmt, args);
	va_end(args);
	disk->failed_at = ktime_get_real_seconds();
	WRITE_ONCE(disk->failed, true);
	announce = disk->started;
	spin_unlock_irqrestore(&disk->lock, flags);
	if (announce)
		schedule_work(&disk->failed_work);
}

static void chorus_disk_watch_workfn(struct work_struct *work)
{
	struct chorus_disk_health *disk =
		container_of(to_delayed_work(work), struct chorus_disk_health, watch);
	struct chorus_volume *vol = container_of(disk, struct chorus_volume, health);
	unsigned int timeout_ms = READ_ONCE(disk->timeout_ms);

	if (!timeout_ms || chorus_disk_failed(vol) ||
	    !atomic_read(&disk->inflight))
		return;
	if (time_after(jiffies, READ_ONCE(disk->progress) +
		       msecs_to_jiffies(timeout_ms))) {
		chorus_disk_fail(vol, "completed nothing for %u ms with %d I/Os outstanding",
				 timeout_ms, atomic_read(&disk->inflight));
		return;
	}
	queue_delayed_work(chorus_wq, &disk->watch,
			   chorus_disk_period(timeout_ms));
}

static void chorus_disk_failed_workfn(struct work_struct *work)
{
	struct chorus_disk_health *disk =
		container_of(work, struct chorus_disk_health, failed_work);
	struct chorus_volume *vol = container_of(disk, struct chorus_volume, health);
	char why[CHORUS_REASON_MAX + 32];

	spin_lock_irq(&disk->lock);
	snprintf(why, sizeof(why), "disk failed: %s", disk->error);
	spin_unlock_irq(&disk->lock);
	pr_err("%s: disk %s %s; detached, the volume goes on through its peers\n",
	       vol->name, vol->backing.path, why + strlen("disk "));
	chorus_genl_notify_peer(vol, CHORUS_EVENT_VOLUME_STATE, NULL, why);
	if (READ_ONCE(vol->repl.role) != CHORUS_ROLE_OWNER)
		return;
	if (!READ_ONCE(vol->repl.auto_degrade)) {
		pr_warn("%s: writes whose local part failed are held until the disk leaves the write set\n",
			vol->name);
		return;
	}
	pr_warn("%s: auto_degrade takes the failed local disk out of the write set\n",
		vol->name);
	if (chorus_disk_leave_writeset(vol, NULL))
		pr_warn("%s: no other up-to-date member: the writes stay held\n",
			vol->name);
}

/**
 * chorus_disk_fill() - put the disk's failure, if any, in a volume message
 * @skb: the message
 * @vol: the volume
 *
 * Return: 0 or -EMSGSIZE.
 */
int chorus_disk_fill(struct sk_buff *skb, struct chorus_volume *vol)
{
	struct chorus_disk_health *disk = &vol->health;
	char error[CHORUS_REASON_MAX];
	unsigned long flags;
	time64_t at;

	if (nla_put_u32(skb, CHORUS_A_DISK_TIMEOUT_MS,
			READ_ONCE(disk->timeout_ms)) ||
	    nla_put_u8(skb, CHORUS_A_DISK_IN_WRITESET, !vol->diskless &&
		       !READ_ONCE(vol->disk_left_writeset)) ||
	    nla_put_u32(skb, CHORUS_A_DISK_HELD, READ_ONCE(vol->nr_disk_held)))
		return -EMSGSIZE;
	if (!chorus_disk_failed(vol))
		return 0;
	spin_lock_irqsave(&disk->lock, flags);
	strscpy(error, disk->error, sizeof(error));
	at = disk->failed_at;
	spin_unlock_irqrestore(&disk->lock, flags);
	if (nla_put_string(skb, CHORUS_A_DISK_ERROR, error) ||
	    nla_put_u64_64bit(skb, CHORUS_A_DISK_FAILED_AT, at, CHORUS_A_PAD))
		return -EMSGSIZE;
	return 0;
}
