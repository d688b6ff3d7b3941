// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the RDMA transport.
 *
 * One RC queue pair per connection, set up with rdma_cm, with its own PD
 * and CQ (completions in softirq through ib_cqe callbacks).
 *
 * Messages move by SEND into posted receive buffers, or, with the module
 * parameter rdma_data=read, their data is READ by the receiver from an FRWR
 * registration of the sender's pages (see "The READ path" in rdma_read.c);
 * rdma_data=auto, the default, READs only the data larger than one receive
 * buffer. Documentation/rdma.rst gives the measurements behind the default.
 * The transport's files:
 *
 *   transport_rdma.c  this file: the ops table, rdma_cm (connect, accept,
 *                     listen, probe, CM events), the ib_client, init/exit
 *   transport_rdma.h  the queue, its buffers, constants and shared functions
 *   rdma_queue.c      a queue's PD, CQ, QP and buffers: creation, teardown
 *   rdma_send.c       the SEND path and flow control by credits
 *   rdma_recv.c       receive completions, message assembly, the receive
 *                     thread
 *   rdma_read.c       the READ path: FRWR registration of the sender's
 *                     pages, RDMA READ by the receiver
 *   rdma_wire.c       the checks of what the peer sends: the CM private
 *                     data, each receive buffer (its layout is in
 *                     include/chorus/rdma_wire.h)
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

#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/netlink.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "transport_rdma.h"

static char *chorus_rdma_data = "auto";
module_param_named(rdma_data, chorus_rdma_data, charp, 0444);
MODULE_PARM_DESC(rdma_data,
		 "how RDMA messages carry their data: send (into posted buffers), read (the receiver READs FRWR-registered pages) or auto (send up to one 64 KiB receive buffer, read above; default)");

/* The least data that goes by READ, set at load; U32_MAX: none (send). */
u32 chorus_rdma_read_min = U32_MAX;

/* READ path counters, in debugfs chorus_rdma: any queue, any peer. */
atomic64_t chorus_rdma_st_read_msgs;	/* sent for the peer to READ */
atomic64_t chorus_rdma_st_read_fallbacks; /* sent by SEND instead */
atomic64_t chorus_rdma_st_reads;		/* READs done as receiver */
atomic64_t chorus_rdma_st_read_bytes;	/* bytes they moved */
atomic64_t chorus_rdma_st_acks_in_completion; /* acks acted on there */
static struct dentry *chorus_rdma_debugfs;

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

/**
 * chorus_rdma_kill() - stop sending and receiving
 * @q: the queue
 * @why: the reason; the first one sticks
 *
 * Wakes everyone waiting on the queue.
 * Context: any.
 */
void chorus_rdma_kill(struct chorus_rdma_queue *q, const char *why)
{
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	if (!q->dead) {
		q->dead = true;
		q->why = why;
	}
	spin_unlock_irqrestore(&q->lock, flags);
	wake_up_all(&q->wait);
	wake_up_all(&q->rx_wait);
}

/*
 * Fail a queue from outside its owner: kill it and tell the peer. A queue
 * already released has no connection any more (chorus_rdma_release()).
 */
