// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_hello: the handshake's HELLO or HELLO_ACK, on either side, as
 * handshake.c and a transport's recv_sync take it: the header checked,
 * payload_len 96, or 176 with CHORUS_MSG_F_AUTH, the type the side waits
 * for (HELLO on the acceptor, HELLO_ACK with status OK on the dialler),
 * the authentication part checked (chorus_wire_check_hello_auth()),
 * conn_index below CHORUS_MAX_CONNS on the acceptor, then
 * chorus_wire_check_hello() against what this node knows of the peer.
 *
 * Input: a control byte (bit 0: seal the header; bit 1: the acceptor's
 * side; bit 2: this node owns the volume; bit 3: the peer was added
 * diskless), what this node knows (the owner it follows last: its epoch
 * and incarnation), the header, the 96-byte hello, the 80-byte
 * authentication part (read only when the header has the flag).
 */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_selftest();
	return 0;
}

static void take_want(struct fuzz_in *in, u8 ctl,
		      struct chorus_wire_hello_want *w)
{
	memset(w, 0, sizeof(*w));
	w->node_id = fuzz_u32(in);
	w->peer_node_id = fuzz_u32(in);
	fuzz_take(in, w->volume_uuid, sizeof(w->volume_uuid));
	w->data_sectors = fuzz_u64(in);
	w->block_size = 512U << (fuzz_u8(in) % 4);
	/* genl.c: CHORUS_A_NR_CONNS is 1..CHORUS_MAX_CONNS */
	w->nr_conns = 1 + fuzz_u8(in) % CHORUS_MAX_CONNS;
	w->we_own = ctl & 4;
	w->peer_diskless = ctl & 8;
	w->epoch = fuzz_u64(in);
	w->highest_epoch = fuzz_u64(in);
	w->owner_epoch = fuzz_u64(in);
	w->owner_incarnation = fuzz_u64(in);
}

/* What the acceptor (chorus_handshake_peer()) does with an accepted HELLO. */
static void check_ok(const struct chorus_wire_hello *h,
		     const struct chorus_wire_hello_want *w)
{
	u16 index = le16_to_cpu(h->conn_index);

	/* peer->pending[index] and peer->conns[] have CHORUS_MAX_CONNS slots */
	FUZZ_CHECK(index < w->nr_conns && w->nr_conns <= CHORUS_MAX_CONNS,
		   "conn_index %u of %u", index, w->nr_conns);
	FUZZ_CHECK(le32_to_cpu(h->node_id) == w->peer_node_id &&
		   le32_to_cpu(h->peer_node_id) == w->node_id, "node ids");
	FUZZ_CHECK(!(w->we_own && (le32_to_cpu(h->flags) & CHORUS_HELLO_F_OWNER)),
		   "two owners");
	/* chorus_repl_follow_owner() pins it: 0 would mean "none" */
	FUZZ_CHECK(h->incarnation, "incarnation 0");
	FUZZ_CHECK(!((le32_to_cpu(h->flags) & CHORUS_HELLO_F_OWNER) && !w->we_own &&
		     w->owner_incarnation && le64_to_cpu(h->epoch) == w->owner_epoch &&
		     le64_to_cpu(h->incarnation) != w->owner_incarnation),
		   "another incarnation of the owner at the epoch followed");
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct chorus_wire_hello_want want;
	struct chorus_wire_hello_full full;
	struct chorus_wire_hello hello;
	struct chorus_wire_hdr hdr;
	bool acceptor, auth;
	const char *why;
	u32 status;
	u8 ctl;

	ctl = fuzz_u8(&in);
	acceptor = ctl & 2;
	take_want(&in, ctl, &want);
	fuzz_take(&in, &hdr, sizeof(hdr));
	fuzz_take(&in, &hello, sizeof(hello));
	auth = le16_to_cpu(hdr.flags) & CHORUS_MSG_F_AUTH;
	memset(&full, 0, sizeof(full));
	if (auth)
		fuzz_take(&in, &full.auth, sizeof(full.auth));
	if (ctl & 1)
		chorus_wire_seal(&hdr);

	/* chorus_tcp_recv_sync(), chorus_rdma_recv_sync() */
	if (chorus_wire_check_hdr(&hdr, &why))
		return 0;
	fuzz_check_accepted_hdr(&hdr);
	/* recv_sync() refuses more payload than the buffer holds */
	if (le32_to_cpu(hdr.payload_len) > sizeof(full))
		return 0;
	/* chorus_handshake_accepted(), chorus_peer_dial(): any other type fails */
	if (hdr.type != (acceptor ? CHORUS_MSG_HELLO : CHORUS_MSG_HELLO_ACK))
		return 0;
	FUZZ_CHECK(le32_to_cpu(hdr.payload_len) ==
		   (auth ? sizeof(full) : sizeof(hello)), "hello payload");
	if (auth) {
		int ret = chorus_wire_check_hello_auth(&full.auth, hdr.type, &why);

		FUZZ_CHECK(!ret == !why, "auth check %d, why %s", ret, why ?: "none");
		FUZZ_CHECK(!ret == spec_hello_auth_ok(&full.auth, hdr.type),
			   "auth check says %s, the page the opposite", why ?: "ok");
		if (ret)
			return 0;
	}
	if (acceptor && le16_to_cpu(hello.conn_index) >= CHORUS_MAX_CONNS)
		return 0;
	if (!acceptor && le32_to_cpu(hdr.status) != CHORUS_WIRE_OK)
		return 0;

	status = chorus_wire_check_hello(&hello, &want, &why);
	FUZZ_CHECK((status == CHORUS_WIRE_OK) == !why, "status %u, why %s",
		   status, why ?: "none");
	FUZZ_CHECK(status == spec_hello_status(&hello, &want),
		   "hello check answers %u (%s), the page %u", status,
		   why ?: "ok", spec_hello_status(&hello, &want));
	/* The evidence of a successor is only ever a refused HELLO (8b). */
	FUZZ_CHECK(chorus_wire_hello_supersedes(&hello, &want) ==
		   spec_hello_supersedes(&hello, &want),
		   "supersedes answers %d", chorus_wire_hello_supersedes(&hello, &want));
	FUZZ_CHECK(!chorus_wire_hello_supersedes(&hello, &want) ||
		   status == CHORUS_WIRE_REFUSED, "a successor's HELLO accepted");
	if (status == CHORUS_WIRE_OK)
		check_ok(&hello, &want);
	return 0;
}
