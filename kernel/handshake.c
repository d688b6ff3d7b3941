// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the handshake.
 *
 * Every connection of a session starts with HELLO (dialler) and HELLO_ACK
 * (acceptor), each checking the other's volume, size, node ids, roles and
 * epoch. The dialler's half is chorus_peer_dial(), called by the session's
 * connect work; the acceptor's half is chorus_handshake_accepted(), called
 * by a transport for each connection it accepts. Once every connection of
 * a session has shaken hands, chorus_peer_establish() makes it the peer's
 * session.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>

#include "chorus.h"
#include "session.h"

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
	h->flags = cpu_to_le32((owner ? CHORUS_HELLO_F_OWNER : 0) |
			       (vol->diskless ? CHORUS_HELLO_F_DISKLESS : 0));
	h->epoch = cpu_to_le64(READ_ONCE(vol->repl.epoch));
	h->session_id = cpu_to_le64(session_id);
	h->current_gen = vol->meta.super->current_gen;
}

/*
 * Check a peer's HELLO or HELLO_ACK (chorus_wire_check_hello()). Returns a
 * wire status and sets *why to a reason when it refuses.
 */
static u32 chorus_hello_check(struct chorus_peer *peer,
			      const struct chorus_wire_hello *h,
			      const char **why)
{
	struct chorus_volume *vol = peer->vol;
	struct chorus_wire_hello_want want = {
		.node_id = vol->node_id,
		.peer_node_id = peer->node_id,
		.data_sectors = vol->nr_sectors,
		.block_size = vol->block_size,
		.nr_conns = peer->nr_conns,
		.peer_diskless = peer->diskless,
		.we_own = READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER,
		.epoch = READ_ONCE(vol->repl.epoch),
		.highest_epoch = chorus_meta_highest_epoch(vol),
	};
	u32 status;

	export_uuid(want.volume_uuid, &vol->uuid);
	status = chorus_wire_check_hello(h, &want, why);
	/* Not a wire check: it needs the peer slot (peer.c). */
	if (status == CHORUS_WIRE_OK && want.we_own &&
	    READ_ONCE(peer->in_writeset) &&
	    chorus_peer_disk_replaced(peer, le64_to_cpu(h->current_gen))) {
		*why = "peer has a new disk but is in the write set: take it out first";
		status = CHORUS_WIRE_REFUSED;
	}
	return status;
}

static const char *chorus_wire_status_text(u32 status)
{
	switch (status) {
	case CHORUS_WIRE_STALE_EPOCH:
		return "peer refused: stale epoch";
	case CHORUS_WIRE_NOT_MEMBER:
		return "peer refused: it does not know this volume or node, or is not connecting";
	case CHORUS_WIRE_REFUSED:
		return "peer refused: uuid, size, block size, roles or diskless do not match";
	default:
		return "peer refused the handshake";
	}
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

/**
 * chorus_peer_dial() - dial every connection of a session, handshake on each
 * @peer: the peer
 * @ops: the transport to dial over
 * @conns: filled with the connections made, which the caller frees on
 *	failure
 * @seen: set to what the peer's HELLO_ACK said
 *
 * Context: the session's connect work, session_mutex not held: it only
 * reads what is fixed when the peer is added, and the volume's role and
 * epoch with READ_ONCE (the connect work drops a dial that spans a change).
 * Return: NULL, or why the session could not be made.
 */
const char *chorus_peer_dial(struct chorus_peer *peer,
			     const struct chorus_transport_ops *ops,
			     struct chorus_conn **conns,
			     struct chorus_hello_seen *seen)
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
		seen->owner = le32_to_cpu(answer.flags) & CHORUS_HELLO_F_OWNER;
		seen->epoch = le64_to_cpu(answer.epoch);
		seen->disk_gen = le64_to_cpu(answer.current_gen);
	}
	return NULL;
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
	struct chorus_hello_seen seen;
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
	seen.owner = le32_to_cpu(theirs->flags) & CHORUS_HELLO_F_OWNER;
	seen.epoch = le64_to_cpu(theirs->epoch);
	seen.disk_gen = le64_to_cpu(theirs->current_gen);
	chorus_peer_establish(peer, peer->pending, &seen);
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
