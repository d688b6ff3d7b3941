// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: forwarding.
 *
 * Every node with a volume has its block device, but only the owner orders
 * and replicates writes. On any other node (an access point) every request
 * is shipped to the owner over the replication session with it, and
 * completes when the owner has completed it: a write once it is on the
 * whole write set, a read with the owner's data.
 *
 * The access point keeps what it forwarded in chorus_fwd.inflight until
 * the answer comes. Writes still go through the range tree first
 * (chorus_repl_queue_rq()), so two overlapping writes are never forwarded
 * together and keep their order. A request whose session ends before its
 * answer, or that finds no owner, is held and sent again on the next
 * session with an owner, under that owner's epoch (a block write is
 * idempotent). A request that found no owner within the forward timeout
 * fails instead: a host that gave up on this path has resent its write on
 * another one by then, and an old copy arriving after the new one must
 * never overwrite it (Documentation/forwarding.md, "Stale writes").
 *
 * The owner's side, serving what access points forward, is forward_serve.c.
 *
 * An owner whose disk failed (disk.c) reads the same way from a replica:
 * each read goes, as a REPLICA_READ, to a connected member of the write
 * set that is up to date (so it holds every write the owner acknowledged)
 * and whose disk works. A replica that refuses it is not asked again for
 * that read; the next one is. The read fails only when no such member is
 * left, or none came back within the forward timeout.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "chorus.h"

unsigned int chorus_forward_timeout_ms = 20000;
module_param_named(forward_timeout_ms, chorus_forward_timeout_ms, uint, 0644);
MODULE_PARM_DESC(forward_timeout_ms,
		 "how long an access point holds a request that finds no owner before failing it, ms (1000..600000, default 20000)");

/* Submits the requests served for access points (main.c makes it). */
struct workqueue_struct *chorus_fwd_wq;

static unsigned long chorus_fwd_timeout(void)
{
	return msecs_to_jiffies(clamp_val(READ_ONCE(chorus_forward_timeout_ms),
					  1000, 600000));
}

static void chorus_fwd_expire_workfn(struct work_struct *work);
static void chorus_fwd_take_back_workfn(struct work_struct *work);

/**
 * chorus_fwd_init() - initialise the forwarding state of a new volume
 * @vol: the volume
 */
void chorus_fwd_init(struct chorus_volume *vol)
{
	struct chorus_fwd *fwd = &vol->repl.fwd;

	spin_lock_init(&fwd->lock);
	xa_init_flags(&fwd->inflight, XA_FLAGS_ALLOC1);
	INIT_DELAYED_WORK(&fwd->expire_work, chorus_fwd_expire_workfn);
	INIT_WORK(&fwd->take_back_work, chorus_fwd_take_back_workfn);
}

/**
 * chorus_fwd_stop() - stop forwarding for a volume being destroyed
 * @vol: the volume; no request is in flight
 */
void chorus_fwd_stop(struct chorus_volume *vol)
{
	cancel_delayed_work_sync(&vol->repl.fwd.expire_work);
	flush_work(&vol->repl.fwd.take_back_work);
	WARN_ON_ONCE(!xa_empty(&vol->repl.fwd.inflight));
	xa_destroy(&vol->repl.fwd.inflight);
}

/* The access point's side. */

/* The peer this node has a session with that says it is the owner. */
static struct chorus_peer *chorus_fwd_owner(struct chorus_volume *vol, u32 *gen)
{
	struct chorus_peer *peer;
	bool found;
	int i;

	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		peer = vol->repl.peers[i];
		if (!peer)
			continue;
		spin_lock_irq(&peer->lock);
		found = peer->conn_state == CHORUS_CONN_CONNECTED &&
			peer->peer_owner;
		*gen = peer->gen;
		spin_unlock_irq(&peer->lock);
		if (found)
			return peer;
	}
	return NULL;
}

/* Whether @rqd was sent on a session that is still up. */
static bool chorus_fwd_sent_live(struct chorus_rq *rqd)
{
	struct chorus_peer *peer = rqd->fwd_peer;
	bool live;

	if (!peer)
		return false;
	spin_lock(&peer->lock);
	live = peer->gen == rqd->fwd_gen &&
	       peer->conn_state == CHORUS_CONN_CONNECTED;
	spin_unlock(&peer->lock);
	return live;
}

