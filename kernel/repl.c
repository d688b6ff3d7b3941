// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the owner's write path, roles and
 * epochs, and the switch that hands each received message on.
 *
 * On the owner, every write, discard, write-zeroes and flush of a volume
 * with peers goes through chorus_repl_queue_rq(): writes overlapping one in
 * flight wait for it (so every replica applies overlapping writes in the
 * same order), then the request is sent to every peer in the write set and
 * submitted locally, and completes when the local clones and every peer's
 * ack are back. A peer that is unreachable holds its part of the request
 * (in chorus_peer.inflight) until it comes back, when the request is sent
 * again, or until userspace takes it out of the write set, when the
 * request's regions are marked in the peer's bitmap and the part completes.
 * A peer out of the write set gets no traffic; its bitmap is marked, and
 * made durable, before the write completes.
 *
 * A replica applies what the owner sends in replica.c; forwarding (a
 * non-owner's I/O) is forward.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "chorus.h"

static void chorus_conflict_workfn(struct work_struct *work);
static void chorus_defer_workfn(struct work_struct *work);
static void chorus_repl_start(struct chorus_volume *vol, struct request *rq);

/**
 * chorus_repl_init() - initialise the replication state of a new volume
 * @vol: the volume, before its metadata is loaded
 */
void chorus_repl_init(struct chorus_volume *vol)
{
	struct chorus_repl *repl = &vol->repl;

	chorus_al_init(vol);
	chorus_fwd_init(vol);
	mutex_init(&repl->conf_lock);
	mutex_init(&repl->meta_lock);
	spin_lock_init(&repl->peers_lock);
	spin_lock_init(&repl->tree_lock);
	repl->tree = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&repl->waiting);
	INIT_WORK(&repl->conflict_work, chorus_conflict_workfn);
	spin_lock_init(&repl->defer_lock);
	INIT_LIST_HEAD(&repl->deferred);
	INIT_WORK(&repl->defer_work, chorus_defer_workfn);
	init_waitqueue_head(&repl->range_wq);
	chorus_role_init(vol);
	repl->request_timeout_ms = 10000;
	repl->ping_interval_ms = 1000;
	repl->ping_timeout_ms = 5000;
	repl->resync_rate = 100ULL << 20;
}

static bool chorus_range_conflicts(struct chorus_repl *repl, sector_t start,
				   sector_t last)
{
	lockdep_assert_held(&repl->tree_lock);
	return interval_tree_iter_first(&repl->tree, start, last);
}

static void chorus_range_insert(struct chorus_repl *repl,
				struct chorus_range *range, sector_t start,
				sector_t last)
{
	lockdep_assert_held(&repl->tree_lock);
	range->node.start = start;
	range->node.last = last;
	interval_tree_insert(&range->node, &repl->tree);
	range->in_tree = true;
}

/**
 * chorus_range_lock() - wait until no write overlaps a range, then hold it
 * @vol: the volume
 * @range: the caller's range, not in the tree
 * @start: first sector
 * @nr: sectors
 * @peer: give up when this peer's job is asked to stop
 *
 * Used by resync and verify, so that a region is never copied while a
 * write to it is in flight.
 *
 * Context: process context (a job thread).
 * Return: 0 with the range held, or -EINTR when the job must stop.
 */
int chorus_range_lock(struct chorus_volume *vol, struct chorus_range *range,
		      sector_t start, sector_t nr, struct chorus_peer *peer)
{
	struct chorus_repl *repl = &vol->repl;
	sector_t last = start + nr - 1;
	bool done = false;

	while (!done) {
		spin_lock_irq(&repl->tree_lock);
		if (!chorus_range_conflicts(repl, start, last)) {
			chorus_range_insert(repl, range, start, last);
			done = true;
		}
		spin_unlock_irq(&repl->tree_lock);
		if (done)
			break;
		if (kthread_should_stop())
			return -EINTR;
		wait_event_timeout(repl->range_wq, kthread_should_stop() ||
				   !READ_ONCE(repl->tree.rb_root.rb_node), HZ / 10);
	}
	return 0;
}

