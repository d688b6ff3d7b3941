// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the handshake.
 *
 * Every connection of a session starts with HELLO (dialler) and HELLO_ACK
 * (acceptor), each checking the other's volume, size, node ids, roles and
 * epoch. With a peer secret set (auth.c) both carry a nonce, the HELLO_ACK
 * the acceptor's proof, and the dialler answers with its own in AUTH, which
 * the acceptor checks before the connection joins anything; AUTH_ACK says
 * it did. The dialler's half is chorus_peer_dial(), called by the session's
 * connect work; the acceptor's half is chorus_handshake_accepted(), called
 * by a transport for each connection it accepts. Once every connection of
 * a session has shaken hands, chorus_peer_establish() makes it the peer's
 * session. An accepted connection must also come from the peer's address.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>

#include "auth.h"
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
	h->incarnation = cpu_to_le64(vol->incarnation);
}

/* What this node expects of @peer's HELLO (chorus_wire_check_hello()). */
static void chorus_hello_want(struct chorus_peer *peer,
			      struct chorus_wire_hello_want *want)
{
	struct chorus_volume *vol = peer->vol;

	*want = (struct chorus_wire_hello_want) {
		.node_id = vol->node_id,
		.peer_node_id = peer->node_id,
		.data_sectors = vol->nr_sectors,
		.block_size = vol->block_size,
		.nr_conns = peer->nr_conns,
		.peer_diskless = peer->diskless,
		.we_own = READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER,
		.epoch = READ_ONCE(vol->repl.epoch),
	};
	export_uuid(want->volume_uuid, &vol->uuid);
	/* The highest epoch on disk and the owner followed, as one. */
	mutex_lock(&vol->repl.meta_lock);
	want->highest_epoch = le64_to_cpu(vol->meta.super->highest_epoch);
	want->owner_epoch = vol->repl.owner_epoch;
	want->owner_incarnation = vol->repl.owner_incarnation;
	mutex_unlock(&vol->repl.meta_lock);
}

/*
 * Check a peer's HELLO or HELLO_ACK (chorus_wire_check_hello()). Returns a
 * wire status and sets *why to a reason when it refuses.
 */