/*
 * Take the right to send @rq on @peer's session @gen: it is still
 * forwarded, was not sent on that session yet, and its forward timeout has
 * not passed (past it, the expiry fails it: sent now, on a session that
 * came up before the expiry's next look, it could overwrite a newer write
 * the host sent on another path). The claim holds a reference on the
 * request, dropped once the send returned: an answer, or the forward
 * timeout, may come while the transport still walks its bios, and must not
 * complete it under the transport. Context: fwd->lock not held.
 */
static bool chorus_fwd_claim(struct chorus_fwd *fwd, struct request *rq,
			     struct chorus_peer *peer, u32 gen)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	bool claimed = false;

	spin_lock_irq(&fwd->lock);
	if (xa_load(&fwd->inflight, rqd->fwd_id) == rq &&
	    (rqd->fwd_peer != peer || rqd->fwd_gen != gen) &&
	    !time_after(jiffies, rqd->fwd_deadline)) {
		rqd->fwd_peer = peer;
		rqd->fwd_gen = gen;
		atomic_inc(&rqd->pending);
		claimed = true;
	}
	spin_unlock_irq(&fwd->lock);
	return claimed;
}

/*
 * Whether @rqd goes to a replica: a read of an owner whose disk failed,
 * while this node still owns the volume. Once it stepped down, such a read
 * is forwarded to the new owner like any other.
 */
static bool chorus_fwd_to_replica(struct chorus_volume *vol,
				  struct chorus_rq *rqd)
{
	return rqd->fwd_replica &&
	       READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER;
}

static void chorus_fwd_init_hdr(struct chorus_volume *vol, struct request *rq,
				struct chorus_wire_hdr *hdr,
				struct chorus_msg_data *data)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	u64 epoch = READ_ONCE(vol->repl.epoch);
	u32 bytes = blk_rq_bytes(rq);

	switch (req_op(rq)) {
	case REQ_OP_READ:
		chorus_wire_init_hdr(hdr, chorus_fwd_to_replica(vol, rqd) ?
				     CHORUS_MSG_REPLICA_READ : CHORUS_MSG_READ,
				     epoch, rqd->fwd_id, blk_rq_pos(rq), bytes);
		return;
	case REQ_OP_FLUSH:
		chorus_wire_init_hdr(hdr, CHORUS_MSG_FWD_FLUSH, epoch,
				     rqd->fwd_id, 0, 0);
		return;
	default:
		break;
	}
	chorus_wire_init_hdr(hdr, CHORUS_MSG_FWD_WRITE, epoch, rqd->fwd_id,
			     blk_rq_pos(rq), bytes);
	chorus_repl_hdr_data(hdr, rq, data);
}

/*
 * Send a claimed request on @peer's session @gen and drop the claim's
 * reference. If that session is gone, nothing is sent: the request stays
 * held for the next one.
 */
static void chorus_fwd_send(struct chorus_peer *peer, struct request *rq,
			    u32 gen)
{
	struct chorus_msg_data data = {};
	struct chorus_wire_hdr hdr;
	struct chorus_conn *conn;
	int ret = 0;

	chorus_fwd_init_hdr(peer->vol, rq, &hdr, &data);
	down_read(&peer->session_sem);
	conn = peer->conns[rq->mq_hctx->queue_num % peer->nr_conns];
	if (conn && conn->gen == gen)
		ret = chorus_conn_send(conn, &hdr, NULL, data.len ? &data : NULL);
	up_read(&peer->session_sem);
	if (ret)
		chorus_peer_fail(peer, gen, "send failed");
	chorus_rq_put(rq);
}

/*
 * The forward timeout counts from the request's arrival (start_ns), not
 * from now: a write that waited in the range tree behind an overlapping
 * one held for an owner must not get a fresh timeout, or its copy could
 * reach an owner after the host gave up on it and resent it on another
 * path (forwarding.md, "Stale writes", rule 2).
 */
static unsigned long chorus_fwd_deadline(struct chorus_rq *rqd)
{
	unsigned long timeout = chorus_fwd_timeout();
	unsigned long waited = nsecs_to_jiffies(ktime_get_ns() - rqd->start_ns);

	return jiffies + (waited < timeout ? timeout - waited : 0);
}

/*
 * Store @rq among what this node forwards, with its deadline. On failure
 * the request completes (BLK_STS_RESOURCE) and false is returned.
 */