/**
 * chorus_range_unlock() - release a range and start what waited for it
 * @vol: the volume
 * @range: a range in the tree
 *
 * Context: any, including hard irq (request completion).
 */
void chorus_range_unlock(struct chorus_volume *vol, struct chorus_range *range)
{
	struct chorus_repl *repl = &vol->repl;
	unsigned long flags;
	bool waiters;

	spin_lock_irqsave(&repl->tree_lock, flags);
	interval_tree_remove(&range->node, &repl->tree);
	range->in_tree = false;
	waiters = !list_empty(&repl->waiting);
	spin_unlock_irqrestore(&repl->tree_lock, flags);
	if (waiters)
		queue_work(chorus_wq, &repl->conflict_work);
	wake_up_all(&repl->range_wq);
}

static void chorus_repl_dispatch(struct chorus_volume *vol, struct request *rq);

/*
 * Start the waiting requests whose conflicts are gone, oldest first; a
 * request started here is in the tree before a younger one is looked at,
 * so overlapping waiters keep their order.
 */
static void chorus_conflict_workfn(struct work_struct *work)
{
	struct chorus_repl *repl =
		container_of(work, struct chorus_repl, conflict_work);
	struct chorus_volume *vol = container_of(repl, struct chorus_volume, repl);
	struct chorus_rq *rqd, *next;
	unsigned int noio;
	LIST_HEAD(ready);

	spin_lock_irq(&repl->tree_lock);
	list_for_each_entry_safe(rqd, next, &repl->waiting, wait_entry) {
		struct request *rq = blk_mq_rq_from_pdu(rqd);
		sector_t start = blk_rq_pos(rq);
		sector_t last = start + blk_rq_sectors(rq) - 1;

		if (chorus_range_conflicts(repl, start, last))
			continue;
		chorus_range_insert(repl, &rqd->range, start, last);
		list_move_tail(&rqd->wait_entry, &ready);
	}
	spin_unlock_irq(&repl->tree_lock);

	/* Dispatching is part of the I/O path: nothing may recurse into it. */
	noio = memalloc_noio_save();
	list_for_each_entry_safe(rqd, next, &ready, wait_entry) {
		list_del_init(&rqd->wait_entry);
		chorus_repl_dispatch(vol, blk_mq_rq_from_pdu(rqd));
	}
	memalloc_noio_restore(noio);
}

static u8 chorus_repl_msg_type(struct request *rq)
{
	return req_op(rq) == REQ_OP_FLUSH ? CHORUS_MSG_FLUSH : CHORUS_MSG_WRITE;
}

/**
 * chorus_repl_hdr_data() - describe a write request in a header
 * @hdr: a header already initialised with the request's range
 * @rq: a write, discard or write-zeroes request
 * @data: set to the request's data when it is a plain write
 *
 * Sets the flags (FUA, DISCARD, ZEROES) and, for a plain write, the
 * payload: the same for a replica's WRITE and for a FWD_WRITE.
 */
void chorus_repl_hdr_data(struct chorus_wire_hdr *hdr, struct request *rq,
			  struct chorus_msg_data *data)
{
	u32 bytes = blk_rq_bytes(rq);
	u16 flags = 0;

	if (rq->cmd_flags & REQ_FUA)
		flags |= CHORUS_MSG_F_FUA;
	if (req_op(rq) == REQ_OP_DISCARD) {
		flags |= CHORUS_MSG_F_DISCARD;
	} else if (req_op(rq) == REQ_OP_WRITE_ZEROES) {
		flags |= CHORUS_MSG_F_ZEROES;
	} else {
		hdr->payload_len = cpu_to_le32(bytes);
		data->rq = rq;
		data->len = bytes;
	}
	hdr->flags = cpu_to_le16(flags);
}

/**
 * chorus_repl_send_rq() - send a request's part to a peer
 * @peer: the peer
 * @rq: a request with an entry in @peer's inflight array
 * @gen: the session the caller saw connected
 *
 * If that session is gone, nothing is sent: the entry stays held and the
 * next session sends it.
 *
 * Context: process context; may sleep.
 */