static u32 chorus_hello_check(struct chorus_peer *peer,
			      const struct chorus_wire_hello *h,
			      const char **why)
{
	struct chorus_wire_hello_want want;
	u32 status;

	chorus_hello_want(peer, &want);
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

/*
 * Whether @h is evidence that @peer superseded this owner: it owns at a
 * higher epoch (check 8b), and this node, past its lease deadline, may
 * believe it. The caller checks the proof that @h is the peer's.
 */
static bool chorus_hello_supersedes(struct chorus_peer *peer,
				    const struct chorus_wire_hello *h)
{
	struct chorus_wire_hello_want want;

	if (peer->diskless || !chorus_lease_expired())
		return false;
	chorus_hello_want(peer, &want);
	return chorus_wire_hello_supersedes(h, &want);
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
	case CHORUS_WIRE_AUTH_FAILED:
		if (!chorus_auth_enabled())
			return "peer requires authentication: this node has no peer secret";
		return "peer refused authentication: no peer secret there, or not ours";
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

/*
 * A connection refused for who it comes from: a wrong or missing proof, or
 * the wrong address. Counted, logged (the address, never a secret) and
 * announced. Context: process context.
 */
static void chorus_auth_refused(struct chorus_peer *peer,
				const struct sockaddr_storage *from,
				const char *why)
{
	char reason[CHORUS_REASON_MAX];

	chorus_auth_count_failure();
	pr_warn_ratelimited("%s: peer %u at %pISc: connection refused: %s\n",
			    peer->vol->name, peer->node_id, from, why);
	snprintf(reason, sizeof(reason), "%pISc: %s", from, why);
	chorus_genl_notify_peer(peer->vol, CHORUS_EVENT_AUTH_FAILED, peer,
				reason);
}

/**
 * struct chorus_dial - one connection's handshake, on the dialler
 * @hello: the HELLO sent, with its authentication part
 * @ack: the HELLO_ACK received
 * @proof: the AUTH sent
 * @auth: this node has a secret: the HELLO carries @hello.auth
 * @refused: the status of the HELLO_ACK or AUTH_ACK that refused, else OK
 */
struct chorus_dial {
	struct chorus_wire_hello_full hello;
	struct chorus_wire_hello_full ack;
	struct chorus_wire_auth proof;
	bool auth;
	u32 refused;
};

/* Check the acceptor's proof over both hellos: NULL, or why it fails. */
static const char *chorus_dial_check_proof(struct chorus_peer *peer,
					   struct chorus_dial *d)
{
	u64 id = le64_to_cpu(d->ack.auth.key_ids[0]);
	const char *why;

	if (chorus_wire_check_hello_auth(&d->ack.auth, CHORUS_MSG_HELLO_ACK, &why))
		return why;
	if (id != le64_to_cpu(d->hello.auth.key_ids[0]) &&
	    id != le64_to_cpu(d->hello.auth.key_ids[1]))
		return "peer chose a secret this node did not offer";
	if (!memcmp(d->ack.auth.nonce, d->hello.auth.nonce,
		    CHORUS_AUTH_NONCE_LEN)) {
		chorus_auth_refused(peer, &peer->addr, "peer sent this node's own nonce back");
		return "peer sent this node's own nonce back";
	}
	if (chorus_auth_verify(id, CHORUS_AUTH_ACCEPTOR, &d->hello, &d->ack,
			       d->ack.auth.mac)) {
		chorus_auth_refused(peer, &peer->addr, "wrong proof of the peer secret");
		return "peer failed authentication: wrong proof of the peer secret";
	}
	return NULL;
}

/* Check the acceptor's proof; send ours and wait for its verdict. */
static const char *chorus_dial_prove(struct chorus_peer *peer,
				     struct chorus_conn *conn,
				     struct chorus_dial *d)
{
	u64 id = le64_to_cpu(d->ack.auth.key_ids[0]);
	struct chorus_wire_hdr hdr;
	const char *why;
	u32 status;
	int ret;

	why = chorus_dial_check_proof(peer, d);
	if (why)
		return why;
	ret = chorus_auth_mac(id, CHORUS_AUTH_DIALLER, &d->hello, &d->ack,
			      d->proof.mac);
	if (ret)
		return "cannot compute the proof";
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_AUTH, 0, 0, 0, 0);
	hdr.payload_len = cpu_to_le32(sizeof(d->proof));
	ret = chorus_conn_send(conn, &hdr, &d->proof, NULL);
	if (!ret)
		ret = conn->ops->recv_sync(conn, &hdr, NULL, 0,
					   CHORUS_HANDSHAKE_TIMEOUT_MS);
	if (ret || hdr.type != CHORUS_MSG_AUTH_ACK)
		return "handshake failed";
	status = le32_to_cpu(hdr.status);
	d->refused = status;
	if (status == CHORUS_WIRE_AUTH_FAILED) {
		chorus_auth_refused(peer, &peer->addr, "peer refused this node's proof");
		return "peer refused this node's proof: the secrets differ";
	}
	return status == CHORUS_WIRE_OK ? NULL : chorus_wire_status_text(status);
}

/*
 * A STALE_EPOCH answer to this owner may come from its successor: a hello
 * that owns at a higher epoch, signed with the acceptor's proof over both
 * hellos when there is a peer secret ("A successor's hand-over" in
 * Documentation/wire-protocol.rst). Past the lease deadline, that hands
 * this node's I/O over to it (chorus_repl_superseded()).
 */
static void chorus_dial_superseded(struct chorus_peer *peer,
				   struct chorus_dial *d,
				   const struct chorus_wire_hdr *hdr)
{
	bool signed_ack = le16_to_cpu(hdr->flags) & CHORUS_MSG_F_AUTH;
	u32 len = le32_to_cpu(hdr->payload_len);

	if (signed_ack != d->auth ||
	    len != (d->auth ? sizeof(d->ack) : sizeof(d->ack.hello)) ||
	    !chorus_hello_supersedes(peer, &d->ack.hello))
		return;
	if (d->auth && chorus_dial_check_proof(peer, d))
		return;
	chorus_repl_superseded(peer, le64_to_cpu(d->ack.hello.epoch));
}

/* The HELLO_ACK is of an owner at a lower epoch than this owner's. */
static bool chorus_dial_stale_owner(struct chorus_peer *peer,
				    const struct chorus_dial *d)
{
	struct chorus_volume *vol = peer->vol;

	return READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER &&
	       (le32_to_cpu(d->ack.hello.flags) & CHORUS_HELLO_F_OWNER) &&
	       le64_to_cpu(d->ack.hello.epoch) < READ_ONCE(vol->repl.epoch);
}

/*
 * A NOT_MEMBER from the owner this owner supersedes, its hello in the
 * HELLO_ACK: it is handing over (chorus_accept_done()), and takes this
 * node's session once it is a replica.
 */
static bool chorus_dial_handing_over(struct chorus_peer *peer,
				     const struct chorus_dial *d)
{
	return d->refused == CHORUS_WIRE_NOT_MEMBER &&
	       chorus_dial_stale_owner(peer, d);
}

/* Send HELLO on connection @i, check the HELLO_ACK, authenticate. */
static const char *chorus_dial_one(struct chorus_peer *peer,
				   struct chorus_conn *conn, u32 i,
				   u64 session, struct chorus_dial *d,
				   struct chorus_hello_seen *seen)
{
	const struct chorus_transport_ops *ops = conn->ops;
	struct chorus_wire_hdr hdr;
	const char *why = NULL;
	bool acked_auth;
	u32 status;
	int ret;

	memset(d, 0, sizeof(*d));
	chorus_hello_fill(peer, &d->hello.hello, i, session);
	d->auth = chorus_auth_offer(&d->hello.auth);
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_HELLO, 0, 0, 0, 0);
	hdr.flags = cpu_to_le16(d->auth ? CHORUS_MSG_F_AUTH : 0);
	hdr.payload_len = cpu_to_le32(d->auth ? sizeof(d->hello) :
				      sizeof(d->hello.hello));
	ret = chorus_conn_send(conn, &hdr, &d->hello, NULL);
	if (!ret)
		ret = ops->recv_sync(conn, &hdr, &d->ack, sizeof(d->ack),
				     CHORUS_HANDSHAKE_TIMEOUT_MS);
	if (ret || hdr.type != CHORUS_MSG_HELLO_ACK ||
	    le32_to_cpu(hdr.payload_len) < sizeof(d->ack.hello))
		return "handshake failed";
	status = le32_to_cpu(hdr.status);
	if (status != CHORUS_WIRE_OK) {
		d->refused = status;
		seen->handing_over = chorus_dial_handing_over(peer, d);
		if (status == CHORUS_WIRE_STALE_EPOCH) {
			WRITE_ONCE(peer->fenced, true);
			chorus_dial_superseded(peer, d, &hdr);
		}
		if (status == CHORUS_WIRE_AUTH_FAILED)
			chorus_auth_refused(peer, &peer->addr,
					    chorus_wire_status_text(status));
		return chorus_wire_status_text(status);
	}
	acked_auth = le16_to_cpu(hdr.flags) & CHORUS_MSG_F_AUTH;
	if (acked_auth != d->auth)
		return d->auth ? "peer accepted without authentication: refused" :
				 "peer authenticates, but this node has no peer secret";
	status = chorus_hello_check(peer, &d->ack.hello, &why);
	if (status != CHORUS_WIRE_OK) {
		/*
		 * A stale owner that challenges this one wants its proof to
		 * hand over (chorus_accept_done()): prove, never join.
		 */
		if (d->auth && chorus_dial_stale_owner(peer, d)) {
			chorus_dial_prove(peer, conn, d);
			seen->handing_over = chorus_dial_handing_over(peer, d);
		}
		return why;
	}
	if (d->auth) {
		why = chorus_dial_prove(peer, conn, d);
		if (why) {
			seen->handing_over = chorus_dial_handing_over(peer, d);
			return why;
		}
	}
	seen->owner = le32_to_cpu(d->ack.hello.flags) & CHORUS_HELLO_F_OWNER;
	seen->epoch = le64_to_cpu(d->ack.hello.epoch);
	seen->disk_gen = le64_to_cpu(d->ack.hello.current_gen);
	seen->incarnation = le64_to_cpu(d->ack.hello.incarnation);
	return NULL;
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
	struct chorus_dial *d;
	const char *why = NULL;
	u32 i;
	int ret;

	d = kmalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return "out of memory";
	for (i = 0; i < peer->nr_conns && !why; i++) {
		conns[i] = chorus_conn_alloc(ops);
		if (!conns[i]) {
			why = "out of memory";
			break;
		}
		conns[i]->peer = peer;
		conns[i]->index = i;
		ret = ops->connect(conns[i], &peer->addr,
				   CHORUS_HANDSHAKE_TIMEOUT_MS);
		if (ret)
			why = chorus_connect_error(ops, ret);
		else
			why = chorus_dial_one(peer, conns[i], i, session, d, seen);
	}
	kfree_sensitive(d);
	return why;
}

