// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the peers of a volume and their
 * sessions.
 *
 * A session is the set of nr_conns connections between this node and one
 * peer for one volume. The node with the lower id dials (connect_work);
 * the other accepts (chorus_handshake_accepted()). Every connection starts
 * with HELLO and HELLO_ACK; the session is established once all of them
 * are up, and any error on any of them tears the whole session down
 * (fail_work), after which the dialler redials with back-off. While a
 * session is down, the owner holds the writes meant for the peer; the
 * next session sends them again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/inet.h>
#include <linux/random.h>
#include <linux/slab.h>

#include <net/netlink.h>

#include "chorus.h"

struct workqueue_struct *chorus_wq;

#define CHORUS_BACKOFF_MIN_MS		100
#define CHORUS_BACKOFF_MAX_MS		5000
#define CHORUS_PROBE_MIN_MS		3000	/* RDMA probe on the TCP fallback */
#define CHORUS_PROBE_MAX_MS		60000

static void chorus_peer_set_state(struct chorus_peer *peer,
				  enum chorus_conn_state state,
				  const char *reason)
{
	spin_lock_irq(&peer->lock);
	peer->conn_state = state;
	if (reason)
		strscpy(peer->last_error, reason, sizeof(peer->last_error));
	spin_unlock_irq(&peer->lock);
}

/* Connections and replies. */

static void chorus_reply_free(struct chorus_reply *reply)
{
	struct chorus_peer *peer = reply->conn->peer;

	chorus_pages_free(reply->pages, reply->nr_pages);
	if (reply->counted &&
	    atomic_dec_and_test(&peer->replica_inflight))
		wake_up_all(&peer->replica_wait);
	kfree(reply);
}

static void chorus_conn_reply_workfn(struct work_struct *work)
{
	struct chorus_conn *conn =
		container_of(work, struct chorus_conn, reply_work);
	struct llist_node *list = llist_reverse_order(llist_del_all(&conn->replies));
	struct chorus_msg_data batch = { .more = true };
	struct chorus_reply *reply, *next;

	/*
	 * All but the last of a batch go out with "more", so the acks of
	 * writes that completed together share segments. A failed send fails
	 * the session; its replies are dropped.
	 */
	llist_for_each_entry_safe(reply, next, list, node) {
		chorus_conn_send(conn, &reply->hdr, NULL, next ? &batch : NULL);
		chorus_reply_free(reply);
	}
}

/**
 * chorus_conn_reply() - send a reply from process context
 * @conn: the connection the request came on
 * @reply: the reply, freed once sent
 *
 * Context: any, including hard irq (bio completion).
 */
void chorus_conn_reply(struct chorus_conn *conn, struct chorus_reply *reply)
{
	llist_add(&reply->node, &conn->replies);
	queue_work(chorus_wq, &conn->reply_work);
}

struct chorus_conn *chorus_conn_alloc(const struct chorus_transport_ops *ops)
{
	struct chorus_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return NULL;
	conn->ops = ops;
	mutex_init(&conn->send_mutex);
	init_llist_head(&conn->replies);
	INIT_WORK(&conn->reply_work, chorus_conn_reply_workfn);
	return conn;
}

/**
 * chorus_conn_free() - close and free a connection that has no receiver
 * running and no replies pending
 * @conn: the connection
 */
void chorus_conn_free(struct chorus_conn *conn)
{
	if (!conn)
		return;
	conn->ops->shutdown(conn);
	conn->ops->stop_rx(conn);
	conn->ops->release(conn);
	mutex_destroy(&conn->send_mutex);
	kfree(conn);
}

/**
 * chorus_conn_send() - seal a header and send it with its payload
 * @conn: the connection
 * @hdr: the header; its crc is computed here
 * @body: small payload of le32_to_cpu(hdr->payload_len) bytes, or NULL
 * @data: data pages, or NULL
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int chorus_conn_send(struct chorus_conn *conn, struct chorus_wire_hdr *hdr,
		     const void *body, const struct chorus_msg_data *data)
{
	int ret;

	chorus_wire_seal(hdr);
	mutex_lock(&conn->send_mutex);
	ret = conn->ops->send(conn, hdr, body, data);
	mutex_unlock(&conn->send_mutex);
	if (!ret && conn->peer) {
		struct chorus_path_stats *path =
			&conn->peer->paths[chorus_path_index(conn->ops->transport)];

		atomic64_inc(&path->msgs_sent);
		if (data)
			atomic64_add(data->len, &path->bytes_sent);
	}
	return ret;
}

/**
 * chorus_peer_call() - send a message on connection 0 and wait for its answer
 * @peer: the peer
 * @hdr: the message, its seq already set
 * @body: small payload, or NULL
 * @data: data pages, or NULL
 * @done: completed by the receive path when the answer arrives; the
 *	caller reinitialises it before
 * @what: the reason given when the answer does not come in time
 *
 * An answer that does not come within the request timeout fails the
 * session, like a late write ack.
 *
 * Context: process context; may sleep.
 * Return: 0 once @done completed, -ENOTCONN, -ETIMEDOUT or a send error.
 */
int chorus_peer_call(struct chorus_peer *peer, struct chorus_wire_hdr *hdr,
		     const void *body, const struct chorus_msg_data *data,
		     struct completion *done, const char *what)
{
	unsigned long timeout;
	struct chorus_conn *conn;
	u32 gen = 0;
	int ret = -ENOTCONN;

	down_read(&peer->session_sem);
	conn = peer->conns[0];
	if (conn) {
		gen = conn->gen;
		ret = chorus_conn_send(conn, hdr, body, data);
	}
	up_read(&peer->session_sem);
	if (ret)
		return ret;

	timeout = msecs_to_jiffies(READ_ONCE(peer->vol->repl.request_timeout_ms));
	if (!wait_for_completion_timeout(done, timeout)) {
		chorus_peer_fail(peer, gen, what);
		return -ETIMEDOUT;
	}
	return 0;
}

/**
 * chorus_wait_for_stop() - a kthread whose work is over waits to be reaped
 *
 * Context: a kthread that kthread_stop() will stop.
 */
void chorus_wait_for_stop(void)
{
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
}

/* The handshake. */