static bool chorus_fwd_track(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_fwd *fwd = &vol->repl.fwd;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	u32 id;

	memset(rqd->seq, 0, sizeof(rqd->seq));
	/* Whoever answers it owns the volume: not restarted at a hand-over. */
	rqd->owner_gen = 0;
	rqd->fwd_peer = NULL;
	rqd->fwd_gen = 0;
	rqd->fwd_tried = 0;
	rqd->fwd_deadline = chorus_fwd_deadline(rqd);
	if (xa_alloc_cyclic(&fwd->inflight, &id, rq, XA_LIMIT(1, U32_MAX),
			    &fwd->next_id, GFP_NOIO) < 0) {
		WRITE_ONCE(rqd->status, BLK_STS_RESOURCE);
		chorus_rq_put(rq);
		return false;
	}
	rqd->fwd_id = id;
	return true;
}

/**
 * chorus_fwd_dispatch() - forward a request to the owner, or hold it
 * @vol: the volume, of which this node is not the owner
 * @rq: a started request holding the submitter's reference, which the
 *	answer (or the forward timeout, or a role change) drops
 *
 * Context: process context, GFP_NOIO scope; may sleep.
 */
void chorus_fwd_dispatch(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_fwd *fwd = &vol->repl.fwd;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	struct chorus_peer *peer;
	u32 gen;

	rqd->fwd_replica = false;
	if (!chorus_fwd_track(vol, rq))
		return;
	this_cpu_inc(vol->stats->forwarded);
	/*
	 * Stored, then the role read again: this node may have become the
	 * owner meanwhile, after its last look at what it holds. Pairs with
	 * the barrier in chorus_fwd_take_back(): one of us finds the request.
	 */
	smp_mb();
	if (READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER) {
		chorus_fwd_take_back(vol);
		return;
	}
	/*
	 * Stored first, then the owner looked up: a session established in
	 * between sees the entry (chorus_fwd_resend()), and the claim lets
	 * only one of us send it.
	 */
	peer = chorus_fwd_owner(vol, &gen);
	if (peer && chorus_fwd_claim(fwd, rq, peer, gen))
		chorus_fwd_send(peer, rq, gen);
	queue_delayed_work(chorus_wq, &fwd->expire_work, HZ);
}

/**
 * chorus_fwd_start() - start a request on a node that is not the owner
 * @vol: the volume
 * @rq: a started request
 *
 * Reads are forwarded at once; writes and flushes first go through the
 * range tree, like the owner's, so that overlapping writes are forwarded
 * one after the other.
 *
 * Context: as chorus_repl_queue_rq().
 */
void chorus_fwd_start(struct chorus_volume *vol, struct request *rq)
{
	if (req_op(rq) == REQ_OP_READ)
		chorus_fwd_dispatch(vol, rq);
	else
		chorus_repl_queue_rq(vol, rq);
}

/*
 * A replica that may serve an owner's reads, not in @tried: a connected,
 * unfenced member of the write set, up to date (it holds every write the
 * owner acknowledged) and with a working disk. *@wait says whether, if
 * none may now, one of the up-to-date members is only disconnected.
 */
static struct chorus_peer *chorus_fwd_reader(struct chorus_volume *vol,
					     u8 tried, u32 *gen, bool *wait)
{
	struct chorus_peer *peer;
	bool member, ok;
	int i;

	*wait = false;
	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		peer = vol->repl.peers[i];
		if (!peer || (tried & BIT(i)))
			continue;
		spin_lock_irq(&peer->lock);
		member = chorus_peer_is_copy(peer);
		ok = member && !peer->fenced &&
		     peer->conn_state == CHORUS_CONN_CONNECTED;
		*gen = peer->gen;
		spin_unlock_irq(&peer->lock);
		if (ok)
			return peer;
		*wait |= member;
	}
	return NULL;
}

/* Take @rq out of what is forwarded unless it is on a live session. */
static bool chorus_fwd_take(struct chorus_fwd *fwd, struct request *rq,
			    unsigned long idx)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	bool taken;

	spin_lock_irq(&fwd->lock);
	taken = xa_load(&fwd->inflight, idx) == rq && !chorus_fwd_sent_live(rqd);
	if (taken)
		xa_erase(&fwd->inflight, idx);
	spin_unlock_irq(&fwd->lock);
	return taken;
}

/*
 * Send an owner's read to a replica that may serve it; hold it while the
 * only ones that may are disconnected; fail it when none is left.
 */