/* Whether @peer's transport setting allows sessions over @ops. */
static bool chorus_peer_may_use(struct chorus_peer *peer,
				const struct chorus_transport_ops *ops)
{
	if (peer->transport == CHORUS_TRANSPORT_RDMA_TCP)
		return true;
	return peer->transport == ops->transport;
}

/**
 * struct chorus_accept - one accepted connection's handshake
 * @theirs: the HELLO received, with its authentication part
 * @ours: the HELLO_ACK sent
 * @proof: the AUTH received
 * @from: where the connection comes from
 * @uuid: the volume the HELLO asks for
 * @key_id: the secret both prove with; 0: authentication off
 * @auth: the HELLO carried an authentication part
 * @await_proof: the HELLO_ACK went out with ours: AUTH comes next
 * @successor: the HELLO says the dialler owns at a higher epoch than this
 *	owner past its lease deadline (chorus_hello_supersedes()): once it
 *	is proven, this node hands over instead of joining
 */
struct chorus_accept {
	struct chorus_wire_hello_full theirs;
	struct chorus_wire_hello_full ours;
	struct chorus_wire_auth proof;
	struct sockaddr_storage from;
	uuid_t uuid;
	u64 key_id;
	bool auth;
	bool await_proof;
	bool successor;
};

/*
 * Refuse an accepted connection with @status: a HELLO_ACK (with our hello
 * when the peer is known) before AUTH, an AUTH_ACK after it.
 */
