// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: RDMA, the SEND path and credits.
 *
 * A receive buffer is a 64-byte header slot plus CHORUS_RDMA_CHUNK bytes
 * of whole pages, all under the PD's local DMA lkey. A message whose
 * payload is larger than one chunk is sent as several SENDs, each carrying
 * the same wire header followed by the next chunk; every chunk but the
 * last is a multiple of PAGE_SIZE, so the receiver hands the pages of the
 * chunks on as they are (no copy) and posts fresh pages in their place.
 * The sender never copies data either: the SGEs point at the bio pages,
 * DMA-mapped for the time of the SEND.
 *
 * Flow control is by credits: each side may have as many SENDs outstanding
 * as the other posted receive buffers (exchanged in the CM private data).
 * Every SEND is a SEND_WITH_IMM whose immediate data returns the credits of
 * the buffers its sender has reposted since; when there is nothing to send,
 * a zero-length credit-only SEND returns them once a quarter of the window
 * has gathered. The last credit is kept for credit-only SENDs, so the two
 * sides can never both wait for credits.
 *
 * With rdma_data=read, a message with data goes by chorus_rdma_send_read()
 * (rdma_read.c) instead, and by SEND only when that cannot take it; with
 * rdma_data=auto, only a message with more data than one chunk does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>

#include "transport_rdma.h"

/* Unmap a send slot's data pages and drop the references it holds. */
static void chorus_rdma_unmap_send(struct chorus_rdma_queue *q,
				   struct chorus_rdma_send *s)
{
	unsigned int i;

	for (i = 1; i < s->nr_sge; i++) {
		ib_dma_unmap_page(q->dev, s->sge[i].addr, s->sge[i].length,
				  DMA_TO_DEVICE);
		if (s->held[i])
			put_page(s->held[i]);
		s->held[i] = NULL;
	}
	s->nr_sge = 0;
}

/**
 * chorus_rdma_send_done() - a SEND completed: unmap its data pages and
 * free its slot
 * @cq: the queue's CQ
 * @wc: the work completion, for a &struct chorus_rdma_send
 *
 * A failed SEND kills the queue.
 * Context: softirq.
 */
void chorus_rdma_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chorus_rdma_send *s =
		container_of(wc->wr_cqe, struct chorus_rdma_send, cqe);
	struct chorus_rdma_queue *q = s->queue;
	unsigned long flags;

	chorus_rdma_unmap_send(q, s);
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("RDMA send failed: %s\n",
					    ib_wc_status_msg(wc->status));
		chorus_rdma_kill(q, "RDMA send failed");
	}
	spin_lock_irqsave(&q->lock, flags);
	list_add(&s->entry, &q->free_sends);
	spin_unlock_irqrestore(&q->lock, flags);
	wake_up_all(&q->wait);
}

static bool chorus_rdma_can_send(struct chorus_rdma_queue *q, int reserve)
{
	return READ_ONCE(q->dead) || (READ_ONCE(q->credits) > reserve &&
				      !list_empty_careful(&q->free_sends));
}

/**
 * chorus_rdma_get_send() - wait for a send slot and a credit
 * @q: the queue
 * @credit_only: may take the last credit
 * @timeout: bound for the wait, in jiffies; 0 for none
 * @sp: the slot taken
 *
 * @credit_only may take the last credit; anything else leaves it for
 * credit returns. @timeout bounds the wait: a peer that stops returning
 * credits is found by the heartbeat, whose PINGs must not wait forever
 * here.
 * Context: process context; sleeps unless @timeout is 0, which any
 * context may use.
 * Return: 0, -EAGAIN (none free, @timeout 0), -ETIMEDOUT or -ECONNRESET.
 */
int chorus_rdma_get_send(struct chorus_rdma_queue *q, bool credit_only,
			 long timeout, struct chorus_rdma_send **sp)
{
	int reserve = credit_only ? 0 : 1;
	struct chorus_rdma_send *s = NULL;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&q->lock, flags);
		if (q->dead) {
			spin_unlock_irqrestore(&q->lock, flags);
			return -ECONNRESET;
		}
		if (q->credits > reserve && !list_empty(&q->free_sends)) {
			s = list_first_entry(&q->free_sends,
					     struct chorus_rdma_send, entry);
			list_del(&s->entry);
			q->credits--;
		}
		spin_unlock_irqrestore(&q->lock, flags);
		if (s) {
			s->nr_sge = 1;
			*sp = s;
			return 0;
		}
		if (!timeout)
			return -EAGAIN;
		timeout = wait_event_idle_timeout(q->wait,
						  chorus_rdma_can_send(q, reserve),
						  timeout);
		if (!timeout)
			return -ETIMEDOUT;
	}
}

/* Give an unposted slot back; its credit is lost with the queue. */
static void chorus_rdma_put_send(struct chorus_rdma_queue *q,
				 struct chorus_rdma_send *s)
{
	unsigned long flags;

	chorus_rdma_unmap_send(q, s);
	spin_lock_irqsave(&q->lock, flags);
	list_add(&s->entry, &q->free_sends);
	spin_unlock_irqrestore(&q->lock, flags);
	chorus_rdma_kill(q, "RDMA send failed");
}

