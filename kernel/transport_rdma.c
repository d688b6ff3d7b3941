// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the RDMA transport.
 *
 * One RC queue pair per connection, set up with rdma_cm, with its own PD
 * and CQ (completions in softirq through ib_cqe callbacks).
 *
 * Messages move by SEND into posted receive buffers, or, with the module
 * parameter rdma_data=read, their data is READ by the receiver from an FRWR
 * registration of the sender's pages (see "The READ path" below);
 * Documentation/rdma.rst gives the measurements behind the default. A
 * receive buffer is a 64-byte
 * header slot plus CHORUS_RDMA_CHUNK bytes of whole pages, all under the
 * PD's local DMA lkey. A message whose payload is larger than one chunk is
 * sent as several SENDs, each carrying the same wire header followed by the
 * next chunk; every chunk but the last is a multiple of PAGE_SIZE, so the
 * receiver hands the pages of the chunks on as they are (no copy) and posts
 * fresh pages in their place. The sender never copies data either: the SGEs
 * point at the bio pages, DMA-mapped for the time of the SEND.
 *
 * Flow control is by credits: each side may have as many SENDs outstanding
 * as the other posted receive buffers (exchanged in the CM private data).
 * Every SEND is a SEND_WITH_IMM whose immediate data returns the credits of
 * the buffers its sender has reposted since; when there is nothing to send,
 * a zero-length credit-only SEND returns them once a quarter of the window
 * has gathered. The last credit is kept for credit-only SENDs, so the two
 * sides can never both wait for credits.
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
 *
 * Contexts: CM events arrive on the rdma_cm work queue; completions in
 * softirq; received buffers are put on chorus_rdma_queue.rx_done and
 * consumed by the handshake (recv_sync) or by the connection's receive
 * thread, which hands each message to chorus_conn_recv() like TCP's.
 *
 * An ib_client watches for device removal: every queue on a device that
 * goes away is failed, and the removal waits until they are all freed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/netlink.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/mr_pool.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>

#include "chorus.h"

#define CHORUS_RDMA_VERSION	2		/* 2: the READ path */
#define CHORUS_RDMA_CHUNK	(64 * 1024)	/* payload bytes per receive */
#define CHORUS_RDMA_CHUNK_PAGES	(CHORUS_RDMA_CHUNK / PAGE_SIZE)
#define CHORUS_RDMA_RECV_DEPTH	32		/* receive buffers per queue */
#define CHORUS_RDMA_SEND_DEPTH	(CHORUS_RDMA_RECV_DEPTH + 4)
#define CHORUS_RDMA_MAX_SGE	32		/* send SGEs we ever use */
#define CHORUS_RDMA_MAX_BODY	128		/* inline body after a header */
#define CHORUS_RDMA_HDR_BUF	(sizeof(struct chorus_wire_hdr) + \
				 CHORUS_RDMA_MAX_BODY)
#define CHORUS_RDMA_CREDIT_ONLY	BIT(31)		/* imm: no message */
#define CHORUS_RDMA_READ	BIT(30)		/* imm: data to READ */
#define CHORUS_RDMA_DONE_SHIFT	16		/* imm: READs done */
#define CHORUS_RDMA_DONE_MASK	0xff
#define CHORUS_RDMA_CREDIT_MASK	0xffff		/* imm: credits returned */
#define CHORUS_RDMA_IMM_KNOWN	(CHORUS_RDMA_CREDIT_ONLY | CHORUS_RDMA_READ | \
				 (CHORUS_RDMA_DONE_MASK << CHORUS_RDMA_DONE_SHIFT) | \
				 CHORUS_RDMA_CREDIT_MASK)
#define CHORUS_RDMA_READ_PAGES	(CHORUS_WIRE_MAX_PAYLOAD / PAGE_SIZE)
#define CHORUS_RDMA_READ_SG	(CHORUS_RDMA_READ_PAGES + 1) /* + an offset */
#define CHORUS_RDMA_READ_MRS	32		/* FRWR MRs per queue */
#define CHORUS_RDMA_DONE_AT	8		/* READs done worth a SEND */
#define CHORUS_RDMA_RETURN_AT	(CHORUS_RDMA_RECV_DEPTH / 4)
#define CHORUS_RDMA_CLOSE_MS	500		/* for SENDs to complete */
#define CHORUS_RDMA_RD_ATOM	16		/* READs in flight per QP */

static char *chorus_rdma_data = "send";
module_param_named(rdma_data, chorus_rdma_data, charp, 0444);
MODULE_PARM_DESC(rdma_data,
		 "how RDMA messages carry their data: send (into posted buffers, default) or read (the receiver READs FRWR-registered pages)");

static bool chorus_rdma_read_mode;	/* rdma_data=read, set at load */

/* READ path counters, in debugfs chorus_rdma: any queue, any peer. */
static atomic64_t chorus_rdma_st_read_msgs;	/* sent for the peer to READ */
static atomic64_t chorus_rdma_st_read_fallbacks; /* sent by SEND instead */
static atomic64_t chorus_rdma_st_reads;		/* READs done as receiver */
static atomic64_t chorus_rdma_st_read_bytes;	/* bytes they moved */
static struct dentry *chorus_rdma_debugfs;

/**
 * struct chorus_rdma_read_desc - what a READ message carries after its
 * header, little endian
 * @addr: the data's address in the sender's MR
 * @rkey: the MR's remote key
 * @len: data bytes, equal to the header's payload_len
 */
struct chorus_rdma_read_desc {
	__le64 addr;
	__le32 rkey;
	__le32 len;
};

/**
 * struct chorus_rdma_cm_data - private data of a connect request and of
 * its accept, little endian
 * @version: %CHORUS_RDMA_VERSION
 * @recv_depth: receive buffers the sender posted: the other side's credits
 * @chunk_size: payload bytes each of them holds, a multiple of 4096
 * @reserved: zero
 */
struct chorus_rdma_cm_data {
	__le16 version;
	__le16 recv_depth;
	__le32 chunk_size;
	__le32 reserved[2];
};

struct chorus_rdma_queue;

/**
 * struct chorus_rdma_reg - a message's data registered for the peer to READ
 * @entry: in chorus_rdma_queue.free_regs or .busy_regs, under its lock
 * @queue: owner
 * @mr: an MR of chorus_rdma_queue.mr_pool while registered, else NULL
 * @reg_cqe: completion of the REG_MR (only errors report)
 * @inv_cqe: completion of the LOCAL_INV
 * @nents: entries of @sgl DMA-mapped while @mr is set
 * @sgl: the data pages, %CHORUS_RDMA_READ_SG entries
 */