static int chorus_handshake_refuse(struct chorus_conn *conn,
				   struct chorus_peer *peer,
				   const struct chorus_accept *acc,
				   u32 status)
{
	struct chorus_wire_hello hello = {};
	struct chorus_wire_hdr hdr;

	if (acc->await_proof) {
		chorus_wire_init_hdr(&hdr, CHORUS_MSG_AUTH_ACK, 0, 0, 0, 0);
		hdr.status = cpu_to_le32(status);
		chorus_conn_send(conn, &hdr, NULL, NULL);
		return -ECONNREFUSED;
	}
	if (peer)
		chorus_hello_fill(peer, &hello,
				  le16_to_cpu(acc->theirs.hello.conn_index), 0);
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_HELLO_ACK, 0, 0, 0, 0);
	hdr.payload_len = cpu_to_le32(sizeof(hello));
	hdr.status = cpu_to_le32(status);
	chorus_conn_send(conn, &hdr, &hello, NULL);
	return -ECONNREFUSED;
}

static void chorus_peer_refused(struct chorus_peer *peer, const char *why)
{
	spin_lock_irq(&peer->lock);
	strscpy(peer->last_error, why, sizeof(peer->last_error));
	spin_unlock_irq(&peer->lock);
}

/*
 * Whether the peer may make this connection now, and its HELLO matches:
 * a wire status. A successor's HELLO (check 8b) passes, with
 * @acc->successor set. Context: the locks of chorus_handshake_peer().
 */
