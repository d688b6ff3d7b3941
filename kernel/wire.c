// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: building and checking wire messages.
 *
 * chorus_wire_check_hdr() is the first thing that looks at a received
 * header: it checks every field that can be checked without knowing the
 * connection's state. The receiver then checks the range against its
 * volume and the seq against what it sent. The payloads that are more
 * than data, HELLO's and STATE's, are checked here too.
 *
 * Nothing here reads a volume or a peer: the callers pass what a check
 * compares with, so that tests/fuzz compiles this file as it is
 * (include/chorus/wire_check.h).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk_types.h>
#include <linux/crc32c.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <chorus/wire_check.h>

/* Flags each type may carry. */
static const u16 chorus_wire_type_flags[__CHORUS_MSG_MAX] = {
	[CHORUS_MSG_WRITE]	 = CHORUS_MSG_F_FUA | CHORUS_MSG_F_PAYLOAD_CRC |
				   CHORUS_MSG_F_DISCARD | CHORUS_MSG_F_ZEROES,
	[CHORUS_MSG_FWD_WRITE]	 = CHORUS_MSG_F_FUA | CHORUS_MSG_F_PAYLOAD_CRC |
				   CHORUS_MSG_F_DISCARD | CHORUS_MSG_F_ZEROES,
	[CHORUS_MSG_RESYNC_DATA] = CHORUS_MSG_F_PAYLOAD_CRC,
	[CHORUS_MSG_READ_DATA]	 = CHORUS_MSG_F_PAYLOAD_CRC,
	[CHORUS_MSG_HELLO]	 = CHORUS_MSG_F_AUTH,
	[CHORUS_MSG_HELLO_ACK]	 = CHORUS_MSG_F_AUTH,
};

/**
 * chorus_wire_init_hdr() - fill a header to send
 * @hdr: the header
 * @type: &enum chorus_msg_type
 * @epoch: epoch to stamp
 * @seq: request id
 * @sector: first sector concerned
 * @len: bytes concerned
 *
 * Flags, payload length and status start at zero; chorus_wire_seal()
 * computes the crc once the caller has set them.
 */
void chorus_wire_init_hdr(struct chorus_wire_hdr *hdr, u8 type, u64 epoch,
			  u64 seq, u64 sector, u32 len)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = cpu_to_le32(CHORUS_WIRE_MAGIC);
	hdr->version = CHORUS_WIRE_VERSION;
	hdr->type = type;
	hdr->epoch = cpu_to_le64(epoch);
	hdr->seq = cpu_to_le64(seq);
	hdr->sector = cpu_to_le64(sector);
	hdr->len = cpu_to_le32(len);
}

/**
 * chorus_wire_type_may_crc() - whether a message type may carry a payload crc
 * @type: &enum chorus_msg_type
 *
 * Return: true for the types whose data %CHORUS_MSG_F_PAYLOAD_CRC covers.
 */
bool chorus_wire_type_may_crc(u8 type)
{
	return type < __CHORUS_MSG_MAX &&
	       (chorus_wire_type_flags[type] & CHORUS_MSG_F_PAYLOAD_CRC);
}

void chorus_wire_seal(struct chorus_wire_hdr *hdr)
{
	chorus_wire_size_checks();
	hdr->hdr_crc = cpu_to_le32(~crc32c(~0U, hdr, CHORUS_WIRE_HDR_CRC_LEN));
}

static u32 chorus_wire_payload_len(const struct chorus_wire_hdr *hdr)
{
	u16 flags = le16_to_cpu(hdr->flags);

	switch (hdr->type) {
	case CHORUS_MSG_HELLO:
	case CHORUS_MSG_HELLO_ACK:
		if (flags & CHORUS_MSG_F_AUTH)
			return sizeof(struct chorus_wire_hello_full);
		return sizeof(struct chorus_wire_hello);
	case CHORUS_MSG_AUTH:
		return sizeof(struct chorus_wire_auth);
	case CHORUS_MSG_WRITE:
	case CHORUS_MSG_FWD_WRITE:
		if (flags & (CHORUS_MSG_F_DISCARD | CHORUS_MSG_F_ZEROES))
			return 0;
		return le32_to_cpu(hdr->len);
	case CHORUS_MSG_READ_DATA:
		if (le32_to_cpu(hdr->status) != CHORUS_WIRE_OK)
			return 0;
		return le32_to_cpu(hdr->len);
	case CHORUS_MSG_RESYNC_DATA:
		return le32_to_cpu(hdr->len);
	case CHORUS_MSG_VERIFY_REQ:
		return sizeof(__le32);
	case CHORUS_MSG_STATE:
		return CHORUS_META_BLOCK;
	default:
		return 0;
	}
}