struct chorus_rdma_reg {
	struct list_head entry;
	struct chorus_rdma_queue *queue;
	struct ib_mr *mr;
	struct ib_cqe reg_cqe;
	struct ib_cqe inv_cqe;
	unsigned int nents;
	struct scatterlist *sgl;
};

/**
 * struct chorus_rdma_recv - a receive buffer
 * @cqe: completion callback
 * @queue: owner
 * @entry: in chorus_rdma_queue.rx_done once filled
 * @hdr: header slot
 * @pages: payload pages; NULL where handed on and not yet replaced
 * @sge: header slot, then the pages
 * @byte_len: bytes received
 * @imm: immediate data received
 */
struct chorus_rdma_recv {
	struct ib_cqe cqe;
	struct chorus_rdma_queue *queue;
	struct list_head entry;
	struct chorus_wire_hdr *hdr;
	struct page *pages[CHORUS_RDMA_CHUNK_PAGES];
	struct ib_sge sge[1 + CHORUS_RDMA_CHUNK_PAGES];
	u32 byte_len;
	u32 imm;
};

/**
 * struct chorus_rdma_send - a send slot
 * @cqe: completion callback
 * @queue: owner
 * @entry: in chorus_rdma_queue.free_sends while free
 * @buf: header and inline body, mapped for the queue's lifetime
 * @sge: @buf, then the data pages mapped for this SEND only
 * @nr_sge: entries of @sge in use
 */
struct chorus_rdma_send {
	struct ib_cqe cqe;
	struct chorus_rdma_queue *queue;
	struct list_head entry;
	void *buf;
	struct ib_sge sge[CHORUS_RDMA_MAX_SGE];
	unsigned int nr_sge;
};

/*
 * Building the SENDs of a message with data: the data is cut into windows
 * of PAGE_SIZE payload bytes, a window at most max_data_sge pieces of bio
 * pages; a SEND takes whole windows while they fit in the peer's chunk and
 * in the SGE limit.
 */
struct chorus_rdma_builder {
	struct chorus_rdma_queue *q;
	const struct chorus_wire_hdr *hdr;
	struct chorus_rdma_send *s;
	long timeout;
	u32 chunk_bytes;
	u32 win_len;
	unsigned int win_n;
	struct {
		struct page *page;
		unsigned int off;
		unsigned int len;
	} win[CHORUS_RDMA_MAX_SGE];
};

/**
 * struct chorus_rdma_queue - the RDMA side of a chorus_conn
 * @conn: the connection
 * @cm_id: its rdma_cm id
 * @own_id: @cm_id is ours to destroy (not while rdma_cm sets up a child)
 * @dev: the device, once the route is known
 * @pd: protection domain
 * @cq: completion queue for sends and receives
 * @qp: the queue pair
 * @entry: in chorus_rdma_queues, under chorus_rdma_mutex
 * @cm_mutex: serialises creating IB resources with releasing them
 * @released: release has begun, under @cm_mutex
 * @cm_done: completed when the connection is up or failed (dialler)
 * @cm_error: why it failed
 * @timeout_ms: for address and route resolution
 * @established: the connection came up once; the QP needs draining
 * @acceptor: the queue was created for a connect request
 * @accept_queued: @accept_work was queued; set in CM event context only
 * @accept_work: runs the acceptor's handshake, or frees a queue that died
 *	before it
 * @lock: protects the fields below it, taken in softirq
 * @dead: no more sends or receives; @why says why
 * @why: the reason
 * @credits: SENDs the other side has receive buffers for
 * @peer_depth: its receive buffers in all
 * @peer_chunk: its chunk size
 * @to_return: buffers reposted whose credits the other side has not got
 * @free_sends: free send slots
 * @rx_done: filled receive buffers, in arrival order
 * @wait: woken on any change of the above
 * @max_data_sge: data SGEs per SEND
 * @sends: send slots
 * @recvs: receive buffers
 * @msg_hdr: receive side: the message being assembled
 * @msg_pages: its payload pages
 * @msg_nr: entries of @msg_pages
 * @msg_off: payload bytes assembled
 * @msg_active: a message is being assembled
 * @rx_thread: the receive thread
 * @builder: the message being sent, under chorus_conn.send_mutex
 * @rd_atom: READs in flight the QP allows each way (rdma_cm depths)
 * @mr_pool: FRWR MRs for the READ path (rdma_data=read only), under the
 *	QP's mr_lock
 * @mr_pool_ready: @mr_pool was made
 * @regs: sender of READ messages: one per MR of @mr_pool, NULL if none
 * @reg_sgl: their scatterlists
 * @free_regs: sender: free @regs, under @lock
 * @busy_regs: sender: registered @regs in the order their messages were
 *	sent, the order the peer returns them in; under @lock
 * @reads_to_return: receiver: READs done that the other side has not been
 *	told of, under @lock
 * @msg_read: receiver: the message assembled is to be READ from @rd_desc
 * @rd_desc: its descriptor, checked
 * @rd_sg: receiver: @msg_pages for the READ, %CHORUS_RDMA_READ_PAGES entries
 * @rd_ctx: the READ in flight, owned by the receive thread (or handshake)
 * @rd_cqe: its completion
 * @rd_active: @rd_ctx is set up: destroy it (after draining the QP)
 * @rd_done: its completion ran, with status @rd_status
 * @rd_status: see @rd_done
 * @inv_closed: teardown began: no more LOCAL_INV may be posted; under @lock
 */
struct chorus_rdma_queue {
	struct chorus_conn *conn;
	struct rdma_cm_id *cm_id;
	bool own_id;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct list_head entry;
	struct mutex cm_mutex; /* see above */
	bool released;
	struct completion cm_done;
	int cm_error;
	int timeout_ms;
	bool established;
	bool acceptor;
	bool accept_queued;
	struct work_struct accept_work;

	spinlock_t lock; /* see above */
	bool dead;
	const char *why;
	int credits;
	int peer_depth;
	u32 peer_chunk;
	u32 to_return;
	struct list_head free_sends;
	struct list_head rx_done;
	wait_queue_head_t wait;

	unsigned int max_data_sge;
	struct chorus_rdma_send *sends;
	struct chorus_rdma_recv *recvs;

	struct chorus_wire_hdr msg_hdr;
	struct page **msg_pages;
	unsigned int msg_nr;
	u32 msg_off;
	bool msg_active;
	struct task_struct *rx_thread;
	struct chorus_rdma_builder builder;

