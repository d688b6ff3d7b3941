// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: RDMA, receiving.
 *
 * A receive completion adds the credits its immediate data returns, has
 * the READs it reports done invalidated (rdma_read.c), and puts the buffer
 * on chorus_rdma_queue.rx_done. Received buffers are consumed by the
 * handshake (recv_sync) or by the connection's receive thread, which hands
 * each message to chorus_conn_recv() like TCP's.
 *
 * Assembly checks every buffer: the first chunk's header as any message,
 * the others byte for byte against it, each chunk's length; the filled
 * pages are taken as the message's payload and fresh ones posted in their
 * place (rdma_send.c describes the chunks). A message with
 * CHORUS_RDMA_READ in its immediate data is READ instead (rdma_read.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/kthread.h>
#include <linux/slab.h>

#include "transport_rdma.h"

/*
 * Whether @r may hold an owner's ack: a whole message of a header only,
 * which the completion offers chorus_conn_recv_atomic(). Such a buffer
 * always holds a whole message: a chunk after a message's first carries
 * payload (chorus_rdma_check_chunk()).
 */
static bool chorus_rdma_maybe_ack(struct chorus_rdma_queue *q,
				  struct chorus_rdma_recv *r)
{
	const char *why;

	if (r->byte_len != sizeof(*r->hdr) ||
	    chorus_rdma_check_imm(r->imm, r->byte_len, false, &why) !=
	    CHORUS_RDMA_RX_CHUNK)
		return false;
	ib_dma_sync_single_for_cpu(q->dev, r->sge[0].addr, sizeof(*r->hdr),
				   DMA_FROM_DEVICE);
	return (r->hdr->type == CHORUS_MSG_WRITE_ACK ||
		r->hdr->type == CHORUS_MSG_FLUSH_ACK) &&
	       !chorus_rdma_check_chunk(r->hdr, 0, NULL, 0, &why);
}

/* Repost a consumed buffer and count its credit for the other side. */
static int chorus_rdma_repost(struct chorus_rdma_queue *q,
			      struct chorus_rdma_recv *r)
{
	unsigned long flags;
	int ret = chorus_rdma_post_recv(q, r);

	if (ret)
		return ret;
	spin_lock_irqsave(&q->lock, flags);
	q->to_return++;
	spin_unlock_irqrestore(&q->lock, flags);
	return 0;
}

/*
 * Act on an ack in the completion, as nvmet-rdma handles a command in its
 * CQ's context: an owner at depth gets an ack per write per replica, and
 * waking the receive thread for each cost more than the rest of the ack.
 * What chorus_conn_recv_atomic() leaves goes to the thread, in order. The
 * buffer of a header only has all its pages: reposting allocates nothing.
 */
static void chorus_rdma_ack_in_completion(struct chorus_rdma_queue *q,
					  struct chorus_rdma_recv *r,
					  struct chorus_conn *conn)
{
	bool done = chorus_conn_recv_atomic(conn, r->hdr);
	unsigned long flags;
	bool stopping;

	if (done) {
		atomic64_inc(&chorus_rdma_st_acks_in_completion);
		if (chorus_rdma_repost(q, r))
			chorus_rdma_kill(q, "cannot repost a receive buffer");
		else
			chorus_rdma_return_credits(q);
	}
	spin_lock_irqsave(&q->lock, flags);
	if (!done)
		list_add_tail(&r->entry, &q->rx_done);
	q->acks_running--;
	stopping = !q->acks_running && !q->ack_conn;
	spin_unlock_irqrestore(&q->lock, flags);
	if (!done)
		wake_up_all(&q->rx_wait);
	if (stopping)
		wake_up_all(&q->wait);	/* chorus_rdma_stop_acks() */
}

/**
 * chorus_rdma_recv_done() - a receive buffer was filled
 * @cq: the queue's CQ
 * @wc: the work completion, for a &struct chorus_rdma_recv
 *
 * Takes the credits and READs done the immediate data returns, acts on an
 * owner's OK ack at once (chorus_rdma_ack_in_completion()), and queues any
 * other buffer on chorus_rdma_queue.rx_done for the receive thread. Senders
 * are woken for credits, the receive thread only for what it receives.
 * Context: softirq.
 */
void chorus_rdma_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chorus_rdma_recv *r =
		container_of(wc->wr_cqe, struct chorus_rdma_recv, cqe);
	struct chorus_rdma_queue *q = r->queue;
	struct chorus_conn *conn = NULL;
	unsigned long flags;
	bool overflow, maybe_ack;
	u32 credits;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("RDMA receive failed: %s\n",
					    ib_wc_status_msg(wc->status));
		chorus_rdma_kill(q, "RDMA receive failed");
		return;
	}
	r->byte_len = wc->byte_len;
	r->imm = wc->wc_flags & IB_WC_WITH_IMM ? be32_to_cpu(wc->ex.imm_data) : 0;
	credits = r->imm & CHORUS_RDMA_CREDIT_MASK;
	maybe_ack = chorus_rdma_maybe_ack(q, r);

	spin_lock_irqsave(&q->lock, flags);
	q->credits += credits;
	overflow = q->credits > q->peer_depth;
	if (maybe_ack && !q->dead && q->ack_conn) {
		conn = q->ack_conn;
		q->acks_running++;
	} else {
		list_add_tail(&r->entry, &q->rx_done);
	}
	spin_unlock_irqrestore(&q->lock, flags);
	if (overflow) {
		pr_warn_ratelimited("RDMA peer returned more credits than it has buffers\n");
		chorus_rdma_kill(q, "protocol error");
	}
	if (!chorus_rdma_reads_done(q, (r->imm >> CHORUS_RDMA_DONE_SHIFT) &
				    CHORUS_RDMA_DONE_MASK)) {
		pr_warn_ratelimited("RDMA peer READ more messages than were sent to READ\n");
		chorus_rdma_kill(q, "protocol error");
	}
	if (credits)
		wake_up_all(&q->wait);
	if (conn)
		chorus_rdma_ack_in_completion(q, r, conn);
	else
		wake_up_all(&q->rx_wait);
}

