// SPDX-License-Identifier: GPL-2.0
/*
 * The wire protocol as Documentation/wire-protocol.rst states it, written
 * out again from the page's tables rather than from kernel/wire.c: the
 * fuzzers compare the kernel's checks with these, both ways, so a check
 * that lets through what the page forbids, or refuses what it allows,
 * fails like a crash. Where the two disagree, one of them has a bug.
 */
#include "fuzz.h"

#define F_FUA	0x1
#define F_PCRC	0x2
#define F_DISC	0x4
#define F_ZERO	0x8
#define F_AUTH	0x10

enum spec_payload { P_NONE, P_HELLO, P_LEN, P_WRITE, P_READ_DATA, P_4, P_STATE,
		    P_AUTH };

/* The table "Message types": payload_len, range, flags allowed. */
static const struct {
	enum spec_payload payload;
	bool range;
	bool len0_ok;	/* WRITE_ACK and FWD_WRITE_ACK: len may be 0 */
	u16 flags;
} spec_types[25] = {
	[1] = { P_HELLO, false, false, F_AUTH },
	[2] = { P_HELLO, false, false, F_AUTH },
	[3] = { P_WRITE, true, false, F_FUA | F_PCRC | F_DISC | F_ZERO },
	[4] = { P_NONE, true, true },
	[5] = { P_NONE }, [6] = { P_NONE },
	[7] = { P_NONE, true },
	[8] = { P_READ_DATA, true, false, F_PCRC },
	[9] = { P_NONE }, [10] = { P_NONE },
	[11] = { P_LEN, true, false, F_PCRC },
	[12] = { P_NONE, true },
	[13] = { P_4, true },
	[14] = { P_NONE, true },
	[15] = { P_STATE },
	[17] = { P_NONE },
	[18] = { P_WRITE, true, false, F_FUA | F_PCRC | F_DISC | F_ZERO },
	[19] = { P_NONE, true, true },
	[20] = { P_NONE }, [21] = { P_NONE },
	[22] = { P_NONE, true },
	[23] = { P_AUTH }, [24] = { P_NONE },
};

/* CRC-32C as the page defines it: reflected 0x82f63b78, ~0 in and out. */
u32 spec_crc32c(const void *buf, size_t len)
{
	static u32 table[256];
	const u8 *p = buf;
	u32 crc = ~0U, c;
	int i, k;

	if (!table[128]) {
		for (i = 0; i < 256; i++) {
			for (c = i, k = 0; k < 8; k++)
				c = (c >> 1) ^ (0x82f63b78U & -(c & 1));
			table[i] = c;
		}
	}
	while (len--)
		crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xff];
	return ~crc;
}

bool spec_type_known(u8 type)
{
	return type >= 1 && type <= 24 && type != 16;
}

bool spec_type_has_range(u8 type)
{
	return spec_type_known(type) && spec_types[type].range;
}

static u32 spec_payload_len(const struct chorus_wire_hdr *hdr)
{
	u16 flags = le16_to_cpu(hdr->flags);
	u32 len = le32_to_cpu(hdr->len);

	switch (spec_types[hdr->type].payload) {
	case P_HELLO:
		return flags & F_AUTH ? 96 + 80 : 96;
	case P_AUTH:
		return 32;
	case P_LEN:
		return len;
	case P_WRITE:
		return flags & (F_DISC | F_ZERO) ? 0 : len;
	case P_READ_DATA:
		return le32_to_cpu(hdr->status) == 0 ? len : 0;
	case P_4:
		return 4;
	case P_STATE:
		return 4096;
	default:
		return 0;
	}
}

bool spec_hdr_ok(const struct chorus_wire_hdr *hdr)
{
	static const u8 zero[8];
	u16 flags = le16_to_cpu(hdr->flags);
	u32 len = le32_to_cpu(hdr->len);

	if (le32_to_cpu(hdr->magic) != 0x524f4843U || hdr->version != 1 ||
	    le32_to_cpu(hdr->hdr_crc) != spec_crc32c(hdr, 52))
		return false;
	if (!spec_type_known(hdr->type))
		return false;
	if (flags & ~spec_types[hdr->type].flags)
		return false;
	if ((flags & F_DISC) && (flags & F_ZERO))
		return false;
	if ((flags & (F_DISC | F_ZERO)) && (flags & F_PCRC))
		return false;
	if (hdr->volume_id || le32_to_cpu(hdr->status) >= 9 ||
	    memcmp(hdr->reserved, zero, sizeof(zero)) || len > (1U << 20))
		return false;
	if (le32_to_cpu(hdr->payload_len) != spec_payload_len(hdr))
		return false;
	if (!(flags & F_PCRC) && hdr->payload_crc)
		return false;
	if (!spec_types[hdr->type].range)
		return !hdr->sector && !len;
	return len || spec_types[hdr->type].len0_ok;
}