	u8 rd_atom;
	struct list_head mr_pool;
	bool mr_pool_ready;
	struct chorus_rdma_reg *regs;
	struct scatterlist *reg_sgl;
	struct list_head free_regs;
	struct list_head busy_regs;
	u32 reads_to_return;

	bool msg_read;
	struct chorus_rdma_read_desc rd_desc;
	struct scatterlist *rd_sg;
	struct rdma_rw_ctx rd_ctx;
	struct ib_cqe rd_cqe;
	bool rd_active;
	bool rd_done;
	enum ib_wc_status rd_status;
	bool inv_closed;
};

/*
 * Every queue, so that a device removal finds those on its device.
 * chorus_rdma_mutex protects the list, chorus_rdma_queue.dev and
 * chorus_rdma_removing; chorus_rdma_freed is woken when a queue is freed.
 */
static DEFINE_MUTEX(chorus_rdma_mutex);
static LIST_HEAD(chorus_rdma_queues);
static struct ib_device *chorus_rdma_removing[4];
static DECLARE_WAIT_QUEUE_HEAD(chorus_rdma_freed);
static struct workqueue_struct *chorus_rdma_wq;
static struct rdma_cm_id *chorus_rdma_listen_id; /* under chorus_rdma_mutex */

static int chorus_rdma_cm_handler(struct rdma_cm_id *id,
				  struct rdma_cm_event *ev);

/* Stop sending and receiving; the first reason sticks. Context: any. */
static void chorus_rdma_kill(struct chorus_rdma_queue *q, const char *why)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	if (!q->dead) {
		q->dead = true;
		q->why = why;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	wake_up_all(&q->wait);
}

/* Fail a queue from outside its owner: kill it and tell the peer. */
static void chorus_rdma_fail(struct chorus_rdma_queue *q, const char *why)
{
	struct chorus_conn *conn = q->conn;

	chorus_rdma_kill(q, why);
	if (!q->established && !q->acceptor) {
		q->cm_error = -ENODEV;
		complete(&q->cm_done);
	}
	if (conn->peer && conn->gen)
		chorus_peer_fail(conn->peer, conn->gen, why);
}

static void chorus_rdma_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chorus_rdma_send *s =
		container_of(wc->wr_cqe, struct chorus_rdma_send, cqe);
	struct chorus_rdma_queue *q = s->queue;
	unsigned long flags;
	unsigned int i;

	for (i = 1; i < s->nr_sge; i++)
		ib_dma_unmap_page(q->dev, s->sge[i].addr, s->sge[i].length,
				  DMA_TO_DEVICE);
	s->nr_sge = 0;
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

/*
 * The peer READ the data of the oldest @nr READ messages: invalidate their
 * MRs. Return: false if fewer were outstanding (a protocol error).
 * Context: softirq (receive completion).
 */
static bool chorus_rdma_reads_done(struct chorus_rdma_queue *q, u32 nr)
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

/*
 * The READ of a received message completed. Context: softirq.
 */
static void chorus_rdma_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chorus_rdma_queue *q =
		container_of(wc->wr_cqe, struct chorus_rdma_queue, rd_cqe);

	q->rd_status = wc->status;
	/* Pairs with the acquire in chorus_rdma_read_msg(): status first. */
	smp_store_release(&q->rd_done, true);
	wake_up_all(&q->wait);
}

static void chorus_rdma_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct chorus_rdma_recv *r =
		container_of(wc->wr_cqe, struct chorus_rdma_recv, cqe);
	struct chorus_rdma_queue *q = r->queue;
	unsigned long flags;
	bool overflow;

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_warn_ratelimited("RDMA receive failed: %s\n",
					    ib_wc_status_msg(wc->status));
		chorus_rdma_kill(q, "RDMA receive failed");
		return;
	}
	r->byte_len = wc->byte_len;
	r->imm = wc->wc_flags & IB_WC_WITH_IMM ? be32_to_cpu(wc->ex.imm_data) : 0;

	spin_lock_irqsave(&q->lock, flags);
	q->credits += r->imm & CHORUS_RDMA_CREDIT_MASK;
	overflow = q->credits > q->peer_depth;
	list_add_tail(&r->entry, &q->rx_done);
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
	wake_up_all(&q->wait);
}