/**
 * chorus_rdma_stop_acks() - end acting on acks in the receive completion
 * @q: the queue
 *
 * Waits for a completion that acts on one now: after this, nothing but the
 * receive thread (stopped next) reaches the connection's peer.
 * Context: process context; sleeps.
 */
void chorus_rdma_stop_acks(struct chorus_rdma_queue *q)
{
	spin_lock_irq(&q->lock);
	q->ack_conn = NULL;
	spin_unlock_irq(&q->lock);
	wait_event(q->wait, !READ_ONCE(q->acks_running));
}

/*
 * Take the next filled receive buffer, waiting up to @timeout. With @drain,
 * a buffer filled before the queue died is still taken, as TCP reads the
 * bytes that came before a FIN: a peer refusing a handshake closes right
 * after its HELLO_ACK reached us, and the refusal must be read, not lost to
 * the disconnect.
 */
static int chorus_rdma_next_recv(struct chorus_rdma_queue *q, long timeout,
				 bool drain, struct chorus_rdma_recv **rp)
{
	struct chorus_rdma_recv *r = NULL;

	/* Idle: a connection with no traffic is not a hung task. */
	wait_event_idle_timeout(q->rx_wait, READ_ONCE(q->dead) ||
				!list_empty_careful(&q->rx_done) ||
				kthread_should_stop(), timeout);
	spin_lock_irq(&q->lock);
	if ((drain || !q->dead) && !list_empty(&q->rx_done)) {
		r = list_first_entry(&q->rx_done, struct chorus_rdma_recv, entry);
		list_del(&r->entry);
	}
	spin_unlock_irq(&q->lock);
	if (r) {
		*rp = r;
		return 0;
	}
	return READ_ONCE(q->dead) ? -ECONNRESET : -ETIMEDOUT;
}

/**
 * chorus_rdma_msg_reset() - drop the message being assembled, and its pages
 * @q: the queue
 *
 * Context: the receive thread or the handshake, or release.
 */
