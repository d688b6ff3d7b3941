// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_stream: a TCP connection's byte stream after the handshake, as
 * chorus_tcp_io_workfn() and chorus_conn_recv() take it: a header, checked;
 * payload_len bytes; the range checked against the volume; the message
 * handed on by type (chorus_repl_recv()), a STATE's payload checked as the
 * replica does. The first failed check closes the connection, like a
 * stream that ends.
 *
 * Input: a control byte (bit 0: seal each header; bit 1: seal each STATE's
 * block), the volume's geometry, the peer's node id, then the stream.
 */
#include "fuzz.h"

#define STREAM_MAX_MSGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_selftest();
	return 0;
}

static struct chorus_meta_al block;

/* A STATE's payload, as chorus_al_store() checks it. */
static bool take_state(const struct chorus_wire_hdr *hdr, const u8 *payload,
		       const struct fuzz_geom *g, u32 peer, bool seal)
{
	bool ok;

	memcpy(&block, payload, sizeof(block));
	if (seal)
		block.crc = cpu_to_le32(spec_crc32c(&block,
						    offsetof(struct chorus_meta_al, crc)));
	ok = !chorus_wire_check_state(&block, hdr, g->al_extents, peer);
	FUZZ_CHECK(ok == spec_state_ok(&block, le64_to_cpu(hdr->epoch),
				       g->al_extents, peer), "state: %d", ok);
	return ok;
}

/* One message; false when it closes the connection. */
static bool take_msg(struct fuzz_in *in, u8 ctl, const struct fuzz_geom *g,
		     u32 peer)
{
	struct chorus_wire_hdr hdr;
	const u8 *payload;
	const char *why;
	u32 len;

	if (in->n < sizeof(hdr))
		return false;
	fuzz_take(in, &hdr, sizeof(hdr));
	if (ctl & 1)
		chorus_wire_seal(&hdr);
	if (chorus_wire_check_hdr(&hdr, &why)) {
		FUZZ_CHECK(!spec_hdr_ok(&hdr), "refused a valid header: %s", why);
		return false;
	}
	fuzz_check_accepted_hdr(&hdr);
	len = le32_to_cpu(hdr.payload_len);
	if (in->n < len)
		return false;
	payload = in->p;
	in->p += len;
	in->n -= len;
	if (chorus_wire_check_range(g->nr_sectors, g->block_size, &hdr, &why)) {
		FUZZ_CHECK(!spec_range_ok(g, &hdr), "refused a valid range: %s", why);
		return false;
	}
	FUZZ_CHECK(spec_range_ok(g, &hdr), "took a range outside the volume");
	switch (hdr.type) {
	case CHORUS_MSG_HELLO:
	case CHORUS_MSG_HELLO_ACK:
	case CHORUS_MSG_AUTH:
	case CHORUS_MSG_AUTH_ACK:
		return false;	/* chorus_repl_recv(): unexpected */
	case CHORUS_MSG_STATE:
		return take_state(&hdr, payload, g, peer, ctl & 2);
	default:
		return true;
	}
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct fuzz_geom g;
	u32 peer;
	int i;
	u8 ctl;

	ctl = fuzz_u8(&in);
	fuzz_geom_take(&in, &g);
	peer = fuzz_u32(&in);
	for (i = 0; i < STREAM_MAX_MSGS; i++)
		if (!take_msg(&in, ctl, &g, peer))
			break;
	return 0;
}