void chorus_repl_send_rq(struct chorus_peer *peer, struct request *rq, u32 gen)
{
	struct chorus_volume *vol = peer->vol;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	struct chorus_msg_data data = {};
	struct chorus_wire_hdr hdr;
	struct chorus_conn *conn;
	u8 type = chorus_repl_msg_type(rq);
	int ret;

	if (type == CHORUS_MSG_FLUSH) {
		chorus_wire_init_hdr(&hdr, type, READ_ONCE(vol->repl.epoch),
				     rqd->seq[peer->slot], 0, 0);
	} else {
		chorus_wire_init_hdr(&hdr, type, READ_ONCE(vol->repl.epoch),
				     rqd->seq[peer->slot], blk_rq_pos(rq),
				     blk_rq_bytes(rq));
		chorus_repl_hdr_data(&hdr, rq, &data);
	}

	down_read(&peer->session_sem);
	conn = peer->conns[rq->mq_hctx->queue_num % peer->nr_conns];
	if (!conn || conn->gen != gen) {
		up_read(&peer->session_sem);
		return;
	}
	ret = chorus_conn_send(conn, &hdr, NULL, data.len ? &data : NULL);
	up_read(&peer->session_sem);
	if (ret) {
		chorus_peer_fail(peer, gen, "send failed");
		return;
	}
	atomic64_inc(&peer->stats.writes_sent);
	atomic64_add(data.len, &peer->stats.bytes_sent);
}

/* Drop a part of @rq that failed, with @status for the whole request. */
static void chorus_repl_fail(struct request *rq, blk_status_t status)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	WRITE_ONCE(rqd->status, status);
	chorus_rq_put(rq);
}

/* Peer @i if it holds a copy: a diskless access point has none to write. */
static struct chorus_peer *chorus_repl_copy(struct chorus_volume *vol, int i)
{
	struct chorus_peer *peer = vol->repl.peers[i];

	return peer && !peer->diskless ? peer : NULL;
}

/*
 * Reserve an id for a request in every copy's inflight, so that nothing
 * may fail half-way past this point. False, with none reserved, if one
 * cannot be had.
 */
static bool chorus_repl_reserve_ids(struct chorus_volume *vol, u32 *id)
{
	struct chorus_peer *peer;
	int i;

	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		peer = chorus_repl_copy(vol, i);
		if (!peer)
			continue;
		if (xa_alloc_cyclic_irq(&peer->inflight, &id[i], NULL,
					XA_LIMIT(1, U32_MAX), &peer->next_id,
					GFP_NOIO) < 0) {
			while (i--) {
				peer = chorus_repl_copy(vol, i);
				if (peer)
					xa_cmpxchg_irq(&peer->inflight, id[i],
						       XA_ZERO_ENTRY, NULL, 0);
			}
			return false;
		}
	}
	return true;
}

