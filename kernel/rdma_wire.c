// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: RDMA, checking what the peer sends.
 *
 * The checks of the RDMA framing (include/chorus/rdma_wire.h) on the CM
 * private data and on each filled receive buffer, before rdma_recv.c and
 * rdma_read.c take its pages or READ what it describes. Like wire.c, they
 * read only their arguments, so that tests/fuzz compiles this file as it is.
 * The reasons they give are the kernel log's ("malformed RDMA message, bad
 * <why>"), which the repl selftests look for.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <chorus/wire_check.h>

/**
 * chorus_rdma_check_cm_data() - check the other side's CM private data
 * @data: the private data, or NULL
 * @len: its length
 * @chunk: set to the payload bytes each of its receive buffers holds
 * @depth: set to the receive buffers it posted
 * @why: set to what is wrong, on error
 *
 * Return: 0, or -EPROTO when the version is not ours or the chunk size or
 * depth is out of range.
 */
int chorus_rdma_check_cm_data(const void *data, u8 len, u32 *chunk,
			      u32 *depth, const char **why)
{
	const struct chorus_rdma_cm_data *d = data;

	*why = "unknown private data (version)";
	if (!d || len < sizeof(*d) ||
	    le16_to_cpu(d->version) != CHORUS_RDMA_VERSION)
		return -EPROTO;
	*chunk = le32_to_cpu(d->chunk_size);
	*depth = le16_to_cpu(d->recv_depth);
	*why = "bad chunk size or depth";
	if (*chunk < PAGE_SIZE || *chunk > CHORUS_WIRE_MAX_PAYLOAD ||
	    *chunk % PAGE_SIZE || *depth < 2 ||
	    *depth > CHORUS_RDMA_CREDIT_MASK)
		return -EPROTO;
	*why = NULL;
	return 0;
}

/**
 * chorus_rdma_check_imm() - what a filled receive buffer holds
 * @imm: its immediate data
 * @byte_len: the bytes received into it
 * @in_msg: a message is being assembled from earlier buffers
 * @why: set to what is wrong, on error
 *
 * The first look at a buffer, before its header is read: the immediate
 * data's flags and the buffer's length for what they announce.
 *
 * Return: an &enum chorus_rdma_rx, or -EPROTO.
 */
int chorus_rdma_check_imm(u32 imm, u32 byte_len, bool in_msg,
			  const char **why)
{
	*why = "immediate data flags";
	if (imm & ~CHORUS_RDMA_IMM_KNOWN ||
	    (imm & CHORUS_RDMA_CREDIT_ONLY && imm & CHORUS_RDMA_READ))
		return -EPROTO;
	if (imm & CHORUS_RDMA_CREDIT_ONLY) {
		*why = "credit return with data";
		return byte_len ? -EPROTO : CHORUS_RDMA_RX_CREDIT;
	}
	*why = "length";
	if (byte_len < sizeof(struct chorus_wire_hdr))
		return -EPROTO;
	if (!(imm & CHORUS_RDMA_READ))
		return CHORUS_RDMA_RX_CHUNK;
	*why = "READ message inside a message";
	if (in_msg)
		return -EPROTO;
	*why = "READ descriptor length";
	if (byte_len != sizeof(struct chorus_wire_hdr) +
			sizeof(struct chorus_rdma_read_desc))
		return -EPROTO;
	return CHORUS_RDMA_RX_READ;
}

/**
 * chorus_rdma_check_chunk() - check one chunk of a message sent by SEND
 * @hdr: the header in the buffer
 * @n: the payload bytes in the buffer
 * @msg: the header of the message being assembled, NULL when @hdr starts
 *	one
 * @off: the payload bytes of @msg taken from earlier buffers
 * @why: set to what is wrong, on error
 *
 * A message's first chunk has its header checked as any message's; every
 * later one must repeat that header byte for byte. Every chunk but the last
 * is whole pages, so that the receiver hands each page on at the offset it
 * has in the payload, and none holds more than the rest of the payload.
 *
 * Return: 0, or -EPROTO.
 */
int chorus_rdma_check_chunk(const struct chorus_wire_hdr *hdr, u32 n,
			    const struct chorus_wire_hdr *msg, u32 off,
			    const char **why)
{
	u32 len;

	if (!msg) {
		if (chorus_wire_check_hdr(hdr, why))
			return -EPROTO;
		msg = hdr;
		off = 0;
	} else if (memcmp(hdr, msg, sizeof(*msg))) {
		*why = "chunk header (not the message being received)";
		return -EPROTO;
	}
	len = le32_to_cpu(msg->payload_len);
	*why = "chunk length";
	if (n > CHORUS_RDMA_CHUNK || n > len - off || (len && !n) ||
	    (off + n < len && n % PAGE_SIZE))
		return -EPROTO;
	*why = NULL;
	return 0;
}

/**
 * chorus_rdma_check_read() - check a READ message
 * @hdr: its header
 * @d: its descriptor
 * @why: set to what is wrong, on error
 *
 * Return: 0 when the header is a message's with a payload, of the length
 * the descriptor gives, and the descriptor names a key; -EPROTO otherwise.
 */
int chorus_rdma_check_read(const struct chorus_wire_hdr *hdr,
			   const struct chorus_rdma_read_desc *d,
			   const char **why)
{
	u32 len = le32_to_cpu(hdr->payload_len);

	if (chorus_wire_check_hdr(hdr, why))
		return -EPROTO;
	*why = "READ length";
	if (!len || len > CHORUS_WIRE_MAX_PAYLOAD || le32_to_cpu(d->len) != len)
		return -EPROTO;
	*why = "READ rkey";
	if (!le32_to_cpu(d->rkey))
		return -EPROTO;
	*why = NULL;
	return 0;
}
