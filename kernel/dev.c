// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the blk-mq block device of a volume.
 *
 * Every request is passed to the backing device as clones of its bios;
 * the request completes when the last clone does. A flush request becomes
 * an empty REQ_PREFLUSH bio. The device declares a volatile write cache and
 * FUA so that both reach the backing device (and later every replica) as
 * they were asked for.
 *
 * blk-mq calls ->queue_rq() in the submitter's context. When the submitter
 * holds a plug, ->queue_rq() is (nearly always) flushing it: a bio
 * submitted there would be added to that very plug, and a sleep would
 * flush it again (the kernel panics of Documentation/architecture.md, "I/O
 * contexts"). Such requests are handed to a worker of their hardware queue,
 * as loop does with all of them; the others start at once. Both run with
 * memalloc_noio_save(), so nothing they allocate recurses into writeback.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <net/netlink.h>

#include "chorus.h"

static int chorus_major;
static struct workqueue_struct *chorus_io_wq;

/**
 * struct chorus_hctx - the worker of one hardware queue
 * @vol: the volume
 * @lock: protects @list; taken from ->queue_rq(), whose calling context
 *	blk-mq does not promise (so with irqs saved), and from the worker
 * @list: started requests not yet looked at, oldest first, linked by
 *	chorus_rq.wait_entry
 * @work: starts the requests of @list, on chorus_io_wq
 */
struct chorus_hctx {
	struct chorus_volume *vol;
	spinlock_t lock; /* protects list */
	struct list_head list;
	struct work_struct work;
};

static void chorus_account(struct chorus_volume *vol, struct request *rq,
			   blk_status_t status)
{
	struct chorus_stats __percpu *s = vol->stats;
	unsigned int bytes = blk_rq_bytes(rq);

	if (status != BLK_STS_OK) {
		this_cpu_inc(s->errors);
		return;
	}
	switch (req_op(rq)) {
	case REQ_OP_READ:
		this_cpu_inc(s->reads);
		this_cpu_add(s->read_bytes, bytes);
		break;
	case REQ_OP_WRITE:
		this_cpu_inc(s->writes);
		this_cpu_add(s->write_bytes, bytes);
		if (rq->cmd_flags & REQ_FUA)
			this_cpu_inc(s->fua_writes);
		break;
	case REQ_OP_FLUSH:
		this_cpu_inc(s->flushes);
		break;
	case REQ_OP_DISCARD:
		this_cpu_inc(s->discards);
		break;
	case REQ_OP_WRITE_ZEROES:
		this_cpu_inc(s->write_zeroes);
		break;
	default:
		break;
	}
}

/**
 * chorus_dev_end() - complete a request for good: count it, hand it to blk-mq
 * @vol: the volume
 * @rq: the request
 * @status: its status
 *
 * Context: any, including hard irq.
 */
void chorus_dev_end(struct chorus_volume *vol, struct request *rq,
		    blk_status_t status)
{
	chorus_account(vol, rq, status);
	chorus_lat_account(vol, rq, status);
	blk_mq_end_request(rq, status);
}

/* The request's state as chorus_queue_rq() starts it; start_ns is kept. */
static void chorus_rq_reset(struct chorus_rq *rqd)
{
	rqd->status = BLK_STS_OK;
	atomic_set(&rqd->copies, 0);
	rqd->replicated = false;
	rqd->local_failed = false;
	rqd->local_read_failed = false;
	rqd->reread = false;
	rqd->fwd_replica = false;
	rqd->range.in_tree = false;
	rqd->fwd_id = 0;
	rqd->owner_gen = 0;
	atomic_set(&rqd->pending, 1);
}

/*
 * A request this node started as the owner before it handed its ownership
 * over (chorus_repl_hand_over()), done now or taken off a held list: no
 * application was told it stood, and it is not the old owner's to
 * complete. It starts again, from the worker: forwarded to the new owner.
 * Its range has left the tree and its local clones have ended. What this
 * node served for an access point ends offline instead: the access point
 * sends it to the new owner itself, under its own deadline.
 *
 * Context: any, including hard irq.
 */
void chorus_dev_restart(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	if (chorus_fwd_served(rq) || READ_ONCE(vol->dying)) {
		chorus_dev_end(vol, rq, BLK_STS_OFFLINE);
		return;
	}
	chorus_rq_reset(rqd);
	memset(rqd->seq, 0, sizeof(rqd->seq));
	memset(rqd->sent_gen, 0, sizeof(rqd->sent_gen));
	chorus_dev_queue_work(rq);
}

/*
 * Whether a read this node's disk failed may be read from a replica: the
 * node still owns the volume and has peers (chorus_dev_read() picks).
 */
static bool chorus_dev_may_reread(struct chorus_volume *vol)
{
	return READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER &&
	       vol->repl.nr_peers;
}

/**
 * chorus_dev_done() - complete a done request, unless the lease holds it or
 *	a hand-over superseded it
 * @vol: the volume
 * @rq: the request, its range released
 * @status: what it completes with
 *
 * Context: any, including hard irq.
 */
void chorus_dev_done(struct chorus_volume *vol, struct request *rq,
		     blk_status_t status)
{
	switch (chorus_dev_hold(vol, rq, &vol->held_done)) {
	case CHORUS_HOLD_NONE:
		chorus_dev_end(vol, rq, status);
		break;
	case CHORUS_HOLD_RESTART:
		chorus_dev_restart(vol, rq);
		break;
	case CHORUS_HOLD_TAKEN:
		break;
	}
}

/**
 * chorus_rq_put() - drop a reference on a request; the last completes it
 * @rq: the request
 *
 * Context: any, including hard irq (bio completion).
 */
void chorus_rq_put(struct request *rq)
{
	struct chorus_volume *vol = rq->q->queuedata;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	blk_status_t status;

	/* atomic_dec_and_test() orders the clones' status stores before. */
	if (!atomic_dec_and_test(&rqd->pending))
		return;

	/*
	 * A read the disk failed (which detached it, disk.c) starts once
	 * more, from the worker: chorus_dev_read() sends it to a replica.
	 */
	if (unlikely(READ_ONCE(rqd->local_read_failed)) && !rqd->reread &&
	    chorus_dev_may_reread(vol)) {
		rqd->reread = true;
		rqd->status = BLK_STS_OK;
		atomic_set(&rqd->pending, 1);
		chorus_dev_queue_work(rq);
		return;
	}
	status = READ_ONCE(rqd->status);
	/* A write whose local part failed stands if an up-to-date member has it. */
	if (READ_ONCE(rqd->local_failed) && !atomic_read(&rqd->copies) &&
	    status == BLK_STS_OK)
		status = BLK_STS_IOERR;
	/* What a release of held_done or held_disk completes it with. */
	WRITE_ONCE(rqd->status, status);
	chorus_repl_rq_done(vol, rq);
	if (status == BLK_STS_OK && chorus_dev_hold_disk(vol, rq))
		return;
	chorus_dev_done(vol, rq, status);
}

static void chorus_clone_endio(struct bio *clone)
{
	struct request *rq = clone->bi_private;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	chorus_disk_io_end(rq->q->queuedata, clone);
	/*
	 * Any one error fails the request; which one does not matter. An
	 * owner's replicated write that its disk failed (disk.c detaches
	 * it) stands if an up-to-date member of the write set has it
	 * (chorus_rq_put()).
	 */
	if (clone->bi_status && rqd->replicated &&
	    clone->bi_status != BLK_STS_NOTSUPP)
		WRITE_ONCE(rqd->local_failed, true);
	else if (clone->bi_status)
		WRITE_ONCE(rqd->status, clone->bi_status);
	if (clone->bi_status && req_op(rq) == REQ_OP_READ &&
	    clone->bi_status != BLK_STS_NOTSUPP)
		WRITE_ONCE(rqd->local_read_failed, true);
	bio_put(clone);
	chorus_rq_put(rq);
}

static void chorus_submit_clone(struct request *rq, struct bio *clone)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	atomic_inc(&rqd->pending);
	clone->bi_end_io = chorus_clone_endio;
	clone->bi_private = rq;
	chorus_disk_io_start(rq->q->queuedata);
	submit_bio_noacct(clone);
}