static void chorus_repl_fan_out(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	bool data = req_op(rq) != REQ_OP_FLUSH;
	u32 id[CHORUS_MAX_PEERS] = {}, gen[CHORUS_MAX_PEERS] = {};
	bool send[CHORUS_MAX_PEERS] = {}, mark[CHORUS_MAX_PEERS] = {};
	struct chorus_peer *peer;
	int i;

	if (data && chorus_al_begin(vol, rq)) {
		chorus_repl_fail(rq, BLK_STS_IOERR);
		return;
	}
	if (!chorus_repl_reserve_ids(vol, id)) {
		chorus_repl_fail(rq, BLK_STS_RESOURCE);
		return;
	}

	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		bool bm_locked = false;

		peer = chorus_repl_copy(vol, i);
		if (!peer)
			continue;
		spin_lock_irq(&peer->lock);
		if (!peer->in_writeset && data) {
			/* Marking: bm_mutex first, see chorus_bitmap_write_range(). */
			spin_unlock_irq(&peer->lock);
			mutex_lock(&peer->bm_mutex);
			bm_locked = true;
			spin_lock_irq(&peer->lock);
		}
		if (peer->in_writeset) {
			xa_store(&peer->inflight, id[i], rq, GFP_ATOMIC);
			rqd->seq[i] = id[i];
			atomic_inc(&rqd->pending);
			if (peer->conn_state == CHORUS_CONN_CONNECTED) {
				send[i] = true;
				gen[i] = peer->gen;
				rqd->sent_gen[i] = peer->gen;
			}
		} else {
			xa_release(&peer->inflight, id[i]);
			/* Bits already set are on disk: only new ones wait. */
			if (data)
				mark[i] = chorus_bitmap_set_locked(peer,
								   blk_rq_pos(rq),
								   blk_rq_sectors(rq));
		}
		spin_unlock_irq(&peer->lock);
		/* With bits to write, bm_mutex stays held until they are. */
		if (bm_locked && !mark[i])
			mutex_unlock(&peer->bm_mutex);
	}

	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		peer = vol->repl.peers[i];
		if (mark[i]) {
			/*
			 * A write that failed the disk leaves the bits in
			 * memory; the write set decides, as for the data.
			 */
			if (chorus_bitmap_write_range(peer, blk_rq_pos(rq),
						      blk_rq_sectors(rq)) &&
			    !chorus_disk_failed(vol))
				WRITE_ONCE(rqd->status, BLK_STS_IOERR);
			mutex_unlock(&peer->bm_mutex);
		}
		if (send[i])
			chorus_repl_send_rq(peer, rq, gen[i]);
	}
	/* A detached disk gets nothing: the write set has the data. */
	rqd->replicated = true;
	if (chorus_disk_failed(vol))
		rqd->local_failed = true;
	else
		chorus_dev_submit_local(vol, rq);
	chorus_rq_put(rq);
}

/*
 * Readers: fan-outs that found this node the owner (chorus_repl_dispatch()).
 * A hand-over waits for them (chorus_repl_owner_sync()).
 */
DEFINE_STATIC_SRCU(chorus_owner_srcu);

/*
 * A request ordered against overlapping ones goes to the peers, or the
 * owner. What this node served as the owner for an access point, and that
 * found it a replica since, is never forwarded on: it ends offline, and the
 * access point sends it to the new owner (chorus_dev_restart()).
 */
static void chorus_repl_dispatch(struct chorus_volume *vol, struct request *rq)
{
	int idx = srcu_read_lock(&chorus_owner_srcu);

	/* Pairs with chorus_repl_set_role(): the new owner's epoch is set. */
	if (smp_load_acquire(&vol->repl.role) == CHORUS_ROLE_OWNER)
		chorus_repl_fan_out(vol, rq);
	else if (unlikely(chorus_fwd_served(rq)))
		chorus_repl_fail(rq, BLK_STS_OFFLINE);
	else
		chorus_fwd_dispatch(vol, rq);
	srcu_read_unlock(&chorus_owner_srcu, idx);
}

/**
 * chorus_repl_owner_sync() - wait for the fan-outs that found this node
 *	the owner
 *
 * After a hand-over changed the role, every request such a fan-out
 * started is in a peer's &chorus_peer.inflight or done.
 *
 * Context: process context; may sleep.
 */
void chorus_repl_owner_sync(void)
{
	synchronize_srcu(&chorus_owner_srcu);
}

/**
 * chorus_repl_restart() - start here a request this node had forwarded
 * @vol: the volume, of which this node has become the owner
 * @rq: the request, taken back from forwarding with the submitter's
 *	reference; a write or flush is still in the range tree, where the
 *	access point put it ahead of any overlapping one
 *
 * A write goes on as the owner's own (the activity log, the write set);
 * a read reads this node's disk, or a replica if that failed.
 *
 * Context: process context, GFP_NOIO scope; may sleep.
 */
void chorus_repl_restart(struct chorus_volume *vol, struct request *rq)
{
	if (req_op(rq) != REQ_OP_READ) {
		chorus_repl_dispatch(vol, rq);
		return;
	}
	chorus_dev_read(vol, rq);
}