static void chorus_hello_fill(struct chorus_peer *peer,
			      struct chorus_wire_hello *h, u16 conn_index,
			      u64 session_id)
{
	struct chorus_volume *vol = peer->vol;
	bool owner = READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER;

	memset(h, 0, sizeof(*h));
	h->proto_min = cpu_to_le16(CHORUS_WIRE_VERSION);
	h->proto_max = cpu_to_le16(CHORUS_WIRE_VERSION);
	h->conn_index = cpu_to_le16(conn_index);
	h->nr_conns = cpu_to_le16(peer->nr_conns);
	h->node_id = cpu_to_le32(vol->node_id);
	h->peer_node_id = cpu_to_le32(peer->node_id);
	export_uuid(h->volume_uuid, &vol->uuid);
	h->data_sectors = cpu_to_le64(vol->nr_sectors);
	h->block_size = cpu_to_le32(vol->block_size);
	h->flags = cpu_to_le32(owner ? CHORUS_HELLO_F_OWNER : 0);
	h->epoch = cpu_to_le64(READ_ONCE(vol->repl.epoch));
	h->session_id = cpu_to_le64(session_id);
	h->current_gen = vol->meta.super->current_gen;
}

/*
 * Check a peer's HELLO or HELLO_ACK. Returns a wire status and sets *why
 * to a reason when it refuses.
 */
static u32 chorus_hello_check(struct chorus_peer *peer,
			      const struct chorus_wire_hello *h,
			      const char **why)
{
	struct chorus_volume *vol = peer->vol;
	bool we_own = READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER;
	bool they_own = le32_to_cpu(h->flags) & CHORUS_HELLO_F_OWNER;
	u64 epoch = le64_to_cpu(h->epoch);
	uuid_t uuid;

	import_uuid(&uuid, h->volume_uuid);
	*why = NULL;
	if (le16_to_cpu(h->proto_min) > CHORUS_WIRE_VERSION ||
	    le16_to_cpu(h->proto_max) < CHORUS_WIRE_VERSION)
		*why = "no common protocol version";
	else if (le32_to_cpu(h->flags) & ~CHORUS_HELLO_F_OWNER ||
		 memchr_inv(h->reserved, 0, sizeof(h->reserved)))
		*why = "malformed handshake";
	else if (le32_to_cpu(h->node_id) != peer->node_id ||
		 le32_to_cpu(h->peer_node_id) != vol->node_id)
		*why = "node ids do not match";
	else if (!uuid_equal(&uuid, &vol->uuid))
		*why = "volume uuid differs";
	else if (le64_to_cpu(h->data_sectors) != vol->nr_sectors)
		*why = "volume size differs";
	else if (le32_to_cpu(h->block_size) != vol->block_size)
		*why = "block size differs";
	else if (le16_to_cpu(h->nr_conns) != peer->nr_conns ||
		 le16_to_cpu(h->conn_index) >= peer->nr_conns)
		*why = "connection count differs";
	else if (we_own && they_own)
		*why = "both nodes are owner";
	if (*why)
		return CHORUS_WIRE_REFUSED;

	if (they_own && epoch < chorus_meta_highest_epoch(vol)) {
		*why = "peer is owner at a stale epoch";
		return CHORUS_WIRE_STALE_EPOCH;
	}
	if (we_own && !they_own && epoch > READ_ONCE(vol->repl.epoch)) {
		*why = "peer accepted a higher epoch than ours";
		return CHORUS_WIRE_STALE_EPOCH;
	}
	return CHORUS_WIRE_OK;
}

static const char *chorus_wire_status_text(u32 status)
{
	switch (status) {
	case CHORUS_WIRE_STALE_EPOCH:
		return "peer refused: stale epoch";
	case CHORUS_WIRE_NOT_MEMBER:
		return "peer refused: it does not know this volume or node, or is not connecting";
	case CHORUS_WIRE_REFUSED:
		return "peer refused: uuid, size, block size or roles do not match";
	default:
		return "peer refused the handshake";
	}
}

/* Sessions. */

/* Send again, on session @gen, every held part not sent on it yet. */
static void chorus_peer_resend(struct chorus_peer *peer, u32 gen)
{
	struct request *rq;
	unsigned long idx;
	bool again;

	do {
		xa_for_each(&peer->inflight, idx, rq) {
			struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

			if (rqd->sent_gen[peer->slot] == gen)
				continue;
			rqd->sent_gen[peer->slot] = gen;
			chorus_repl_send_rq(peer, rq, gen);
		}
		again = false;
		spin_lock_irq(&peer->lock);
		xa_for_each(&peer->inflight, idx, rq) {
			struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);

			if (rqd->sent_gen[peer->slot] != gen) {
				again = true;
				break;
			}
		}
		/* From here on, new writes are sent by their submitters. */
		if (!again && peer->gen == gen)
			peer->conn_state = CHORUS_CONN_CONNECTED;
		spin_unlock_irq(&peer->lock);
	} while (again);
}

static void __chorus_peer_teardown(struct chorus_peer *peer, const char *reason);
static void chorus_peer_path_established(struct chorus_peer *peer);

/*
 * Make @conns the peer's session. Context: session_mutex held; on failure
 * the connections are freed.
 */
