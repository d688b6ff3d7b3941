/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: the RDMA transport's private
 * structures (the queue and its buffers), its constants, and the functions
 * its files share. What goes on the wire (the CM private data, the
 * immediate data, the READ descriptor) is in include/chorus/rdma_wire.h.
 * The map of those files is at the top of transport_rdma.c.
 *
 * Only they include this header; the rest of chorus sees the transport
 * through chorus_rdma_ops and the functions declared in repl.h.
 */
#ifndef CHORUS_TRANSPORT_RDMA_H
#define CHORUS_TRANSPORT_RDMA_H

#include <linux/bottom_half.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>
#include <chorus/rdma_wire.h>

#include "chorus.h"

#define CHORUS_RDMA_CHUNK_PAGES	(CHORUS_RDMA_CHUNK / PAGE_SIZE)
#define CHORUS_RDMA_RECV_DEPTH	32		/* receive buffers per queue */
#define CHORUS_RDMA_SEND_DEPTH	(CHORUS_RDMA_RECV_DEPTH + 4)
#define CHORUS_RDMA_MAX_SGE	32		/* send SGEs we ever use */
#define CHORUS_RDMA_MAX_BODY	192		/* inline body after a header */
#define CHORUS_RDMA_HDR_BUF	(sizeof(struct chorus_wire_hdr) + \
				 CHORUS_RDMA_MAX_BODY)
#define CHORUS_RDMA_READ_PAGES	(CHORUS_WIRE_MAX_PAYLOAD / PAGE_SIZE)
#define CHORUS_RDMA_READ_SG	(CHORUS_RDMA_READ_PAGES + 1) /* + an offset */
#define CHORUS_RDMA_READ_MRS	32		/* FRWR MRs per queue */
#define CHORUS_RDMA_DONE_AT	8		/* READs done worth a SEND */
#define CHORUS_RDMA_RETURN_AT	(CHORUS_RDMA_RECV_DEPTH / 4)
#define CHORUS_RDMA_CLOSE_MS	500		/* for SENDs to complete */
#define CHORUS_RDMA_RD_ATOM	16		/* READs in flight per QP */

/*
 * transport_rdma.c: the least data that goes by READ, set at load; U32_MAX
 * (rdma_data=send) makes no MRs for READ.
 */
extern u32 chorus_rdma_read_min;

/* READ path counters, in debugfs chorus_rdma: any queue, any peer. */
extern atomic64_t chorus_rdma_st_read_msgs;	/* sent for the peer to READ */
extern atomic64_t chorus_rdma_st_read_fallbacks; /* sent by SEND instead */
extern atomic64_t chorus_rdma_st_reads;		/* READs done as receiver */
extern atomic64_t chorus_rdma_st_read_bytes;	/* bytes they moved */
/* Owner's acks the receive completion acted on (rdma_recv.c). */
extern atomic64_t chorus_rdma_st_acks_in_completion;

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
 * @held: per entry of @sge, the page referenced until the SEND completes
 *	(detached data, &struct chorus_msg_data), or NULL
 * @nr_sge: entries of @sge in use
 */
struct chorus_rdma_send {
	struct ib_cqe cqe;
	struct chorus_rdma_queue *queue;
	struct list_head entry;
	void *buf;
	struct ib_sge sge[CHORUS_RDMA_MAX_SGE];
	struct page *held[CHORUS_RDMA_MAX_SGE];
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
	bool hold;
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
 * @conn: the connection; NULL once released (the reap outlives it), read
 *	under @conn_lock by those that do not own the queue
 * @conn_lock: protects @conn against its release while a CM event or a
 *	device removal fails the connection's session; never taken in
 *	softirq, taken before chorus_peer.lock. @lock never is: the receive
 *	completion takes chorus_peer.lock (an ack, with interrupts saved)
 *	only after dropping @lock
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
 * @reap_work: destroys the IB resources and frees the queue after release
 * @lock: protects the fields below it, taken in softirq
 * @dead: no more sends or receives; @why says why
 * @why: the reason
 * @credits: SENDs the other side has receive buffers for
 * @peer_depth: its receive buffers in all
 * @peer_chunk: its chunk size
 * @to_return: buffers reposted whose credits the other side has not got
 * @free_sends: free send slots
 * @rx_done: filled receive buffers, in arrival order (less the acks the
 *	completion acted on)
 * @ack_conn: the connection whose peer's OK acks the receive completion
 *	acts on itself (chorus_conn_recv_atomic()); set by chorus_rdma_start_rx(), cleared by
 *	chorus_rdma_stop_acks(); none while @dead
 * @acks_running: completions acting on an ack now; chorus_rdma_stop_acks()
 *	waits for none
 * @wait: senders wait here for @credits and @free_sends, teardown for the
 *	last SENDs and for @acks_running; woken on any change of the above
 * @rx_wait: the receive thread (or the handshake) waits here for @rx_done
 *	and for its READ (@rd_done); woken only for those and @dead, so that
 *	credits and send completions, one or two per write, do not wake it
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
 * @mr_pool: FRWR MRs for the READ path (rdma_data=read or auto), under the
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
	spinlock_t conn_lock; /* see above */
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
	struct work_struct reap_work;