/**
 * chorus_dev_submit_local() - send a started request to the backing device
 * @vol: the volume
 * @rq: the request; each clone takes a reference on it
 *
 * A flush becomes an empty PREFLUSH bio; other requests are cloned bio by
 * bio, keeping FUA.
 *
 * Context: process context; may sleep (clone allocation).
 */
void chorus_dev_submit_local(struct chorus_volume *vol, struct request *rq)
{
	struct block_device *bdev = vol->backing.bdev;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	blk_opf_t fua = rq->cmd_flags & REQ_FUA;
	struct bio *bio, *clone;

	if (req_op(rq) == REQ_OP_FLUSH) {
		clone = bio_alloc_bioset(bdev, 0,
					 REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC,
					 GFP_NOIO, &vol->bio_set);
		chorus_submit_clone(rq, clone);
		return;
	}

	__rq_for_each_bio(bio, rq) {
		clone = bio_alloc_clone(bdev, bio, GFP_NOIO, &vol->bio_set);
		if (unlikely(!clone)) {
			WRITE_ONCE(rqd->status, BLK_STS_RESOURCE);
			break;
		}
		/*
		 * The flush machinery has already run any pre-flush as a
		 * request of its own; the request, not the bio, says
		 * whether this part must be written through.
		 */
		clone->bi_opf &= ~(REQ_PREFLUSH | REQ_FUA);
		clone->bi_opf |= fua;
		chorus_submit_clone(rq, clone);
	}
}