static u32 chorus_accept_admit(struct chorus_conn *conn,
			       struct chorus_peer *peer,
			       struct chorus_accept *acc)
{
	const char *why;
	u32 status;

	lockdep_assert_held(&peer->session_mutex);
	if (!peer->want_connect || peer->dialler)
		return CHORUS_WIRE_NOT_MEMBER;
	if (!chorus_addr_same_host(&acc->from, &peer->addr)) {
		chorus_auth_refused(peer, &acc->from,
				    "not the peer's configured address");
		return CHORUS_WIRE_NOT_MEMBER;
	}
	if (!chorus_peer_may_use(peer, conn->ops)) {
		pr_info_ratelimited("%s: peer %u: refused: it dialled over %s, which this node does not use for it\n",
				    peer->vol->name, peer->node_id,
				    conn->ops->name);
		chorus_peer_refused(peer, "peer dialled over a transport not configured for it");
		return CHORUS_WIRE_REFUSED;
	}
	status = chorus_hello_check(peer, &acc->theirs.hello, &why);
	acc->successor = status == CHORUS_WIRE_REFUSED &&
			 acc->theirs.hello.session_id &&
			 chorus_hello_supersedes(peer, &acc->theirs.hello);
	if (acc->successor)
		return CHORUS_WIRE_OK;
	if (status != CHORUS_WIRE_OK || !acc->theirs.hello.session_id) {
		why = why ?: "no session id";
		pr_info_ratelimited("%s: peer %u: refused: %s\n",
				    peer->vol->name, peer->node_id, why);
		chorus_peer_refused(peer, why);
		if (status == CHORUS_WIRE_STALE_EPOCH)
			this_cpu_inc(peer->vol->stats->stale_epoch);
		return status ?: CHORUS_WIRE_REFUSED;
	}
	return CHORUS_WIRE_OK;
}

/*
 * The connection passed every check: answer it (HELLO_ACK, or AUTH_ACK
 * after a proof) and make it part of the peer's pending session, which
 * becomes the peer's session once complete. Context: the locks of
 * chorus_handshake_peer().
 */
static int chorus_handshake_join(struct chorus_conn *conn,
				 struct chorus_peer *peer,
				 struct chorus_accept *acc)
{
	const struct chorus_wire_hello *theirs = &acc->theirs.hello;
	u64 session = le64_to_cpu(theirs->session_id);
	u16 index = le16_to_cpu(theirs->conn_index);
	struct chorus_hello_seen seen;
	struct chorus_wire_hdr hdr;
	u32 i;
	int ret;

	lockdep_assert_held(&peer->session_mutex);
	/* The dialler knows best: a new session replaces the old one. */
	if (peer->conns[0])
		__chorus_peer_teardown(peer, "peer started a new session");
	if (peer->pending_session != session) {
		chorus_peer_free_pending(peer);
		peer->pending_session = session;
	}