/**
 * chorus_rdma_post_send() - post a SEND_WITH_IMM
 * @q: the queue
 * @s: a slot from chorus_rdma_get_send(), filled
 * @flags: %CHORUS_RDMA_CREDIT_ONLY, %CHORUS_RDMA_READ or 0
 * @first: a work request to chain before it, or NULL
 *
 * Post @s with @flags (%CHORUS_RDMA_CREDIT_ONLY or %CHORUS_RDMA_READ) in
 * its immediate data, with the credits and READs done to return; @first,
 * if any, is a work request to chain before it (the READ path's REG_MR).
 * On failure @s is given back and the queue killed.
 * Context: any.
 * Return: 0 or the error of ib_post_send().
 */
int chorus_rdma_post_send(struct chorus_rdma_queue *q,
			  struct chorus_rdma_send *s, u32 flags,
			  struct ib_send_wr *first)
{
	bool credit_only = flags & CHORUS_RDMA_CREDIT_ONLY;
	struct ib_send_wr wr = {
		.wr_cqe		= &s->cqe,
		.sg_list	= s->sge,
		.num_sge	= credit_only ? 0 : s->nr_sge,
		.opcode		= IB_WR_SEND_WITH_IMM,
		.send_flags	= IB_SEND_SIGNALED,
	};
	unsigned long irqflags;
	u32 give, done;
	bool bh_off;
	int ret;

	spin_lock_irqsave(&q->lock, irqflags);
	give = min_t(u32, q->to_return, CHORUS_RDMA_CREDIT_MASK);
	q->to_return -= give;
	done = min_t(u32, q->reads_to_return, CHORUS_RDMA_DONE_MASK);
	q->reads_to_return -= done;
	spin_unlock_irqrestore(&q->lock, irqflags);
	wr.ex.imm_data = cpu_to_be32(give | done << CHORUS_RDMA_DONE_SHIFT | flags);
	if (!credit_only)
		ib_dma_sync_single_for_device(q->dev, s->sge[0].addr,
					      s->sge[0].length, DMA_TO_DEVICE);
	if (first)
		first->next = &wr;
	bh_off = chorus_rdma_bh_off();
	ret = ib_post_send(q->qp, first ?: &wr, NULL);
	chorus_rdma_bh_on(bh_off);
	if (ret)
		chorus_rdma_put_send(q, s);
	return ret;
}

/**
 * chorus_rdma_return_credits() - return gathered credits now if there are
 * many and nothing else goes
 * @q: the queue
 *
 * Also carries the READs done, once %CHORUS_RDMA_DONE_AT have gathered.
 * Context: any (the receive thread, or the receive completion after an
 * ack); does not wait.
 */
void chorus_rdma_return_credits(struct chorus_rdma_queue *q)
{
	struct chorus_rdma_send *s;

	if (READ_ONCE(q->to_return) < CHORUS_RDMA_RETURN_AT &&
	    READ_ONCE(q->reads_to_return) < CHORUS_RDMA_DONE_AT)
		return;
	if (chorus_rdma_get_send(q, true, 0, &s))
		return;	/* the next message or credit return carries them */
	chorus_rdma_post_send(q, s, CHORUS_RDMA_CREDIT_ONLY, NULL);
}

static int chorus_rdma_builder_flush(struct chorus_rdma_builder *b)
{
	int ret;

	if (b->s) {
		ret = chorus_rdma_post_send(b->q, b->s, 0, NULL);
		b->s = NULL;
		if (ret)
			return ret;
	}
	b->chunk_bytes = 0;
	return 0;
}

static int chorus_rdma_commit_window(struct chorus_rdma_builder *b)
{
	struct chorus_rdma_queue *q = b->q;
	struct chorus_rdma_send *s;
	unsigned int i;
	int ret;

	if (b->s && (b->s->nr_sge - 1 + b->win_n > q->max_data_sge ||
		     b->chunk_bytes + b->win_len > q->peer_chunk)) {
		ret = chorus_rdma_builder_flush(b);
		if (ret)
			return ret;
	}
	if (!b->s) {
		ret = chorus_rdma_get_send(q, false, b->timeout, &b->s);
		if (ret)
			return ret;
		memcpy(b->s->buf, b->hdr, sizeof(*b->hdr));
		b->s->sge[0].length = sizeof(*b->hdr);
	}
	s = b->s;
	for (i = 0; i < b->win_n; i++) {
		struct ib_sge *sge = &s->sge[s->nr_sge];

		sge->addr = ib_dma_map_page(q->dev, b->win[i].page,
					    b->win[i].off, b->win[i].len,
					    DMA_TO_DEVICE);
		if (ib_dma_mapping_error(q->dev, sge->addr)) {
			chorus_rdma_put_send(q, s);
			b->s = NULL;
			return -EIO;
		}
		sge->length = b->win[i].len;
		sge->lkey = q->pd->local_dma_lkey;
		if (b->hold) {
			get_page(b->win[i].page);
			s->held[s->nr_sge] = b->win[i].page;
		}
		s->nr_sge++;
	}
	b->chunk_bytes += b->win_len;
	b->win_len = 0;
	b->win_n = 0;
	return 0;
}