static void chorus_peer_establish(struct chorus_peer *peer,
				  struct chorus_conn **conns, bool peer_owner,
				  u64 peer_epoch)
{
	struct chorus_volume *vol = peer->vol;
	bool owner = READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER;
	bool resync = false;
	u32 gen, i;
	int ret = 0;

	lockdep_assert_held(&peer->session_mutex);
	if (!owner && peer_owner && chorus_repl_accept_epoch(vol, peer_epoch)) {
		for (i = 0; i < peer->nr_conns; i++)
			chorus_conn_free(conns[i]);
		chorus_peer_set_state(peer, CHORUS_CONN_UNREACHABLE,
				      "cannot record the owner's epoch");
		return;
	}

	gen = peer->gen + 1 ? peer->gen + 1 : 1;
	down_write(&peer->session_sem);
	for (i = 0; i < peer->nr_conns; i++) {
		conns[i]->peer = peer;
		conns[i]->gen = gen;
		conns[i]->index = i;
		peer->conns[i] = conns[i];
	}
	up_write(&peer->session_sem);

	spin_lock_irq(&peer->lock);
	peer->gen = gen;
	peer->active_transport = conns[0]->ops->transport;
	peer->peer_owner = peer_owner;
	peer->fenced = false;
	peer->conn_state = CHORUS_CONN_CONNECTING;
	peer->last_error[0] = '\0';
	WRITE_ONCE(peer->last_rx, jiffies);
	spin_unlock_irq(&peer->lock);

	for (i = 0; i < peer->nr_conns && !ret; i++)
		ret = conns[i]->ops->start_rx(conns[i]);
	if (ret) {
		__chorus_peer_teardown(peer, "cannot start receiving");
		return;
	}
	atomic64_inc(&peer->stats.reconnects);
	atomic64_inc(&peer->paths[chorus_path_index(peer->active_transport)].sessions);
	peer->backoff_ms = CHORUS_BACKOFF_MIN_MS;
	chorus_peer_path_established(peer);

	if (owner) {
		/* The log first: held writes may be in extents it lacks. */
		if (chorus_al_send(peer)) {
			__chorus_peer_teardown(peer, "activity log not accepted");
			return;
		}
		chorus_peer_resend(peer, gen);
		spin_lock_irq(&peer->lock);
		if (peer->repl_state != CHORUS_REPL_UP_TO_DATE) {
			peer->repl_state = CHORUS_REPL_SYNCING;
			peer->in_writeset = true;
			resync = true;
		}
		spin_unlock_irq(&peer->lock);
	} else {
		chorus_peer_set_state(peer, CHORUS_CONN_CONNECTED, NULL);
	}
	pr_info("%s: peer %u connected (%u connections)\n", vol->name,
		peer->node_id, peer->nr_conns);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_PEER_STATE, peer, "connected");
	if (resync) {
		chorus_genl_notify_peer(vol, CHORUS_EVENT_WRITESET, peer,
					"joined the write set to resync");
		chorus_job_start(peer, CHORUS_JOB_RESYNC, NULL);
	}
	queue_delayed_work(chorus_wq, &peer->ping_work,
			   msecs_to_jiffies(READ_ONCE(vol->repl.ping_interval_ms)));
}

static void chorus_peer_free_pending(struct chorus_peer *peer)
{
	int i;

	for (i = 0; i < CHORUS_MAX_CONNS; i++) {
		chorus_conn_free(peer->pending[i]);
		peer->pending[i] = NULL;
	}
	peer->pending_session = 0;
}

/*
 * Close the session. Order matters: sockets are shut down first so that
 * every sender and receiver blocked on them returns, then the threads
 * stop, then the replies of writes still on the backing device are
 * awaited, and only then are the connections freed.
 */
static void __chorus_peer_teardown(struct chorus_peer *peer, const char *reason)
{
	struct chorus_volume *vol = peer->vol;
	bool had_session = peer->conns[0];
	u32 i;

	lockdep_assert_held(&peer->session_mutex);
	chorus_peer_free_pending(peer);
	if (!had_session)
		return;

	/* The receivers' failure reports from here on are this teardown. */
	spin_lock_irq(&peer->lock);
	peer->fail_gen = peer->gen;
	spin_unlock_irq(&peer->lock);

	chorus_peer_set_state(peer, peer->want_connect ?
			      CHORUS_CONN_UNREACHABLE : CHORUS_CONN_DISCONNECTED,
			      reason);
	spin_lock_irq(&peer->lock);
	peer->active_transport = CHORUS_TRANSPORT_UNSPEC;
	spin_unlock_irq(&peer->lock);
	for (i = 0; i < peer->nr_conns; i++)
		if (peer->conns[i])
			peer->conns[i]->ops->shutdown(peer->conns[i]);
	cancel_delayed_work_sync(&peer->ping_work);
	/* Whoever waits for an answer gets none: let them see the failure. */
	WRITE_ONCE(peer->job_status, CHORUS_WIRE_IO_ERROR);
	complete(&peer->job_done);
	WRITE_ONCE(peer->al_status, CHORUS_WIRE_IO_ERROR);
	complete(&peer->al_done);
	chorus_job_stop(peer);
	for (i = 0; i < peer->nr_conns; i++)
		if (peer->conns[i])
			peer->conns[i]->ops->stop_rx(peer->conns[i]);
	wait_event(peer->replica_wait, !atomic_read(&peer->replica_inflight));
	for (i = 0; i < peer->nr_conns; i++)
		if (peer->conns[i])
			flush_work(&peer->conns[i]->reply_work);

	down_write(&peer->session_sem);
	for (i = 0; i < peer->nr_conns; i++) {
		chorus_conn_free(peer->conns[i]);
		peer->conns[i] = NULL;
	}
	up_write(&peer->session_sem);

	pr_info("%s: peer %u disconnected: %s\n", vol->name, peer->node_id,
		reason);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_PEER_STATE, peer, reason);
}

/**
 * chorus_peer_teardown() - close a peer's session, if any
 * @peer: the peer
 * @reason: why, for the log and the event
 *
 * Context: process context; not under session_mutex.
 */
void chorus_peer_teardown(struct chorus_peer *peer, const char *reason)
{
	mutex_lock(&peer->session_mutex);
	__chorus_peer_teardown(peer, reason);
	mutex_unlock(&peer->session_mutex);
}

static void chorus_peer_schedule_dial(struct chorus_peer *peer,
				      unsigned int delay_ms)
{
	if (peer->dialler && peer->want_connect)
		mod_delayed_work(chorus_wq, &peer->connect_work,
				 msecs_to_jiffies(delay_ms));
}

/**
 * chorus_peer_fail() - ask for a session to be torn down
 * @peer: the peer
 * @gen: the session the caller saw fail; an older one is ignored
 * @reason: why
 *
 * Context: any, including hard irq.
 */
void chorus_peer_fail(struct chorus_peer *peer, u32 gen, const char *reason)
{
	unsigned long flags;
	bool queue = false;

	spin_lock_irqsave(&peer->lock, flags);
	if (gen == peer->gen && peer->fail_gen != gen) {
		peer->fail_gen = gen;
		strscpy(peer->last_error, reason, sizeof(peer->last_error));
		queue = true;
	}
	spin_unlock_irqrestore(&peer->lock, flags);
	if (queue)
		queue_work(chorus_wq, &peer->fail_work);
}

