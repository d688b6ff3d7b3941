// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: RDMA, the READ path (rdma_data=read, auto).
 *
 * The READ path: a message with data is one SEND of its header and a
 * struct chorus_rdma_read_desc, with CHORUS_RDMA_READ in the immediate
 * data, chained after an IB_WR_REG_MR of the data pages (an MR of the
 * queue's pool, remote read only). The receiver READs the data into fresh
 * pages (rdma_rw), then hands the message on as the SEND path does, and
 * counts a READ done. Done READs return to the sender in bits 16-23 of the
 * immediate data of its next SEND (the message's reply, normally), in
 * message order; for each the sender posts a LOCAL_INV and, when it
 * completes, unmaps the pages and puts the MR back. A message whose pages
 * one MR cannot map (a piece not page-aligned in the middle) or that finds
 * no free MR goes the SEND way. The sender's mode decides per message;
 * every receiver takes both.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/kthread.h>
#include <linux/slab.h>
#include <rdma/mr_pool.h>

#include "transport_rdma.h"

/*
 * Unmap a registration's pages and give its MR back to the pool: after its
 * LOCAL_INV completed, or once the QP is drained. Context: any.
 */
static void chorus_rdma_reg_put(struct chorus_rdma_queue *q,
				struct chorus_rdma_reg *g)
{
	unsigned long flags;

	ib_dma_unmap_sg(q->dev, g->sgl, g->nents, DMA_TO_DEVICE);
	ib_mr_pool_put(q->qp, &q->mr_pool, g->mr);
	g->mr = NULL;
	spin_lock_irqsave(&q->lock, flags);
	list_add(&g->entry, &q->free_regs);
	spin_unlock_irqrestore(&q->lock, flags);
}

static void chorus_rdma_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chorus_rdma_reg *g =
		container_of(wc->wr_cqe, struct chorus_rdma_reg, reg_cqe);

	/* Unsignaled: only a failure or a flush gets here. */
	if (wc->status != IB_WC_SUCCESS && wc->status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("RDMA memory registration failed: %s\n",
				    ib_wc_status_msg(wc->status));
	if (wc->status != IB_WC_SUCCESS)
		chorus_rdma_kill(g->queue, "RDMA registration failed");
}

static void chorus_rdma_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chorus_rdma_reg *g =
		container_of(wc->wr_cqe, struct chorus_rdma_reg, inv_cqe);
	struct chorus_rdma_queue *q = g->queue;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("RDMA invalidation failed: %s\n",
					    ib_wc_status_msg(wc->status));
		chorus_rdma_kill(q, "RDMA invalidation failed");
	}
	chorus_rdma_reg_put(q, g);
}

/**
 * chorus_rdma_reads_done() - the peer READ the data of the oldest @nr READ
 * messages: invalidate their MRs
 * @q: the queue
 * @nr: READs done, from the immediate data of a receive
 *
 * Context: softirq (receive completion).
 * Return: false if fewer were outstanding (a protocol error).
 */
bool chorus_rdma_reads_done(struct chorus_rdma_queue *q, u32 nr)
{
	struct ib_send_wr wr = {
		.opcode		= IB_WR_LOCAL_INV,
		.send_flags	= IB_SEND_SIGNALED,
	};
	struct chorus_rdma_reg *g;
	unsigned long flags;
	bool failed = false;

	if (!nr)
		return true;
	/*
	 * Posted under the lock, so that teardown, which sets inv_closed
	 * before draining the QP, finds every LOCAL_INV ahead of its drain;
	 * those left on busy_regs it puts back itself.
	 */
	spin_lock_irqsave(&q->lock, flags);
	while (nr && !list_empty(&q->busy_regs) && !q->inv_closed) {
		g = list_first_entry(&q->busy_regs, struct chorus_rdma_reg,
				     entry);
		wr.wr_cqe = &g->inv_cqe;
		wr.ex.invalidate_rkey = g->mr->rkey;
		if (ib_post_send(q->qp, &wr, NULL)) {
			failed = true;
			break;
		}
		list_del(&g->entry);
		nr--;
	}
	if (q->inv_closed || failed)
		nr = 0;
	spin_unlock_irqrestore(&q->lock, flags);
	if (failed)
		chorus_rdma_kill(q, "RDMA invalidation failed");
	return !nr;
}