static bool chorus_wire_type_has_range(u8 type)
{
	switch (type) {
	case CHORUS_MSG_WRITE:
	case CHORUS_MSG_WRITE_ACK:
	case CHORUS_MSG_READ:
	case CHORUS_MSG_REPLICA_READ:
	case CHORUS_MSG_READ_DATA:
	case CHORUS_MSG_RESYNC_DATA:
	case CHORUS_MSG_RESYNC_ACK:
	case CHORUS_MSG_VERIFY_REQ:
	case CHORUS_MSG_VERIFY_REPLY:
	case CHORUS_MSG_FWD_WRITE:
	case CHORUS_MSG_FWD_WRITE_ACK:
		return true;
	default:
		return false;
	}
}

/**
 * chorus_wire_check_hdr() - check a received header on its own
 * @hdr: the header as received
 * @why: set to the name of the first field found wrong
 *
 * Checks magic, version, type, the flags the type allows, the payload
 * length the type and length imply, the status range, the crc and the
 * reserved bytes.
 *
 * Return: 0 when the header is well formed, -EPROTO otherwise.
 */
int chorus_wire_check_hdr(const struct chorus_wire_hdr *hdr, const char **why)
{
	u16 flags = le16_to_cpu(hdr->flags);
	u32 len = le32_to_cpu(hdr->len);

	*why = NULL;
	if (le32_to_cpu(hdr->magic) != CHORUS_WIRE_MAGIC)
		*why = "magic";
	else if (le32_to_cpu(hdr->hdr_crc) !=
		 ~crc32c(~0U, hdr, CHORUS_WIRE_HDR_CRC_LEN))
		*why = "hdr_crc";
	else if (hdr->version != CHORUS_WIRE_VERSION)
		*why = "version";
	else if (!hdr->type || hdr->type >= __CHORUS_MSG_MAX ||
		 hdr->type == CHORUS_MSG_NACK)
		*why = "type";
	else if (flags & ~chorus_wire_type_flags[hdr->type])
		*why = "flags";
	else if ((flags & CHORUS_MSG_F_DISCARD) && (flags & CHORUS_MSG_F_ZEROES))
		*why = "flags";
	else if ((flags & (CHORUS_MSG_F_DISCARD | CHORUS_MSG_F_ZEROES)) &&
		 (flags & CHORUS_MSG_F_PAYLOAD_CRC))
		*why = "flags";
	else if (le32_to_cpu(hdr->volume_id))
		*why = "volume_id";
	else if (le32_to_cpu(hdr->status) >= __CHORUS_WIRE_STATUS_MAX)
		*why = "status";
	else if (memchr_inv(hdr->reserved, 0, sizeof(hdr->reserved)))
		*why = "reserved";
	else if (len > CHORUS_WIRE_MAX_PAYLOAD)
		*why = "len";
	else if (le32_to_cpu(hdr->payload_len) != chorus_wire_payload_len(hdr))
		*why = "payload_len";
	else if (!(flags & CHORUS_MSG_F_PAYLOAD_CRC) && hdr->payload_crc)
		*why = "payload_crc";
	else if (!chorus_wire_type_has_range(hdr->type) &&
		 (hdr->sector || len))
		*why = "sector";
	else if (chorus_wire_type_has_range(hdr->type) && !len &&
		 hdr->type != CHORUS_MSG_WRITE_ACK &&
		 hdr->type != CHORUS_MSG_FWD_WRITE_ACK)
		*why = "len";
	return *why ? -EPROTO : 0;
}

/**
 * chorus_wire_check_range() - check a header's range against a volume
 * @nr_sectors: the volume's size in sectors
 * @block_size: its logical block size, a power of 2 from 512
 * @hdr: a header that passed chorus_wire_check_hdr()
 * @why: set to the name of the field found wrong
 *
 * Return: 0 when sector and len lie inside the volume, block aligned.
 */
int chorus_wire_check_range(u64 nr_sectors, u32 block_size,
			    const struct chorus_wire_hdr *hdr, const char **why)
{
	u64 sector = le64_to_cpu(hdr->sector);
	u32 len = le32_to_cpu(hdr->len);
	u32 bs_sectors = block_size >> SECTOR_SHIFT;

	*why = NULL;
	if (!chorus_wire_type_has_range(hdr->type))
		return 0;
	if (len % block_size)
		*why = "len";
	else if (sector % bs_sectors)
		*why = "sector";
	else if (sector >= nr_sectors ||
		 (len >> SECTOR_SHIFT) > nr_sectors - sector)
		*why = "sector";
	return *why ? -EPROTO : 0;
}