	spinlock_t lock; /* see above */
	bool dead;
	const char *why;
	int credits;
	int peer_depth;
	u32 peer_chunk;
	u32 to_return;
	struct list_head free_sends;
	struct list_head rx_done;
	struct chorus_conn *ack_conn;
	unsigned int acks_running;
	wait_queue_head_t wait;
	wait_queue_head_t rx_wait;

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

/**
 * chorus_rdma_bh_off() - turn bottom halves off around a post
 *
 * soft-RoCE's post schedules the QP's requester tasklet; from process
 * context that wakes ksoftirqd, a context switch and a trip through the
 * scheduler for every message. With bottom halves off, the
 * local_bh_enable() of chorus_rdma_bh_on() runs the tasklet at once in the
 * poster's context, as it runs when a completion handler posts. On a NIC
 * the post rings a doorbell and this costs a counter update. Where
 * interrupts are off local_bh_enable() must not run: there nothing changes.
 * Context: any.
 * Return: whether chorus_rdma_bh_on() has to turn them back on.
 */
static inline bool chorus_rdma_bh_off(void)
{
	if (in_hardirq() || irqs_disabled())
		return false;
	local_bh_disable();
	return true;
}

/**
 * chorus_rdma_bh_on() - undo chorus_rdma_bh_off()
 * @off: what chorus_rdma_bh_off() returned
 */
static inline void chorus_rdma_bh_on(bool off)
{
	if (off)
		local_bh_enable();
}

/* transport_rdma.c */
void chorus_rdma_kill(struct chorus_rdma_queue *q, const char *why);
int chorus_rdma_set_dev(struct chorus_rdma_queue *q, struct ib_device *dev);

/* rdma_queue.c */
int chorus_rdma_create_ib(struct chorus_rdma_queue *q, struct rdma_cm_id *id);
void chorus_rdma_destroy_ib(struct chorus_rdma_queue *q);
int chorus_rdma_post_recv(struct chorus_rdma_queue *q,
			  struct chorus_rdma_recv *r);

/* rdma_send.c */
void chorus_rdma_send_done(struct ib_cq *cq, struct ib_wc *wc);
int chorus_rdma_get_send(struct chorus_rdma_queue *q, bool credit_only,
			 long timeout, struct chorus_rdma_send **sp);
int chorus_rdma_post_send(struct chorus_rdma_queue *q,
			  struct chorus_rdma_send *s, u32 flags,
			  struct ib_send_wr *first);
void chorus_rdma_return_credits(struct chorus_rdma_queue *q);
int chorus_rdma_send(struct chorus_conn *conn,
		     const struct chorus_wire_hdr *hdr, const void *body,
		     const struct chorus_msg_data *data);

/* rdma_recv.c */
void chorus_rdma_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void chorus_rdma_msg_reset(struct chorus_rdma_queue *q);
int chorus_rdma_recv_sync(struct chorus_conn *conn,
			  struct chorus_wire_hdr *hdr, void *body,
			  size_t body_len, int timeout_ms);
int chorus_rdma_start_rx(struct chorus_conn *conn);
void chorus_rdma_stop_acks(struct chorus_rdma_queue *q);

/* rdma_read.c */
int chorus_rdma_alloc_regs(struct chorus_rdma_queue *q);
void chorus_rdma_destroy_read(struct chorus_rdma_queue *q);
bool chorus_rdma_reads_done(struct chorus_rdma_queue *q, u32 nr);
void chorus_rdma_read_done(struct ib_cq *cq, struct ib_wc *wc);
int chorus_rdma_send_read(struct chorus_rdma_queue *q,
			  const struct chorus_wire_hdr *hdr,
			  const struct chorus_msg_data *data, long timeout);
int chorus_rdma_take_read(struct chorus_rdma_queue *q,
			  struct chorus_rdma_recv *r, const char **why);
int chorus_rdma_read_msg(struct chorus_rdma_queue *q, const char **why);
long chorus_rdma_timeout(struct chorus_conn *conn);

#endif /* CHORUS_TRANSPORT_RDMA_H */