/**
 * chorus_rdma_read_done() - the READ of a received message completed
 * @cq: the queue's CQ
 * @wc: the work completion, for chorus_rdma_queue.rd_cqe
 *
 * Wakes the receive thread waiting in chorus_rdma_read_msg().
 * Context: softirq.
 */
void chorus_rdma_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chorus_rdma_queue *q =
		container_of(wc->wr_cqe, struct chorus_rdma_queue, rd_cqe);

	q->rd_status = wc->status;
	/* Pairs with the acquire in chorus_rdma_read_msg(): status first. */
	smp_store_release(&q->rd_done, true);
	wake_up_all(&q->rx_wait);
}

/**
 * chorus_rdma_alloc_regs() - the sender's READ registrations, one per MR
 * of the pool
 * @q: the queue, with its MR pool made
 *
 * Freed with the queue's buffers.
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int chorus_rdma_alloc_regs(struct chorus_rdma_queue *q)
{
	struct chorus_rdma_reg *g;
	unsigned int i;

	q->regs = kcalloc(CHORUS_RDMA_READ_MRS, sizeof(*q->regs), GFP_KERNEL);
	q->reg_sgl = kvcalloc(CHORUS_RDMA_READ_MRS * CHORUS_RDMA_READ_SG,
			      sizeof(*q->reg_sgl), GFP_KERNEL);
	if (!q->regs || !q->reg_sgl)
		return -ENOMEM;
	for (i = 0; i < CHORUS_RDMA_READ_MRS; i++) {
		g = &q->regs[i];
		g->queue = q;
		g->reg_cqe.done = chorus_rdma_reg_done;
		g->inv_cqe.done = chorus_rdma_inv_done;
		g->sgl = &q->reg_sgl[i * CHORUS_RDMA_READ_SG];
		list_add_tail(&g->entry, &q->free_regs);
	}
	return 0;
}

/**
 * chorus_rdma_destroy_read() - tear down the READ path's part of the QP
 * @q: the queue, its QP drained
 *
 * The READ path's part of the QP, once it is drained: the receiver's READ
 * context, the sender's registrations the peer never said it READ, and the
 * MR pool, all before the QP (and then the PD) goes.
 * Context: process context.
 */
void chorus_rdma_destroy_read(struct chorus_rdma_queue *q)
{
	struct chorus_rdma_reg *g, *tmp;
	LIST_HEAD(busy);

	if (q->rd_active) {
		rdma_rw_ctx_destroy(&q->rd_ctx, q->qp, q->cm_id->port_num,
				    q->rd_sg, q->msg_nr, DMA_FROM_DEVICE);
		q->rd_active = false;
	}
	spin_lock_irq(&q->lock);
	list_splice_init(&q->busy_regs, &busy);
	spin_unlock_irq(&q->lock);
	list_for_each_entry_safe(g, tmp, &busy, entry) {
		list_del(&g->entry);
		chorus_rdma_reg_put(q, g);
	}
	if (q->mr_pool_ready) {
		ib_mr_pool_destroy(q->qp, &q->mr_pool);
		q->mr_pool_ready = false;
	}
}

/*
 * Add a piece of data to a registration. One MR maps pieces that meet at
 * page boundaries: only the first may start inside a page, only the last
 * may end inside one. Return: false if this piece breaks that.
 */
static bool chorus_rdma_reg_add(struct chorus_rdma_reg *g, struct page *page,
				unsigned int off, unsigned int len)
{
	struct scatterlist *prev;

	if (!len)
		return true;
	if (g->nents) {
		prev = &g->sgl[g->nents - 1];
		if (off || prev->offset + prev->length != PAGE_SIZE)
			return false;
	}
	if (g->nents == CHORUS_RDMA_READ_SG)
		return false;
	sg_set_page(&g->sgl[g->nents++], page, len, off);
	return true;
}

/* Fill @g's scatterlist with @data. Return: false if one MR cannot map it. */
static bool chorus_rdma_reg_fill(struct chorus_rdma_reg *g,
				 const struct chorus_msg_data *data)
{
	unsigned int i, n, left = data->len;
	struct req_iterator iter;
	struct bio_vec bv;

	g->nents = 0;
	sg_init_table(g->sgl, CHORUS_RDMA_READ_SG);
	if (data->rq) {
		rq_for_each_segment(bv, data->rq, iter) {
			n = min(bv.bv_len, left);
			if (!chorus_rdma_reg_add(g, bv.bv_page, bv.bv_offset, n))
				return false;
			left -= n;
			if (!left)
				break;
		}
	} else {
		for (i = 0; left; i++) {
			n = min_t(unsigned int, left, PAGE_SIZE);
			if (!chorus_rdma_reg_add(g, data->pages[i], 0, n))
				return false;
			left -= n;
		}
	}
	if (left || !g->nents)
		return false;
	sg_mark_end(&g->sgl[g->nents - 1]);
	return true;
}