static void chorus_peer_fail_workfn(struct work_struct *work)
{
	struct chorus_peer *peer =
		container_of(work, struct chorus_peer, fail_work);
	char reason[CHORUS_REASON_MAX];
	bool degrade = false;

	mutex_lock(&peer->session_mutex);
	spin_lock_irq(&peer->lock);
	strscpy(reason, peer->last_error, sizeof(reason));
	spin_unlock_irq(&peer->lock);
	if (peer->conns[0] && peer->conns[0]->gen == peer->fail_gen) {
		__chorus_peer_teardown(peer, reason);
		chorus_peer_schedule_dial(peer, peer->backoff_ms);
		/* Never for a fenced owner: that is the split brain itself. */
		degrade = READ_ONCE(peer->vol->repl.auto_degrade) &&
			  !READ_ONCE(peer->fenced);
	}
	mutex_unlock(&peer->session_mutex);

	if (degrade && READ_ONCE(peer->vol->repl.role) == CHORUS_ROLE_OWNER) {
		pr_warn("%s: peer %u unreachable, auto_degrade takes it out of the write set\n",
			peer->vol->name, peer->node_id);
		chorus_peer_writeset_remove(peer, NULL);
	}
}

static void chorus_peer_ping_workfn(struct work_struct *work)
{
	struct chorus_peer *peer =
		container_of(to_delayed_work(work), struct chorus_peer, ping_work);
	struct chorus_repl *repl = &peer->vol->repl;
	struct chorus_wire_hdr hdr;
	struct chorus_conn *conn;
	u32 gen = 0;
	int ret = 0;

	down_read(&peer->session_sem);
	conn = peer->conns[0];
	if (conn) {
		gen = conn->gen;
		chorus_wire_init_hdr(&hdr, CHORUS_MSG_PING,
				     READ_ONCE(repl->epoch), 0, 0, 0);
		ret = chorus_conn_send(conn, &hdr, NULL, NULL);
	}
	up_read(&peer->session_sem);
	if (!conn)
		return;
	if (ret)
		chorus_peer_fail(peer, gen, "heartbeat send failed");
	else if (time_after(jiffies, READ_ONCE(peer->last_rx) +
			    msecs_to_jiffies(READ_ONCE(repl->ping_timeout_ms))))
		chorus_peer_fail(peer, gen, "heartbeat timeout");
	queue_delayed_work(chorus_wq, &peer->ping_work,
			   msecs_to_jiffies(READ_ONCE(repl->ping_interval_ms)));
}

/* Why a dial over @ops failed with @err, for last_error and the log. */
static const char *chorus_connect_error(const struct chorus_transport_ops *ops,
					int err)
{
	bool rdma = ops->transport == CHORUS_TRANSPORT_RDMA;

	switch (err) {
	case -ECONNREFUSED:
		return rdma ? "RDMA connection refused" : "connection refused";
	case -ETIMEDOUT:
		return rdma ? "RDMA connect timed out" : "connect timed out";
	case -ENETUNREACH:
	case -EHOSTUNREACH:
		return rdma ? "no RDMA route to the peer" : "no route to the peer";
	case -ENODEV:
		return rdma ? "RDMA device removed" : "cannot connect";
	default:
		return rdma ? "cannot connect over RDMA" : "cannot connect";
	}
}

/* Dial every connection of a session over @ops and handshake on each. */
static const char *chorus_peer_dial(struct chorus_peer *peer,
				    const struct chorus_transport_ops *ops,
				    struct chorus_conn **conns, bool *peer_owner,
				    u64 *peer_epoch)
{
	u64 session = get_random_u64() | 1;
	struct chorus_wire_hello hello, answer;
	struct chorus_wire_hdr hdr;
	const char *why = NULL;
	u32 i, status;
	int ret;

	for (i = 0; i < peer->nr_conns && !why; i++) {
		conns[i] = chorus_conn_alloc(ops);
		if (!conns[i])
			return "out of memory";
		conns[i]->peer = peer;
		conns[i]->index = i;
		ret = ops->connect(conns[i], &peer->addr,
				   CHORUS_HANDSHAKE_TIMEOUT_MS);
		if (ret)
			return chorus_connect_error(ops, ret);
		chorus_hello_fill(peer, &hello, i, session);
		chorus_wire_init_hdr(&hdr, CHORUS_MSG_HELLO, 0, 0, 0, 0);
		hdr.payload_len = cpu_to_le32(sizeof(hello));
		ret = chorus_conn_send(conns[i], &hdr, &hello, NULL);
		if (!ret)
			ret = ops->recv_sync(conns[i], &hdr, &answer,
					     sizeof(answer),
					     CHORUS_HANDSHAKE_TIMEOUT_MS);
		if (ret || hdr.type != CHORUS_MSG_HELLO_ACK)
			return "handshake failed";
		status = le32_to_cpu(hdr.status);
		if (status != CHORUS_WIRE_OK) {
			if (status == CHORUS_WIRE_STALE_EPOCH)
				WRITE_ONCE(peer->fenced, true);
			return chorus_wire_status_text(status);
		}
		status = chorus_hello_check(peer, &answer, &why);
		if (status != CHORUS_WIRE_OK)
			return why;
		*peer_owner = le32_to_cpu(answer.flags) & CHORUS_HELLO_F_OWNER;
		*peer_epoch = le64_to_cpu(answer.epoch);
	}
	return NULL;
}

/* Count a failed dial on @ops's path and remember why. */
static void chorus_peer_path_failed(struct chorus_peer *peer,
				    const struct chorus_transport_ops *ops,
				    const char *why)
{
	struct chorus_path_stats *path =
		&peer->paths[chorus_path_index(ops->transport)];

	atomic64_inc(&path->failures);
	spin_lock_irq(&peer->lock);
	strscpy(path->last_error, why, sizeof(path->last_error));
	spin_unlock_irq(&peer->lock);
}