	if (acc->await_proof) {
		chorus_wire_init_hdr(&hdr, CHORUS_MSG_AUTH_ACK, 0, 0, 0, 0);
		ret = chorus_conn_send(conn, &hdr, NULL, NULL);
	} else {
		chorus_hello_fill(peer, &acc->ours.hello, index, session);
		chorus_wire_init_hdr(&hdr, CHORUS_MSG_HELLO_ACK, 0, 0, 0, 0);
		hdr.payload_len = cpu_to_le32(sizeof(acc->ours.hello));
		ret = chorus_conn_send(conn, &hdr, &acc->ours.hello, NULL);
	}
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
	seen.incarnation = le64_to_cpu(theirs->incarnation);
	chorus_peer_establish(peer, peer->pending, &seen);
	for (i = 0; i < CHORUS_MAX_CONNS; i++)
		peer->pending[i] = NULL;
	peer->pending_session = 0;
	return 0;
}

/*
 * Both nodes must have a secret or neither; with one, choose the secret to
 * prove with. Context: the locks of chorus_handshake_peer().
 */
static u32 chorus_accept_choose(struct chorus_peer *peer,
				struct chorus_accept *acc)
{
	bool on = chorus_auth_enabled();

	lockdep_assert_held(&peer->session_mutex);
	if (on != acc->auth) {
		chorus_auth_refused(peer, &acc->from, on ?
				    "peer sent no proof: it has no peer secret" :
				    "peer wants authentication, this node has no peer secret");
		return CHORUS_WIRE_AUTH_FAILED;
	}
	if (!on)
		return CHORUS_WIRE_OK;
	acc->key_id = chorus_auth_choose(&acc->theirs.auth);
	if (!acc->key_id) {
		chorus_auth_refused(peer, &acc->from,
				    "no peer secret in common (a rotation not done on both?)");
		return CHORUS_WIRE_AUTH_FAILED;
	}
	return CHORUS_WIRE_OK;
}

/*
 * Answer a HELLO with the acceptor's nonce and proof, and @status: OK is
 * the challenge (AUTH comes next); STALE_EPOCH a signed refusal.
 */
static int chorus_accept_challenge(struct chorus_conn *conn,
				   struct chorus_peer *peer,
				   struct chorus_accept *acc, u32 status)
{
	const struct chorus_wire_hello *theirs = &acc->theirs.hello;
	struct chorus_wire_hello_auth *a = &acc->ours.auth;
	struct chorus_wire_hdr hdr;
	int ret;

	chorus_hello_fill(peer, &acc->ours.hello, le16_to_cpu(theirs->conn_index),
			  le64_to_cpu(theirs->session_id));
	memset(a, 0, sizeof(*a));
	do {
		get_random_bytes(a->nonce, sizeof(a->nonce));
	} while (!memcmp(a->nonce, acc->theirs.auth.nonce, sizeof(a->nonce)));
	a->key_ids[0] = cpu_to_le64(acc->key_id);
	ret = chorus_auth_mac(acc->key_id, CHORUS_AUTH_ACCEPTOR, &acc->theirs,
			      &acc->ours, a->mac);
	if (ret)
		return chorus_handshake_refuse(conn, peer, acc,
					       CHORUS_WIRE_AUTH_FAILED);
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_HELLO_ACK, 0, 0, 0, 0);
	hdr.flags = cpu_to_le16(CHORUS_MSG_F_AUTH);
	hdr.payload_len = cpu_to_le32(sizeof(acc->ours));
	hdr.status = cpu_to_le32(status);
	ret = chorus_conn_send(conn, &hdr, &acc->ours, NULL);
	if (ret || status != CHORUS_WIRE_OK)
		return ret ?: -ECONNREFUSED;
	acc->await_proof = true;
	return 0;
}

/*
 * Refuse a HELLO as STALE_EPOCH. With a peer secret the refusal carries
 * this node's proof: the dialler, an owner past its lease deadline, may
 * take this node's hello as proof that it was superseded.
 */