/* Give a receive buffer pages where it lacks them and post it. */
static int chorus_rdma_post_recv(struct chorus_rdma_queue *q,
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

/* The sender's READ registrations, one per MR of the pool. */
static int chorus_rdma_alloc_regs(struct chorus_rdma_queue *q)
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

/*
 * The READ path's part of the QP, once it is drained: the receiver's READ
 * context, the sender's registrations the peer never said it READ, and the
 * MR pool, all before the QP (and then the PD) goes.
 */
static void chorus_rdma_destroy_read(struct chorus_rdma_queue *q)
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

/* Tear down what chorus_rdma_create_ib() made. */
static void chorus_rdma_destroy_ib(struct chorus_rdma_queue *q)
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

static bool chorus_rdma_dev_removing(struct ib_device *dev)
{
	int i;

	lockdep_assert_held(&chorus_rdma_mutex);
	for (i = 0; i < ARRAY_SIZE(chorus_rdma_removing); i++)
		if (chorus_rdma_removing[i] == dev)
			return true;
	return false;
}

/*
 * Make the PD, CQ, QP and buffers on the device rdma_cm found for @id.
 * Context: CM event handler.
 */
static int chorus_rdma_create_ib(struct chorus_rdma_queue *q,
				 struct rdma_cm_id *id)
{
	struct ib_qp_init_attr attr = {};
	struct ib_device *dev = id->device;
	u32 rd_wrs, reg_wrs = 0;
	int ret;

	mutex_lock(&chorus_rdma_mutex);
	if (chorus_rdma_dev_removing(dev)) {
		mutex_unlock(&chorus_rdma_mutex);
		return -ENODEV;
	}
	q->dev = dev;
	mutex_unlock(&chorus_rdma_mutex);

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
	if (chorus_rdma_read_mode) {
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

static void chorus_rdma_cm_data(struct chorus_rdma_cm_data *d)
{
	memset(d, 0, sizeof(*d));
	d->version = cpu_to_le16(CHORUS_RDMA_VERSION);
	d->recv_depth = cpu_to_le16(CHORUS_RDMA_RECV_DEPTH);
	d->chunk_size = cpu_to_le32(CHORUS_RDMA_CHUNK);
}

/* Check the other side's private data and take its credits. */
static int chorus_rdma_take_cm_data(struct chorus_rdma_queue *q,
				    const void *data, u8 len)
{
	const struct chorus_rdma_cm_data *d = data;
	u32 chunk, depth;

	if (!d || len < sizeof(*d) ||
	    le16_to_cpu(d->version) != CHORUS_RDMA_VERSION) {
		pr_warn_ratelimited("RDMA connect: unknown private data (version)\n");
		return -EPROTO;
	}
	chunk = le32_to_cpu(d->chunk_size);
	depth = le16_to_cpu(d->recv_depth);
	if (chunk < PAGE_SIZE || chunk > CHORUS_WIRE_MAX_PAYLOAD ||
	    chunk % PAGE_SIZE || depth < 2 || depth > CHORUS_RDMA_CREDIT_MASK) {
		pr_warn_ratelimited("RDMA connect: bad chunk size %u or depth %u\n",
				    chunk, depth);
		return -EPROTO;
	}
	spin_lock_irq(&q->lock);
	q->peer_chunk = chunk;
	q->peer_depth = depth;
	q->credits = depth;
	spin_unlock_irq(&q->lock);
	return 0;
}

static void chorus_rdma_conn_param(struct chorus_rdma_queue *q,
				   struct rdma_conn_param *param,
				   struct chorus_rdma_cm_data *d)
{
	chorus_rdma_cm_data(d);
	memset(param, 0, sizeof(*param));
	param->private_data = d;
	param->private_data_len = sizeof(*d);
	/* Either side may READ: it decides per message (rdma_data). */
	param->initiator_depth = q->rd_atom;
	param->responder_resources = q->rd_atom;
	param->flow_control = 1;
	param->retry_count = 7;
	/* Credits keep receives posted; infinite RNR retry is the backstop. */
	param->rnr_retry_count = 7;
}

static struct chorus_rdma_queue *chorus_rdma_queue_alloc(struct chorus_conn *conn)
{
	struct chorus_rdma_queue *q = kzalloc(sizeof(*q), GFP_KERNEL);

	if (!q)
		return NULL;
	q->conn = conn;
	mutex_init(&q->cm_mutex);
	init_completion(&q->cm_done);
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->free_sends);
	INIT_LIST_HEAD(&q->rx_done);
	INIT_LIST_HEAD(&q->mr_pool);
	INIT_LIST_HEAD(&q->free_regs);
	INIT_LIST_HEAD(&q->busy_regs);
	init_waitqueue_head(&q->wait);
	conn->queue = q;
	mutex_lock(&chorus_rdma_mutex);
	list_add_tail(&q->entry, &chorus_rdma_queues);
	mutex_unlock(&chorus_rdma_mutex);
	return q;
}

static void chorus_rdma_queue_free(struct chorus_rdma_queue *q)
{
	q->conn->queue = NULL;
	mutex_lock(&chorus_rdma_mutex);
	list_del(&q->entry);
	mutex_unlock(&chorus_rdma_mutex);
	wake_up_all(&chorus_rdma_freed);
	mutex_destroy(&q->cm_mutex);
	kfree(q);
}

static void chorus_rdma_accept_workfn(struct work_struct *work)
{
	struct chorus_rdma_queue *q =
		container_of(work, struct chorus_rdma_queue, accept_work);
	struct chorus_conn *conn = q->conn;

	if (chorus_handshake_accepted(conn))
		chorus_conn_free(conn);
}

/* A connect request on the listener: accept it with a new queue. */
static int chorus_rdma_connect_request(struct rdma_cm_id *id,
				       struct rdma_cm_event *ev)
{
	struct rdma_conn_param param;
	struct chorus_rdma_cm_data d;
	struct chorus_rdma_queue *q;
	struct chorus_conn *conn;
	int ret;

	conn = chorus_conn_alloc(&chorus_rdma_ops);
	if (!conn) {
		ret = -ENOMEM;
		goto reject;
	}
	q = chorus_rdma_queue_alloc(conn);
	if (!q) {
		ret = -ENOMEM;
		goto free_conn;
	}
	q->cm_id = id;
	q->acceptor = true;
	INIT_WORK(&q->accept_work, chorus_rdma_accept_workfn);
	ret = chorus_rdma_take_cm_data(q, ev->param.conn.private_data,
				       ev->param.conn.private_data_len);
	if (ret)
		goto free_queue;
	ret = chorus_rdma_create_ib(q, id);
	if (ret)
		goto destroy_ib;
	id->context = q;
	q->rd_atom = min3(q->rd_atom, ev->param.conn.initiator_depth,
			  ev->param.conn.responder_resources);
	chorus_rdma_conn_param(q, &param, &d);
	ret = rdma_accept(id, &param);
	if (ret)
		goto destroy_ib;
	/* From here on events for @id come to the queue; it owns @id. */
	q->own_id = true;
	return 0;

destroy_ib:
	id->context = NULL;
	chorus_rdma_destroy_ib(q);
free_queue:
	chorus_rdma_queue_free(q);
free_conn:
	chorus_conn_free(conn);
reject:
	rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	/* Non-zero: rdma_cm destroys @id. */
	return ret;
}

static const char *chorus_rdma_event_error(enum rdma_cm_event_type event,
					   int *err)
{
	switch (event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		*err = -EHOSTUNREACH;
		return "no RDMA device has a route to the peer";
	case RDMA_CM_EVENT_ROUTE_ERROR:
		*err = -ENETUNREACH;
		return "no RDMA route to the peer";
	case RDMA_CM_EVENT_UNREACHABLE:
		*err = -ETIMEDOUT;
		return "peer unreachable over RDMA";
	case RDMA_CM_EVENT_REJECTED:
		*err = -ECONNREFUSED;
		return "RDMA connection refused";
	default:
		*err = -ECONNRESET;
		return "RDMA connection failed";
	}
}

/* The dialler's connection finished coming up, or failed to. */
static void chorus_rdma_connected(struct chorus_rdma_queue *q, int err)
{
	if (err)
		chorus_rdma_kill(q, "RDMA connection failed");
	q->cm_error = err;
	complete(&q->cm_done);
}

static int chorus_rdma_cm_handler(struct rdma_cm_id *id,
				  struct rdma_cm_event *ev)
{
	struct chorus_rdma_queue *q = id->context;
	struct rdma_conn_param param;
	struct chorus_rdma_cm_data d;
	const char *why;
	int ret, err;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return chorus_rdma_connect_request(id, ev);
	if (!q)		/* the listener */
		return 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, q->timeout_ms);
		if (ret)
			chorus_rdma_connected(q, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		mutex_lock(&q->cm_mutex);
		ret = q->released ? -ECONNABORTED : chorus_rdma_create_ib(q, id);
		if (!ret) {
			chorus_rdma_conn_param(q, &param, &d);
			ret = rdma_connect_locked(id, &param);
		}
		mutex_unlock(&q->cm_mutex);
		if (ret)
			chorus_rdma_connected(q, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		q->established = true;
		if (q->acceptor) {
			q->accept_queued = true;
			queue_work(chorus_rdma_wq, &q->accept_work);
			break;
		}
		ret = chorus_rdma_take_cm_data(q, ev->param.conn.private_data,
					       ev->param.conn.private_data_len);
		chorus_rdma_connected(q, ret);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_REJECTED:
		why = chorus_rdma_event_error(ev->event, &err);
		if (ev->event == RDMA_CM_EVENT_REJECTED)
			pr_info_ratelimited("RDMA connect rejected: %s\n",
					    rdma_reject_msg(id, ev->status));
		if (q->acceptor)
			goto dead;
		chorus_rdma_kill(q, why);
		chorus_rdma_connected(q, err);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		why = ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ?
		      "RDMA device removed" : "RDMA connection closed";
		if (q->acceptor)
			goto dead;
		chorus_rdma_fail(q, why);
		break;
	default:
		break;
	}
	return 0;

dead:
	/* An accepted queue: its handshake, or a work to free it, sees it. */
	chorus_rdma_fail(q, "RDMA connection closed");
	if (!q->accept_queued) {
		q->accept_queued = true;
		queue_work(chorus_rdma_wq, &q->accept_work);
	}
	return 0;
}

static int chorus_rdma_connect(struct chorus_conn *conn,
			       const struct sockaddr_storage *addr,
			       int timeout_ms)
{
	struct chorus_rdma_queue *q;
	struct rdma_cm_id *id;
	long left;
	int ret;

	q = chorus_rdma_queue_alloc(conn);
	if (!q)
		return -ENOMEM;
	q->timeout_ms = timeout_ms;
	id = rdma_create_id(&init_net, chorus_rdma_cm_handler, q, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	q->cm_id = id;
	q->own_id = true;
	ret = rdma_resolve_addr(id, NULL, (struct sockaddr *)addr, timeout_ms);
	if (ret)
		return ret;
	/* Address, route and connect together: a fallback must not wait long. */
	left = wait_for_completion_timeout(&q->cm_done,
					   msecs_to_jiffies(timeout_ms));
	if (!left)
		return -ETIMEDOUT;
	return q->cm_error;
}

static bool chorus_rdma_can_send(struct chorus_rdma_queue *q, int reserve)
{
	return READ_ONCE(q->dead) || (READ_ONCE(q->credits) > reserve &&
				      !list_empty_careful(&q->free_sends));
}

/*
 * Wait for a send slot and a credit. @credit_only may take the last credit;
 * anything else leaves it for credit returns. @timeout_ms bounds the wait:
 * a peer that stops returning credits is found by the heartbeat, whose
 * PINGs must not wait forever here.
 */
static int chorus_rdma_get_send(struct chorus_rdma_queue *q, bool credit_only,
				long timeout, struct chorus_rdma_send **sp)
{
	int reserve = credit_only ? 0 : 1;
	struct chorus_rdma_send *s = NULL;

	for (;;) {
		spin_lock_irq(&q->lock);
		if (q->dead) {
			spin_unlock_irq(&q->lock);
			return -ECONNRESET;
		}
		if (q->credits > reserve && !list_empty(&q->free_sends)) {
			s = list_first_entry(&q->free_sends,
					     struct chorus_rdma_send, entry);
			list_del(&s->entry);
			q->credits--;
		}
		spin_unlock_irq(&q->lock);
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
	unsigned int i;

	for (i = 1; i < s->nr_sge; i++)
		ib_dma_unmap_page(q->dev, s->sge[i].addr, s->sge[i].length,
				  DMA_TO_DEVICE);
	s->nr_sge = 0;
	spin_lock_irq(&q->lock);
	list_add(&s->entry, &q->free_sends);
	spin_unlock_irq(&q->lock);
	chorus_rdma_kill(q, "RDMA send failed");
}

/*
 * Post @s with @flags (%CHORUS_RDMA_CREDIT_ONLY or %CHORUS_RDMA_READ) in
 * its immediate data, with the credits and READs done to return; @first,
 * if any, is a work request to chain before it (the READ path's REG_MR).
 */
static int chorus_rdma_post_send(struct chorus_rdma_queue *q,
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
	u32 give, done;
	int ret;

	spin_lock_irq(&q->lock);
	give = min_t(u32, q->to_return, CHORUS_RDMA_CREDIT_MASK);
	q->to_return -= give;
	done = min_t(u32, q->reads_to_return, CHORUS_RDMA_DONE_MASK);
	q->reads_to_return -= done;
	spin_unlock_irq(&q->lock);
	wr.ex.imm_data = cpu_to_be32(give | done << CHORUS_RDMA_DONE_SHIFT | flags);
	if (!credit_only)
		ib_dma_sync_single_for_device(q->dev, s->sge[0].addr,
					      s->sge[0].length, DMA_TO_DEVICE);
	if (first)
		first->next = &wr;
	ret = ib_post_send(q->qp, first ?: &wr, NULL);
	if (ret)
		chorus_rdma_put_send(q, s);
	return ret;
}

/* Return gathered credits now if there are many and nothing else goes. */
static void chorus_rdma_return_credits(struct chorus_rdma_queue *q)
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

/*
 * Send a message for the peer to READ its data: REG_MR of the data pages
 * chained before the SEND of the header and a descriptor. The pages stay
 * mapped and registered until the peer says it READ them.
 * Context: process context, under chorus_conn.send_mutex.
 * Return: 0 when sent, 1 when the message must go by SEND (no free MR, or
 * pages one MR cannot map), or a negative errno.
 */
static int chorus_rdma_send_read(struct chorus_rdma_queue *q,
				 const struct chorus_wire_hdr *hdr,
				 const struct chorus_msg_data *data,
				 long timeout)
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

static long chorus_rdma_send_timeout(struct chorus_conn *conn)
{
	u32 ms = CHORUS_HANDSHAKE_TIMEOUT_MS;

	if (conn->peer && conn->gen)
		ms = READ_ONCE(conn->peer->vol->repl.ping_timeout_ms);
	return msecs_to_jiffies(ms);
}

static int chorus_rdma_send(struct chorus_conn *conn,
			    const struct chorus_wire_hdr *hdr, const void *body,
			    const struct chorus_msg_data *data)
{
	struct chorus_rdma_queue *q = conn->queue;
	u32 body_len = body ? le32_to_cpu(hdr->payload_len) : 0;
	struct chorus_rdma_builder *b = &q->builder;
	struct chorus_rdma_send *s;
	int ret;

	if (body_len > CHORUS_RDMA_MAX_BODY || (body_len && data && data->len))
		return -EMSGSIZE;
	if (data && data->len && q->regs) {
		ret = chorus_rdma_send_read(q, hdr, data,
					    chorus_rdma_send_timeout(conn));
		if (ret <= 0)
			return ret;
		atomic64_inc(&chorus_rdma_st_read_fallbacks);
	}
	if (data && data->len) {
		/* Sends are serialised by send_mutex: one builder per queue. */
		memset(b, 0, sizeof(*b));
		b->q = q;
		b->hdr = hdr;
		b->timeout = chorus_rdma_send_timeout(conn);
		return chorus_rdma_send_data(b, data);
	}
	ret = chorus_rdma_get_send(q, false, chorus_rdma_send_timeout(conn), &s);
	if (ret)
		return ret;
	memcpy(s->buf, hdr, sizeof(*hdr));
	if (body_len)
		memcpy(s->buf + sizeof(*hdr), body, body_len);
	s->sge[0].length = sizeof(*hdr) + body_len;
	return chorus_rdma_post_send(q, s, 0, NULL);
}

/* Take the next filled receive buffer, waiting up to @timeout. */
static int chorus_rdma_next_recv(struct chorus_rdma_queue *q, long timeout,
				 struct chorus_rdma_recv **rp)
{
	struct chorus_rdma_recv *r = NULL;

	/* Idle: a connection with no traffic is not a hung task. */
	wait_event_idle_timeout(q->wait, READ_ONCE(q->dead) ||
				!list_empty_careful(&q->rx_done) ||
				kthread_should_stop(), timeout);
	spin_lock_irq(&q->lock);
	if (!q->dead && !list_empty(&q->rx_done)) {
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

static void chorus_rdma_msg_reset(struct chorus_rdma_queue *q)
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
 * A READ message: its buffer holds the header and a descriptor. Check both
 * and start the message, whose data chorus_rdma_read_msg() then READs.
 * Return: 1, or -EPROTO (and *@why).
 */
static int chorus_rdma_take_read(struct chorus_rdma_queue *q,
				 struct chorus_rdma_recv *r, const char **why)
{
	struct chorus_rdma_read_desc *d = &q->rd_desc;
	u32 len;

	*why = "READ message inside a message";
	if (q->msg_active)
		return -EPROTO;
	*why = "READ descriptor length";
	if (r->byte_len != sizeof(*r->hdr) + sizeof(*d))
		return -EPROTO;
	if (chorus_wire_check_hdr(r->hdr, why))
		return -EPROTO;
	ib_dma_sync_single_for_cpu(q->dev, r->sge[1].addr, sizeof(*d),
				   DMA_FROM_DEVICE);
	memcpy(d, page_address(r->pages[0]), sizeof(*d));
	ib_dma_sync_single_for_device(q->dev, r->sge[1].addr, sizeof(*d),
				      DMA_FROM_DEVICE);
	len = le32_to_cpu(r->hdr->payload_len);
	*why = "READ length";
	if (!len || len > CHORUS_WIRE_MAX_PAYLOAD || le32_to_cpu(d->len) != len)
		return -EPROTO;
	*why = "READ rkey";
	if (!le32_to_cpu(d->rkey))
		return -EPROTO;
	q->msg_hdr = *r->hdr;
	q->msg_nr = DIV_ROUND_UP(len, PAGE_SIZE);
	q->msg_pages = kcalloc(q->msg_nr, sizeof(*q->msg_pages), GFP_NOIO);
	if (!q->msg_pages) {
		*why = "memory";
		return -ENOMEM;
	}
	q->msg_off = len;
	q->msg_active = true;
	q->msg_read = true;
	return 1;
}

/*
 * READ the data of the message taken by chorus_rdma_take_read() into fresh
 * pages, and count it done for the sender. One READ at a time per queue:
 * messages are handed on in order.
 * Context: the receive thread or the handshake, which own @q->rd_ctx.
 */
static int chorus_rdma_read_msg(struct chorus_rdma_queue *q, const char **why)
{
	u32 len = le32_to_cpu(q->rd_desc.len), port = q->cm_id->port_num;
	unsigned int i;
	int ret;

	sg_init_table(q->rd_sg, q->msg_nr);
	for (i = 0; i < q->msg_nr; i++) {
		q->msg_pages[i] = alloc_page(GFP_NOIO);
		if (!q->msg_pages[i]) {
			*why = "memory";
			return -ENOMEM;
		}
		sg_set_page(&q->rd_sg[i], q->msg_pages[i],
			    min_t(u32, len - i * PAGE_SIZE, PAGE_SIZE), 0);
	}
	ret = rdma_rw_ctx_init(&q->rd_ctx, q->qp, port, q->rd_sg, q->msg_nr, 0,
			       le64_to_cpu(q->rd_desc.addr),
			       le32_to_cpu(q->rd_desc.rkey), DMA_FROM_DEVICE);
	if (ret < 0) {
		*why = "RDMA READ setup";
		return ret;
	}
	q->rd_done = false;
	q->rd_active = true;	/* from here on teardown destroys it */
	ret = rdma_rw_ctx_post(&q->rd_ctx, q->qp, port, &q->rd_cqe, NULL);
	if (ret) {
		*why = "RDMA READ post";
		return ret;
	}
	/* Acquire: pairs with chorus_rdma_read_done(), for rd_status. */
	wait_event_idle(q->wait, smp_load_acquire(&q->rd_done) ||
			READ_ONCE(q->dead) || kthread_should_stop());
	if (!smp_load_acquire(&q->rd_done)) { /* as above */
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

/*
 * Add a filled receive buffer to the message being assembled, taking its
 * pages. Return: 1 when the message is complete, 0 when more is to come,
 * -EPROTO (and *@why) when the buffer does not fit.
 */
static int chorus_rdma_take(struct chorus_rdma_queue *q,
			    struct chorus_rdma_recv *r, const char **why)
{
	u32 n, len, i, k;

	*why = "immediate data flags";
	if (r->imm & ~CHORUS_RDMA_IMM_KNOWN ||
	    (r->imm & CHORUS_RDMA_CREDIT_ONLY && r->imm & CHORUS_RDMA_READ))
		return -EPROTO;
	if (r->imm & CHORUS_RDMA_CREDIT_ONLY) {
		*why = "credit return with data";
		return r->byte_len ? -EPROTO : 0;
	}
	*why = "length";
	if (r->byte_len < sizeof(*r->hdr))
		return -EPROTO;
	n = r->byte_len - sizeof(*r->hdr);
	ib_dma_sync_single_for_cpu(q->dev, r->sge[0].addr, sizeof(*r->hdr),
				   DMA_FROM_DEVICE);
	if (r->imm & CHORUS_RDMA_READ)
		return chorus_rdma_take_read(q, r, why);
	if (!q->msg_active) {
		if (chorus_wire_check_hdr(r->hdr, why))
			return -EPROTO;
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
	} else if (memcmp(r->hdr, &q->msg_hdr, sizeof(q->msg_hdr))) {
		*why = "chunk header (not the message being received)";
		return -EPROTO;
	}
	len = le32_to_cpu(q->msg_hdr.payload_len);
	*why = "chunk length";
	if (n > CHORUS_RDMA_CHUNK || n > len - q->msg_off || (len && !n) ||
	    (q->msg_off + n < len && n % PAGE_SIZE))
		return -EPROTO;

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

/* Repost a consumed buffer and count its credit for the other side. */
static int chorus_rdma_repost(struct chorus_rdma_queue *q,
			      struct chorus_rdma_recv *r)
{
	int ret = chorus_rdma_post_recv(q, r);

	if (ret)
		return ret;
	spin_lock_irq(&q->lock);
	q->to_return++;
	spin_unlock_irq(&q->lock);
	return 0;
}

/*
 * Receive one whole message. On success the caller owns q->msg_pages and
 * must clear q->msg_active (chorus_rdma_msg_done()).
 */
static int chorus_rdma_recv_msg(struct chorus_rdma_queue *q, long timeout,
				const char **why)
{
	struct chorus_rdma_recv *r;
	int ret, taken;

	for (;;) {
		ret = chorus_rdma_next_recv(q, timeout, &r);
		if (ret) {
			*why = q->why ?: "connection closed";
			return ret;
		}
		taken = chorus_rdma_take(q, r, why);
		ret = chorus_rdma_repost(q, r);
		if (ret) {
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

static int chorus_rdma_recv_sync(struct chorus_conn *conn,
				 struct chorus_wire_hdr *hdr, void *body,
				 size_t body_len, int timeout_ms)
{
	struct chorus_rdma_queue *q = conn->queue;
	const char *why;
	int ret;

	ret = chorus_rdma_recv_msg(q, msecs_to_jiffies(timeout_ms), &why);
	if (ret) {
		if (ret == -EPROTO)
			pr_warn_ratelimited("handshake: malformed RDMA message, bad %s\n",
					    why);
		return ret;
	}
	*hdr = q->msg_hdr;
	if (le32_to_cpu(hdr->payload_len) != body_len) {
		chorus_rdma_msg_reset(q);
		return -EPROTO;
	}
	if (body_len)
		memcpy(body, page_address(q->msg_pages[0]), body_len);
	chorus_rdma_msg_reset(q);
	return 0;
}

static int chorus_rdma_rx_thread(void *data)
{
	struct chorus_conn *conn = data;
	struct chorus_rdma_queue *q = conn->queue;
	struct chorus_peer *peer = conn->peer;
	const char *why = "connection closed";
	struct chorus_wire_hdr hdr;
	struct page **pages;
	unsigned int nr;
	int ret;

	while (!kthread_should_stop()) {
		ret = chorus_rdma_recv_msg(q, MAX_SCHEDULE_TIMEOUT, &why);
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
	chorus_rdma_kill(q, why);
	chorus_peer_fail(peer, conn->gen, why);
	chorus_wait_for_stop();
	return 0;
}

static int chorus_rdma_start_rx(struct chorus_conn *conn)
{
	struct task_struct *t;

	t = kthread_run(chorus_rdma_rx_thread, conn, "chorus-rdma/%u.%d",
			conn->peer->node_id, conn->index);
	if (IS_ERR(t))
		return PTR_ERR(t);
	conn->rx_thread = t;
	return 0;
}

static bool chorus_rdma_sends_done(struct chorus_rdma_queue *q)
{
	size_t free;

	spin_lock_irq(&q->lock);
	free = list_count_nodes(&q->free_sends);
	spin_unlock_irq(&q->lock);
	return READ_ONCE(q->dead) || free == CHORUS_RDMA_SEND_DEPTH;
}

static void chorus_rdma_shutdown(struct chorus_conn *conn)
{
	struct chorus_rdma_queue *q = conn->queue;

	if (!q)
		return;
	/*
	 * Let the last SENDs reach the peer first, as a TCP close does: a
	 * handshake refusal is sent just before the connection is freed, and
	 * destroying the QP at once would lose it. Bounded, for a peer that
	 * no longer acks.
	 */
	if (q->established && q->sends)
		wait_event_idle_timeout(q->wait, chorus_rdma_sends_done(q),
					msecs_to_jiffies(CHORUS_RDMA_CLOSE_MS));
	chorus_rdma_kill(q, "connection shut down");
	if (q->established)
		rdma_disconnect(q->cm_id);
}

static void chorus_rdma_stop_rx(struct chorus_conn *conn)
{
	if (conn->rx_thread) {
		kthread_stop(conn->rx_thread);
		conn->rx_thread = NULL;
	}
}

static void chorus_rdma_release(struct chorus_conn *conn)
{
	struct chorus_rdma_queue *q = conn->queue;

	if (!q)
		return;
	chorus_rdma_kill(q, "connection closed");
	mutex_lock(&q->cm_mutex);
	q->released = true;
	mutex_unlock(&q->cm_mutex);
	if (q->acceptor && q->accept_queued && current_work() != &q->accept_work)
		cancel_work_sync(&q->accept_work);
	chorus_rdma_destroy_ib(q);
	chorus_rdma_msg_reset(q);
	if (q->cm_id && q->own_id)
		rdma_destroy_id(q->cm_id);
	chorus_rdma_queue_free(q);
}

const struct chorus_transport_ops chorus_rdma_ops = {
	.name		= "rdma",
	.transport	= CHORUS_TRANSPORT_RDMA,
	.connect	= chorus_rdma_connect,
	.send		= chorus_rdma_send,
	.recv_sync	= chorus_rdma_recv_sync,
	.start_rx	= chorus_rdma_start_rx,
	.shutdown	= chorus_rdma_shutdown,
	.stop_rx	= chorus_rdma_stop_rx,
	.release	= chorus_rdma_release,
};

/**
 * chorus_rdma_probe() - whether an RDMA connection to @addr comes up now
 * @addr: the peer's address
 * @timeout_ms: bound for the whole attempt
 *
 * For the TCP fallback: connects one queue pair to the peer's listener and
 * closes it again, without a handshake, so the session carrying traffic is
 * not touched. A route alone proves nothing: the peer's device may be gone.
 * The peer's side sees a connection close before its HELLO and frees it.
 * Context: process context; sleeps.
 * Return: true when the connection was established.
 */
bool chorus_rdma_probe(const struct sockaddr_storage *addr, int timeout_ms)
{
	struct chorus_conn *conn;
	bool ok;

	conn = chorus_conn_alloc(&chorus_rdma_ops);
	if (!conn)
		return false;
	ok = !chorus_rdma_connect(conn, addr, timeout_ms);
	chorus_conn_free(conn);
	return ok;
}

/**
 * chorus_rdma_listen() - accept RDMA connections on @addr's port
 * @addr: address and port of the TCP listener
 * @extack: where to say what failed
 *
 * The RDMA listener binds the wildcard address of @addr's family, so that
 * it keeps working while RDMA devices come and go (a listener bound to one
 * address is tied to that address's device). The handshake, not the
 * address, decides who may connect.
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int chorus_rdma_listen(const struct sockaddr_storage *addr,
		       struct netlink_ext_ack *extack)
{
	struct sockaddr_storage any = {};
	struct rdma_cm_id *id;
	int ret;

	any.ss_family = addr->ss_family;
	if (addr->ss_family == AF_INET6)
		((struct sockaddr_in6 *)&any)->sin6_port =
			((const struct sockaddr_in6 *)addr)->sin6_port;
	else
		((struct sockaddr_in *)&any)->sin_port =
			((const struct sockaddr_in *)addr)->sin_port;

	id = rdma_create_id(&init_net, chorus_rdma_cm_handler, NULL,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&any);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot bind the RDMA listener to this port");
		goto destroy_id;
	}
	ret = rdma_listen(id, 64);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot listen for RDMA connections");
		goto destroy_id;
	}
	mutex_lock(&chorus_rdma_mutex);
	swap(chorus_rdma_listen_id, id);
	mutex_unlock(&chorus_rdma_mutex);
	if (id)
		rdma_destroy_id(id);
	return 0;

destroy_id:
	rdma_destroy_id(id);
	return ret;
}

/**
 * chorus_rdma_unlisten() - stop accepting RDMA connections
 *
 * Handshakes under way finish on chorus_rdma_wq.
 * Context: process context.
 */
void chorus_rdma_unlisten(void)
{
	struct rdma_cm_id *id;

	mutex_lock(&chorus_rdma_mutex);
	id = chorus_rdma_listen_id;
	chorus_rdma_listen_id = NULL;
	mutex_unlock(&chorus_rdma_mutex);
	if (id)
		rdma_destroy_id(id);
	flush_workqueue(chorus_rdma_wq);
}

static bool chorus_rdma_dev_in_use(struct ib_device *dev)
{
	struct chorus_rdma_queue *q;
	bool used = false;

	mutex_lock(&chorus_rdma_mutex);
	list_for_each_entry(q, &chorus_rdma_queues, entry)
		used |= q->dev == dev;
	mutex_unlock(&chorus_rdma_mutex);
	return used;
}

static int chorus_rdma_add_one(struct ib_device *dev)
{
	return 0;
}

/*
 * A device goes away: fail every queue on it, then wait until their
 * owners have freed them, so that no PD, CQ or QP of ours outlives it.
 */
static void chorus_rdma_remove_one(struct ib_device *dev, void *client_data)
{
	struct chorus_rdma_queue *q;
	int i, slot = -1, nr = 0;

	mutex_lock(&chorus_rdma_mutex);
	for (i = 0; i < ARRAY_SIZE(chorus_rdma_removing) && slot < 0; i++)
		if (!chorus_rdma_removing[i])
			slot = i;
	if (slot >= 0)
		chorus_rdma_removing[slot] = dev;
	list_for_each_entry(q, &chorus_rdma_queues, entry)
		if (q->dev == dev) {
			chorus_rdma_fail(q, "RDMA device removed");
			nr++;
		}
	mutex_unlock(&chorus_rdma_mutex);

	if (nr)
		pr_info("RDMA device %s removed: closing %d connections\n",
			dev_name(&dev->dev), nr);
	while (!wait_event_timeout(chorus_rdma_freed,
				   !chorus_rdma_dev_in_use(dev), 10 * HZ))
		pr_warn("RDMA device %s: still waiting for connections to close\n",
			dev_name(&dev->dev));

	mutex_lock(&chorus_rdma_mutex);
	if (slot >= 0)
		chorus_rdma_removing[slot] = NULL;
	mutex_unlock(&chorus_rdma_mutex);
}

static struct ib_client chorus_rdma_client = {
	.name	= "chorus",
	.add	= chorus_rdma_add_one,
	.remove	= chorus_rdma_remove_one,
};

/* debugfs chorus_rdma: the data path and the READ path's counters. */
static int chorus_rdma_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "data_path %s\n", chorus_rdma_read_mode ? "read" : "send");
	seq_printf(m, "read_msgs %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_read_msgs));
	seq_printf(m, "read_fallbacks %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_read_fallbacks));
	seq_printf(m, "reads %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_reads));
	seq_printf(m, "read_bytes %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_read_bytes));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(chorus_rdma_stats);

/**
 * chorus_rdma_init() - register with the RDMA core
 *
 * Return: 0 or a negative errno.
 */
int chorus_rdma_init(void)
{
	int ret;

	if (!strcmp(chorus_rdma_data, "read")) {
		chorus_rdma_read_mode = true;
	} else if (strcmp(chorus_rdma_data, "send")) {
		pr_err("rdma_data=%s: must be send or read\n", chorus_rdma_data);
		return -EINVAL;
	}
	chorus_rdma_wq = alloc_workqueue("chorus_rdma", 0, 0);
	if (!chorus_rdma_wq)
		return -ENOMEM;
	ret = ib_register_client(&chorus_rdma_client);
	if (ret) {
		destroy_workqueue(chorus_rdma_wq);
		return ret;
	}
	chorus_rdma_debugfs = debugfs_create_file("chorus_rdma", 0444, NULL,
						  NULL, &chorus_rdma_stats_fops);
	return 0;
}

/**
 * chorus_rdma_exit() - unregister; every queue is gone already
 */
void chorus_rdma_exit(void)
{
	debugfs_remove(chorus_rdma_debugfs);
	chorus_rdma_unlisten();
	ib_unregister_client(&chorus_rdma_client);
	destroy_workqueue(chorus_rdma_wq);
}