void chorus_rdma_msg_reset(struct chorus_rdma_queue *q)
{
	if (q->msg_pages)
		chorus_pages_free(q->msg_pages, q->msg_nr);
	q->msg_pages = NULL;
	q->msg_nr = 0;
	q->msg_off = 0;
	q->msg_active = false;
	q->msg_read = false;
}

/*
 * Add a filled receive buffer to the message being assembled, taking its
 * pages. Return: 1 when the message is complete, 0 when more is to come,
 * -EPROTO (and *@why) when the buffer does not fit.
 */
static int chorus_rdma_take(struct chorus_rdma_queue *q,
			    struct chorus_rdma_recv *r, const char **why)
{
	u32 n, len, i, k;
	int kind;

	kind = chorus_rdma_check_imm(r->imm, r->byte_len, q->msg_active, why);
	if (kind < 0)
		return kind;
	if (kind == CHORUS_RDMA_RX_CREDIT)
		return 0;
	n = r->byte_len - sizeof(*r->hdr);
	ib_dma_sync_single_for_cpu(q->dev, r->sge[0].addr, sizeof(*r->hdr),
				   DMA_FROM_DEVICE);
	if (kind == CHORUS_RDMA_RX_READ)
		return chorus_rdma_take_read(q, r, why);
	if (chorus_rdma_check_chunk(r->hdr, n, q->msg_active ? &q->msg_hdr : NULL,
				    q->msg_off, why))
		return -EPROTO;
	if (!q->msg_active) {
		q->msg_hdr = *r->hdr;
		len = le32_to_cpu(q->msg_hdr.payload_len);
		if (len) {
			q->msg_nr = DIV_ROUND_UP(len, PAGE_SIZE);
			q->msg_pages = kcalloc(q->msg_nr, sizeof(*q->msg_pages),
					       GFP_NOIO);
			if (!q->msg_pages) {
				*why = "memory";
				return -ENOMEM;
			}
		}
		q->msg_off = 0;
		q->msg_active = true;
	}
	len = le32_to_cpu(q->msg_hdr.payload_len);

	/* The check keeps these pages inside q->msg_pages. */
	k = DIV_ROUND_UP(n, PAGE_SIZE);
	for (i = 0; i < k; i++) {
		ib_dma_unmap_page(q->dev, r->sge[1 + i].addr, PAGE_SIZE,
				  DMA_FROM_DEVICE);
		q->msg_pages[q->msg_off / PAGE_SIZE + i] = r->pages[i];
		r->pages[i] = NULL;
	}
	q->msg_off += n;
	return q->msg_off == len;
}

/*
 * Receive one whole message; @drain as for chorus_rdma_next_recv(). On
 * success the caller owns q->msg_pages and must clear q->msg_active
 * (chorus_rdma_msg_done()).
 */
static int chorus_rdma_recv_msg(struct chorus_rdma_queue *q, long timeout,
				bool drain, const char **why)
{
	struct chorus_rdma_recv *r;
	int ret, taken;

	for (;;) {
		ret = chorus_rdma_next_recv(q, timeout, drain, &r);
		if (ret) {
			*why = q->why ?: "connection closed";
			return ret;
		}
		taken = chorus_rdma_take(q, r, why);
		ret = chorus_rdma_repost(q, r);
		/* A dead QP may refuse the buffer; release frees it. */
		if (ret && !(drain && READ_ONCE(q->dead))) {
			*why = "cannot repost a receive buffer";
			return ret;
		}
		if (taken < 0)
			return taken;
		if (taken)
			return q->msg_read ? chorus_rdma_read_msg(q, why) : 0;
		chorus_rdma_return_credits(q);
	}
}

static void chorus_rdma_msg_done(struct chorus_rdma_queue *q)
{
	q->msg_pages = NULL;
	q->msg_nr = 0;
	q->msg_active = false;
	q->msg_read = false;
}