/* The transport to dial first. Context: session_mutex held. */
static const struct chorus_transport_ops *
chorus_peer_dial_ops(struct chorus_peer *peer)
{
	lockdep_assert_held(&peer->session_mutex);
	switch (peer->transport) {
	case CHORUS_TRANSPORT_RDMA:
		return &chorus_rdma_ops;
	case CHORUS_TRANSPORT_RDMA_TCP:
		return time_before(jiffies, peer->rdma_retry_at) ?
		       &chorus_tcp_ops : &chorus_rdma_ops;
	default:
		return &chorus_tcp_ops;
	}
}

/*
 * A session is up. The dialler of an RDMA-with-TCP-fallback peer that had
 * to take TCP checks from time to time whether RDMA works again.
 * Context: session_mutex held.
 */
static void chorus_peer_path_established(struct chorus_peer *peer)
{
	lockdep_assert_held(&peer->session_mutex);
	if (peer->active_transport == CHORUS_TRANSPORT_RDMA) {
		peer->probe_ms = CHORUS_PROBE_MIN_MS;
		return;
	}
	if (peer->dialler && peer->transport == CHORUS_TRANSPORT_RDMA_TCP)
		mod_delayed_work(chorus_wq, &peer->probe_work,
				 msecs_to_jiffies(peer->probe_ms));
}

/*
 * On the TCP fallback: if an RDMA connection to the peer comes up again,
 * end the TCP session; the redial takes RDMA. Held writes are sent again
 * on the new session, so the application sees a short stall at most.
 */
static void chorus_peer_probe_workfn(struct work_struct *work)
{
	struct chorus_peer *peer =
		container_of(to_delayed_work(work), struct chorus_peer, probe_work);
	u32 gen, transport;

	spin_lock_irq(&peer->lock);
	gen = peer->gen;
	transport = peer->active_transport;
	spin_unlock_irq(&peer->lock);
	if (transport != CHORUS_TRANSPORT_TCP)
		return;
	if (!chorus_rdma_probe(&peer->addr, CHORUS_HANDSHAKE_TIMEOUT_MS)) {
		queue_delayed_work(chorus_wq, &peer->probe_work,
				   msecs_to_jiffies(READ_ONCE(peer->probe_ms)));
		return;
	}
	mutex_lock(&peer->session_mutex);
	peer->rdma_retry_at = jiffies;
	/* If RDMA fails again, wait longer before the next switch. */
	peer->probe_ms = min(peer->probe_ms * 2, CHORUS_PROBE_MAX_MS);
	mutex_unlock(&peer->session_mutex);
	pr_info("%s: peer %u: RDMA connects again: leaving TCP\n",
		peer->vol->name, peer->node_id);
	chorus_peer_fail(peer, gen, "switching to RDMA");
}

/*
 * Dial a session: over RDMA first when the peer may use it, then over TCP
 * if RDMA failed and the peer may fall back.
 */
static void chorus_peer_connect_workfn(struct work_struct *work)
{
	struct chorus_peer *peer =
		container_of(to_delayed_work(work), struct chorus_peer, connect_work);
	struct chorus_conn *conns[CHORUS_MAX_CONNS] = {};
	const struct chorus_transport_ops *ops;
	bool peer_owner = false;
	u64 peer_epoch = 0;
	const char *why;
	u32 i;

	mutex_lock(&peer->session_mutex);
	if (!peer->want_connect || peer->conns[0])
		goto unlock;

	ops = chorus_peer_dial_ops(peer);
	why = chorus_peer_dial(peer, ops, conns, &peer_owner, &peer_epoch);
	if (why && ops == &chorus_rdma_ops &&
	    peer->transport == CHORUS_TRANSPORT_RDMA_TCP) {
		for (i = 0; i < peer->nr_conns; i++) {
			chorus_conn_free(conns[i]);
			conns[i] = NULL;
		}
		chorus_peer_path_failed(peer, ops, why);
		pr_info_ratelimited("%s: peer %u: %s; falling back to TCP\n",
				    peer->vol->name, peer->node_id, why);
		peer->rdma_retry_at = jiffies + msecs_to_jiffies(peer->probe_ms);
		ops = &chorus_tcp_ops;
		why = chorus_peer_dial(peer, ops, conns, &peer_owner,
				       &peer_epoch);
	}

	if (why) {
		for (i = 0; i < peer->nr_conns; i++)
			chorus_conn_free(conns[i]);
		chorus_peer_path_failed(peer, ops, why);
		pr_info_ratelimited("%s: peer %u: %s\n", peer->vol->name,
				    peer->node_id, why);
		spin_lock_irq(&peer->lock);
		strscpy(peer->last_error, why, sizeof(peer->last_error));
		spin_unlock_irq(&peer->lock);
		chorus_peer_schedule_dial(peer, peer->backoff_ms);
		peer->backoff_ms = min(peer->backoff_ms * 2, CHORUS_BACKOFF_MAX_MS);
		goto unlock;
	}
	chorus_peer_establish(peer, conns, peer_owner, peer_epoch);
	if (!peer->conns[0])
		chorus_peer_schedule_dial(peer, peer->backoff_ms);
unlock:
	mutex_unlock(&peer->session_mutex);
}

/* Whether @peer's transport setting allows sessions over @ops. */
static bool chorus_peer_may_use(struct chorus_peer *peer,
				const struct chorus_transport_ops *ops)
{
	if (peer->transport == CHORUS_TRANSPORT_RDMA_TCP)
		return true;
	return peer->transport == ops->transport;
}

static int chorus_handshake_refuse(struct chorus_conn *conn,
				   struct chorus_peer *peer,
				   const struct chorus_wire_hello *theirs,
				   u32 status)
{
	struct chorus_wire_hello hello = {};
	struct chorus_wire_hdr hdr;

	if (peer)
		chorus_hello_fill(peer, &hello,
				  le16_to_cpu(theirs->conn_index), 0);
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_HELLO_ACK, 0, 0, 0, 0);
	hdr.payload_len = cpu_to_le32(sizeof(hello));
	hdr.status = cpu_to_le32(status);
	chorus_conn_send(conn, &hdr, &hello, NULL);
	return -ECONNREFUSED;
}

/*
 * The acceptor's half of the handshake on one connection. Context:
 * chorus_volumes_lock, conf_lock and session_mutex held.
 */
