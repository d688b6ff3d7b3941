// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: sessions.
 *
 * A session is the set of nr_conns connections between this node and one
 * peer for one volume. The node with the lower id dials (connect_work);
 * the other accepts (chorus_handshake_accepted(), handshake.c). The
 * session is established once all connections are up, and any error on
 * any of them tears the whole session down (fail_work), after which the
 * dialler redials with back-off, over RDMA first and TCP as its fallback
 * when the peer allows both. While a session is down, the owner holds the
 * writes meant for the peer; the next session sends them again. A
 * heartbeat (ping_work) fails a session whose peer went silent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>

#include "chorus.h"
#include "session.h"

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

static void chorus_peer_path_established(struct chorus_peer *peer);

/*
 * Start a session's traffic. An owner sends a replica its activity log,
 * then what is held for it, and resyncs it if it is not up to date. A
 * diskless access point gets no log, no write and no resync; nor does a
 * replica whose disk failed, which says so when it is sent the log: its
 * writes stay held until it leaves the write set. An access point sends
 * the owner what it holds for one. Returns nonzero if the session was torn
 * down. Context: session_mutex held.
 */
static int chorus_peer_start(struct chorus_peer *peer, u32 gen, bool owner,
			     bool peer_owner, bool *resync)
{
	lockdep_assert_held(&peer->session_mutex);
	if (owner && !peer->diskless && chorus_al_send(peer) &&
	    !READ_ONCE(peer->disk_failed)) {
		__chorus_peer_teardown(peer, "activity log not accepted");
		return -EIO;
	}
	if (!owner || peer->diskless || READ_ONCE(peer->disk_failed)) {
		chorus_peer_set_state(peer, CHORUS_CONN_CONNECTED, NULL);
		if (peer_owner)
			chorus_fwd_resend(peer, gen);
		return 0;
	}
	chorus_peer_resend(peer, gen);
	spin_lock_irq(&peer->lock);
	if (peer->repl_state != CHORUS_REPL_UP_TO_DATE) {
		peer->repl_state = CHORUS_REPL_SYNCING;
		peer->in_writeset = true;
		*resync = true;
	}
	spin_unlock_irq(&peer->lock);
	return 0;
}

/**
 * chorus_repl_follow_owner() - a non-owner records the owner it follows
 * @vol: the volume
 * @epoch: the owner's epoch, from its handshake
 * @incarnation: the owner's incarnation, from its handshake
 *
 * The epoch is accepted as by chorus_repl_accept_epoch(), then the owner
 * is pinned: one incarnation per epoch. Another incarnation at the epoch
 * already followed (the owner's volume destroyed and created again at its
 * epoch, maybe with other data behind the same uuid) is refused; a higher
 * epoch, a new decision of the control plane, pins the new owner. The
 * handshake checks the same earlier (chorus_wire_check_hello()); this is
 * the authoritative check, against two sessions established at once.
 *
 * Context: process context; takes chorus_repl.meta_lock.
 * Return: 0, -ESTALE for an epoch older than the highest accepted or for
 * another incarnation at the epoch followed, or the error of the
 * superblock write.
 */
static int chorus_repl_follow_owner(struct chorus_volume *vol, u64 epoch,
				    u64 incarnation)
{
	struct chorus_repl *repl = &vol->repl;
	int ret = chorus_repl_accept_epoch(vol, epoch);

	if (ret)
		return ret;
	mutex_lock(&repl->meta_lock);
	if (repl->owner_incarnation && repl->owner_epoch == epoch &&
	    repl->owner_incarnation != incarnation) {
		ret = -ESTALE;
	} else {
		repl->owner_epoch = epoch;
		repl->owner_incarnation = incarnation;
	}
	mutex_unlock(&repl->meta_lock);
	return ret;
}

/*
 * A non-owner follows the owner of a new session (chorus_repl_follow_owner()).
 * Returns nonzero when it refused, with @conns freed and the reason set.
 * Context: session_mutex held.
 */
static int chorus_peer_follow(struct chorus_peer *peer,
			      struct chorus_conn **conns,
			      const struct chorus_hello_seen *seen)
{
	struct chorus_volume *vol = peer->vol;
	const char *why = "cannot record the owner's epoch";
	u32 i;
	int ret;

	lockdep_assert_held(&peer->session_mutex);
	ret = chorus_repl_follow_owner(vol, seen->epoch, seen->incarnation);
	if (!ret)
		return 0;
	if (ret == -ESTALE)
		why = seen->epoch < chorus_meta_highest_epoch(vol) ?
		      "peer is owner at a stale epoch" :
		      "another incarnation of the owner at this epoch";
	for (i = 0; i < peer->nr_conns; i++)
		chorus_conn_free(conns[i]);
	chorus_peer_set_state(peer, CHORUS_CONN_UNREACHABLE, why);
	return ret;
}

