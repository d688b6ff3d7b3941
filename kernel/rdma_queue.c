// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: an RDMA queue's IB resources.
 *
 * Each connection has its own PD, CQ (completions in softirq through
 * ib_cqe callbacks) and RC QP, made on the device rdma_cm found for it,
 * and its own buffers: CHORUS_RDMA_SEND_DEPTH send slots (a header and
 * inline body, mapped for the queue's lifetime) and CHORUS_RDMA_RECV_DEPTH
 * receive buffers (a 64-byte header slot plus CHORUS_RDMA_CHUNK bytes of
 * whole pages), all under the PD's local DMA lkey. Every QP is set up to
 * be READ from and to READ, whatever this node's rdma_data; a READ sender
 * also gets an FRWR MR pool (rdma_read.c).
 *
 * Teardown drains the QP, then undoes the READ path's part, then frees
 * the QP, the CQ, the buffers and the PD, in that order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <rdma/mr_pool.h>

#include "transport_rdma.h"

/**
 * chorus_rdma_post_recv() - give a receive buffer pages where it lacks
 * them and post it
 * @q: the queue
 * @r: one of its receive buffers, not posted
 *
 * Context: process context (may allocate pages, GFP_NOIO); any context
 * for a buffer that has all its pages (its message was a header only).
 * Return: 0 or a negative errno.
 */
int chorus_rdma_post_recv(struct chorus_rdma_queue *q,
			  struct chorus_rdma_recv *r)
{
	struct ib_recv_wr wr = {
		.wr_cqe		= &r->cqe,
		.sg_list	= r->sge,
		.num_sge	= ARRAY_SIZE(r->sge),
	};
	unsigned int i;
	u64 dma;

	for (i = 0; i < CHORUS_RDMA_CHUNK_PAGES; i++) {
		if (r->pages[i])
			continue;
		r->pages[i] = alloc_page(GFP_NOIO);
		if (!r->pages[i])
			return -ENOMEM;
		dma = ib_dma_map_page(q->dev, r->pages[i], 0, PAGE_SIZE,
				      DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(q->dev, dma)) {
			__free_page(r->pages[i]);
			r->pages[i] = NULL;
			return -ENOMEM;
		}
		r->sge[1 + i].addr = dma;
		r->sge[1 + i].length = PAGE_SIZE;
		r->sge[1 + i].lkey = q->pd->local_dma_lkey;
	}
	ib_dma_sync_single_for_device(q->dev, r->sge[0].addr,
				      sizeof(*r->hdr), DMA_FROM_DEVICE);
	return ib_post_recv(q->qp, &wr, NULL);
}

static void chorus_rdma_free_bufs(struct chorus_rdma_queue *q)
{
	struct chorus_rdma_recv *r;
	unsigned int i, j;

	for (i = 0; q->recvs && i < CHORUS_RDMA_RECV_DEPTH; i++) {
		r = &q->recvs[i];
		for (j = 0; j < CHORUS_RDMA_CHUNK_PAGES; j++) {
			if (!r->pages[j])
				continue;
			ib_dma_unmap_page(q->dev, r->sge[1 + j].addr, PAGE_SIZE,
					  DMA_FROM_DEVICE);
			__free_page(r->pages[j]);
		}
		if (r->hdr) {
			ib_dma_unmap_single(q->dev, r->sge[0].addr,
					    sizeof(*r->hdr), DMA_FROM_DEVICE);
			kfree(r->hdr);
		}
	}
	kfree(q->recvs);
	q->recvs = NULL;
	for (i = 0; q->sends && i < CHORUS_RDMA_SEND_DEPTH; i++) {
		if (!q->sends[i].buf)
			continue;
		ib_dma_unmap_single(q->dev, q->sends[i].sge[0].addr,
				    CHORUS_RDMA_HDR_BUF, DMA_TO_DEVICE);
		kfree(q->sends[i].buf);
	}
	kfree(q->sends);
	q->sends = NULL;
	kfree(q->regs);
	q->regs = NULL;
	kvfree(q->reg_sgl);
	q->reg_sgl = NULL;
	kvfree(q->rd_sg);
	q->rd_sg = NULL;
}

static int chorus_rdma_alloc_bufs(struct chorus_rdma_queue *q)
{
	struct chorus_rdma_send *s;
	struct chorus_rdma_recv *r;
	unsigned int i;
	int ret;

	q->sends = kcalloc(CHORUS_RDMA_SEND_DEPTH, sizeof(*q->sends), GFP_KERNEL);
	q->recvs = kcalloc(CHORUS_RDMA_RECV_DEPTH, sizeof(*q->recvs), GFP_KERNEL);
	q->rd_sg = kvcalloc(CHORUS_RDMA_READ_PAGES, sizeof(*q->rd_sg), GFP_KERNEL);
	if (!q->sends || !q->recvs || !q->rd_sg)
		return -ENOMEM;
	q->rd_cqe.done = chorus_rdma_read_done;
	if (q->mr_pool_ready) {
		ret = chorus_rdma_alloc_regs(q);
		if (ret)
			return ret;
	}
	for (i = 0; i < CHORUS_RDMA_SEND_DEPTH; i++) {
		s = &q->sends[i];
		s->queue = q;
		s->cqe.done = chorus_rdma_send_done;
		s->buf = kmalloc(CHORUS_RDMA_HDR_BUF, GFP_KERNEL);
		if (!s->buf)
			return -ENOMEM;
		s->sge[0].addr = ib_dma_map_single(q->dev, s->buf,
						   CHORUS_RDMA_HDR_BUF,
						   DMA_TO_DEVICE);
		if (ib_dma_mapping_error(q->dev, s->sge[0].addr)) {
			kfree(s->buf);
			s->buf = NULL;
			return -ENOMEM;
		}
		s->sge[0].lkey = q->pd->local_dma_lkey;
		list_add_tail(&s->entry, &q->free_sends);
	}
	for (i = 0; i < CHORUS_RDMA_RECV_DEPTH; i++) {
		r = &q->recvs[i];
		r->queue = q;
		r->cqe.done = chorus_rdma_recv_done;
		r->hdr = kmalloc(sizeof(*r->hdr), GFP_KERNEL);
		if (!r->hdr)
			return -ENOMEM;
		r->sge[0].addr = ib_dma_map_single(q->dev, r->hdr,
						   sizeof(*r->hdr),
						   DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(q->dev, r->sge[0].addr)) {
			kfree(r->hdr);
			r->hdr = NULL;
			return -ENOMEM;
		}
		r->sge[0].length = sizeof(*r->hdr);
		r->sge[0].lkey = q->pd->local_dma_lkey;
		ret = chorus_rdma_post_recv(q, r);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * chorus_rdma_destroy_ib() - tear down what chorus_rdma_create_ib() made
 * @q: the queue
 *
 * Safe on a queue that has none or part of it.
 * Context: process context; sleeps (drains the QP).
 */
void chorus_rdma_destroy_ib(struct chorus_rdma_queue *q)
{
	if (q->qp) {
		spin_lock_irq(&q->lock);
		q->inv_closed = true;
		spin_unlock_irq(&q->lock);
		if (q->established)
			ib_drain_qp(q->qp);
		chorus_rdma_destroy_read(q);
		rdma_destroy_qp(q->cm_id);
		q->qp = NULL;
	}
	/* No completion can run once the CQ is gone: free buffers after. */
	if (q->cq) {
		ib_free_cq(q->cq);
		q->cq = NULL;
	}
	chorus_rdma_free_bufs(q);
	if (q->pd) {
		ib_dealloc_pd(q->pd);
		q->pd = NULL;
	}
}

/**
 * chorus_rdma_create_ib() - make a queue's PD, CQ, QP and buffers
 * @q: the queue
 * @id: its rdma_cm id, whose route is resolved
 *
 * On the device rdma_cm found for @id, unless it is being removed. On
 * failure the caller tears down what was made, with
 * chorus_rdma_destroy_ib().
 * Context: CM event handler.
 * Return: 0 or a negative errno.
 */
int chorus_rdma_create_ib(struct chorus_rdma_queue *q, struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	struct ib_device *dev = id->device;
	u32 rd_wrs, reg_wrs = 0;
	int ret;

	ret = chorus_rdma_set_dev(q, dev);
	if (ret)
		return ret;

	if (dev->attrs.max_recv_sge < 1 + CHORUS_RDMA_CHUNK_PAGES ||
	    dev->attrs.max_send_sge < 2) {
		pr_warn_ratelimited("RDMA device %s: too few SGEs (%d receive, %d send)\n",
				    dev_name(&dev->dev), dev->attrs.max_recv_sge,
				    dev->attrs.max_send_sge);
		return -EOPNOTSUPP;
	}
	/*
	 * Every queue READs what a READ sender registers, whatever our own
	 * mode: room for the WRs of one READ of the largest message. A READ
	 * sender also registers and invalidates up to one MR per message.
	 */
	q->rd_atom = min_t(int, CHORUS_RDMA_RD_ATOM,
			   min(dev->attrs.max_qp_rd_atom,
			       dev->attrs.max_qp_init_rd_atom));
	rd_wrs = DIV_ROUND_UP(CHORUS_RDMA_READ_PAGES,
			      clamp(min(dev->attrs.max_sge_rd,
					dev->attrs.max_send_sge), 1,
				    CHORUS_RDMA_MAX_SGE));
	if (chorus_rdma_read_min != U32_MAX) {
		if (dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS &&
		    dev->attrs.max_fast_reg_page_list_len >= CHORUS_RDMA_READ_SG)
			reg_wrs = 2 * CHORUS_RDMA_READ_MRS;
		else
			pr_info_once("RDMA device %s has no fast registration: data goes by SEND\n",
				     dev_name(&dev->dev));
	}
	q->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(q->pd)) {
		ret = PTR_ERR(q->pd);
		q->pd = NULL;
		return ret;
	}
	q->cq = ib_alloc_cq(dev, q, CHORUS_RDMA_SEND_DEPTH +
			    CHORUS_RDMA_RECV_DEPTH + rd_wrs + reg_wrs + 2,
			    q->conn->index % dev->num_comp_vectors,
			    IB_POLL_SOFTIRQ);
	if (IS_ERR(q->cq)) {
		ret = PTR_ERR(q->cq);
		q->cq = NULL;
		return ret;
	}
	attr.qp_context = q;
	attr.send_cq = q->cq;
	attr.recv_cq = q->cq;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	/* One more of each for ib_drain_qp(). */
	attr.cap.max_send_wr = CHORUS_RDMA_SEND_DEPTH + 1 + rd_wrs + reg_wrs;
	attr.cap.max_recv_wr = CHORUS_RDMA_RECV_DEPTH + 1;
	attr.cap.max_rdma_ctxs = 1;	/* one READ at a time */
	attr.cap.max_send_sge = min_t(u32, dev->attrs.max_send_sge,
				      CHORUS_RDMA_MAX_SGE);
	attr.cap.max_recv_sge = 1 + CHORUS_RDMA_CHUNK_PAGES;
	ret = rdma_create_qp(id, q->pd, &attr);
	if (ret)
		return ret;
	q->qp = id->qp;
	q->max_data_sge = min_t(u32, attr.cap.max_send_sge,
				CHORUS_RDMA_MAX_SGE) - 1;
	if (reg_wrs) {
		ret = ib_mr_pool_init(q->qp, &q->mr_pool, CHORUS_RDMA_READ_MRS,
				      IB_MR_TYPE_MEM_REG, CHORUS_RDMA_READ_SG, 0);
		if (ret)
			return ret;
		q->mr_pool_ready = true;
	}
	return chorus_rdma_alloc_bufs(q);
}