static int chorus_handshake_peer(struct chorus_conn *conn,
				 struct chorus_peer *peer,
				 const struct chorus_wire_hello *theirs)
{
	u64 session = le64_to_cpu(theirs->session_id);
	u16 index = le16_to_cpu(theirs->conn_index);
	struct chorus_wire_hello hello;
	struct chorus_wire_hdr hdr;
	const char *why;
	u32 status, i;
	int ret;

	if (!peer->want_connect || peer->dialler)
		return chorus_handshake_refuse(conn, peer, theirs,
					       CHORUS_WIRE_NOT_MEMBER);
	if (!chorus_peer_may_use(peer, conn->ops)) {
		pr_info_ratelimited("%s: peer %u: refused: it dialled over %s, which this node does not use for it\n",
				    peer->vol->name, peer->node_id,
				    conn->ops->name);
		spin_lock_irq(&peer->lock);
		strscpy(peer->last_error, "peer dialled over a transport not configured for it",
			sizeof(peer->last_error));
		spin_unlock_irq(&peer->lock);
		return chorus_handshake_refuse(conn, peer, theirs,
					       CHORUS_WIRE_REFUSED);
	}
	status = chorus_hello_check(peer, theirs, &why);
	if (status != CHORUS_WIRE_OK || !session) {
		pr_info_ratelimited("%s: peer %u: refused: %s\n",
				    peer->vol->name, peer->node_id,
				    why ?: "no session id");
		spin_lock_irq(&peer->lock);
		strscpy(peer->last_error, why ?: "no session id",
			sizeof(peer->last_error));
		spin_unlock_irq(&peer->lock);
		if (status == CHORUS_WIRE_STALE_EPOCH)
			this_cpu_inc(peer->vol->stats->stale_epoch);
		return chorus_handshake_refuse(conn, peer, theirs,
					       status ?: CHORUS_WIRE_REFUSED);
	}

	/* The dialler knows best: a new session replaces the old one. */
	if (peer->conns[0])
		__chorus_peer_teardown(peer, "peer started a new session");
	if (peer->pending_session != session) {
		chorus_peer_free_pending(peer);
		peer->pending_session = session;
	}

	chorus_hello_fill(peer, &hello, index, session);
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_HELLO_ACK, 0, 0, 0, 0);
	hdr.payload_len = cpu_to_le32(sizeof(hello));
	ret = chorus_conn_send(conn, &hdr, &hello, NULL);
	if (ret)
		return ret;
	chorus_conn_free(peer->pending[index]);
	peer->pending[index] = conn;

	for (i = 0; i < peer->nr_conns; i++)
		if (!peer->pending[i])
			return 0;
	chorus_peer_establish(peer, peer->pending,
			      le32_to_cpu(theirs->flags) & CHORUS_HELLO_F_OWNER,
			      le64_to_cpu(theirs->epoch));
	for (i = 0; i < CHORUS_MAX_CONNS; i++)
		peer->pending[i] = NULL;
	peer->pending_session = 0;
	return 0;
}

/**
 * chorus_handshake_accepted() - handshake on an accepted connection
 * @conn: the connection, not yet part of any peer
 *
 * Context: process context (chorus_accept_wq).
 * Return: 0 when @conn now belongs to a peer, or a negative errno and the
 * caller frees @conn.
 */
int chorus_handshake_accepted(struct chorus_conn *conn)
{
	struct chorus_wire_hello theirs;
	struct chorus_wire_hdr hdr;
	struct chorus_volume *vol;
	struct chorus_peer *peer;
	uuid_t uuid;
	int ret;

	ret = conn->ops->recv_sync(conn, &hdr, &theirs, sizeof(theirs),
				   CHORUS_HANDSHAKE_TIMEOUT_MS);
	if (ret)
		return ret;
	if (hdr.type != CHORUS_MSG_HELLO) {
		pr_warn_ratelimited("handshake: expected HELLO, got type %u\n",
				    hdr.type);
		return -EPROTO;
	}
	import_uuid(&uuid, theirs.volume_uuid);

	mutex_lock(&chorus_volumes_lock);
	vol = chorus_volume_find_uuid(&uuid);
	if (!vol) {
		mutex_unlock(&chorus_volumes_lock);
		pr_info_ratelimited("handshake: node %u asked for a volume this node does not have\n",
				    le32_to_cpu(theirs.node_id));
		return chorus_handshake_refuse(conn, NULL, &theirs,
					       CHORUS_WIRE_NOT_MEMBER);
	}
	mutex_lock(&vol->repl.conf_lock);
	peer = chorus_peer_find(vol, le32_to_cpu(theirs.node_id));
	if (!peer || le16_to_cpu(theirs.conn_index) >= CHORUS_MAX_CONNS) {
		ret = chorus_handshake_refuse(conn, NULL, &theirs,
					      CHORUS_WIRE_NOT_MEMBER);
	} else {
		mutex_lock(&peer->session_mutex);
		ret = chorus_handshake_peer(conn, peer, &theirs);
		mutex_unlock(&peer->session_mutex);
	}
	mutex_unlock(&vol->repl.conf_lock);
	mutex_unlock(&chorus_volumes_lock);
	return ret;
}

/* Peers of a volume. */

/**
 * chorus_peer_find() - look a peer of a volume up by node id
 * @vol: the volume
 * @node_id: the peer's id
 *
 * Context: chorus_repl.conf_lock held.
 * Return: the peer or NULL.
 */
struct chorus_peer *chorus_peer_find(struct chorus_volume *vol, u32 node_id)
{
	int i;

	lockdep_assert_held(&vol->repl.conf_lock);
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (vol->repl.peers[i] && vol->repl.peers[i]->node_id == node_id)
			return vol->repl.peers[i];
	return NULL;
}