/**
 * chorus_dev_read() - start a read here, or on a replica
 * @vol: the volume
 * @rq: a started read holding the submitter's reference
 *
 * An owner whose disk failed (or failed this very read once) reads from an
 * up-to-date replica of its write set (forward.c); any other node reads
 * its own disk.
 *
 * Context: process context, GFP_NOIO scope; may sleep.
 */
void chorus_dev_read(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	if ((rqd->reread || chorus_disk_failed(vol)) &&
	    chorus_dev_may_reread(vol)) {
		chorus_fwd_read_replica(vol, rq);
		return;
	}
	chorus_dev_submit_local(vol, rq);
	chorus_rq_put(rq);
}

/*
 * Start one request, from queue_rq or the worker: reads, and everything when
 * there is nobody to replicate to, go to the backing device; writes and
 * flushes of an owner with peers go through replication; on a node that is
 * not the owner and has peers, everything goes to the owner. The peers array
 * only changes with the queue frozen, and this request holds the queue, so
 * it is read without a lock.
 */
static void chorus_dev_start(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	bool owner;
	u32 gen;

	rqd->owner_gen = 0;	/* a read started again keeps none */
	if (chorus_dev_hold(vol, rq, &vol->held_start))
		return;
	/* The generation before the role: see chorus_dev_hand_over(). */
	gen = smp_load_acquire(&vol->repl.handover_gen);
	owner = READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER;
	rqd->owner_gen = owner ? gen : 0;
	if (!owner && vol->repl.nr_peers) {
		/* Served as the owner, held, then handed over: never forwarded on. */
		if (unlikely(chorus_fwd_served(rq)))
			chorus_dev_end(vol, rq, BLK_STS_OFFLINE);
		else
			chorus_fwd_start(vol, rq);
		return;
	}
	if (req_op(rq) != REQ_OP_READ && vol->repl.nr_peers && owner) {
		chorus_repl_queue_rq(vol, rq);
		return;
	}
	if (req_op(rq) == REQ_OP_READ) {
		chorus_dev_read(vol, rq);
		return;
	}
	chorus_dev_submit_local(vol, rq);
	chorus_rq_put(rq);
}