/* The checks of a HELLO that need nothing of the receiver. */
static const char *chorus_wire_hello_malformed(const struct chorus_wire_hello *h)
{
	u32 flags = le32_to_cpu(h->flags);

	if (le16_to_cpu(h->proto_min) > CHORUS_WIRE_VERSION ||
	    le16_to_cpu(h->proto_max) < CHORUS_WIRE_VERSION)
		return "no common protocol version";
	if (flags & ~(CHORUS_HELLO_F_OWNER | CHORUS_HELLO_F_DISKLESS) ||
	    ((flags & CHORUS_HELLO_F_OWNER) && (flags & CHORUS_HELLO_F_DISKLESS)) ||
	    !h->incarnation || memchr_inv(h->reserved, 0, sizeof(h->reserved)))
		return "malformed handshake";
	return NULL;
}

/* The checks of a HELLO against what this node knows of the peer. */
static const char *chorus_wire_hello_mismatch(const struct chorus_wire_hello *h,
					      const struct chorus_wire_hello_want *want)
{
	u32 flags = le32_to_cpu(h->flags);
	bool diskless = flags & CHORUS_HELLO_F_DISKLESS;

	if (diskless != want->peer_diskless)
		return diskless ? "peer is diskless, but was added with a replica" :
				  "peer has a replica, but was added as diskless";
	if (le32_to_cpu(h->node_id) != want->peer_node_id ||
	    le32_to_cpu(h->peer_node_id) != want->node_id)
		return "node ids do not match";
	if (memcmp(h->volume_uuid, want->volume_uuid, sizeof(h->volume_uuid)))
		return "volume uuid differs";
	if (le64_to_cpu(h->data_sectors) != want->data_sectors)
		return "volume size differs";
	if (le32_to_cpu(h->block_size) != want->block_size)
		return "block size differs";
	if (le16_to_cpu(h->nr_conns) != want->nr_conns ||
	    le16_to_cpu(h->conn_index) >= want->nr_conns)
		return "connection count differs";
	return NULL;
}

/*
 * Check 8: both nodes are owner. The lower epoch is the stale one (8a); a
 * peer owning at a higher epoch (8b) is refused too, but is the evidence
 * chorus_wire_hello_supersedes() looks for.
 */
static u32 chorus_wire_hello_two_owners(u64 epoch,
					const struct chorus_wire_hello_want *want,
					const char **why)
{
	if (epoch < want->epoch) {
		*why = "peer is owner at a stale epoch";
		return CHORUS_WIRE_STALE_EPOCH;
	}
	*why = epoch > want->epoch ? "peer owns at a higher epoch" :
				     "both nodes are owner";
	return CHORUS_WIRE_REFUSED;
}

/**
 * chorus_wire_check_hello() - check a peer's HELLO or HELLO_ACK
 * @h: the payload as received
 * @want: what this node expects of the peer
 * @why: set to the reason when it refuses, else NULL
 *
 * Documentation/wire-protocol.rst lists the checks, in this order.
 *
 * Return: the &enum chorus_wire_status to answer: CHORUS_WIRE_OK,
 * CHORUS_WIRE_REFUSED or CHORUS_WIRE_STALE_EPOCH.
 */
u32 chorus_wire_check_hello(const struct chorus_wire_hello *h,
			    const struct chorus_wire_hello_want *want,
			    const char **why)
{
	bool they_own = le32_to_cpu(h->flags) & CHORUS_HELLO_F_OWNER;
	u64 epoch = le64_to_cpu(h->epoch);

	*why = chorus_wire_hello_malformed(h);
	if (!*why)
		*why = chorus_wire_hello_mismatch(h, want);
	if (*why)
		return CHORUS_WIRE_REFUSED;
	if (they_own && want->we_own)
		return chorus_wire_hello_two_owners(epoch, want, why);

	if (they_own && epoch < want->highest_epoch) {
		*why = "peer is owner at a stale epoch";
		return CHORUS_WIRE_STALE_EPOCH;
	}
	if (they_own && !want->we_own && want->owner_incarnation &&
	    epoch == want->owner_epoch &&
	    le64_to_cpu(h->incarnation) != want->owner_incarnation) {
		*why = "peer is another incarnation of the owner at the same epoch";
		return CHORUS_WIRE_STALE_EPOCH;
	}
	if (want->we_own && !they_own && epoch > want->epoch) {
		*why = "peer accepted a higher epoch than ours";
		return CHORUS_WIRE_STALE_EPOCH;
	}
	return CHORUS_WIRE_OK;
}