static int chorus_accept_refuse_stale(struct chorus_conn *conn,
				      struct chorus_peer *peer,
				      struct chorus_accept *acc)
{
	if (acc->auth && chorus_auth_enabled() &&
	    chorus_accept_choose(peer, acc) == CHORUS_WIRE_OK)
		return chorus_accept_challenge(conn, peer, acc,
					       CHORUS_WIRE_STALE_EPOCH);
	return chorus_handshake_refuse(conn, peer, acc, CHORUS_WIRE_STALE_EPOCH);
}

/*
 * The dialler passed every check, and proved itself with a secret: join
 * it, or, when its HELLO says it superseded this owner, hand over to it
 * and refuse it until this node is a replica; it dials again.
 */
static int chorus_accept_done(struct chorus_conn *conn,
			      struct chorus_peer *peer,
			      struct chorus_accept *acc)
{
	if (!acc->successor)
		return chorus_handshake_join(conn, peer, acc);
	chorus_repl_superseded(peer, le64_to_cpu(acc->theirs.hello.epoch));
	return chorus_handshake_refuse(conn, peer, acc, CHORUS_WIRE_NOT_MEMBER);
}

/*
 * The acceptor's half on one connection, in one or two steps: for a HELLO,
 * the checks and then either the HELLO_ACK and the join (no secret), or
 * the challenge; for the AUTH that answers a challenge, the same checks
 * again (the locks were dropped while waiting), the proof, the join.
 * Context: chorus_volumes_lock, conf_lock and session_mutex held.
 */
static int chorus_handshake_peer(struct chorus_conn *conn,
				 struct chorus_peer *peer,
				 struct chorus_accept *acc)
{
	u32 status;

	status = chorus_accept_admit(conn, peer, acc);
	if (status == CHORUS_WIRE_STALE_EPOCH && !acc->await_proof)
		return chorus_accept_refuse_stale(conn, peer, acc);
	if (status != CHORUS_WIRE_OK)
		return chorus_handshake_refuse(conn, peer, acc, status);
	if (!acc->await_proof) {
		status = chorus_accept_choose(peer, acc);
		if (status != CHORUS_WIRE_OK)
			return chorus_handshake_refuse(conn, peer, acc, status);
		if (acc->key_id)
			return chorus_accept_challenge(conn, peer, acc,
						       CHORUS_WIRE_OK);
		return chorus_accept_done(conn, peer, acc);
	}
	/* Our own proof echoed fails the check too; say what it is. */
	if (!memcmp(acc->proof.mac, acc->ours.auth.mac, CHORUS_AUTH_MAC_LEN)) {
		chorus_auth_refused(peer, &acc->from, "peer echoed this node's own proof");
		return chorus_handshake_refuse(conn, peer, acc,
					       CHORUS_WIRE_AUTH_FAILED);
	}
	if (chorus_auth_verify(acc->key_id, CHORUS_AUTH_DIALLER, &acc->theirs,
			       &acc->ours, acc->proof.mac)) {
		chorus_auth_refused(peer, &acc->from,
				    "wrong proof of the peer secret");
		return chorus_handshake_refuse(conn, peer, acc,
					       CHORUS_WIRE_AUTH_FAILED);
	}
	return chorus_accept_done(conn, peer, acc);
}

/* Find the volume and peer a HELLO names and run a step under their locks. */
static int chorus_handshake_locked(struct chorus_conn *conn,
				   struct chorus_accept *acc)
{
	const struct chorus_wire_hello *theirs = &acc->theirs.hello;
	struct chorus_volume *vol;
	struct chorus_peer *peer;
	int ret;

