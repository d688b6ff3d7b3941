// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: serving forwarded requests.
 *
 * The owner serves a forwarded request only if it is still the owner at
 * the epoch the request carries and the session it came on is still the
 * current one: it submits a bio to its own block device (so the lease,
 * the activity log and the write set apply as to any write) from a work
 * item, never from the receive thread, whose acks that write may wait
 * for, and answers on the same session. A replica serves an owner's
 * REPLICA_READ (the owner's disk failed) the same way, from its own disk.
 * The access point's side is forward.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/highmem.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "chorus.h"

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

static void chorus_fwd_submit_workfn(struct work_struct *work)
{
	struct chorus_fwd_io *io =
		container_of(work, struct chorus_fwd_io, submit_work);
	unsigned int noio = memalloc_noio_save();

	io->status = chorus_fwd_check(io);
	if (io->status == CHORUS_WIRE_OK &&
	    (io->req.type == CHORUS_MSG_READ ||
	     io->req.type == CHORUS_MSG_REPLICA_READ)) {
		io->nr_pages = DIV_ROUND_UP(le32_to_cpu(io->req.len), PAGE_SIZE);
		io->pages = chorus_pages_alloc(io->nr_pages, GFP_NOIO);
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