/* "the range must lie inside the volume, aligned to its block size" */
bool spec_range_ok(const struct fuzz_geom *g, const struct chorus_wire_hdr *hdr)
{
	u64 sector = le64_to_cpu(hdr->sector);
	u32 len = le32_to_cpu(hdr->len);
	/* The byte offsets, without the kernel's care for overflow. */
	unsigned __int128 end = (unsigned __int128)sector * 512 + len;

	if (!spec_type_has_range(hdr->type))
		return true;
	return !(len % g->block_size) && !((sector * 512) % g->block_size) &&
	       sector < g->nr_sectors &&
	       end <= (unsigned __int128)g->nr_sectors * 512;
}

/*
 * "Handshake checks" 1-7: the HELLO is well formed and names this volume
 * and node. A refusal of these comes before any epoch check.
 */
static bool spec_hello_matches(const struct chorus_wire_hello *h,
			       const struct chorus_wire_hello_want *want)
{
	static const u8 zero[16];
	u32 flags = le32_to_cpu(h->flags);
	bool owner = flags & 1, diskless = flags & 2;

	return !(le16_to_cpu(h->proto_min) > 1 || le16_to_cpu(h->proto_max) < 1 ||
		 (flags & ~3U) || (owner && diskless) || !h->incarnation ||
		 memcmp(h->reserved, zero, sizeof(zero)) ||
		 diskless != want->peer_diskless ||
		 le32_to_cpu(h->node_id) != want->peer_node_id ||
		 le32_to_cpu(h->peer_node_id) != want->node_id ||
		 memcmp(h->volume_uuid, want->volume_uuid, 16) ||
		 le64_to_cpu(h->data_sectors) != want->data_sectors ||
		 le32_to_cpu(h->block_size) != want->block_size ||
		 le16_to_cpu(h->nr_conns) != want->nr_conns ||
		 le16_to_cpu(h->conn_index) >= want->nr_conns);
}

u32 spec_hello_status(const struct chorus_wire_hello *h,
		      const struct chorus_wire_hello_want *want)
{
	bool owner = le32_to_cpu(h->flags) & 1;
	u64 epoch = le64_to_cpu(h->epoch);

	if (!spec_hello_matches(h, want))
		return CHORUS_WIRE_REFUSED;
	/* 8a: the other owner at a lower epoch is stale; 8b, 8: refused */
	if (owner && want->we_own)
		return epoch < want->epoch ? CHORUS_WIRE_STALE_EPOCH :
					     CHORUS_WIRE_REFUSED;
	if (owner && epoch < want->highest_epoch)
		return CHORUS_WIRE_STALE_EPOCH;
	/* 9a: one incarnation of the owner per epoch, on a non-owner */
	if (owner && !want->we_own && want->owner_incarnation &&
	    epoch == want->owner_epoch &&
	    le64_to_cpu(h->incarnation) != want->owner_incarnation)
		return CHORUS_WIRE_STALE_EPOCH;
	if (want->we_own && !owner && epoch > want->epoch)
		return CHORUS_WIRE_STALE_EPOCH;
	return CHORUS_WIRE_OK;
}

/* 8b: the peer owns at an epoch above this owner's and the highest. */
bool spec_hello_supersedes(const struct chorus_wire_hello *h,
			   const struct chorus_wire_hello_want *want)
{
	u64 epoch = le64_to_cpu(h->epoch);

	return spec_hello_matches(h, want) && want->we_own &&
	       (le32_to_cpu(h->flags) & 1) && epoch > want->epoch &&
	       epoch >= want->highest_epoch;
}

/*
 * "Authentication": a HELLO's part has a nonzero nonce, a first id that is
 * not 0, a second that is 0 or another, no proof; a HELLO_ACK's a nonzero
 * nonce, one id, then 0.
 */
bool spec_hello_auth_ok(const struct chorus_wire_hello_auth *a, u8 type)
{
	static const u8 zero[32];
	u64 id0 = le64_to_cpu(a->key_ids[0]), id1 = le64_to_cpu(a->key_ids[1]);

	if (!memcmp(a->nonce, zero, 32) || !id0)
		return false;
	if (type == CHORUS_MSG_HELLO)
		return id1 != id0 && !memcmp(a->mac, zero, 32);
	return !id1;
}