static void chorus_fwd_reread(struct chorus_volume *vol, struct request *rq,
			      unsigned long idx)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	struct chorus_peer *peer;
	bool wait, held;
	u8 tried;
	u32 gen;

	/* Still held here: not answered, not on a live session. */
	spin_lock_irq(&vol->repl.fwd.lock);
	held = xa_load(&vol->repl.fwd.inflight, idx) == rq &&
	       !chorus_fwd_sent_live(rqd);
	tried = rqd->fwd_tried;
	spin_unlock_irq(&vol->repl.fwd.lock);
	if (!held)
		return;
	peer = chorus_fwd_reader(vol, tried, &gen, &wait);
	if (peer) {
		if (chorus_fwd_claim(&vol->repl.fwd, rq, peer, gen))
			chorus_fwd_send(peer, rq, gen);
		return;
	}
	if (wait || !chorus_fwd_take(&vol->repl.fwd, rq, idx))
		return;
	pr_warn_ratelimited("%s: the disk failed and no up-to-date replica can serve a read: it fails\n",
			    vol->name);
	WRITE_ONCE(rqd->status, BLK_STS_IOERR);
	chorus_rq_put(rq);
}

/**
 * chorus_fwd_read_replica() - read from a replica: the owner's disk failed
 * @vol: the volume, of which this node is the owner
 * @rq: a started read holding the submitter's reference, which the answer
 *	(or the forward timeout, or the lack of a replica to ask) drops
 *
 * Context: process context, GFP_NOIO scope; may sleep.
 */
void chorus_fwd_read_replica(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	rqd->fwd_replica = true;
	if (!chorus_fwd_track(vol, rq))
		return;
	this_cpu_inc(vol->stats->degraded_reads);
	chorus_fwd_reread(vol, rq, rqd->fwd_id);
	queue_delayed_work(chorus_wq, &vol->repl.fwd.expire_work, HZ);
}

/**
 * chorus_fwd_resend() - send what waits for an owner on its new session
 * @peer: a peer that said it is the owner, just connected
 * @gen: the session
 *
 * Context: process context, the peer's session_mutex held.
 */
void chorus_fwd_resend(struct chorus_peer *peer, u32 gen)
{
	struct chorus_fwd *fwd = &peer->vol->repl.fwd;
	unsigned int noio = memalloc_noio_save();
	struct request *rq;
	unsigned long idx;

	xa_for_each(&fwd->inflight, idx, rq) {
		/* An owner's own reads go to replicas, not to another owner. */
		if (chorus_fwd_to_replica(peer->vol, blk_mq_rq_to_pdu(rq)))
			continue;
		if (!chorus_fwd_claim(fwd, rq, peer, gen))
			continue;
		this_cpu_inc(peer->vol->stats->forward_resent);
		chorus_fwd_send(peer, rq, gen);
	}
	memalloc_noio_restore(noio);
}

/*
 * Fail a forwarded request, already out of &chorus_fwd.inflight, that no
 * node took before its deadline (or before this node's role changed).
 */
static void chorus_fwd_fail_expired(struct chorus_volume *vol,
				    struct request *rq)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

	this_cpu_inc(vol->stats->forward_expired);
	pr_warn_ratelimited("%s: no %s took a forwarded request in time: it fails\n",
			    vol->name, rqd->fwd_replica ? "replica" : "owner");
	WRITE_ONCE(rqd->status, BLK_STS_IOERR);
	chorus_rq_put(rq);
}

/*
 * Fail every forwarded request that is not on a live session: all of
 * them when @all, else those past the forward timeout. A request on a
 * live session is being sent or served: its answer completes it. An
 * owner's read held for a replica is sent to one that may serve it now.
 */
static void chorus_fwd_expire(struct chorus_volume *vol, bool all)
{
	struct chorus_fwd *fwd = &vol->repl.fwd;
	bool ours, expired, reread, fail;
	struct chorus_rq *rqd;
	struct request *rq;
	unsigned long idx;

	xa_for_each(&fwd->inflight, idx, rq) {
		rqd = blk_mq_rq_to_pdu(rq);
		spin_lock_irq(&fwd->lock);
		ours = xa_load(&fwd->inflight, idx) == rq;
		expired = all || time_after(jiffies, rqd->fwd_deadline);
		reread = ours && !expired && chorus_fwd_to_replica(vol, rqd);
		fail = ours && expired && !chorus_fwd_sent_live(rqd);
		if (fail)
			xa_erase(&fwd->inflight, idx);
		spin_unlock_irq(&fwd->lock);
		if (reread)
			chorus_fwd_reread(vol, rq, idx);
		if (fail)
			chorus_fwd_fail_expired(vol, rq);
	}
}

