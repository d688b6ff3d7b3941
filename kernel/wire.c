// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: building and checking wire messages.
 *
 * chorus_wire_check_hdr() is the first thing that looks at a received
 * header: it checks every field that can be checked without knowing the
 * connection's state. The receiver then checks the range against its
 * volume and the seq against what it sent.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32c.h>
#include <linux/string.h>

#include "chorus.h"

/* Flags each type may carry. */
static const u16 chorus_wire_type_flags[__CHORUS_MSG_MAX] = {
	[CHORUS_MSG_WRITE]	 = CHORUS_MSG_F_FUA | CHORUS_MSG_F_PAYLOAD_CRC |
				   CHORUS_MSG_F_DISCARD | CHORUS_MSG_F_ZEROES,
	[CHORUS_MSG_FWD_WRITE]	 = CHORUS_MSG_F_FUA | CHORUS_MSG_F_PAYLOAD_CRC |
				   CHORUS_MSG_F_DISCARD | CHORUS_MSG_F_ZEROES,
	[CHORUS_MSG_RESYNC_DATA] = CHORUS_MSG_F_PAYLOAD_CRC,
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
		return sizeof(struct chorus_wire_hello);
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
 * @vol: the volume the connection serves
 * @hdr: a header that passed chorus_wire_check_hdr()
 * @why: set to the name of the field found wrong
 *
 * Return: 0 when sector and len lie inside @vol, block aligned.
 */
int chorus_wire_check_range(struct chorus_volume *vol,
			    const struct chorus_wire_hdr *hdr, const char **why)
{
	u64 sector = le64_to_cpu(hdr->sector);
	u32 len = le32_to_cpu(hdr->len);
	u32 bs_sectors = vol->block_size >> SECTOR_SHIFT;

	*why = NULL;
	if (!chorus_wire_type_has_range(hdr->type))
		return 0;
	if (len % vol->block_size)
		*why = "len";
	else if (sector % bs_sectors)
		*why = "sector";
	else if (sector >= vol->nr_sectors ||
		 (len >> SECTOR_SHIFT) > vol->nr_sectors - sector)
		*why = "sector";
	return *why ? -EPROTO : 0;
}