	mutex_lock(&chorus_volumes_lock);
	vol = chorus_volume_find_uuid(&acc->uuid);
	if (!vol) {
		mutex_unlock(&chorus_volumes_lock);
		pr_info_ratelimited("handshake: node %u at %pISc asked for a volume this node does not have\n",
				    le32_to_cpu(theirs->node_id), &acc->from);
		return chorus_handshake_refuse(conn, NULL, acc,
					       CHORUS_WIRE_NOT_MEMBER);
	}
	mutex_lock(&vol->repl.conf_lock);
	peer = chorus_peer_find(vol, le32_to_cpu(theirs->node_id));
	if (!peer || le16_to_cpu(theirs->conn_index) >= CHORUS_MAX_CONNS) {
		ret = chorus_handshake_refuse(conn, NULL, acc,
					      CHORUS_WIRE_NOT_MEMBER);
	} else {
		mutex_lock(&peer->session_mutex);
		ret = chorus_handshake_peer(conn, peer, acc);
		mutex_unlock(&peer->session_mutex);
	}
	mutex_unlock(&vol->repl.conf_lock);
	mutex_unlock(&chorus_volumes_lock);
	return ret;
}

/* Receive the HELLO of an accepted connection and what it needs alone. */
static int chorus_accept_hello(struct chorus_conn *conn,
			       struct chorus_accept *acc)
{
	struct chorus_wire_hdr hdr;
	const char *why;
	int ret;

	ret = conn->ops->recv_sync(conn, &hdr, &acc->theirs, sizeof(acc->theirs),
				   CHORUS_HANDSHAKE_TIMEOUT_MS);
	if (ret)
		return ret;
	ret = conn->ops->peer_addr(conn, &acc->from);
	if (ret)
		return ret;
	if (hdr.type != CHORUS_MSG_HELLO) {
		pr_warn_ratelimited("handshake: %pISc: expected HELLO, got type %u\n",
				    &acc->from, hdr.type);
		return -EPROTO;
	}
	acc->auth = le16_to_cpu(hdr.flags) & CHORUS_MSG_F_AUTH;
	if (acc->auth &&
	    chorus_wire_check_hello_auth(&acc->theirs.auth, CHORUS_MSG_HELLO, &why)) {
		pr_warn_ratelimited("handshake: %pISc: %s\n", &acc->from, why);
		return -EPROTO;
	}
	import_uuid(&acc->uuid, acc->theirs.hello.volume_uuid);
	return 0;
}

/* Receive the dialler's AUTH, without any lock: it may take a while. */
static int chorus_accept_proof(struct chorus_conn *conn,
			       struct chorus_accept *acc)
{
	struct chorus_wire_hdr hdr;
	int ret;

	ret = conn->ops->recv_sync(conn, &hdr, &acc->proof, sizeof(acc->proof),
				   CHORUS_HANDSHAKE_TIMEOUT_MS);
	if (!ret && (hdr.type != CHORUS_MSG_AUTH ||
		     le32_to_cpu(hdr.payload_len) != sizeof(acc->proof)))
		ret = -EPROTO;
	if (ret) {
		chorus_auth_count_failure();
		pr_warn_ratelimited("handshake: node %u at %pISc: no AUTH after the challenge (%d); closing\n",
				    le32_to_cpu(acc->theirs.hello.node_id),
				    &acc->from, ret);
	}
	return ret;
}

/**
 * chorus_handshake_accepted() - handshake on an accepted connection
 * @conn: the connection, not yet part of any peer
 *
 * With a peer secret set, the connection joins nothing (and no existing
 * session is touched) before the dialler's proof checked; any other message
 * in its place closes it.
 * Context: process context (a transport's accept work).
 * Return: 0 when @conn now belongs to a peer, or a negative errno and the
 * caller frees @conn.
 */
int chorus_handshake_accepted(struct chorus_conn *conn)
{
	struct chorus_accept *acc;
	int ret;

	acc = kzalloc(sizeof(*acc), GFP_KERNEL);
	if (!acc)
		return -ENOMEM;
	ret = chorus_accept_hello(conn, acc);
	if (!ret)
		ret = chorus_handshake_locked(conn, acc);
	if (!ret && acc->await_proof) {
		ret = chorus_accept_proof(conn, acc);
		if (!ret)
			ret = chorus_handshake_locked(conn, acc);
	}
	kfree_sensitive(acc);
	return ret;
}
