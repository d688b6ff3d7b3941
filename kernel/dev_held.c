// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: what a volume's block device holds.
 *
 * Past the lease deadline an owner neither starts nor completes a request
 * (lease.c): it holds them until a new deadline lets them go, or until it
 * gives ownership up, when they fail, or hands it over (role.c), when they
 * start again, forwarded. A write whose local part failed waits until the
 * failure is recorded (invariant 4). dev.c asks here at each start and at
 * each completion.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>

#include "chorus.h"

/*
 * A request started as the owner before this node handed its ownership
 * over (chorus_repl_hand_over()): not the owner's to complete any more.
 * Context: any; under held_lock the answer is final.
 */
static bool chorus_dev_superseded(struct chorus_volume *vol,
				  struct chorus_rq *rqd)
{
	if (!rqd->owner_gen)
		return false;
	/* Pairs with chorus_dev_hand_over(): a new generation, a new role. */
	return rqd->owner_gen != smp_load_acquire(&vol->repl.handover_gen);
}

/**
 * chorus_dev_hold() - hold a request past the lease deadline, if it must be
 * @vol: the volume
 * @rq: a request about to start (@list is &chorus_volume.held_start) or
 *	done, its range released (&chorus_volume.held_done)
 * @list: where it waits
 *
 * Past the lease deadline an owner neither starts nor completes a request
 * (lease.c): it waits on @list until chorus_dev_release_held(). The deadline
 * is read again under held_lock, which chorus_dev_release_held() takes after
 * a new deadline is set: a request held here is seen by that release, one
 * that comes later sees the new deadline. A hand-over, which needs a passed
 * deadline, changes the role under held_lock too: a request of the old
 * owner is held before it (and taken by it) or superseded after it.
 *
 * Context: any, including hard irq.
 * Return: %CHORUS_HOLD_TAKEN if it was held, or failed while the node gives
 * up ownership (held_fail); %CHORUS_HOLD_RESTART if it was started as the
 * owner before a hand-over (chorus_dev_restart() is the caller's);
 * %CHORUS_HOLD_NONE otherwise.
 */
enum chorus_hold chorus_dev_hold(struct chorus_volume *vol, struct request *rq,
				 struct list_head *list)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	enum chorus_hold ret = CHORUS_HOLD_TAKEN;
	unsigned long flags;
	bool fail;

	if (likely(!chorus_lease_expired())) {
		/* The lease before the generation: a hand-over comes after. */
		smp_rmb();
		return chorus_dev_superseded(vol, rqd) ? CHORUS_HOLD_RESTART :
							 CHORUS_HOLD_NONE;
	}
	if (!rqd->owner_gen && READ_ONCE(vol->repl.role) != CHORUS_ROLE_OWNER)
		return CHORUS_HOLD_NONE;
	spin_lock_irqsave(&vol->held_lock, flags);
	if (chorus_dev_superseded(vol, rqd)) {
		ret = CHORUS_HOLD_RESTART;
		goto unlock;
	}
	if (!chorus_lease_expired() || vol->repl.role != CHORUS_ROLE_OWNER) {
		ret = CHORUS_HOLD_NONE;
		goto unlock;
	}
	fail = vol->held_fail;
	if (!fail) {
		list_add_tail(&rqd->wait_entry, list);
		WRITE_ONCE(vol->nr_held, vol->nr_held + 1);
	}
	spin_unlock_irqrestore(&vol->held_lock, flags);
	if (fail)
		chorus_dev_end(vol, rq, BLK_STS_IOERR);
	return CHORUS_HOLD_TAKEN;
unlock:
	spin_unlock_irqrestore(&vol->held_lock, flags);
	return ret;
}

/**
 * chorus_dev_hold_disk() - hold a write whose local part failed
 * @vol: the volume
 * @rq: a done request, its range released
 *
 * Invariant 4 for the owner's own disk: a write or flush whose local part
 * failed stands on the members' acks only once the failure is recorded
 * (the disk left the write set, chorus_dev_disk_leave()). Until then it
 * waits on held_disk, done but not completed; its range and its activity
 * log extent are released already, as for held_done.
 *
 * Context: any, including hard irq.
 * Return: %CHORUS_HOLD_TAKEN if the request was held, or failed while the
 * node gives up ownership (held_fail); else %CHORUS_HOLD_NONE, also for a
 * superseded request: chorus_dev_hold() says so.
 */
enum chorus_hold chorus_dev_hold_disk(struct chorus_volume *vol,
				      struct request *rq)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	unsigned long flags;
	bool fail;

	if (likely(!READ_ONCE(rqd->local_failed)) ||
	    READ_ONCE(vol->disk_left_writeset))
		return CHORUS_HOLD_NONE;
	spin_lock_irqsave(&vol->held_lock, flags);
	if (vol->disk_left_writeset || chorus_dev_superseded(vol, rqd)) {
		spin_unlock_irqrestore(&vol->held_lock, flags);
		return CHORUS_HOLD_NONE;
	}
	fail = vol->held_fail;
	if (!fail) {
		list_add_tail(&rqd->wait_entry, &vol->held_disk);
		WRITE_ONCE(vol->nr_disk_held, vol->nr_disk_held + 1);
	}
	spin_unlock_irqrestore(&vol->held_lock, flags);
	if (fail)
		chorus_dev_end(vol, rq, BLK_STS_IOERR);
	return CHORUS_HOLD_TAKEN;
}