static void chorus_rdma_fail(struct chorus_rdma_queue *q, const char *why)
{
	struct chorus_conn *conn;

	chorus_rdma_kill(q, why);
	if (!q->established && !q->acceptor) {
		q->cm_error = -ENODEV;
		complete(&q->cm_done);
	}
	spin_lock(&q->conn_lock);
	conn = q->conn;
	if (conn && conn->peer && conn->gen)
		chorus_peer_fail(conn->peer, conn->gen, why);
	spin_unlock(&q->conn_lock);
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

/**
 * chorus_rdma_set_dev() - tie a queue to the device it is created on
 * @q: the queue
 * @dev: the device rdma_cm found for it
 *
 * Refused while @dev is being removed: the removal waits for every queue
 * on @dev (chorus_rdma_remove_one()), and must not miss a new one.
 * Context: process context (CM event handler).
 * Return: 0, or -ENODEV when @dev is going away.
 */
int chorus_rdma_set_dev(struct chorus_rdma_queue *q, struct ib_device *dev)
{
	mutex_lock(&chorus_rdma_mutex);
	if (chorus_rdma_dev_removing(dev)) {
		mutex_unlock(&chorus_rdma_mutex);
		return -ENODEV;
	}
	q->dev = dev;
	mutex_unlock(&chorus_rdma_mutex);
	return 0;
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
	const char *why;
	u32 chunk, depth;

	if (chorus_rdma_check_cm_data(data, len, &chunk, &depth, &why)) {
		pr_warn_ratelimited("RDMA connect: %s\n", why);
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
	spin_lock_init(&q->conn_lock);
	mutex_init(&q->cm_mutex);
	init_completion(&q->cm_done);
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->free_sends);
	INIT_LIST_HEAD(&q->rx_done);
	INIT_LIST_HEAD(&q->mr_pool);
	INIT_LIST_HEAD(&q->free_regs);
	INIT_LIST_HEAD(&q->busy_regs);
	init_waitqueue_head(&q->wait);
	init_waitqueue_head(&q->rx_wait);
	conn->queue = q;
	mutex_lock(&chorus_rdma_mutex);
	list_add_tail(&q->entry, &chorus_rdma_queues);
	mutex_unlock(&chorus_rdma_mutex);
	return q;
}

static void chorus_rdma_queue_free(struct chorus_rdma_queue *q)
{
	if (q->conn)
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
	if (conn->queue)
		chorus_rdma_stop_acks(conn->queue);
	if (conn->rx_thread) {
		kthread_stop(conn->rx_thread);
		conn->rx_thread = NULL;
	}
}

/*
 * The IB side of a released queue goes away here, off the releaser's path:
 * a device may take long to destroy a QP (soft-RoCE waits up to 50 s for
 * the QP's last reference), and a session's teardown, its move to TCP and
 * every other peer must not wait with it. The queue stays on
 * chorus_rdma_queues until freed, so a device removal and module unload
 * still wait for it.
 */
static void chorus_rdma_reap_workfn(struct work_struct *work)
{
	struct chorus_rdma_queue *q =
		container_of(work, struct chorus_rdma_queue, reap_work);

	if (q->acceptor)
		flush_work(&q->accept_work);
	chorus_rdma_destroy_ib(q);
	chorus_rdma_msg_reset(q);
	if (q->cm_id && q->own_id)
		rdma_destroy_id(q->cm_id);
	chorus_rdma_queue_free(q);
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
	/*
	 * An accept work not started yet never will. One that runs is past
	 * handing @conn to its peer (nothing else releases a connection it
	 * owns) and touches neither any more: the reap waits for its end.
	 * Not waited for here: it takes chorus_volumes_lock, and a peer's
	 * teardown releases its connections under session_mutex.
	 */
	if (q->acceptor && q->accept_queued && current_work() != &q->accept_work)
		cancel_work(&q->accept_work);
	/* CM events and device removal no longer reach @conn, freed next. */
	spin_lock(&q->conn_lock);
	q->conn = NULL;
	spin_unlock(&q->conn_lock);
	conn->queue = NULL;
	INIT_WORK(&q->reap_work, chorus_rdma_reap_workfn);
	queue_work(chorus_rdma_wq, &q->reap_work);
}

static bool chorus_rdma_probe(const struct sockaddr_storage *addr,
			      int timeout_ms);

/* The address an accepted queue pair's peer connected from. */
static int chorus_rdma_peer_addr(struct chorus_conn *conn,
				 struct sockaddr_storage *ss)
{
	struct chorus_rdma_queue *q = conn->queue;

	if (!q || !q->cm_id)
		return -ENOTCONN;
	memcpy(ss, &q->cm_id->route.addr.dst_addr, sizeof(*ss));
	return 0;
}

static int chorus_rdma_listen(const struct sockaddr_storage *addr,
			      struct netlink_ext_ack *extack);
static void chorus_rdma_unlisten(void);
static int chorus_rdma_init(void);
static void chorus_rdma_exit(void);

const struct chorus_transport_ops chorus_rdma_ops = {
	.name		= "rdma",
	.transport	= CHORUS_TRANSPORT_RDMA,
	.init		= chorus_rdma_init,
	.exit		= chorus_rdma_exit,
	.listen		= chorus_rdma_listen,
	.unlisten	= chorus_rdma_unlisten,
	.probe		= chorus_rdma_probe,
	.connect	= chorus_rdma_connect,
	.send		= chorus_rdma_send,
	.recv_sync	= chorus_rdma_recv_sync,
	.peer_addr	= chorus_rdma_peer_addr,
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
static bool chorus_rdma_probe(const struct sockaddr_storage *addr,
			      int timeout_ms)
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
static int chorus_rdma_listen(const struct sockaddr_storage *addr,
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
static void chorus_rdma_unlisten(void)
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
 * The condition takes chorus_rdma_mutex, so it is tested while running
 * and the wait is wait_woken()'s (a condition of wait_event() must not
 * sleep: DEBUG_ATOMIC_SLEEP reported it).
 */
static void chorus_rdma_remove_one(struct ib_device *dev, void *client_data)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
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
	add_wait_queue(&chorus_rdma_freed, &wait);
	while (chorus_rdma_dev_in_use(dev))
		if (!wait_woken(&wait, TASK_UNINTERRUPTIBLE, 10 * HZ))
			pr_warn("RDMA device %s: still waiting for connections to close\n",
				dev_name(&dev->dev));
	remove_wait_queue(&chorus_rdma_freed, &wait);

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

/*
 * debugfs chorus_rdma: the data path, the READ path's counters, and the acks
 * the receive completion acted on itself.
 */
static int chorus_rdma_stats_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "data_path %s\n", chorus_rdma_data);
	seq_printf(m, "read_min %u\n", chorus_rdma_read_min);
	seq_printf(m, "read_msgs %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_read_msgs));
	seq_printf(m, "read_fallbacks %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_read_fallbacks));
	seq_printf(m, "reads %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_reads));
	seq_printf(m, "read_bytes %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_read_bytes));
	seq_printf(m, "acks_in_completion %lld\n",
		   (long long)atomic64_read(&chorus_rdma_st_acks_in_completion));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(chorus_rdma_stats);

/**
 * chorus_rdma_init() - register with the RDMA core
 *
 * Return: 0 or a negative errno.
 */
static int chorus_rdma_init(void)
{
	int ret;

	if (!strcmp(chorus_rdma_data, "read")) {
		chorus_rdma_read_min = 1;
	} else if (!strcmp(chorus_rdma_data, "auto")) {
		/* What one receive buffer takes goes by SEND, in one trip. */
		chorus_rdma_read_min = CHORUS_RDMA_CHUNK + 1;
	} else if (strcmp(chorus_rdma_data, "send")) {
		pr_err("rdma_data=%s: must be send, read or auto\n",
		       chorus_rdma_data);
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
 * chorus_rdma_exit() - unregister; every queue is gone or being reaped
 */
static void chorus_rdma_exit(void)
{
	debugfs_remove(chorus_rdma_debugfs);
	chorus_rdma_unlisten();
	ib_unregister_client(&chorus_rdma_client);
	destroy_workqueue(chorus_rdma_wq);
}