/**
 * chorus_repl_queue_rq() - start a write or flush of a volume with peers
 * @vol: the volume
 * @rq: a started request whose pdu is initialised
 *
 * A write whose activity log extents are on disk already (the common case)
 * starts here. One that needs a log transaction, or room in the log, goes
 * to chorus_repl.defer_work: in a submitter's context the bios we submit
 * wait on current->bio_list until we return, so waiting here for a log
 * write, or for other writes to complete, could never end; in the hardware
 * queue's worker, the requests queued behind it would wait for that disk
 * write. On a node that is not the owner, writes and flushes are ordered
 * here too, then forwarded (chorus_fwd_start()); the owner logs them.
 *
 * Context: queue_rq (the submitter's plug hidden), or the hardware queue's
 * worker; process context, GFP_NOIO scope; may sleep.
 */
void chorus_repl_queue_rq(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_repl *repl = &vol->repl;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	memset(rqd->seq, 0, sizeof(rqd->seq));
	memset(rqd->sent_gen, 0, sizeof(rqd->sent_gen));
	INIT_LIST_HEAD(&rqd->wait_entry);
	rqd->al_held = false;

	if (req_op(rq) != REQ_OP_FLUSH &&
	    READ_ONCE(repl->role) == CHORUS_ROLE_OWNER &&
	    !chorus_al_try_begin(vol, rq)) {
		spin_lock_irq(&repl->defer_lock);
		list_add_tail(&rqd->wait_entry, &repl->deferred);
		spin_unlock_irq(&repl->defer_lock);
		queue_work(chorus_wq, &repl->defer_work);
		return;
	}
	chorus_repl_start(vol, rq);
}

static void chorus_defer_workfn(struct work_struct *work)
{
	struct chorus_repl *repl =
		container_of(work, struct chorus_repl, defer_work);
	struct chorus_volume *vol = container_of(repl, struct chorus_volume, repl);
	unsigned int noio = memalloc_noio_save();
	struct chorus_rq *rqd;

	for (;;) {
		spin_lock_irq(&repl->defer_lock);
		rqd = list_first_entry_or_null(&repl->deferred, struct chorus_rq,
					       wait_entry);
		if (rqd)
			list_del_init(&rqd->wait_entry);
		spin_unlock_irq(&repl->defer_lock);
		if (!rqd)
			break;
		chorus_repl_start(vol, blk_mq_rq_from_pdu(rqd));
	}
	memalloc_noio_restore(noio);
}

/* Serialise against overlapping writes in flight, then dispatch. */
static void chorus_repl_start(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_repl *repl = &vol->repl;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	sector_t start, last;

	if (req_op(rq) != REQ_OP_FLUSH) {
		start = blk_rq_pos(rq);
		last = start + blk_rq_sectors(rq) - 1;
		spin_lock_irq(&repl->tree_lock);
		if (chorus_range_conflicts(repl, start, last)) {
			list_add_tail(&rqd->wait_entry, &repl->waiting);
			spin_unlock_irq(&repl->tree_lock);
			return;
		}
		chorus_range_insert(repl, &rqd->range, start, last);
		spin_unlock_irq(&repl->tree_lock);
	}
	chorus_repl_dispatch(vol, rq);
}

/**
 * chorus_repl_rq_done() - a request with peers is about to complete
 * @vol: the volume
 * @rq: the request
 *
 * Context: any, including hard irq.
 */
void chorus_repl_rq_done(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	chorus_al_end(vol, rq);
	if (rqd->range.in_tree)
		chorus_range_unlock(vol, &rqd->range);
}

/**
 * chorus_repl_timeout() - a request took longer than the request timeout
 * @rq: the request
 *
 * A peer that has not acked a request sent on its current session is
 * declared unreachable; held parts stay held. The request is never failed
 * by a timeout: only userspace decides that a peer leaves the write set.
 *
 * Return: BLK_EH_RESET_TIMER.
 */