static int chorus_rdma_add_piece(struct chorus_rdma_builder *b,
				 struct page *page, unsigned int off,
				 unsigned int len)
{
	unsigned int n;
	int ret;

	while (len) {
		if (b->win_n == b->q->max_data_sge) {
			pr_warn_ratelimited("RDMA send: a page of data in more than %u pieces\n",
					    b->q->max_data_sge);
			return -EMSGSIZE;
		}
		n = min_t(unsigned int, len, PAGE_SIZE - b->win_len);
		b->win[b->win_n].page = page;
		b->win[b->win_n].off = off;
		b->win[b->win_n].len = n;
		b->win_n++;
		b->win_len += n;
		off += n;
		len -= n;
		if (b->win_len == PAGE_SIZE) {
			ret = chorus_rdma_commit_window(b);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int chorus_rdma_send_data(struct chorus_rdma_builder *b,
				 const struct chorus_msg_data *data)
{
	struct req_iterator iter;
	unsigned int i, left;
	struct bio_vec bv;
	int ret = 0;

	if (data->rq) {
		left = data->len;
		rq_for_each_segment(bv, data->rq, iter) {
			unsigned int n = min(bv.bv_len, left);

			ret = chorus_rdma_add_piece(b, bv.bv_page, bv.bv_offset, n);
			left -= n;
			if (ret || !left)
				break;
		}
	} else {
		left = data->len;
		for (i = 0; left && !ret; i++) {
			unsigned int n = min_t(unsigned int, left, PAGE_SIZE);

			ret = chorus_rdma_add_piece(b, data->pages[i], 0, n);
			left -= n;
		}
	}
	if (!ret && b->win_n)
		ret = chorus_rdma_commit_window(b);
	if (!ret)
		ret = chorus_rdma_builder_flush(b);
	if (ret && b->s) {
		chorus_rdma_put_send(b->q, b->s);
		b->s = NULL;
	}
	return ret;
}

/**
 * chorus_rdma_timeout() - how long a send may wait for a slot and a credit,
 *	and a READ for its completion
 * @conn: the connection
 *
 * The ping timeout of an established session: a peer that returns no
 * credit, or a READ that does not complete, for that long is as gone as one
 * that answers no PING. The handshake's timeout before that.
 * Return: the bound, in jiffies.
 */
long chorus_rdma_timeout(struct chorus_conn *conn)
{
	u32 ms = CHORUS_HANDSHAKE_TIMEOUT_MS;

	if (conn->peer && conn->gen)
		ms = READ_ONCE(conn->peer->vol->repl.ping_timeout_ms);
	return msecs_to_jiffies(ms);
}

/**
 * chorus_rdma_send() - &chorus_transport_ops.send of the RDMA transport
 * @conn: the connection
 * @hdr: the message's header
 * @body: a small body (at most %CHORUS_RDMA_MAX_BODY bytes), or NULL
 * @data: the message's data pages, or NULL
 *
 * Context: process context, under chorus_conn.send_mutex; sleeps.
 * Return: 0 or a negative errno.
 */
int chorus_rdma_send(struct chorus_conn *conn,
		     const struct chorus_wire_hdr *hdr, const void *body,
		     const struct chorus_msg_data *data)
{
	struct chorus_rdma_queue *q = conn->queue;
	u32 body_len = body ? le32_to_cpu(hdr->payload_len) : 0;
	struct chorus_rdma_builder *b = &q->builder;
	struct chorus_rdma_send *s;
	int ret;

	/* The largest body sent: a HELLO or HELLO_ACK with authentication. */
	BUILD_BUG_ON(sizeof(struct chorus_wire_hello_full) > CHORUS_RDMA_MAX_BODY);
	if (body_len > CHORUS_RDMA_MAX_BODY || (body_len && data && data->len))
		return -EMSGSIZE;
	/* A READ of detached pages could come after they are freed. */
	if (data && data->len >= chorus_rdma_read_min && q->regs &&
	    !data->detached) {
		ret = chorus_rdma_send_read(q, hdr, data,
					    chorus_rdma_timeout(conn));
		if (ret <= 0)
			return ret;
		atomic64_inc(&chorus_rdma_st_read_fallbacks);
	}
	if (data && data->len) {
		/* Sends are serialised by send_mutex: one builder per queue. */
		memset(b, 0, sizeof(*b));
		b->q = q;
		b->hdr = hdr;
		b->timeout = chorus_rdma_timeout(conn);
		b->hold = data->detached;
		return chorus_rdma_send_data(b, data);
	}
	ret = chorus_rdma_get_send(q, false, chorus_rdma_timeout(conn), &s);
	if (ret)
		return ret;
	memcpy(s->buf, hdr, sizeof(*hdr));
	if (body_len)
		memcpy(s->buf + sizeof(*hdr), body, body_len);
	s->sge[0].length = sizeof(*hdr) + body_len;
	return chorus_rdma_post_send(q, s, 0, NULL);
}