/**
 * chorus_peer_establish() - make handshaken connections the peer's session
 * @peer: the peer
 * @conns: its nr_conns connections, each past the handshake
 * @seen: what its handshake said
 *
 * Context: session_mutex held; on failure the connections are freed.
 */
void chorus_peer_establish(struct chorus_peer *peer, struct chorus_conn **conns,
			   const struct chorus_hello_seen *seen)
{
	struct chorus_volume *vol = peer->vol;
	bool peer_owner = seen->owner;
	bool owner = READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER;
	bool resync = false;
	u32 gen, i;
	int ret = 0;

	lockdep_assert_held(&peer->session_mutex);
	if (!owner && peer_owner && chorus_peer_follow(peer, conns, seen))
		return;

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
	peer->disk_failed = false;
	peer->conn_state = CHORUS_CONN_CONNECTING;
	peer->last_error[0] = '\0';
	/* A refused dial before this session is no error of it. */
	peer->paths[chorus_path_index(peer->active_transport)].last_error[0] = '\0';
	spin_unlock_irq(&peer->lock);

	for (i = 0; i < peer->nr_conns && !ret; i++) {
		WRITE_ONCE(conns[i]->last_rx, jiffies);
		ret = conns[i]->ops->start_rx(conns[i]);
	}
	if (ret) {
		__chorus_peer_teardown(peer, "cannot start receiving");
		return;
	}
	/* A new disk of the peer's gets every region (before any resync). */
	if (chorus_peer_take_disk(peer, seen->disk_gen)) {
		__chorus_peer_teardown(peer, "cannot record the peer's disk");
		return;
	}
	atomic64_inc(&peer->stats.reconnects);
	atomic64_inc(&peer->paths[chorus_path_index(peer->active_transport)].sessions);
	peer->backoff_ms = CHORUS_BACKOFF_MIN_MS;
	chorus_peer_path_established(peer);

	if (chorus_peer_start(peer, gen, owner, peer_owner, &resync))
		return;
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

/**
 * chorus_peer_free_pending() - drop the acceptor's half-made session
 * @peer: the peer
 *
 * Context: session_mutex held.
 */
void chorus_peer_free_pending(struct chorus_peer *peer)
{
	int i;

	lockdep_assert_held(&peer->session_mutex);
	for (i = 0; i < CHORUS_MAX_CONNS; i++) {
		chorus_conn_free(peer->pending[i]);
		peer->pending[i] = NULL;
	}
	peer->pending_session = 0;
}

/**
 * __chorus_peer_teardown() - close the peer's session, if any
 * @peer: the peer
 * @reason: why, for the log and the event
 *
 * Order matters: sockets are shut down first so that every sender and
 * receiver blocked on them returns, then the threads stop, then the
 * replies of writes still on the backing device are awaited, and only then
 * are the connections freed.
 * Context: session_mutex held.
 */
void __chorus_peer_teardown(struct chorus_peer *peer, const char *reason)
{
	struct chorus_conn *gone[CHORUS_MAX_CONNS];
	struct chorus_volume *vol = peer->vol;
	bool had_session = peer->conns[0];
	u32 i;

	lockdep_assert_held(&peer->session_mutex);
	peer->dial_gen++;
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
			chorus_conn_stop_rx(peer->conns[i]);
	wait_event(peer->replica_wait, !atomic_read(&peer->replica_inflight));
	for (i = 0; i < peer->nr_conns; i++)
		if (peer->conns[i])
			flush_work(&peer->conns[i]->reply_work);

	/*
	 * Unhooked under the semaphore, freed after it: freeing an RDMA
	 * queue waits for its accept work, which takes session_sem when it
	 * establishes a session (lockdep: session_sem > accept_work).
	 */
	down_write(&peer->session_sem);
	for (i = 0; i < peer->nr_conns; i++) {
		gone[i] = peer->conns[i];
		peer->conns[i] = NULL;
	}
	up_write(&peer->session_sem);
	for (i = 0; i < peer->nr_conns; i++)
		chorus_conn_free(gone[i]);

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
	u32 fail_gen;

	mutex_lock(&peer->session_mutex);
	spin_lock_irq(&peer->lock);
	strscpy(reason, peer->last_error, sizeof(reason));
	fail_gen = peer->fail_gen;
	spin_unlock_irq(&peer->lock);
	if (peer->conns[0] && peer->conns[0]->gen == fail_gen) {
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

/*
 * Ping one connection of a session; NULL when it is alive, or why not. The
 * PONG comes back on the same connection.
 */
static const char *chorus_conn_ping(struct chorus_conn *conn, u64 epoch,
				    unsigned long timeout)
{
	struct chorus_wire_hdr hdr;

	chorus_wire_init_hdr(&hdr, CHORUS_MSG_PING, epoch, 0, 0, 0);
	if (chorus_conn_send(conn, &hdr, NULL, NULL))
		return "heartbeat send failed";
	if (time_after(jiffies, READ_ONCE(conn->last_rx) + timeout))
		return "heartbeat timeout";
	return NULL;
}

/*
 * The heartbeat pings every connection of the session and fails it when
 * one of them has received nothing for the ping timeout: a connection that
 * stops while another carries on (a queue pair whose sends stopped
 * without an error, seen with soft-RoCE) must not hold what waits on it.
 */
static void chorus_peer_ping_workfn(struct work_struct *work)
{
	struct chorus_peer *peer =
		container_of(to_delayed_work(work), struct chorus_peer, ping_work);
	struct chorus_repl *repl = &peer->vol->repl;
	unsigned long timeout = msecs_to_jiffies(READ_ONCE(repl->ping_timeout_ms));
	const char *why = NULL;
	struct chorus_conn *conn;
	bool session = false;
	u32 gen = 0, i;

	down_read(&peer->session_sem);
	for (i = 0; i < peer->nr_conns && !why; i++) {
		conn = peer->conns[i];
		if (!conn)
			continue;
		session = true;
		gen = conn->gen;
		why = chorus_conn_ping(conn, READ_ONCE(repl->epoch), timeout);
	}
	up_read(&peer->session_sem);
	if (!session)
		return;
	if (why)
		chorus_peer_fail(peer, gen, why);
	queue_delayed_work(chorus_wq, &peer->ping_work,
			   msecs_to_jiffies(READ_ONCE(repl->ping_interval_ms)));
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
		return chorus_transport(CHORUS_TRANSPORT_RDMA);
	case CHORUS_TRANSPORT_RDMA_TCP:
		return chorus_transport(time_before(jiffies, peer->rdma_retry_at) ?
					CHORUS_TRANSPORT_TCP :
					CHORUS_TRANSPORT_RDMA);
	default:
		return chorus_transport(CHORUS_TRANSPORT_TCP);
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
	const struct chorus_transport_ops *rdma;
	u32 gen, transport;

	spin_lock_irq(&peer->lock);
	gen = peer->gen;
	transport = peer->active_transport;
	spin_unlock_irq(&peer->lock);
	if (transport != CHORUS_TRANSPORT_TCP)
		return;
	rdma = chorus_transport(CHORUS_TRANSPORT_RDMA);
	if (!rdma->probe(&peer->addr, CHORUS_HANDSHAKE_TIMEOUT_MS)) {
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

/* Free the connections of a dial that did not become a session. */
static void chorus_peer_dial_free(struct chorus_peer *peer,
				  struct chorus_conn **conns)
{
	u32 i;

	for (i = 0; i < peer->nr_conns; i++) {
		chorus_conn_free(conns[i]);
		conns[i] = NULL;
	}
}

/*
 * Dial over @ops, and over TCP if that was RDMA, it failed and the peer may
 * fall back. Context: the connect work, session_mutex not held.
 */
static const char *chorus_peer_dial_paths(struct chorus_peer *peer,
					  const struct chorus_transport_ops **ops,
					  struct chorus_conn **conns,
					  struct chorus_hello_seen *seen)
{
	const char *why;

	why = chorus_peer_dial(peer, *ops, conns, seen);
	if (!why || (*ops)->transport != CHORUS_TRANSPORT_RDMA ||
	    peer->transport != CHORUS_TRANSPORT_RDMA_TCP)
		return why;

	chorus_peer_dial_free(peer, conns);
	chorus_peer_path_failed(peer, *ops, why);
	pr_info_ratelimited("%s: peer %u: %s; falling back to TCP\n",
			    peer->vol->name, peer->node_id, why);
	mutex_lock(&peer->session_mutex);
	peer->rdma_retry_at = jiffies + msecs_to_jiffies(peer->probe_ms);
	mutex_unlock(&peer->session_mutex);
	*ops = chorus_transport(CHORUS_TRANSPORT_TCP);
	return chorus_peer_dial(peer, *ops, conns, seen);
}

/*
 * Dial a session: over RDMA first when the peer may use it, then over TCP
 * if RDMA failed and the peer may fall back.
 *
 * The dial itself (connects and handshakes, up to CHORUS_HANDSHAKE_TIMEOUT_MS
 * each) runs without session_mutex: a peer that is gone must not stall a
 * role change or WRITESET_REMOVE for the caller's node, which is what the
 * daemon sends when that peer is found gone. A dial that spans a teardown
 * (a role or epoch change) handshook with what is no longer true: it is
 * dropped and dialled again.
 */
static void chorus_peer_connect_workfn(struct work_struct *work)
{
	struct chorus_peer *peer =
		container_of(to_delayed_work(work), struct chorus_peer, connect_work);
	struct chorus_conn *conns[CHORUS_MAX_CONNS] = {};
	const struct chorus_transport_ops *ops;
	struct chorus_hello_seen seen = {};
	const char *why;
	u32 dial_gen;

	mutex_lock(&peer->session_mutex);
	if (!peer->want_connect || peer->conns[0]) {
		mutex_unlock(&peer->session_mutex);
		return;
	}
	ops = chorus_peer_dial_ops(peer);
	dial_gen = peer->dial_gen;
	mutex_unlock(&peer->session_mutex);

	why = chorus_peer_dial_paths(peer, &ops, conns, &seen);

	mutex_lock(&peer->session_mutex);
	if (!peer->want_connect || peer->conns[0]) {
		chorus_peer_dial_free(peer, conns);
		goto unlock;
	}
	if (!why && peer->dial_gen != dial_gen) {
		chorus_peer_dial_free(peer, conns);
		chorus_peer_schedule_dial(peer, 0);
		goto unlock;
	}
	if (why) {
		chorus_peer_dial_free(peer, conns);
		chorus_peer_path_failed(peer, ops, why);
		pr_info_ratelimited("%s: peer %u: %s\n", peer->vol->name,
				    peer->node_id, why);
		spin_lock_irq(&peer->lock);
		strscpy(peer->last_error, why, sizeof(peer->last_error));
		spin_unlock_irq(&peer->lock);
		chorus_peer_schedule_dial(peer, seen.handing_over ?
					  CHORUS_BACKOFF_MIN_MS : peer->backoff_ms);
		peer->backoff_ms = min(peer->backoff_ms * 2, CHORUS_BACKOFF_MAX_MS);
		goto unlock;
	}
	chorus_peer_establish(peer, conns, &seen);
	if (!peer->conns[0])
		chorus_peer_schedule_dial(peer, peer->backoff_ms);
unlock:
	mutex_unlock(&peer->session_mutex);
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
	/* A role change ends with this: a dial begun before it is stale. */
	peer->dial_gen++;
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
 * chorus_peer_rearm_ping() - send the next heartbeat after the interval now set
 * @peer: the peer
 *
 * A heartbeat already queued would otherwise wait out the old interval, and
 * the ping timeout is only checked when it runs: a shorter timeout took
 * effect only after the longer interval it replaced. Without a session
 * there is no heartbeat to move (establishing one queues it).
 *
 * Context: process context; not under session_mutex.
 */
void chorus_peer_rearm_ping(struct chorus_peer *peer)
{
	mutex_lock(&peer->session_mutex);
	if (peer->conns[0])
		mod_delayed_work(chorus_wq, &peer->ping_work,
				 msecs_to_jiffies(READ_ONCE(peer->vol->repl.ping_interval_ms)));
	mutex_unlock(&peer->session_mutex);
}

/**
 * chorus_session_init() - set up the session part of a new peer
 * @peer: the peer, not yet listed
 */
void chorus_session_init(struct chorus_peer *peer)
{
	mutex_init(&peer->session_mutex);
	init_rwsem(&peer->session_sem);
	INIT_DELAYED_WORK(&peer->connect_work, chorus_peer_connect_workfn);
	INIT_WORK(&peer->fail_work, chorus_peer_fail_workfn);
	INIT_DELAYED_WORK(&peer->ping_work, chorus_peer_ping_workfn);
	INIT_DELAYED_WORK(&peer->probe_work, chorus_peer_probe_workfn);
	peer->probe_ms = CHORUS_PROBE_MIN_MS;
	peer->conn_state = CHORUS_CONN_DISCONNECTED;
	peer->backoff_ms = CHORUS_BACKOFF_MIN_MS;
}