/**
 * chorus_rdma_send_read() - send a message for the peer to READ its data
 * @q: the queue, with registrations (chorus_rdma_queue.regs)
 * @hdr: the message's header
 * @data: its data, @data->len not 0
 * @timeout: bound for the wait for a send slot and credit, in jiffies
 *
 * REG_MR of the data pages
 * chained before the SEND of the header and a descriptor. The pages stay
 * mapped and registered until the peer says it READ them.
 * Context: process context, under chorus_conn.send_mutex.
 * Return: 0 when sent, 1 when the message must go by SEND (no free MR, or
 * pages one MR cannot map), or a negative errno.
 */
int chorus_rdma_send_read(struct chorus_rdma_queue *q,
			  const struct chorus_wire_hdr *hdr,
			  const struct chorus_msg_data *data, long timeout)
{
	struct ib_reg_wr reg = {
		.wr.opcode	= IB_WR_REG_MR,
		.access		= IB_ACCESS_REMOTE_READ,
	};
	struct chorus_rdma_read_desc *desc;
	struct chorus_rdma_send *s;
	struct chorus_rdma_reg *g;
	int nr, ret = 1;

	lockdep_assert_held(&q->conn->send_mutex);
	spin_lock_irq(&q->lock);
	g = list_first_entry_or_null(&q->free_regs, struct chorus_rdma_reg,
				     entry);
	if (g)
		list_del(&g->entry);
	spin_unlock_irq(&q->lock);
	if (!g)
		return 1;
	if (!chorus_rdma_reg_fill(g, data))
		goto put_reg;
	nr = ib_dma_map_sg(q->dev, g->sgl, g->nents, DMA_TO_DEVICE);
	if (!nr)
		goto put_reg;
	g->mr = ib_mr_pool_get(q->qp, &q->mr_pool);
	if (!g->mr)
		goto unmap;
	ib_update_fast_reg_key(g->mr, ib_inc_rkey(g->mr->rkey));
	if (ib_map_mr_sg(g->mr, g->sgl, nr, NULL, PAGE_SIZE) != nr ||
	    g->mr->length != data->len)
		goto put_mr;
	ret = chorus_rdma_get_send(q, false, timeout, &s);
	if (ret)
		goto put_mr;

	memcpy(s->buf, hdr, sizeof(*hdr));
	desc = s->buf + sizeof(*hdr);
	desc->addr = cpu_to_le64(g->mr->iova);
	desc->rkey = cpu_to_le32(g->mr->rkey);
	desc->len = cpu_to_le32(data->len);
	s->sge[0].length = sizeof(*hdr) + sizeof(*desc);
	reg.wr.wr_cqe = &g->reg_cqe;
	reg.mr = g->mr;
	reg.key = g->mr->rkey;
	/* In sending order, which is the order the peer returns them in. */
	spin_lock_irq(&q->lock);
	list_add_tail(&g->entry, &q->busy_regs);
	spin_unlock_irq(&q->lock);
	atomic64_inc(&chorus_rdma_st_read_msgs);
	/* On failure the queue is dead; teardown puts @g back. */
	return chorus_rdma_post_send(q, s, CHORUS_RDMA_READ, &reg.wr);

put_mr:
	ib_mr_pool_put(q->qp, &q->mr_pool, g->mr);
	g->mr = NULL;
unmap:
	ib_dma_unmap_sg(q->dev, g->sgl, g->nents, DMA_TO_DEVICE);
put_reg:
	spin_lock_irq(&q->lock);
	list_add(&g->entry, &q->free_regs);
	spin_unlock_irq(&q->lock);
	return ret;
}

/**
 * chorus_rdma_take_read() - take a received READ message
 * @q: the queue
 * @r: the filled receive buffer, its header synced for the CPU
 * @why: what was wrong, on error
 *
 * A READ message: its buffer holds the header and a descriptor. Check both
 * and start the message, whose data chorus_rdma_read_msg() then READs.
 * Context: the receive thread or the handshake.
 * Return: 1, or -EPROTO or -ENOMEM (and *@why).
 */