/**
 * chorus_rdma_recv_sync() - &chorus_transport_ops.recv_sync of the RDMA
 * transport: receive one handshake message
 * @conn: the connection
 * @hdr: where its header goes
 * @body: where its payload goes
 * @body_len: the most payload @body takes; the header's payload_len says
 *	how much came
 * @timeout_ms: bound for the wait
 *
 * Context: process context; sleeps.
 * Return: 0, -EPROTO for a message that is malformed or longer than
 * @body_len, or another negative errno.
 */
int chorus_rdma_recv_sync(struct chorus_conn *conn,
			  struct chorus_wire_hdr *hdr, void *body,
			  size_t body_len, int timeout_ms)
{
	struct chorus_rdma_queue *q = conn->queue;
	const char *why;
	u32 payload;
	int ret;

	ret = chorus_rdma_recv_msg(q, msecs_to_jiffies(timeout_ms), true,
				   &why);
	if (ret) {
		if (ret == -EPROTO)
			pr_warn_ratelimited("handshake: malformed RDMA message, bad %s\n",
					    why);
		return ret;
	}
	*hdr = q->msg_hdr;
	payload = le32_to_cpu(hdr->payload_len);
	if (payload > body_len || payload > PAGE_SIZE) {
		chorus_rdma_msg_reset(q);
		return -EPROTO;
	}
	if (payload)
		memcpy(body, page_address(q->msg_pages[0]), payload);
	chorus_rdma_msg_reset(q);
	return 0;
}

/*
 * As over TCP (transport_tcp.c), the bios of messages received together go
 * to the backing device under one plug, flushed here once no filled buffer
 * is left to take.
 */
static void chorus_rdma_unplug_if_drained(struct chorus_rdma_queue *q,
					  struct blk_plug *plug)
{
	if (!list_empty_careful(&q->rx_done))
		return;
	blk_finish_plug(plug);
	blk_start_plug(plug);
}

static int chorus_rdma_rx_thread(void *data)
{
	struct chorus_conn *conn = data;
	struct chorus_rdma_queue *q = conn->queue;
	struct chorus_peer *peer = conn->peer;
	const char *why = "connection closed";
	struct chorus_wire_hdr hdr;
	struct blk_plug plug;
	struct page **pages;
	unsigned int nr;
	int ret;

	blk_start_plug(&plug);
	while (!kthread_should_stop()) {
		chorus_rdma_unplug_if_drained(q, &plug);
		ret = chorus_rdma_recv_msg(q, MAX_SCHEDULE_TIMEOUT, false,
					   &why);
		if (ret == -ETIMEDOUT)
			continue;	/* woken to stop */
		if (ret) {
			if (ret == -EPROTO)
				pr_warn_ratelimited("%s: peer %u: malformed message, bad %s; closing\n",
						    peer->vol->name,
						    peer->node_id, why);
			break;
		}
		hdr = q->msg_hdr;
		pages = q->msg_pages;
		nr = q->msg_nr;
		chorus_rdma_msg_done(q);
		if (chorus_conn_recv(conn, &hdr, pages, nr)) {
			why = "protocol error";
			break;
		}
		chorus_rdma_return_credits(q);
	}
	blk_finish_plug(&plug);
	chorus_rdma_kill(q, why);
	chorus_peer_fail(peer, conn->gen, why);
	chorus_wait_for_stop();
	return 0;
}

/**
 * chorus_rdma_start_rx() - &chorus_transport_ops.start_rx of the RDMA
 * transport: start the connection's receive thread
 * @conn: the connection, of an established session
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int chorus_rdma_start_rx(struct chorus_conn *conn)
{
	struct chorus_rdma_queue *q = conn->queue;
	struct task_struct *t;

	t = kthread_run(chorus_rdma_rx_thread, conn, "chorus-rdma/%u.%d",
			conn->peer->node_id, conn->index);
	if (IS_ERR(t))
		return PTR_ERR(t);
	conn->rx_thread = t;
	spin_lock_irq(&q->lock);
	q->ack_conn = conn;
	spin_unlock_irq(&q->lock);
	return 0;
}