static void chorus_fwd_expire_workfn(struct work_struct *work)
{
	struct chorus_fwd *fwd =
		container_of(to_delayed_work(work), struct chorus_fwd, expire_work);
	struct chorus_repl *repl = container_of(fwd, struct chorus_repl, fwd);

	chorus_fwd_expire(container_of(repl, struct chorus_volume, repl), false);
	if (!xa_empty(&fwd->inflight))
		queue_delayed_work(chorus_wq, &fwd->expire_work, HZ);
}

/**
 * chorus_fwd_fail_all() - fail what this node holds for an owner
 * @vol: the volume, whose role is about to change to replica
 *
 * The role change waits for every request in flight: a request that no
 * owner has would never drain. Requests sent on a live session are left to
 * their answers. (A node that becomes the owner takes its requests back
 * instead: chorus_fwd_take_back().)
 *
 * Context: process context, chorus_repl.conf_lock held.
 */
void chorus_fwd_fail_all(struct chorus_volume *vol)
{
	lockdep_assert_held(&vol->repl.conf_lock);
	chorus_fwd_expire(vol, true);
}

static void chorus_fwd_take_back_workfn(struct work_struct *work)
{
	struct chorus_fwd *fwd =
		container_of(work, struct chorus_fwd, take_back_work);
	struct chorus_repl *repl = container_of(fwd, struct chorus_repl, fwd);
	struct chorus_volume *vol = container_of(repl, struct chorus_volume, repl);
	unsigned int noio = memalloc_noio_save();
	unsigned int nr = 0;
	struct request *rq;
	unsigned long idx;
	bool ours;

	/* Pairs with the barrier in chorus_fwd_take_back(). */
	smp_mb();
	/* Still the owner: a role change back would have frozen the queue. */
	if (smp_load_acquire(&repl->role) != CHORUS_ROLE_OWNER)
		goto out;
	xa_for_each(&fwd->inflight, idx, rq) {
		struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

		spin_lock_irq(&fwd->lock);
		ours = xa_load(&fwd->inflight, idx) == rq;
		if (ours)
			xa_erase(&fwd->inflight, idx);
		spin_unlock_irq(&fwd->lock);
		if (!ours)
			continue;
		rqd->fwd_id = 0;
		/*
		 * Past its deadline the host may have resent it elsewhere:
		 * written here now, it could overwrite the newer copy. It
		 * fails, as the expiry (at most a second away) would fail it.
		 */
		if (time_after(jiffies, rqd->fwd_deadline)) {
			chorus_fwd_fail_expired(vol, rq);
			continue;
		}
		chorus_repl_restart(vol, rq);
		nr++;
	}
	if (nr)
		pr_info("%s: %u forwarded requests started here, the owner now\n",
			vol->name, nr);
out:
	memalloc_noio_restore(noio);
}

/**
 * chorus_fwd_take_back() - start here what this node forwarded
 * @vol: the volume, of which this node has just become the owner
 *
 * Every session ended when the role changed, so no send is in progress and
 * an answer that still arrives finds nothing. A write the old owner may
 * have applied already is written again: a block write is idempotent, and
 * overlapping writes are still ordered by this node's range tree. The
 * requests start from &chorus_fwd.take_back_work.
 *
 * Context: any.
 */
void chorus_fwd_take_back(struct chorus_volume *vol)
{
	/* Pairs with the barrier in chorus_fwd_dispatch(), via the work. */
	smp_mb();
	queue_work(chorus_wq, &vol->repl.fwd.take_back_work);
}

/* Copy a READ_DATA payload into the request's pages. */
static void chorus_fwd_copy_read(struct request *rq, struct page **pages)
{
	struct req_iterator iter;
	struct bio_vec bv;
	size_t off = 0;

	rq_for_each_segment(bv, rq, iter) {
		unsigned int done = 0;

		while (done < bv.bv_len) {
			struct page *src = pages[off >> PAGE_SHIFT];
			unsigned int soff = offset_in_page(off);
			unsigned int n = min_t(unsigned int, bv.bv_len - done,
					       PAGE_SIZE - soff);

			memcpy_to_page(bv.bv_page, bv.bv_offset + done,
				       page_address(src) + soff, n);
			done += n;
			off += n;
		}
	}
}