int chorus_rdma_take_read(struct chorus_rdma_queue *q,
			  struct chorus_rdma_recv *r, const char **why)
{
	struct chorus_rdma_read_desc *d = &q->rd_desc;
	u32 len;

	/* chorus_rdma_check_imm() found a header and a descriptor. */
	ib_dma_sync_single_for_cpu(q->dev, r->sge[1].addr, sizeof(*d),
				   DMA_FROM_DEVICE);
	memcpy(d, page_address(r->pages[0]), sizeof(*d));
	ib_dma_sync_single_for_device(q->dev, r->sge[1].addr, sizeof(*d),
				      DMA_FROM_DEVICE);
	if (chorus_rdma_check_read(r->hdr, d, why))
		return -EPROTO;
	len = le32_to_cpu(r->hdr->payload_len);
	q->msg_hdr = *r->hdr;
	q->msg_nr = DIV_ROUND_UP(len, PAGE_SIZE);
	q->msg_pages = chorus_pages_alloc(q->msg_nr, GFP_NOIO);
	if (!q->msg_pages) {
		*why = "memory";
		return -ENOMEM;
	}
	q->msg_off = len;
	q->msg_active = true;
	q->msg_read = true;
	return 1;
}

/**
 * chorus_rdma_read_msg() - READ the data of a message
 * @q: the queue
 * @why: what failed, on error
 *
 * READ the data of the message taken by chorus_rdma_take_read() into the
 * pages it took, and count it done for the sender. One READ at a time per
 * queue: messages are handed on in order.
 * Context: the receive thread or the handshake, which own @q->rd_ctx.
 * Return: 0 or a negative errno (and *@why).
 */
int chorus_rdma_read_msg(struct chorus_rdma_queue *q, const char **why)
{
	u32 len = le32_to_cpu(q->rd_desc.len), port = q->cm_id->port_num;
	unsigned int i;
	bool bh_off;
	int ret;

	sg_init_table(q->rd_sg, q->msg_nr);
	for (i = 0; i < q->msg_nr; i++)
		sg_set_page(&q->rd_sg[i], q->msg_pages[i],
			    min_t(u32, len - i * PAGE_SIZE, PAGE_SIZE), 0);
	ret = rdma_rw_ctx_init(&q->rd_ctx, q->qp, port, q->rd_sg, q->msg_nr, 0,
			       le64_to_cpu(q->rd_desc.addr),
			       le32_to_cpu(q->rd_desc.rkey), DMA_FROM_DEVICE);
	if (ret < 0) {
		*why = "RDMA READ setup";
		return ret;
	}
	q->rd_done = false;
	q->rd_active = true;	/* from here on teardown destroys it */
	bh_off = chorus_rdma_bh_off();
	ret = rdma_rw_ctx_post(&q->rd_ctx, q->qp, port, &q->rd_cqe, NULL);
	chorus_rdma_bh_on(bh_off);
	if (ret) {
		*why = "RDMA READ post";
		return ret;
	}
	/*
	 * Acquire: pairs with chorus_rdma_read_done(), for rd_status. Bounded:
	 * a queue pair whose sends stopped without an error (soft-RoCE, after
	 * a REG_MR it ran twice on a retry) never completes the READ, and what
	 * the peer forwarded behind this message would wait for it for ever.
	 */
	wait_event_idle_timeout(q->rx_wait, smp_load_acquire(&q->rd_done) ||
				READ_ONCE(q->dead) || kthread_should_stop(),
				chorus_rdma_timeout(q->conn));
	if (!smp_load_acquire(&q->rd_done)) { /* as above */
		if (!READ_ONCE(q->dead) && !kthread_should_stop())
			chorus_rdma_kill(q, "RDMA READ timed out");
		*why = q->why ?: "connection closed";
		return -ECONNRESET;
	}
	rdma_rw_ctx_destroy(&q->rd_ctx, q->qp, port, q->rd_sg, q->msg_nr,
			    DMA_FROM_DEVICE);
	q->rd_active = false;
	if (q->rd_status != IB_WC_SUCCESS) {
		if (q->rd_status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("RDMA READ failed: %s\n",
					    ib_wc_status_msg(q->rd_status));
		*why = "RDMA READ failed";
		return -EIO;
	}
	spin_lock_irq(&q->lock);
	q->reads_to_return++;
	spin_unlock_irq(&q->lock);
	atomic64_inc(&chorus_rdma_st_reads);
	atomic64_add(len, &chorus_rdma_st_read_bytes);
	return 0;
}