/**
 * chorus_wire_hello_supersedes() - whether a HELLO or HELLO_ACK says that
 *	the peer owns the volume at an epoch above this owner's
 * @h: the payload as received
 * @want: what this node expects of the peer; it is the owner
 *
 * That is check 8b: the peer passes every other check, says it is the
 * owner, and at an epoch above @want->epoch and at least
 * @want->highest_epoch. Whether to believe it (a proof, a lease past its
 * deadline) is the caller's to decide.
 *
 * Return: true when it does.
 */
bool chorus_wire_hello_supersedes(const struct chorus_wire_hello *h,
				  const struct chorus_wire_hello_want *want)
{
	u64 epoch = le64_to_cpu(h->epoch);

	if (!want->we_own || !(le32_to_cpu(h->flags) & CHORUS_HELLO_F_OWNER) ||
	    chorus_wire_hello_malformed(h) || chorus_wire_hello_mismatch(h, want))
		return false;
	return epoch > want->epoch && epoch >= want->highest_epoch;
}

/**
 * chorus_wire_check_hello_auth() - check the authentication part of a
 *	HELLO or HELLO_ACK on its own
 * @a: the part as received (the header had CHORUS_MSG_F_AUTH)
 * @type: CHORUS_MSG_HELLO or CHORUS_MSG_HELLO_ACK
 * @why: set to the reason when it is malformed, else NULL
 *
 * A HELLO offers one or two secrets by id, the first nonzero, the second
 * 0 or another, and carries no proof; a HELLO_ACK names one id and proves
 * with it. The proof itself is checked by the handshake (auth.c), which
 * knows the secrets.
 *
 * Return: 0, or -EPROTO when @a is malformed.
 */
int chorus_wire_check_hello_auth(const struct chorus_wire_hello_auth *a,
				 u8 type, const char **why)
{
	u64 first = le64_to_cpu(a->key_ids[0]);
	u64 second = le64_to_cpu(a->key_ids[1]);

	*why = NULL;
	if (!memchr_inv(a->nonce, 0, sizeof(a->nonce)))
		*why = "authentication nonce is zero";
	else if (!first)
		*why = "no secret id offered";
	else if (type == CHORUS_MSG_HELLO && second == first)
		*why = "the same secret id offered twice";
	else if (type == CHORUS_MSG_HELLO &&
		 memchr_inv(a->mac, 0, sizeof(a->mac)))
		*why = "HELLO carries a proof";
	else if (type == CHORUS_MSG_HELLO_ACK && second)
		*why = "HELLO_ACK names two secrets";
	return *why ? -EPROTO : 0;
}

/**
 * chorus_al_block_valid() - whether an activity-log block is one
 * @b: the block, read from disk or received in a STATE
 * @nr_extents: the volume's number of activity-log extents
 *
 * Return: true when magic and crc are right and every extent it lists is
 * one of the volume's.
 */
bool chorus_al_block_valid(const struct chorus_meta_al *b, u64 nr_extents)
{
	u32 i, nr = le32_to_cpu(b->nr_extents);

	if (le64_to_cpu(b->magic) != CHORUS_META_AL_MAGIC ||
	    le32_to_cpu(b->crc) !=
	    ~crc32c(~0U, b, offsetof(struct chorus_meta_al, crc)) ||
	    nr > CHORUS_META_AL_MAX_EXTENTS)
		return false;
	for (i = 0; i < nr; i++)
		if (le32_to_cpu(b->extents[i]) >= nr_extents)
			return false;
	return true;
}

/**
 * chorus_wire_check_state() - check a STATE's payload
 * @b: the payload, CHORUS_META_BLOCK bytes
 * @hdr: the STATE's header, checked
 * @nr_extents: the volume's number of activity-log extents
 * @owner_node: the node id of the peer the session is with
 *
 * Return: 0 when @b is a valid activity-log block of that owner at the
 * header's epoch, -EPROTO otherwise.
 */
int chorus_wire_check_state(const struct chorus_meta_al *b,
			    const struct chorus_wire_hdr *hdr, u64 nr_extents,
			    u32 owner_node)
{
	if (!chorus_al_block_valid(b, nr_extents) ||
	    le32_to_cpu(b->owner_node) != owner_node ||
	    le64_to_cpu(b->epoch) != le64_to_cpu(hdr->epoch) ||
	    memchr_inv(b->reserved, 0, sizeof(b->reserved)))
		return -EPROTO;
	return 0;
}