static bool chorus_fwd_answer_matches(struct request *rq,
				      const struct chorus_wire_hdr *hdr)
{
	u8 want;

	switch (req_op(rq)) {
	case REQ_OP_READ:
		want = CHORUS_MSG_READ_DATA;
		break;
	case REQ_OP_FLUSH:
		return hdr->type == CHORUS_MSG_FWD_FLUSH_ACK;
	default:
		want = CHORUS_MSG_FWD_WRITE_ACK;
		break;
	}
	return hdr->type == want &&
	       le64_to_cpu(hdr->sector) == blk_rq_pos(rq) &&
	       le32_to_cpu(hdr->len) == blk_rq_bytes(rq);
}

/**
 * chorus_fwd_answer() - the owner answered a forwarded request
 * @conn: the connection it came on
 * @hdr: FWD_WRITE_ACK, FWD_FLUSH_ACK or READ_DATA, checked
 * @pages: READ_DATA's payload, owned by this function; NULL if none
 * @nr_pages: entries of @pages
 *
 * An answer on another session than the request's last send is late and
 * ignored. A refusal (the sender is not the owner at that epoch) holds the
 * request again for the next owner.
 *
 * Context: the transport's receive context.
 * Return: 0, or -EPROTO when the answer does not fit its request.
 */
int chorus_fwd_answer(struct chorus_conn *conn,
		      const struct chorus_wire_hdr *hdr, struct page **pages,
		      unsigned int nr_pages)
{
	struct chorus_volume *vol = conn->peer->vol;
	struct chorus_fwd *fwd = &vol->repl.fwd;
	u32 status = le32_to_cpu(hdr->status);
	u64 seq = le64_to_cpu(hdr->seq);
	struct chorus_rq *rqd = NULL;
	bool refused = false;
	struct request *rq;
	int ret = 0;

	spin_lock_irq(&fwd->lock);
	rq = seq <= U32_MAX ? xa_load(&fwd->inflight, seq) : NULL;
	if (rq) {
		rqd = blk_mq_rq_to_pdu(rq);
		if (rqd->fwd_peer != conn->peer || rqd->fwd_gen != conn->gen) {
			rq = NULL;
		} else if (!chorus_fwd_answer_matches(rq, hdr)) {
			rq = NULL;
			ret = -EPROTO;
		} else if (status != CHORUS_WIRE_OK &&
			   chorus_fwd_to_replica(vol, rqd)) {
			/* Not this replica again: the next one is asked. */
			rqd->fwd_tried |= BIT(conn->peer->slot);
			rqd->fwd_peer = NULL;
			rq = NULL;
			refused = true;
		} else if (status == CHORUS_WIRE_NOT_MEMBER ||
			   status == CHORUS_WIRE_STALE_EPOCH) {
			rqd->fwd_peer = NULL;
			rq = NULL;
		} else {
			xa_erase(&fwd->inflight, seq);
		}
	}
	spin_unlock_irq(&fwd->lock);

	if (rq) {
		if (status != CHORUS_WIRE_OK)
			WRITE_ONCE(rqd->status, BLK_STS_IOERR);
		else if (req_op(rq) == REQ_OP_READ)
			chorus_fwd_copy_read(rq, pages);
		chorus_rq_put(rq);
	} else if (refused) {
		pr_info_ratelimited("%s: peer %u could not serve a read (status %u): another replica is asked\n",
				    vol->name, conn->peer->node_id, status);
		if (status == CHORUS_WIRE_DISK_FAILED)
			chorus_peer_disk_failed(conn->peer);
		mod_delayed_work(chorus_wq, &fwd->expire_work, 0);
	} else if (status == CHORUS_WIRE_NOT_MEMBER ||
		   status == CHORUS_WIRE_STALE_EPOCH) {
		pr_info_ratelimited("%s: peer %u refused a forwarded request (status %u): held for the next owner\n",
				    vol->name, conn->peer->node_id, status);
	}
	chorus_pages_free(pages, nr_pages);
	if (ret)
		pr_warn_ratelimited("%s: peer %u: answer that does not fit its forwarded request; closing\n",
				    vol->name, conn->peer->node_id);
	return ret;
}

/* The owner's side. */