/*
 * Start the requests queued by chorus_dev_queue_work() (started again from a
 * completion) in the order they came. Our own plug batches
 * the clones for the backing device; it is flushed when we sleep (an
 * activity log write, a full socket) and at the end.
 */
static void chorus_hctx_workfn(struct work_struct *work)
{
	struct chorus_hctx *ch = container_of(work, struct chorus_hctx, work);
	unsigned int noio = memalloc_noio_save();
	struct chorus_rq *rqd, *next;
	struct blk_plug plug;
	LIST_HEAD(list);

	blk_start_plug(&plug);
	for (;;) {
		spin_lock_irq(&ch->lock);
		list_splice_init(&ch->list, &list);
		spin_unlock_irq(&ch->lock);
		if (list_empty(&list))
			break;
		list_for_each_entry_safe(rqd, next, &list, wait_entry) {
			list_del_init(&rqd->wait_entry);
			chorus_dev_start(ch->vol, blk_mq_rq_from_pdu(rqd));
		}
	}
	blk_finish_plug(&plug);
	memalloc_noio_restore(noio);
}

/**
 * chorus_dev_queue_work() - hand a started request to its hardware queue's worker
 * @rq: the request
 *
 * Context: any, including hard irq.
 */
void chorus_dev_queue_work(struct request *rq)
{
	struct chorus_hctx *ch = rq->mq_hctx->driver_data;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	unsigned long flags;

	spin_lock_irqsave(&ch->lock, flags);
	list_add_tail(&rqd->wait_entry, &ch->list);
	spin_unlock_irqrestore(&ch->lock, flags);
	queue_work(chorus_io_wq, &ch->work);
}

/*
 * Called in the submitter's context, where sleeping is allowed
 * (BLK_MQ_F_BLOCKING); the request starts here. With a plug, this is
 * (nearly always) the flush of that very plug, blk_mq_flush_plug_list()
 * walking plug->mq_list: a bio submitted here would be added to the list
 * being walked, and a sleep would flush it again from schedule(). So the
 * plug is hidden while the request starts: our bios go to the backing
 * queue (or to current->bio_list), a sleep flushes nothing, and the walk
 * goes on with the plug as it was. A bio submitted inside someone's
 * submit_bio() waits on current->bio_list until that returns, so what
 * could wait for such a bio (an activity log transaction, a metadata
 * write) is handed to a work item on the way.
 */
static blk_status_t chorus_queue_rq(struct blk_mq_hw_ctx *hctx,
				    const struct blk_mq_queue_data *bd)
{
	struct chorus_volume *vol = hctx->queue->queuedata;
	struct request *rq = bd->rq;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	struct blk_plug *plug;
	unsigned int noio;

	switch (req_op(rq)) {
	case REQ_OP_READ:
	case REQ_OP_FLUSH:
	case REQ_OP_WRITE:
	case REQ_OP_DISCARD:
	case REQ_OP_WRITE_ZEROES:
		break;
	default:
		return BLK_STS_NOTSUPP;
	}
	if (READ_ONCE(vol->repl.role) != CHORUS_ROLE_OWNER) {
		/*
		 * What this node serves for another access point is never
		 * forwarded on: it stopped being the owner, and the access
		 * point sends it to the new one (forward.c).
		 */
		if (chorus_fwd_served(rq))
			return BLK_STS_OFFLINE;
		/*
		 * No peer, no owner to forward to: this disk, read only; a
		 * diskless access point, nothing at all.
		 */
		if (!vol->repl.nr_peers &&
		    (op_is_write(req_op(rq)) || vol->diskless))
			return BLK_STS_IOERR;
	}

	blk_mq_start_request(rq);
	rqd->start_ns = ktime_get_ns();
	chorus_rq_reset(rqd);

	plug = current->plug;
	current->plug = NULL;
	noio = memalloc_noio_save();
	chorus_dev_start(vol, rq);
	memalloc_noio_restore(noio);
	current->plug = plug;
	return BLK_STS_OK;
}