/**
 * chorus_dev_release_held() - let go of what the lease deadline holds
 * @vol: the volume
 * @fail: false: a later deadline was set, or the lease disarmed: held
 *	requests start or complete as they would have. true: the node gives up
 *	ownership: they fail with an I/O error, and so does every request the
 *	lease would hold from now on, until the role changes
 *	(chorus_dev_clear_held_fail())
 *
 * Context: process context.
 */
void chorus_dev_release_held(struct chorus_volume *vol, bool fail)
{
	struct chorus_rq *rqd, *next;
	LIST_HEAD(start);
	LIST_HEAD(done);

	spin_lock_irq(&vol->held_lock);
	list_splice_init(&vol->held_start, &start);
	list_splice_init(&vol->held_done, &done);
	WRITE_ONCE(vol->nr_held, 0);
	/* No application was told these stood: they fail with ownership. */
	if (fail) {
		list_splice_tail_init(&vol->held_disk, &done);
		WRITE_ONCE(vol->nr_disk_held, 0);
	}
	vol->held_fail = fail;
	spin_unlock_irq(&vol->held_lock);

	list_for_each_entry_safe(rqd, next, &done, wait_entry) {
		list_del_init(&rqd->wait_entry);
		chorus_dev_end(vol, blk_mq_rq_from_pdu(rqd),
			       fail ? BLK_STS_IOERR : READ_ONCE(rqd->status));
	}
	list_for_each_entry_safe(rqd, next, &start, wait_entry) {
		list_del_init(&rqd->wait_entry);
		if (fail)
			chorus_dev_end(vol, blk_mq_rq_from_pdu(rqd),
				       BLK_STS_IOERR);
		else
			chorus_dev_queue_work(blk_mq_rq_from_pdu(rqd));
	}
}

/**
 * chorus_dev_disk_leave() - the failed local disk left the write set
 * @vol: the volume; its disk failed and its failure is recorded
 *
 * Writes and flushes held because their local part failed complete on the
 * members' acks (still held by the lease if its deadline passed); later
 * ones are not held for the disk.
 *
 * Context: process context.
 */
void chorus_dev_disk_leave(struct chorus_volume *vol)
{
	struct chorus_rq *rqd, *next;
	struct request *rq;
	LIST_HEAD(done);

	spin_lock_irq(&vol->held_lock);
	WRITE_ONCE(vol->disk_left_writeset, true);
	list_splice_init(&vol->held_disk, &done);
	WRITE_ONCE(vol->nr_disk_held, 0);
	spin_unlock_irq(&vol->held_lock);

	list_for_each_entry_safe(rqd, next, &done, wait_entry) {
		list_del_init(&rqd->wait_entry);
		rq = blk_mq_rq_from_pdu(rqd);
		chorus_dev_done(vol, rq, READ_ONCE(rqd->status));
	}
}

/**
 * chorus_dev_hand_over() - an owner past its deadline becomes a replica
 * @vol: the volume; the caller, chorus_repl_hand_over(), has ended every
 *	session
 *
 * Without a freeze: what the lease holds would never drain. The role and
 * chorus_repl.handover_gen change under held_lock, so that each request
 * started as the owner is either on a held list here, taken and started
 * again, or finds itself superseded when it is done (chorus_dev_hold()).
 * Held requests not started yet start now, forwarded; done ones start
 * again (chorus_dev_restart()).
 *
 * Context: process context, chorus_repl.conf_lock held.
 */
void chorus_dev_hand_over(struct chorus_volume *vol)
{
	struct chorus_repl *repl = &vol->repl;
	u32 gen = repl->handover_gen + 1 ?: 1;
	struct chorus_rq *rqd, *next;
	LIST_HEAD(start);
	LIST_HEAD(done);

	lockdep_assert_held(&repl->conf_lock);
	spin_lock_irq(&vol->held_lock);
	/* Pairs with chorus_repl_dispatch(), as at every role change. */
	smp_store_release(&repl->role, CHORUS_ROLE_REPLICA);
	/* Pairs with chorus_dev_start() and chorus_dev_superseded(). */
	smp_store_release(&repl->handover_gen, gen);
	list_splice_init(&vol->held_start, &start);
	list_splice_init(&vol->held_done, &done);
	list_splice_tail_init(&vol->held_disk, &done);
	WRITE_ONCE(vol->nr_held, 0);
	WRITE_ONCE(vol->nr_disk_held, 0);
	spin_unlock_irq(&vol->held_lock);

	list_for_each_entry_safe(rqd, next, &done, wait_entry) {
		list_del_init(&rqd->wait_entry);
		chorus_dev_restart(vol, blk_mq_rq_from_pdu(rqd));
	}
	list_for_each_entry_safe(rqd, next, &start, wait_entry) {
		list_del_init(&rqd->wait_entry);
		chorus_dev_queue_work(blk_mq_rq_from_pdu(rqd));
	}
}

/**
 * chorus_dev_clear_held_fail() - hold again what the lease holds
 * @vol: the volume, whose role just changed
 *
 * Context: any.
 */
void chorus_dev_clear_held_fail(struct chorus_volume *vol)
{
	spin_lock_irq(&vol->held_lock);
	vol->held_fail = false;
	spin_unlock_irq(&vol->held_lock);
}

/**
 * chorus_dev_nr_held() - how many requests the lease deadline holds now
 * @vol: the volume
 *
 * Context: any.
 * Return: the number, possibly stale by the time it is used.
 */
unsigned int chorus_dev_nr_held(struct chorus_volume *vol)
{
	return READ_ONCE(vol->nr_held);
}
