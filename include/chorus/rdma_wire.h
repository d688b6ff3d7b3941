/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: what the RDMA transport adds to the
 * wire protocol: the CM private data, the immediate data of every SEND and
 * the descriptor of a message to READ. kernel/rdma_wire.c checks what is
 * received; kernel/rdma_send.c explains the chunks.
 */
#ifndef CHORUS_RDMA_WIRE_H
#define CHORUS_RDMA_WIRE_H

#include <linux/bits.h>
#include <linux/types.h>

#define CHORUS_RDMA_VERSION	2		/* 2: the READ path */
#define CHORUS_RDMA_CHUNK	(64 * 1024)	/* payload bytes per receive */
#define CHORUS_RDMA_CREDIT_ONLY	BIT(31)		/* imm: no message */
#define CHORUS_RDMA_READ	BIT(30)		/* imm: data to READ */
#define CHORUS_RDMA_DONE_SHIFT	16		/* imm: READs done */
#define CHORUS_RDMA_DONE_MASK	0xff
#define CHORUS_RDMA_CREDIT_MASK	0xffff		/* imm: credits returned */
#define CHORUS_RDMA_IMM_KNOWN	(CHORUS_RDMA_CREDIT_ONLY | CHORUS_RDMA_READ | \
				 (CHORUS_RDMA_DONE_MASK << CHORUS_RDMA_DONE_SHIFT) | \
				 CHORUS_RDMA_CREDIT_MASK)

/**
 * struct chorus_rdma_read_desc - what a READ message carries after its
 * header, little endian
 * @addr: the data's address in the sender's MR
 * @rkey: the MR's remote key
 * @len: data bytes, equal to the header's payload_len
 */
struct chorus_rdma_read_desc {
	__le64 addr;
	__le32 rkey;
	__le32 len;
};

/**
 * struct chorus_rdma_cm_data - private data of a connect request and of
 * its accept, little endian
 * @version: %CHORUS_RDMA_VERSION
 * @recv_depth: receive buffers the sender posted: the other side's credits
 * @chunk_size: payload bytes each of them holds, a multiple of 4096
 * @reserved: zero
 */
struct chorus_rdma_cm_data {
	__le16 version;
	__le16 recv_depth;
	__le32 chunk_size;
	__le32 reserved[2];
};

#endif /* CHORUS_RDMA_WIRE_H */
