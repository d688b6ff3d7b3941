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
 * The owner serves a forwarded request only if it is still the owner at
 * the epoch the request carries and the session it came on is still the
 * current one: it submits a bio to its own block device (so the lease,
 * the activity log and the write set apply as to any write) from a work
 * item, never from the receive thread, whose acks that write may wait
 * for, and answers on the same session.
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
 * Store @rq among what this node forwards, with its deadline. On failure
 * the request completes (BLK_STS_RESOURCE) and false is returned.
 */
static bool chorus_fwd_track(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_fwd *fwd = &vol->repl.fwd;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	u32 id;

	memset(rqd->seq, 0, sizeof(rqd->seq));
	rqd->fwd_peer = NULL;
	rqd->fwd_gen = 0;
	rqd->fwd_tried = 0;
	rqd->fwd_deadline = jiffies + chorus_fwd_timeout();
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
		if (!fail)
			continue;
		this_cpu_inc(vol->stats->forward_expired);
		pr_warn_ratelimited("%s: no %s took a forwarded request in time: it fails\n",
				    vol->name,
				    rqd->fwd_replica ? "replica" : "owner");
		WRITE_ONCE(rqd->status, BLK_STS_IOERR);
		chorus_rq_put(rq);
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
		spin_lock_irq(&fwd->lock);
		ours = xa_load(&fwd->inflight, idx) == rq;
		if (ours)
			xa_erase(&fwd->inflight, idx);
		spin_unlock_irq(&fwd->lock);
		if (!ours)
			continue;
		((struct chorus_rq *)blk_mq_rq_to_pdu(rq))->fwd_id = 0;
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

/**
 * struct chorus_fwd_io - a forwarded request being served by the owner
 * @submit_work: checks and submits it
 * @answer_work: sends the answer
 * @peer: the access point that sent it
 * @gen: the session it came on
 * @conn_index: the connection it came on, where the answer goes
 * @req: its header
 * @pages: its payload (a write), or the pages read (a read)
 * @nr_pages: entries of @pages
 * @status: &enum chorus_wire_status of the answer
 */
struct chorus_fwd_io {
	struct work_struct submit_work;
	struct work_struct answer_work;
	struct chorus_peer *peer;
	u32 gen;
	int conn_index;
	struct chorus_wire_hdr req;
	struct page **pages;
	unsigned int nr_pages;
	u32 status;
};

static u8 chorus_fwd_answer_type(u8 type)
{
	switch (type) {
	case CHORUS_MSG_READ:
	case CHORUS_MSG_REPLICA_READ:
		return CHORUS_MSG_READ_DATA;
	case CHORUS_MSG_FWD_FLUSH:
		return CHORUS_MSG_FWD_FLUSH_ACK;
	default:
		return CHORUS_MSG_FWD_WRITE_ACK;
	}
}

/*
 * One request @peer forwarded is no longer served here. The count drops
 * and the waiters are woken under the wait queue's lock, which
 * chorus_fwd_peer_quiesce() takes once it saw zero: the peer may be freed
 * as soon as that returns, and this must not touch it after.
 */
static void chorus_fwd_served_done(struct chorus_peer *peer)
{
	unsigned long flags;

	spin_lock_irqsave(&peer->fwd_wait.lock, flags);
	if (atomic_dec_and_test(&peer->fwd_serving))
		wake_up_all_locked(&peer->fwd_wait);
	spin_unlock_irqrestore(&peer->fwd_wait.lock, flags);
}

static void chorus_fwd_answer_workfn(struct work_struct *work)
{
	struct chorus_fwd_io *io =
		container_of(work, struct chorus_fwd_io, answer_work);
	struct chorus_peer *peer = io->peer;
	struct chorus_msg_data data = { .detached = true };
	struct chorus_wire_hdr hdr;
	struct chorus_conn *conn;
	int ret = 0;

	chorus_wire_init_hdr(&hdr, chorus_fwd_answer_type(io->req.type),
			     le64_to_cpu(io->req.epoch), le64_to_cpu(io->req.seq),
			     le64_to_cpu(io->req.sector), le32_to_cpu(io->req.len));
	hdr.status = cpu_to_le32(io->status);
	if (chorus_fwd_answer_type(io->req.type) == CHORUS_MSG_READ_DATA &&
	    io->status == CHORUS_WIRE_OK) {
		hdr.payload_len = io->req.len;
		data.pages = io->pages;
		data.len = le32_to_cpu(io->req.len);
	}

	down_read(&peer->session_sem);
	conn = peer->conns[io->conn_index];
	if (conn && conn->gen == io->gen)
		ret = chorus_conn_send(conn, &hdr, NULL, data.len ? &data : NULL);
	up_read(&peer->session_sem);
	if (ret)
		chorus_peer_fail(peer, io->gen, "send failed");

	chorus_pages_free(io->pages, io->nr_pages);
	kfree(io);
	chorus_fwd_served_done(peer);
}

static void chorus_fwd_served_endio(struct bio *bio)
{
	struct chorus_fwd_io *io = bio->bi_private;

	/* Offline: this node stopped being the owner before it started. */
	if (bio->bi_status == BLK_STS_OFFLINE)
		io->status = CHORUS_WIRE_NOT_MEMBER;
	else if (bio->bi_status)
		io->status = CHORUS_WIRE_IO_ERROR;
	bio_put(bio);
	queue_work(chorus_reply_wq, &io->answer_work);
}

/**
 * chorus_fwd_served() - whether a request is one this node serves for
 *	another access point
 * @rq: a request of the volume's queue
 *
 * Such bios never merge with others, so the first says it.
 */
bool chorus_fwd_served(struct request *rq)
{
	return rq->bio && rq->bio->bi_end_io == chorus_fwd_served_endio;
}

/*
 * A replica's disk completed an owner's REPLICA_READ. A failure fails the
 * disk (disk.c); the owner asks another replica.
 */
static void chorus_fwd_replica_endio(struct bio *bio)
{
	struct chorus_fwd_io *io = bio->bi_private;

	chorus_disk_io_end(io->peer->vol, bio);
	if (bio->bi_status)
		io->status = CHORUS_WIRE_DISK_FAILED;
	bio_put(bio);
	queue_work(chorus_reply_wq, &io->answer_work);
}

/*
 * Whether @io may be served: an owner's REPLICA_READ by a replica whose
 * disk works, from the owner of the session at the volume's epoch; any
 * other forwarded request by the owner at its epoch.
 */
static u32 chorus_fwd_check(struct chorus_fwd_io *io)
{
	struct chorus_peer *peer = io->peer;
	struct chorus_volume *vol = peer->vol;
	bool replica_read = io->req.type == CHORUS_MSG_REPLICA_READ;
	u32 role = replica_read ? CHORUS_ROLE_REPLICA : CHORUS_ROLE_OWNER;
	bool live;

	/*
	 * The session is current until a failure or a teardown names it
	 * (fail_gen); it may not be CONNECTED yet: the owner resends what it
	 * holds for the peer first, and the peer forwards meanwhile.
	 */
	spin_lock_irq(&peer->lock);
	live = peer->gen == io->gen && peer->fail_gen != io->gen &&
	       !peer->fenced && (!replica_read || peer->peer_owner);
	spin_unlock_irq(&peer->lock);
	if (!live || READ_ONCE(vol->repl.role) != role || vol->diskless)
		return CHORUS_WIRE_NOT_MEMBER;
	if (le64_to_cpu(io->req.epoch) != READ_ONCE(vol->repl.epoch))
		return CHORUS_WIRE_STALE_EPOCH;
	if (replica_read && chorus_disk_failed(vol))
		return CHORUS_WIRE_DISK_FAILED;
	return CHORUS_WIRE_OK;
}

static struct bio *chorus_fwd_bio(struct chorus_fwd_io *io)
{
	struct chorus_volume *vol = io->peer->vol;
	u16 flags = le16_to_cpu(io->req.flags);
	u32 len = le32_to_cpu(io->req.len);
	blk_opf_t opf = REQ_NOMERGE;
	struct bio *bio;
	unsigned int i;

	if (io->req.type == CHORUS_MSG_FWD_FLUSH)
		opf |= REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC;
	else if (io->req.type == CHORUS_MSG_READ ||
		 io->req.type == CHORUS_MSG_REPLICA_READ)
		opf |= REQ_OP_READ;
	else if (flags & CHORUS_MSG_F_DISCARD)
		opf |= REQ_OP_DISCARD;
	else if (flags & CHORUS_MSG_F_ZEROES)
		opf |= REQ_OP_WRITE_ZEROES;
	else
		opf |= REQ_OP_WRITE | REQ_SYNC;
	if (flags & CHORUS_MSG_F_FUA)
		opf |= REQ_FUA;

	/* A replica reads its own disk: its block device forwards reads. */
	if (io->req.type == CHORUS_MSG_REPLICA_READ) {
		bio = bio_alloc(vol->backing.bdev, io->nr_pages, opf, GFP_NOIO);
		bio->bi_end_io = chorus_fwd_replica_endio;
	} else {
		bio = bio_alloc(vol->disk->part0, io->nr_pages, opf, GFP_NOIO);
		bio->bi_end_io = chorus_fwd_served_endio;
	}
	bio->bi_iter.bi_sector = le64_to_cpu(io->req.sector);
	bio->bi_private = io;
	for (i = 0; i < io->nr_pages; i++)
		__bio_add_page(bio, io->pages[i],
			       min_t(u32, len - i * PAGE_SIZE, PAGE_SIZE), 0);
	if (!io->nr_pages && io->req.type != CHORUS_MSG_FWD_FLUSH)
		bio->bi_iter.bi_size = len;
	return bio;
}

/* Pages for a read of @len bytes, or NULL. */
static struct page **chorus_fwd_read_pages(u32 len, unsigned int *nr)
{
	struct page **pages;
	unsigned int i;

	*nr = DIV_ROUND_UP(len, PAGE_SIZE);
	pages = kcalloc(*nr, sizeof(*pages), GFP_NOIO);
	for (i = 0; pages && i < *nr; i++) {
		pages[i] = alloc_page(GFP_NOIO);
		if (!pages[i]) {
			chorus_pages_free(pages, *nr);
			return NULL;
		}
	}
	return pages;
}

static void chorus_fwd_submit_workfn(struct work_struct *work)
{
	struct chorus_fwd_io *io =
		container_of(work, struct chorus_fwd_io, submit_work);
	unsigned int noio = memalloc_noio_save();

	io->status = chorus_fwd_check(io);
	if (io->status == CHORUS_WIRE_OK &&
	    (io->req.type == CHORUS_MSG_READ ||
	     io->req.type == CHORUS_MSG_REPLICA_READ)) {
		io->pages = chorus_fwd_read_pages(le32_to_cpu(io->req.len),
						  &io->nr_pages);
		if (!io->pages) {
			io->nr_pages = 0;
			io->status = CHORUS_WIRE_IO_ERROR;
		}
	}
	if (io->status == CHORUS_WIRE_OK &&
	    io->req.type == CHORUS_MSG_REPLICA_READ) {
		chorus_disk_io_start(io->peer->vol);
		submit_bio(chorus_fwd_bio(io));
	} else if (io->status == CHORUS_WIRE_OK) {
		this_cpu_inc(io->peer->vol->stats->forward_served);
		submit_bio(chorus_fwd_bio(io));
	} else {
		queue_work(chorus_reply_wq, &io->answer_work);
	}
	memalloc_noio_restore(noio);
}

/**
 * chorus_fwd_serve() - an access point forwarded a request to this owner,
 *	or an owner whose disk failed asks this replica for a read
 * @conn: the connection it came on
 * @hdr: FWD_WRITE, FWD_FLUSH, READ or REPLICA_READ, checked
 * @pages: FWD_WRITE's payload, owned by this function; NULL if none
 * @nr_pages: entries of @pages
 *
 * Context: the transport's receive context.
 * Return: 0, or -ENOMEM (the session is closed).
 */
int chorus_fwd_serve(struct chorus_conn *conn,
		     const struct chorus_wire_hdr *hdr, struct page **pages,
		     unsigned int nr_pages)
{
	struct chorus_peer *peer = conn->peer;
	struct chorus_fwd_io *io = kzalloc(sizeof(*io), GFP_NOIO);

	if (!io) {
		chorus_pages_free(pages, nr_pages);
		return -ENOMEM;
	}
	INIT_WORK(&io->submit_work, chorus_fwd_submit_workfn);
	INIT_WORK(&io->answer_work, chorus_fwd_answer_workfn);
	io->peer = peer;
	io->gen = conn->gen;
	io->conn_index = conn->index;
	io->req = *hdr;
	io->pages = pages;
	io->nr_pages = nr_pages;
	atomic_inc(&peer->fwd_serving);
	queue_work(chorus_fwd_wq, &io->submit_work);
	return 0;
}

/**
 * chorus_fwd_peer_quiesce() - wait until nothing a peer forwarded is served
 * @peer: a peer whose session is closed
 *
 * Context: process context.
 */
void chorus_fwd_peer_quiesce(struct chorus_peer *peer)
{
	wait_event(peer->fwd_wait, !atomic_read(&peer->fwd_serving));
	/* The last chorus_fwd_served_done() has left the lock: done with it. */
	spin_lock_irq(&peer->fwd_wait.lock);
	spin_unlock_irq(&peer->fwd_wait.lock);
}

/**
 * chorus_fwd_peer_idle() - wait a while until nothing a peer forwarded is
 *	served
 * @peer: a peer whose session is closed
 * @timeout: at most this long, in jiffies
 *
 * Context: process context.
 * Return: true once nothing is.
 */
bool chorus_fwd_peer_idle(struct chorus_peer *peer, unsigned long timeout)
{
	return wait_event_timeout(peer->fwd_wait, !atomic_read(&peer->fwd_serving),
				  timeout);
}