enum blk_eh_timer_return chorus_repl_timeout(struct request *rq)
{
	struct chorus_volume *vol = rq->q->queuedata;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	int i;

	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		struct chorus_peer *peer = vol->repl.peers[i];
		bool late = false;
		u32 gen = 0;

		if (!peer || !rqd->seq[i])
			continue;
		spin_lock_irq(&peer->lock);
		/*
		 * A peer whose disk failed answered; its part waits for the
		 * write set to change, not for a new session.
		 */
		if (xa_load(&peer->inflight, rqd->seq[i]) == rq &&
		    peer->conn_state == CHORUS_CONN_CONNECTED &&
		    rqd->sent_gen[i] == peer->gen && !peer->disk_failed) {
			late = true;
			gen = peer->gen;
		}
		spin_unlock_irq(&peer->lock);
		if (late)
			chorus_peer_fail(peer, gen, "request timeout");
	}
	return BLK_EH_RESET_TIMER;
}

/**
 * chorus_repl_held_end() - end every part a peer holds
 * @peer: the peer
 * @status: set on each request unless it is BLK_STS_OK
 *
 * Context: process context.
 */
void chorus_repl_held_end(struct chorus_peer *peer, blk_status_t status)
{
	struct request *rq;
	unsigned long idx;

	xa_for_each(&peer->inflight, idx, rq) {
		spin_lock_irq(&peer->lock);
		if (xa_load(&peer->inflight, idx) != rq)
			rq = NULL;
		else
			xa_erase(&peer->inflight, idx);
		spin_unlock_irq(&peer->lock);
		if (!rq)
			continue;
		if (status != BLK_STS_OK)
			chorus_repl_fail(rq, status);
		else
			chorus_rq_put(rq);
	}
}

/*
 * A volume going away: what it serves for access points may be held for a
 * peer, and with every session closed would never end. Fail it until none
 * is left (a failed write may start one that waited for its range).
 */
static void chorus_repl_end_served(struct chorus_volume *vol)
{
	struct chorus_peer *peer;
	bool idle;
	int i;

	lockdep_assert_held(&vol->repl.conf_lock);
	chorus_al_set_stopping(vol, true);	/* nor wait for members */
	do {
		for (i = 0; i < CHORUS_MAX_PEERS; i++) {
			peer = vol->repl.peers[i];
			if (peer)
				chorus_repl_held_end(peer, BLK_STS_IOERR);
		}
		idle = true;
		for (i = 0; i < CHORUS_MAX_PEERS; i++) {
			peer = vol->repl.peers[i];
			if (peer && !chorus_fwd_peer_idle(peer, HZ))
				idle = false;
		}
	} while (!idle);
}

/**
 * chorus_repl_stop() - forget every peer of a volume being destroyed
 * @vol: the volume; nobody has its device open
 *
 * Context: process context, chorus_volumes_lock held.
 */
void chorus_repl_stop(struct chorus_volume *vol)
{
	int i;

	lockdep_assert_held(&chorus_volumes_lock);
	chorus_role_stop(vol);
	mutex_lock(&vol->repl.conf_lock);
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (vol->repl.peers[i])
			chorus_peer_disconnect(vol->repl.peers[i]);
	chorus_repl_end_served(vol);
	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		struct chorus_peer *peer = vol->repl.peers[i];

		if (!peer)
			continue;
		spin_lock(&vol->repl.peers_lock);
		vol->repl.peers[i] = NULL;
		vol->repl.nr_peers--;
		spin_unlock(&vol->repl.peers_lock);
		chorus_peer_free(peer);
	}
	mutex_unlock(&vol->repl.conf_lock);
	/* A handshake or dial before the peers went may have queued it. */
	chorus_role_stop(vol);
	flush_work(&vol->repl.defer_work);
	flush_work(&vol->repl.conflict_work);
	chorus_fwd_stop(vol);
}

/**
 * chorus_repl_held_complete() - complete every part a peer holds
 * @peer: a peer just taken out of the write set, its bitmap marked and
 *	written for every held write
 *
 * Context: process context.
 */
