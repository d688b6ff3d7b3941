// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_rdma: the RDMA transport's framing. First the peer's CM private
 * data (chorus_rdma_take_cm_data()); then a sequence of filled receive
 * buffers, each taken as chorus_rdma_take() and chorus_rdma_take_read()
 * do: the immediate data and length checked, then either a chunk of a
 * message sent by SEND, assembled into the message's page array, or a READ
 * message's descriptor. The harness keeps the assembly's state and checks
 * that every page a chunk hands on lands inside the message's array,
 * exactly once, and that what completes is a message the header check
 * accepts.
 *
 * Input: a control byte (bit 0: seal each header), the private data's
 * length and 16 bytes, then per buffer: the immediate data, the byte
 * count (at most what a posted buffer holds), the header, and for a READ
 * its descriptor. Payload bytes are not in the input: only their count
 * matters to the framing.
 */
#include "fuzz.h"

#define RDMA_MAX_BUFS	64
#define RDMA_BUF_MAX	(sizeof(struct chorus_wire_hdr) + CHORUS_RDMA_CHUNK)
#define RDMA_CHUNK_PAGES (CHORUS_RDMA_CHUNK / FUZZ_PAGE_SIZE)
#define RDMA_MSG_PAGES	(CHORUS_WIRE_MAX_PAYLOAD / FUZZ_PAGE_SIZE)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_selftest();
	return 0;
}

/* The message being assembled: chorus_rdma_queue.msg_*. */
struct rdma_asm {
	bool active;
	struct chorus_wire_hdr hdr;
	u32 off;
	u32 nr;
	u8 filled[RDMA_MSG_PAGES];
};

static void take_cm(struct fuzz_in *in)
{
	struct chorus_rdma_cm_data d;
	u8 len = fuzz_u8(in);
	u32 chunk, depth;
	const char *why;

	fuzz_take(in, &d, sizeof(d));
	if (chorus_rdma_check_cm_data(len & 0x80 ? NULL : &d, len & 0x7f,
				      &chunk, &depth, &why))
		return;
	FUZZ_CHECK(chunk >= FUZZ_PAGE_SIZE && !(chunk % FUZZ_PAGE_SIZE) &&
		   chunk <= CHORUS_WIRE_MAX_PAYLOAD, "chunk size %u", chunk);
	FUZZ_CHECK(depth >= 2 && depth <= CHORUS_RDMA_CREDIT_MASK, "depth %u",
		   depth);
}

static void msg_done(struct rdma_asm *a)
{
	const char *why;
	u32 i;

	FUZZ_CHECK(!chorus_wire_check_hdr(&a->hdr, &why),
		   "assembled a message whose header is bad: %s", why);
	fuzz_check_accepted_hdr(&a->hdr);
	for (i = 0; i < a->nr; i++)
		FUZZ_CHECK(a->filled[i] == 1, "page %u of %u filled %u times",
			   i, a->nr, a->filled[i]);
	memset(a, 0, sizeof(*a));
}

/* chorus_rdma_take_read(): a message whose data the receiver READs. */
static bool take_read(struct fuzz_in *in, struct rdma_asm *a,
		      const struct chorus_wire_hdr *hdr)
{
	struct chorus_rdma_read_desc d;
	const char *why;
	u32 len;

	fuzz_take(in, &d, sizeof(d));
	if (chorus_rdma_check_read(hdr, &d, &why))
		return false;
	len = le32_to_cpu(hdr->payload_len);
	FUZZ_CHECK(len && len <= CHORUS_WIRE_MAX_PAYLOAD &&
		   le32_to_cpu(d.len) == len, "READ of %u bytes", len);
	/* chorus_rdma_read_msg() maps the pages into CHORUS_RDMA_READ_SG */
	FUZZ_CHECK(FUZZ_DIV_ROUND_UP(len, FUZZ_PAGE_SIZE) <= RDMA_MSG_PAGES,
		   "READ of %u bytes", len);
	a->hdr = *hdr;
	a->nr = FUZZ_DIV_ROUND_UP(len, FUZZ_PAGE_SIZE);
	memset(a->filled, 1, a->nr);
	msg_done(a);
	return true;
}

/* chorus_rdma_take(): one chunk of a message sent by SEND. */
static bool take_chunk(struct rdma_asm *a, const struct chorus_wire_hdr *hdr,
		       u32 n)
{
	const char *why;
	u32 len, k, i;

	if (chorus_rdma_check_chunk(hdr, n, a->active ? &a->hdr : NULL, a->off,
				    &why))
		return false;
	if (!a->active) {
		a->active = true;
		a->hdr = *hdr;
		a->off = 0;
		a->nr = FUZZ_DIV_ROUND_UP(le32_to_cpu(hdr->payload_len),
					  FUZZ_PAGE_SIZE);
		FUZZ_CHECK(a->nr <= RDMA_MSG_PAGES, "%u pages", a->nr);
	}
	len = le32_to_cpu(a->hdr.payload_len);
	k = FUZZ_DIV_ROUND_UP(n, FUZZ_PAGE_SIZE);
	/* the buffer's pages, and the slots of q->msg_pages they go to */
	FUZZ_CHECK(k <= RDMA_CHUNK_PAGES, "a chunk of %u pages", k);
	FUZZ_CHECK(!(a->off % FUZZ_PAGE_SIZE), "chunk at offset %u", a->off);
	FUZZ_CHECK(a->off / FUZZ_PAGE_SIZE + k <= a->nr,
		   "pages %u..%u of a %u-page message", a->off / FUZZ_PAGE_SIZE,
		   a->off / FUZZ_PAGE_SIZE + k, a->nr);
	for (i = 0; i < k; i++)
		a->filled[a->off / FUZZ_PAGE_SIZE + i]++;
	a->off += n;
	FUZZ_CHECK(a->off <= len, "assembled %u of %u bytes", a->off, len);
	if (a->off == len)
		msg_done(a);
	return true;
}

static bool take_buf(struct fuzz_in *in, u8 ctl, struct rdma_asm *a)
{
	struct chorus_wire_hdr hdr;
	u32 imm, byte_len;
	const char *why;
	int kind;

	if (!in->n)
		return false;
	imm = fuzz_u32(in);
	byte_len = fuzz_u32(in) % (RDMA_BUF_MAX + 1);
	kind = chorus_rdma_check_imm(imm, byte_len, a->active, &why);
	if (kind < 0)
		return false;
	FUZZ_CHECK(kind == CHORUS_RDMA_RX_CREDIT || byte_len >= sizeof(hdr),
		   "kind %d with %u bytes", kind, byte_len);
	if (kind == CHORUS_RDMA_RX_CREDIT)
		return true;
	fuzz_take(in, &hdr, sizeof(hdr));
	if (ctl & 1)
		chorus_wire_seal(&hdr);
	if (kind == CHORUS_RDMA_RX_READ) {
		FUZZ_CHECK(!a->active && byte_len == sizeof(hdr) +
			   sizeof(struct chorus_rdma_read_desc), "READ buffer");
		return take_read(in, a, &hdr);
	}
	FUZZ_CHECK(kind == CHORUS_RDMA_RX_CHUNK, "kind %d", kind);
	return take_chunk(a, &hdr, byte_len - sizeof(hdr));
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	static struct rdma_asm a;
	int i;
	u8 ctl;

	memset(&a, 0, sizeof(a));
	ctl = fuzz_u8(&in);
	take_cm(&in);
	for (i = 0; i < RDMA_MAX_BUFS; i++)
		if (!take_buf(&in, ctl, &a))
			break;
	return 0;
}