static struct chorus_peer *chorus_peer_alloc(struct chorus_volume *vol,
					     u32 node_id)
{
	struct chorus_peer *peer = kzalloc(sizeof(*peer), GFP_KERNEL);

	if (!peer)
		return NULL;
	peer->vol = vol;
	peer->node_id = node_id;
	spin_lock_init(&peer->lock);
	xa_init_flags(&peer->inflight, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	mutex_init(&peer->session_mutex);
	init_rwsem(&peer->session_sem);
	INIT_DELAYED_WORK(&peer->connect_work, chorus_peer_connect_workfn);
	INIT_WORK(&peer->fail_work, chorus_peer_fail_workfn);
	INIT_DELAYED_WORK(&peer->ping_work, chorus_peer_ping_workfn);
	INIT_DELAYED_WORK(&peer->probe_work, chorus_peer_probe_workfn);
	peer->probe_ms = CHORUS_PROBE_MIN_MS;
	init_waitqueue_head(&peer->replica_wait);
	mutex_init(&peer->bm_mutex);
	init_completion(&peer->job_done);
	init_completion(&peer->al_done);
	peer->conn_state = CHORUS_CONN_DISCONNECTED;
	peer->backoff_ms = CHORUS_BACKOFF_MIN_MS;
	return peer;
}

/**
 * chorus_peer_free() - free a disconnected peer that is no longer listed
 * @peer: the peer
 */
void chorus_peer_free(struct chorus_peer *peer)
{
	/*
	 * A work queued while the last session went down must not run late.
	 * The heartbeat and the probe may queue fail_work: cancel them first.
	 */
	cancel_delayed_work_sync(&peer->probe_work);
	cancel_delayed_work_sync(&peer->ping_work);
	cancel_delayed_work_sync(&peer->connect_work);
	cancel_work_sync(&peer->fail_work);
	xa_destroy(&peer->inflight);
	chorus_bitmap_free(peer);
	mutex_destroy(&peer->session_mutex);
	mutex_destroy(&peer->bm_mutex);
	kfree(peer);
}

/* Load or create the peer's slot: its bitmap and whether it is current. */
static int chorus_peer_load_slot(struct chorus_peer *peer,
				 enum chorus_initial_sync initial_sync,
				 struct netlink_ext_ack *extack)
{
	struct chorus_volume *vol = peer->vol;
	u32 flags;
	int slot, ret;

	slot = chorus_meta_peer_slot(vol, peer->node_id, &flags);
	if (slot < 0) {
		NL_SET_ERR_MSG(extack, "every peer slot of the metadata is taken");
		return slot;
	}
	peer->meta_slot = slot;
	ret = chorus_bitmap_alloc(peer);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot allocate the peer's bitmap");
		return ret;
	}
	if (flags == ~0U) {
		/* New to this replica: start from a clean slate on disk. */
		flags = 0;
		if (initial_sync != CHORUS_INITIAL_SYNC_NONE) {
			spin_lock_irq(&peer->lock);
			chorus_bitmap_set_all_locked(peer);
			spin_unlock_irq(&peer->lock);
			flags = CHORUS_META_PEER_OUT_OF_DATE |
				CHORUS_META_PEER_FULL_SYNC;
		}
		ret = chorus_bitmap_sync(peer);
		if (!ret)
			ret = chorus_meta_set_peer(vol, slot, peer->node_id, flags);
	} else {
		ret = chorus_bitmap_load(peer);
	}
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot read or write the peer's metadata");
		return ret;
	}
	peer->meta_flags = flags;
	if (flags & CHORUS_META_PEER_OUT_OF_DATE) {
		peer->repl_state = CHORUS_REPL_OUT_OF_DATE;
		peer->in_writeset = false;
	} else if (peer->dirty) {
		/* A member with regions to resync (activity log): it stays. */
		peer->repl_state = CHORUS_REPL_SYNCING;
		peer->in_writeset = true;
	} else {
		peer->repl_state = CHORUS_REPL_UP_TO_DATE;
		peer->in_writeset = true;
	}
	return 0;
}

/**
 * chorus_peer_add() - declare a peer of a volume
 * @vol: the volume
 * @node_id: the peer's node id, not this node's
 * @addr: where to dial it
 * @address: @addr as text
 * @port: its port
 * @transport: &enum chorus_transport
 * @nr_conns: connections per session
 * @initial_sync: what the peer needs if the metadata does not know it
 * @extack: where to say why not
 *
 * A peer the metadata knows keeps its bitmap and out-of-date mark; a new
 * one is out of date with every bit set, unless @initial_sync says none.
 * A peer that is up to date joins the write set at once: writes wait for
 * it from now on.
 *
 * Context: process context, chorus_repl.conf_lock held.
 * Return: 0 or a negative errno with a message in @extack.
 */
int chorus_peer_add(struct chorus_volume *vol, u32 node_id,
		    const struct sockaddr_storage *addr, const char *address,
		    u16 port, u32 transport, u32 nr_conns,
		    enum chorus_initial_sync initial_sync,
		    struct netlink_ext_ack *extack)
{
	struct chorus_repl *repl = &vol->repl;
	struct chorus_peer *peer;
	int slot, ret;

	lockdep_assert_held(&repl->conf_lock);
	if (!vol->node_id) {
		NL_SET_ERR_MSG(extack, "the volume has no node id: attach it with one");
		return -EINVAL;
	}
	if (node_id == vol->node_id) {
		NL_SET_ERR_MSG(extack, "a peer cannot have this node's own id");
		return -EINVAL;
	}
	if (chorus_peer_find(vol, node_id)) {
		NL_SET_ERR_MSG(extack, "the volume already has a peer with this node id");
		return -EEXIST;
	}
	for (slot = 0; slot < CHORUS_MAX_PEERS; slot++)
		if (!repl->peers[slot])
			break;
	if (slot == CHORUS_MAX_PEERS) {
		NL_SET_ERR_MSG(extack, "the volume has the maximum number of peers");
		return -ENOSPC;
	}

	peer = chorus_peer_alloc(vol, node_id);
	if (!peer)
		return -ENOMEM;
	peer->slot = slot;
	peer->addr = *addr;
	strscpy(peer->address, address, sizeof(peer->address));
	peer->port = port;
	peer->transport = transport;
	peer->nr_conns = nr_conns;
	peer->dialler = vol->node_id < node_id;