void chorus_repl_held_complete(struct chorus_peer *peer)
{
	chorus_repl_held_end(peer, BLK_STS_OK);
}

/*
 * Take the request an OK ack answers out of @peer's inflight, its part
 * done and counted as a copy if the peer is up to date. Return: the request
 * (the caller puts it), NULL when none is in flight under the ack's seq
 * (completed when the peer left the write set), or ERR_PTR(-EPROTO) when
 * the ack does not match it.
 * Context: any; takes the peer's lock with interrupts saved.
 */
static struct request *chorus_owner_ack_take(struct chorus_peer *peer,
					     const struct chorus_wire_hdr *hdr)
{
	bool flush_ack = hdr->type == CHORUS_MSG_FLUSH_ACK;
	unsigned long flags;
	struct request *rq;

	spin_lock_irqsave(&peer->lock, flags);
	rq = xa_load(&peer->inflight, le64_to_cpu(hdr->seq));
	if (rq && ((req_op(rq) == REQ_OP_FLUSH) != flush_ack ||
		   (!flush_ack && (le64_to_cpu(hdr->sector) != blk_rq_pos(rq) ||
				   le32_to_cpu(hdr->len) != blk_rq_bytes(rq))))) {
		spin_unlock_irqrestore(&peer->lock, flags);
		return ERR_PTR(-EPROTO);
	}
	if (rq) {
		xa_erase(&peer->inflight, le64_to_cpu(hdr->seq));
		if (peer->repl_state == CHORUS_REPL_UP_TO_DATE)
			atomic_inc(&((struct chorus_rq *)blk_mq_rq_to_pdu(rq))->copies);
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	return rq;
}

/**
 * chorus_repl_ack_atomic() - act on an owner's OK ack where it arrives
 * @peer: the peer it came from, of an established session
 * @hdr: its header, checked by chorus_wire_check_hdr() and
 *	chorus_wire_check_range()
 *
 * Completes the request's part when @hdr is a WRITE_ACK or FLUSH_ACK with
 * status OK that matches a request in flight: what most of an owner's
 * receive traffic is, done in the transport's completion without waking a
 * thread. Anything else (another message, a failure, an ack this node
 * cannot match) is left alone, for chorus_repl_recv() to handle (and
 * report) from the receive thread.
 * Context: any (the RDMA receive completion runs it in softirq).
 * Return: true when done with @hdr.
 */
bool chorus_repl_ack_atomic(struct chorus_peer *peer,
			    const struct chorus_wire_hdr *hdr)
{
	struct request *rq;

	if ((hdr->type != CHORUS_MSG_WRITE_ACK &&
	     hdr->type != CHORUS_MSG_FLUSH_ACK) ||
	    le32_to_cpu(hdr->status) != CHORUS_WIRE_OK ||
	    le64_to_cpu(hdr->seq) > U32_MAX ||
	    READ_ONCE(peer->vol->repl.role) != CHORUS_ROLE_OWNER)
		return false;
	rq = chorus_owner_ack_take(peer, hdr);
	if (IS_ERR_OR_NULL(rq))
		return false;
	chorus_rq_put(rq);
	return true;
}

/* An answer from a replica to one of this owner's requests. */
static int chorus_owner_ack(struct chorus_conn *conn,
			    const struct chorus_wire_hdr *hdr)
{
	struct chorus_peer *peer = conn->peer;
	struct chorus_volume *vol = peer->vol;
	u32 status = le32_to_cpu(hdr->status);
	u64 seq = le64_to_cpu(hdr->seq);
	struct request *rq;

	if (READ_ONCE(vol->repl.role) != CHORUS_ROLE_OWNER || seq > U32_MAX)
		return -EPROTO;

	if (status == CHORUS_WIRE_OK) {
		rq = chorus_owner_ack_take(peer, hdr);
		if (IS_ERR(rq))
			return PTR_ERR(rq);
		if (rq)
			chorus_rq_put(rq);
		return 0;
	}

	spin_lock_irq(&peer->lock);
	rq = xa_load(&peer->inflight, seq);
	spin_unlock_irq(&peer->lock);
	if (!rq)	/* completed when the peer left the write set */
		return 0;
	/* The part stays held; userspace decides what happens to the peer. */
	if (status == CHORUS_WIRE_DISK_FAILED) {
		/* Its session stays: nothing sent on it would be applied. */
		chorus_peer_disk_failed(peer);
	} else if (status == CHORUS_WIRE_STALE_EPOCH) {
		pr_err("%s: peer %u refuses epoch %llu: another owner has a higher one\n",
		       vol->name, peer->node_id, le64_to_cpu(hdr->epoch));
		WRITE_ONCE(peer->fenced, true);
		chorus_peer_fail(peer, conn->gen, "peer refused a stale epoch");
	} else {
		pr_err_ratelimited("%s: peer %u failed a write (status %u)\n",
				   vol->name, peer->node_id, status);
		chorus_peer_fail(peer, conn->gen, "peer failed a write");
	}
	return 0;
}

/**
 * chorus_repl_recv() - act on one received message, checked
 * @conn: the connection it came on, part of an established session
 * @hdr: the header, checked by chorus_conn_recv()
 * @pages: the payload, owned by this function from now on; NULL if none
 * @nr_pages: entries of @pages
 *
 * The one entry from the connections up into replication.
 * Context: the transport's receive context; may sleep.
 * Return: 0, or a negative errno that closes the session.
 */
int chorus_repl_recv(struct chorus_conn *conn, const struct chorus_wire_hdr *hdr,
		     struct page **pages, unsigned int nr_pages)
{
	struct chorus_peer *peer = conn->peer;

	switch (hdr->type) {
	case CHORUS_MSG_WRITE:
	case CHORUS_MSG_FLUSH:
	case CHORUS_MSG_RESYNC_DATA:
	case CHORUS_MSG_VERIFY_REQ:
	case CHORUS_MSG_STATE:
		return chorus_replica_request(conn, hdr, pages, nr_pages);
	case CHORUS_MSG_STATE_ACK:
		chorus_al_answer(peer, hdr);
		return 0;
	case CHORUS_MSG_WRITE_ACK:
	case CHORUS_MSG_FLUSH_ACK:
		if (chorus_owner_ack(conn, hdr))
			goto proto_logged;
		return 0;
	case CHORUS_MSG_RESYNC_ACK:
	case CHORUS_MSG_VERIFY_REPLY:
		chorus_job_answer(peer, hdr);
		return 0;
	case CHORUS_MSG_READ:
	case CHORUS_MSG_REPLICA_READ:
	case CHORUS_MSG_FWD_WRITE:
	case CHORUS_MSG_FWD_FLUSH:
		return chorus_fwd_serve(conn, hdr, pages, nr_pages);
	case CHORUS_MSG_READ_DATA:
	case CHORUS_MSG_FWD_WRITE_ACK:
	case CHORUS_MSG_FWD_FLUSH_ACK:
		return chorus_fwd_answer(conn, hdr, pages, nr_pages);
	case CHORUS_MSG_PING:
		/* Tells an owner that waits for no ack that the disk failed. */
		return chorus_replica_answer(conn, hdr, CHORUS_MSG_PONG,
					     chorus_disk_failed(peer->vol) ?
					     CHORUS_WIRE_DISK_FAILED :
					     CHORUS_WIRE_OK);
	case CHORUS_MSG_PONG:
		if (le32_to_cpu(hdr->status) == CHORUS_WIRE_DISK_FAILED)
			chorus_peer_disk_failed(peer);
		return 0;
	default:
		pr_warn_ratelimited("%s: peer %u: unexpected message type %u; closing\n",
				    peer->vol->name, peer->node_id, hdr->type);
		goto proto;
	}
proto_logged:
	pr_warn_ratelimited("%s: peer %u: ack that matches no request; closing\n",
			    peer->vol->name, peer->node_id);
proto:
	if (pages)
		chorus_pages_free(pages, nr_pages);
	return -EPROTO;
}