/*
 * A flush of the volume completes inside the backing device's flush_end_io(),
 * under the backing queue's mq_flush_lock, and takes the volume's own: two
 * locks of one lockdep class unless the volume's has a class of its own
 * (as nvme-loop does).
 */
static struct lock_class_key chorus_hctx_fq_lock_key;

static int chorus_init_hctx(struct blk_mq_hw_ctx *hctx, void *data,
			    unsigned int index)
{
	struct chorus_hctx *ch;

	ch = kzalloc_node(sizeof(*ch), GFP_KERNEL, hctx->numa_node);
	if (!ch)
		return -ENOMEM;
	ch->vol = data;
	spin_lock_init(&ch->lock);
	INIT_LIST_HEAD(&ch->list);
	INIT_WORK(&ch->work, chorus_hctx_workfn);
	blk_mq_hctx_set_fq_lock_class(hctx, &chorus_hctx_fq_lock_key);
	hctx->driver_data = ch;
	return 0;
}

/* No request is in flight; the worker may still be on its way out. */
static void chorus_exit_hctx(struct blk_mq_hw_ctx *hctx, unsigned int index)
{
	struct chorus_hctx *ch = hctx->driver_data;

	flush_work(&ch->work);
	WARN_ON_ONCE(!list_empty(&ch->list));
	kfree(ch);
	hctx->driver_data = NULL;
}

static enum blk_eh_timer_return chorus_timeout(struct request *rq)
{
	return chorus_repl_timeout(rq);
}

/**
 * chorus_dev_freeze() - wait until no request of the volume is in flight
 * @vol: the volume
 * @extack: where to say why not
 *
 * New requests wait until chorus_dev_unfreeze(). Requests held for an
 * unreachable peer never drain, so waiting is bounded.
 *
 * Context: process context.
 * Return: 0 with the queue frozen, or -EBUSY with it running.
 */
int chorus_dev_freeze(struct chorus_volume *vol, struct netlink_ext_ack *extack)
{
	chorus_dev_freeze_start(vol);
	if (!chorus_dev_freeze_wait(vol, 10 * HZ)) {
		chorus_dev_freeze_refused(vol, extack);
		return -EBUSY;
	}
	return 0;
}

/**
 * chorus_dev_freeze_start() - stop new requests of the volume from starting
 * @vol: the volume
 *
 * With chorus_dev_freeze_wait(), for a caller that acts while it waits;
 * end with chorus_dev_unfreeze() or chorus_dev_freeze_refused().
 */
void chorus_dev_freeze_start(struct chorus_volume *vol)
{
	blk_freeze_queue_start(vol->disk->queue);
}

/**
 * chorus_dev_freeze_wait() - wait for the requests in flight to end
 * @vol: the volume, chorus_dev_freeze_start() called
 * @timeout: at most this long, in jiffies
 *
 * Context: process context.
 * Return: true once none is in flight (the queue is frozen).
 */
bool chorus_dev_freeze_wait(struct chorus_volume *vol, unsigned long timeout)
{
	return blk_mq_freeze_queue_wait_timeout(vol->disk->queue, timeout) > 0;
}

/**
 * chorus_dev_freeze_refused() - give up a freeze that did not drain
 * @vol: the volume, chorus_dev_freeze_start() called
 * @extack: where to say why
 */
void chorus_dev_freeze_refused(struct chorus_volume *vol, struct netlink_ext_ack *extack)
{
	blk_mq_unfreeze_queue(vol->disk->queue);
	NL_SET_ERR_MSG(extack,
		       "I/O is held for an unreachable peer: take it out of the write set first");
}

void chorus_dev_unfreeze(struct chorus_volume *vol)
{
	blk_mq_unfreeze_queue(vol->disk->queue);
}

/**
 * chorus_dev_set_timeout() - apply the request timeout tunable
 * @vol: the volume
 */
void chorus_dev_set_timeout(struct chorus_volume *vol)
{
	blk_queue_rq_timeout(vol->disk->queue,
			     msecs_to_jiffies(READ_ONCE(vol->repl.request_timeout_ms)));
}