	ret = chorus_peer_load_slot(peer, initial_sync, extack);
	if (ret)
		goto free_peer;
	ret = chorus_dev_freeze(vol, extack);
	if (ret)
		goto free_peer;
	spin_lock(&repl->peers_lock);
	repl->peers[slot] = peer;
	repl->nr_peers++;
	spin_unlock(&repl->peers_lock);
	chorus_dev_unfreeze(vol);
	pr_info("%s: peer %u at %s port %u added, %s\n", vol->name, node_id,
		address, port, peer->repl_state == CHORUS_REPL_UP_TO_DATE ?
		"up to date" : "out of date");
	chorus_genl_notify_peer(vol, CHORUS_EVENT_PEER_ADDED, peer, NULL);
	return 0;

free_peer:
	chorus_peer_free(peer);
	return ret;
}

/**
 * chorus_peer_del() - forget a peer and free its metadata slot
 * @peer: the peer
 * @extack: where to say why not
 *
 * Context: process context, chorus_repl.conf_lock held.
 * Return: 0, or -EBUSY while I/O is held for the peer.
 */
int chorus_peer_del(struct chorus_peer *peer, struct netlink_ext_ack *extack)
{
	struct chorus_volume *vol = peer->vol;
	struct chorus_repl *repl = &vol->repl;
	int ret;

	lockdep_assert_held(&repl->conf_lock);
	/* A frozen queue has no request in flight, so none is held. */
	ret = chorus_dev_freeze(vol, extack);
	if (ret)
		return ret;
	chorus_peer_disconnect(peer);
	spin_lock(&repl->peers_lock);
	repl->peers[peer->slot] = NULL;
	repl->nr_peers--;
	spin_unlock(&repl->peers_lock);
	chorus_dev_unfreeze(vol);

	if (chorus_meta_set_peer(vol, peer->meta_slot, 0, 0))
		pr_warn("%s: cannot free the metadata slot of peer %u\n",
			vol->name, peer->node_id);
	pr_info("%s: peer %u removed\n", vol->name, peer->node_id);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_PEER_REMOVED, peer, NULL);
	chorus_peer_free(peer);
	return 0;
}

/**
 * chorus_peer_connect() - start connecting to a peer
 * @peer: the peer
 *
 * Context: process context.
 */
void chorus_peer_connect(struct chorus_peer *peer)
{
	mutex_lock(&peer->session_mutex);
	peer->want_connect = true;
	if (!peer->conns[0]) {
		if (peer->conn_state == CHORUS_CONN_DISCONNECTED)
			chorus_peer_set_state(peer, CHORUS_CONN_CONNECTING, NULL);
		peer->backoff_ms = CHORUS_BACKOFF_MIN_MS;
		chorus_peer_schedule_dial(peer, 0);
	}
	mutex_unlock(&peer->session_mutex);
}

/**
 * chorus_peer_disconnect() - close a peer's session and stop redialling
 * @peer: the peer
 *
 * Writes meant for the peer are held until it is connected again or
 * taken out of the write set.
 *
 * Context: process context; not under session_mutex.
 */
void chorus_peer_disconnect(struct chorus_peer *peer)
{
	mutex_lock(&peer->session_mutex);
	peer->want_connect = false;
	mutex_unlock(&peer->session_mutex);
	cancel_delayed_work_sync(&peer->connect_work);
	cancel_work_sync(&peer->fail_work);

	mutex_lock(&peer->session_mutex);
	__chorus_peer_teardown(peer, "disconnected");
	chorus_peer_set_state(peer, CHORUS_CONN_DISCONNECTED, NULL);
	mutex_unlock(&peer->session_mutex);
}

/**
 * chorus_peer_writeset_remove() - take a peer out of the write set
 * @peer: the peer
 * @extack: where to say why not; NULL from auto_degrade
 *
 * The peer is marked out of date: the regions of every write held for it
 * are set in its bitmap, the bitmap and the mark are written to disk, and
 * only then do the held writes complete. If that write fails the writes
 * stay held, because completing them would lose the record.
 *
 * Context: process context.
 * Return: 0 or a negative errno with a message in @extack.
 */
int chorus_peer_writeset_remove(struct chorus_peer *peer,
				struct netlink_ext_ack *extack)
{
	struct chorus_volume *vol = peer->vol;
	struct request *rq;
	unsigned long idx;
	int ret;

	mutex_lock(&peer->session_mutex);
	chorus_job_stop(peer);
	mutex_unlock(&peer->session_mutex);

	/* Held from setting the bits until they are on disk. */
	mutex_lock(&peer->bm_mutex);
	spin_lock_irq(&peer->lock);
	if (!peer->in_writeset) {
		spin_unlock_irq(&peer->lock);
		mutex_unlock(&peer->bm_mutex);
		NL_SET_ERR_MSG(extack, "the peer is not in the write set");
		return -EALREADY;
	}
	peer->in_writeset = false;
	peer->repl_state = CHORUS_REPL_OUT_OF_DATE;
	xa_for_each(&peer->inflight, idx, rq)
		if (req_op(rq) != REQ_OP_FLUSH)
			chorus_bitmap_set_locked(peer, blk_rq_pos(rq),
						 blk_rq_sectors(rq));
	spin_unlock_irq(&peer->lock);

	ret = chorus_bitmap_write_all(peer);
	if (!ret)
		ret = chorus_meta_set_peer(vol, peer->meta_slot, peer->node_id,
					   peer->meta_flags |
					   CHORUS_META_PEER_OUT_OF_DATE);
	mutex_unlock(&peer->bm_mutex);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot record the change in the metadata; I/O stays held");
		pr_err("%s: cannot mark peer %u out of date (%d); I/O stays held\n",
		       vol->name, peer->node_id, ret);
		return ret;
	}
	peer->meta_flags |= CHORUS_META_PEER_OUT_OF_DATE;
	chorus_repl_held_complete(peer);
	pr_info("%s: peer %u left the write set, out of date\n", vol->name,
		peer->node_id);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_WRITESET, peer,
				"left the write set");
	return 0;
}

int chorus_peer_module_init(void)
{
	int ret;

	chorus_wq = alloc_workqueue("chorus", WQ_MEM_RECLAIM, 0);
	if (!chorus_wq)
		return -ENOMEM;
	ret = chorus_rdma_init();
	if (ret)
		destroy_workqueue(chorus_wq);
	return ret;
}

void chorus_peer_module_exit(void)
{
	chorus_rdma_exit();
	destroy_workqueue(chorus_wq);
}