/* "STATE payload" */
bool spec_state_ok(const struct chorus_meta_al *b, u64 epoch, u64 nr_extents,
		   u32 owner_node)
{
	static const u8 zero[60];
	u32 i, nr = le32_to_cpu(b->nr_extents);

	if (le64_to_cpu(b->magic) != 0x4c4153555248434fULL ||
	    le32_to_cpu(b->crc) != spec_crc32c(b, 4092) || nr > 1000 ||
	    le64_to_cpu(b->epoch) != epoch ||
	    le32_to_cpu(b->owner_node) != owner_node ||
	    memcmp(b->reserved, zero, sizeof(zero)))
		return false;
	for (i = 0; i < nr; i++)
		if (le32_to_cpu(b->extents[i]) >= nr_extents)
			return false;
	return true;
}

void fuzz_geom_take(struct fuzz_in *in, struct fuzz_geom *g)
{
	u32 bs = 512U << (fuzz_u8(in) % 4);
	/* Below 2^64 bytes, as the size the kernel is given in bytes. */
	u64 blocks = fuzz_u64(in) % (1ULL << 46);

	g->block_size = bs;
	g->nr_sectors = (blocks ? blocks : 1) * (bs / 512);
	g->al_shift = 21 + fuzz_u8(in) % 10 - 9;
	g->al_extents = FUZZ_DIV_ROUND_UP(g->nr_sectors, 1ULL << g->al_shift);
}

/*
 * What the code after chorus_wire_check_hdr() takes for granted: the
 * payload fits one bio (replica.c), VERIFY_REQ has its 4-byte crc and
 * STATE a whole activity-log block (replica.c, actlog.c), a write's data is
 * its len (replica.c adds len bytes of pages), READ_DATA's too (forward.c).
 */
void fuzz_check_accepted_hdr(const struct chorus_wire_hdr *hdr)
{
	u32 payload = le32_to_cpu(hdr->payload_len);
	u32 len = le32_to_cpu(hdr->len);
	u16 flags = le16_to_cpu(hdr->flags);

	FUZZ_CHECK(spec_type_known(hdr->type), "type %u", hdr->type);
	FUZZ_CHECK(payload <= CHORUS_WIRE_MAX_PAYLOAD, "payload_len %u", payload);
	FUZZ_CHECK(FUZZ_DIV_ROUND_UP(payload, FUZZ_PAGE_SIZE) <= FUZZ_BIO_MAX_VECS,
		   "payload_len %u: more pages than a bio takes", payload);
	FUZZ_CHECK(len <= CHORUS_WIRE_MAX_PAYLOAD, "len %u", len);
	FUZZ_CHECK(le32_to_cpu(hdr->status) < __CHORUS_WIRE_STATUS_MAX,
		   "status %u", le32_to_cpu(hdr->status));
	switch (hdr->type) {
	case CHORUS_MSG_WRITE:
	case CHORUS_MSG_FWD_WRITE:
		FUZZ_CHECK(len, "a write of 0 bytes");
		FUZZ_CHECK(payload == ((flags & (CHORUS_MSG_F_DISCARD |
						 CHORUS_MSG_F_ZEROES)) ? 0 : len),
			   "write: payload_len %u, len %u, flags %#x",
			   payload, len, flags);
		break;
	case CHORUS_MSG_RESYNC_DATA:
		FUZZ_CHECK(len && payload == len, "resync: %u, %u", payload, len);
		break;
	case CHORUS_MSG_READ_DATA:
		FUZZ_CHECK(payload == (hdr->status ? 0 : len), "read data");
		break;
	case CHORUS_MSG_VERIFY_REQ:
		FUZZ_CHECK(payload == sizeof(__le32), "verify: %u", payload);
		break;
	case CHORUS_MSG_STATE:
		FUZZ_CHECK(payload == sizeof(struct chorus_meta_al) &&
			   payload == FUZZ_PAGE_SIZE, "state: %u", payload);
		break;
	case CHORUS_MSG_HELLO:
	case CHORUS_MSG_HELLO_ACK:
		FUZZ_CHECK(payload == ((flags & CHORUS_MSG_F_AUTH) ?
				       sizeof(struct chorus_wire_hello_full) :
				       sizeof(struct chorus_wire_hello)), "hello");
		break;
	case CHORUS_MSG_AUTH:
		FUZZ_CHECK(payload == sizeof(struct chorus_wire_auth), "auth");
		break;
	default:
		FUZZ_CHECK(!payload, "type %u with a payload", hdr->type);
	}
}