static const struct blk_mq_ops chorus_mq_ops = {
	.queue_rq	= chorus_queue_rq,
	.timeout	= chorus_timeout,
	.init_hctx	= chorus_init_hctx,
	.exit_hctx	= chorus_exit_hctx,
};

static int chorus_open(struct block_device *bdev, fmode_t mode)
{
	struct chorus_volume *vol = bdev->bd_disk->private_data;
	int ret = 0;

	mutex_lock(&vol->lock);
	if (vol->dying)
		ret = -ENXIO;
	/* A replica's device is read-only: say so at open, as DRBD does. */
	else if ((mode & FMODE_WRITE) && bdev_read_only(bdev))
		ret = -EROFS;
	else
		vol->open_count++;
	mutex_unlock(&vol->lock);
	return ret;
}

static void chorus_release(struct gendisk *disk, fmode_t mode)
{
	struct chorus_volume *vol = disk->private_data;

	mutex_lock(&vol->lock);
	vol->open_count--;
	mutex_unlock(&vol->lock);
}

static const struct block_device_operations chorus_fops = {
	.owner		= THIS_MODULE,
	.open		= chorus_open,
	.release	= chorus_release,
};

/*
 * A diskless access point has no device to inherit from: plain limits,
 * the volume's block size, and neither discard nor write zeroes, which the
 * owner's disk may not offer (the kernel writes zeroes itself instead).
 */
static void chorus_dev_set_diskless_limits(struct chorus_volume *vol,
					   struct request_queue *q)
{
	blk_queue_logical_block_size(q, vol->block_size);
	blk_queue_physical_block_size(q, vol->block_size);
	blk_queue_io_min(q, vol->block_size);
	blk_queue_max_hw_sectors(q, CHORUS_WIRE_MAX_PAYLOAD >> SECTOR_SHIFT);
	blk_queue_max_discard_sectors(q, 0);
	blk_queue_max_write_zeroes_sectors(q, 0);
	blk_queue_write_cache(q, true, true);
	blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);
}

/*
 * Inherit what the backing device can do (transfer sizes, alignment,
 * discard, write zeroes), then impose the volume's block size.
 *
 * Stable pages on every volume, as DRBD has them (rbd and nvme only with a
 * data crc): a page under writeback that its owner could change would reach
 * the local disk and each replica with different bytes (and fail its
 * payload crc). Set before the disk is added, which copies the flag to the
 * block device and, at mount, to the superblock (SB_I_STABLE_WRITES).
 */
static void chorus_dev_set_limits(struct chorus_volume *vol,
				  struct request_queue *q)
{
	struct block_device *bdev = vol->backing.bdev;

	blk_queue_flag_set(QUEUE_FLAG_STABLE_WRITES, q);
	if (vol->diskless) {
		chorus_dev_set_diskless_limits(vol, q);
		return;
	}
	blk_set_stacking_limits(&q->limits);
	blk_stack_limits(&q->limits, &bdev_get_queue(bdev)->limits, 0);
	blk_queue_logical_block_size(q, vol->block_size);
	blk_queue_physical_block_size(q, max(vol->block_size,
					     bdev_physical_block_size(bdev)));
	blk_queue_io_min(q, max(vol->block_size, bdev_io_min(bdev)));
	/* A replicated request must fit one wire message. */
	blk_queue_max_hw_sectors(q, min(queue_max_hw_sectors(q),
					CHORUS_WIRE_MAX_PAYLOAD >> SECTOR_SHIFT));
	blk_queue_max_discard_sectors(q, min(q->limits.max_discard_sectors,
					     CHORUS_WIRE_MAX_PAYLOAD >> SECTOR_SHIFT));
	blk_queue_max_write_zeroes_sectors(q, min(q->limits.max_write_zeroes_sectors,
						  CHORUS_WIRE_MAX_PAYLOAD >> SECTOR_SHIFT));
	blk_queue_write_cache(q, true, true);
	if (bdev_nonrot(bdev))
		blk_queue_flag_set(QUEUE_FLAG_NONROT, q);
	else
		blk_queue_flag_clear(QUEUE_FLAG_NONROT, q);
	blk_queue_flag_clear(QUEUE_FLAG_ADD_RANDOM, q);
}

/**
 * chorus_dev_create() - create and add the block device of a volume
 * @vol: volume with index, geometry and backing set
 * @extack: where to say what failed
 *
 * Context: process context.
 * Return: 0, or a negative errno with nothing left allocated.
 */
int chorus_dev_create(struct chorus_volume *vol, struct netlink_ext_ack *extack)
{
	struct blk_mq_tag_set *set = &vol->tag_set;
	struct gendisk *disk;
	int ret;

	ret = bioset_init(&vol->bio_set, BIO_POOL_SIZE, 0, BIOSET_NEED_RESCUER);
	if (ret)
		return ret;

	set->ops = &chorus_mq_ops;
	set->nr_hw_queues = num_online_cpus();
	set->queue_depth = chorus_queue_depth;
	set->numa_node = NUMA_NO_NODE;
	set->cmd_size = sizeof(struct chorus_rq);
	set->flags = BLK_MQ_F_SHOULD_MERGE | BLK_MQ_F_BLOCKING;
	set->driver_data = vol;
	ret = blk_mq_alloc_tag_set(set);
	if (ret)
		goto exit_bioset;

	disk = blk_mq_alloc_disk(set, vol);
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto free_tag_set;
	}
	chorus_dev_set_limits(vol, disk->queue);

	disk->major = chorus_major;
	disk->first_minor = vol->index;
	disk->minors = 1;
	disk->fops = &chorus_fops;
	disk->private_data = vol;
	disk->flags |= GENHD_FL_NO_PART;
	BUILD_BUG_ON(CHORUS_DISK_NAME_MAX != DISK_NAME_LEN);
	snprintf(disk->disk_name, DISK_NAME_LEN, "chorus%d", vol->index);
	set_capacity(disk, vol->nr_sectors);
	vol->disk = disk;
	chorus_dev_set_timeout(vol);

	ret = device_add_disk(NULL, disk, chorus_disk_groups);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot add the block device");
		goto put_disk;
	}
	return 0;

put_disk:
	vol->disk = NULL;
	put_disk(disk);
free_tag_set:
	blk_mq_free_tag_set(set);
exit_bioset:
	bioset_exit(&vol->bio_set);
	return ret;
}

/**
 * chorus_dev_destroy() - remove a volume's block device
 * @vol: volume whose device nobody has open
 *
 * Waits for the requests in flight to complete.
 * Context: process context.
 */
void chorus_dev_destroy(struct chorus_volume *vol)
{
	del_gendisk(vol->disk);
	put_disk(vol->disk);
	vol->disk = NULL;
	blk_mq_free_tag_set(&vol->tag_set);
	bioset_exit(&vol->bio_set);
}

/**
 * chorus_dev_major_register() - module init of the block device side
 *
 * Registers the major and creates the I/O workqueue. It may be needed to
 * make progress under memory pressure (writeback to a volume), hence
 * WQ_MEM_RECLAIM; WQ_HIGHPRI because a request started again (after a
 * peer failed, or a failed local read) waits in it.
 *
 * Return: 0 or a negative errno, with nothing left registered.
 */
int chorus_dev_major_register(void)
{
	int ret;

	chorus_io_wq = alloc_workqueue("chorus_io", WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!chorus_io_wq)
		return -ENOMEM;
	ret = register_blkdev(0, "chorus");
	if (ret < 0) {
		destroy_workqueue(chorus_io_wq);
		return ret;
	}
	chorus_major = ret;
	return 0;
}

void chorus_dev_major_unregister(void)
{
	unregister_blkdev(chorus_major, "chorus");
	destroy_workqueue(chorus_io_wq);
}
