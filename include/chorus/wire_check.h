/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: the checks of received wire messages.
 *
 * Each check here looks at bytes from the network and at nothing else than
 * its arguments: no volume, peer or queue. That keeps them in two small
 * files (kernel/wire.c, kernel/rdma_wire.c) that the fuzzers in tests/fuzz
 * compile as they are, in userspace, with a few stand-in kernel headers.
 * The receive paths call them before anything acts on a message.
 */
#ifndef CHORUS_WIRE_CHECK_H
#define CHORUS_WIRE_CHECK_H

#include <linux/types.h>
#include <chorus/rdma_wire.h>
#include <chorus/wire.h>
#include <uapi/linux/chorus_meta.h>

/**
 * struct chorus_wire_hello_want - what a HELLO or HELLO_ACK must say
 * @node_id: this node's id, the sender's peer_node_id
 * @peer_node_id: the id of the peer the connection is with, the sender's
 *	node_id
 * @volume_uuid: the volume's uuid, in the byte order of uuid_t
 * @data_sectors: the volume's size in sectors
 * @block_size: the volume's logical block size
 * @nr_conns: connections in a session with that peer, 1..CHORUS_MAX_CONNS
 * @peer_diskless: the peer was added as a diskless access point
 * @we_own: this node owns the volume
 * @epoch: this node's epoch: its own as owner, the highest accepted as
 *	replica
 * @highest_epoch: the highest epoch this node has accepted, as on disk
 * @owner_epoch: on a non-owner, the epoch of the owner it last followed
 *	(chorus_repl.owner_epoch), 0 for none
 * @owner_incarnation: that owner's incarnation, 0 for none
 */
struct chorus_wire_hello_want {
	u32 node_id;
	u32 peer_node_id;
	u8 volume_uuid[16];
	u64 data_sectors;
	u32 block_size;
	u16 nr_conns;
	bool peer_diskless;
	bool we_own;
	u64 epoch;
	u64 highest_epoch;
	u64 owner_epoch;
	u64 owner_incarnation;
};

/* What chorus_rdma_check_imm() found a receive buffer to hold. */
enum chorus_rdma_rx {
	CHORUS_RDMA_RX_CREDIT,	/* credits only, no message */
	CHORUS_RDMA_RX_CHUNK,	/* a header and a chunk of its payload */
	CHORUS_RDMA_RX_READ,	/* a header and a READ descriptor */
};

/* wire.c */
void chorus_wire_init_hdr(struct chorus_wire_hdr *hdr, u8 type, u64 epoch,
			  u64 seq, u64 sector, u32 len);
void chorus_wire_seal(struct chorus_wire_hdr *hdr);
bool chorus_wire_type_may_crc(u8 type);
int chorus_wire_check_hdr(const struct chorus_wire_hdr *hdr,
			  const char **why);
int chorus_wire_check_range(u64 nr_sectors, u32 block_size,
			    const struct chorus_wire_hdr *hdr, const char **why);
u32 chorus_wire_check_hello(const struct chorus_wire_hello *h,
			    const struct chorus_wire_hello_want *want,
			    const char **why);
bool chorus_wire_hello_supersedes(const struct chorus_wire_hello *h,
				  const struct chorus_wire_hello_want *want);
int chorus_wire_check_hello_auth(const struct chorus_wire_hello_auth *a,
				 u8 type, const char **why);
bool chorus_al_block_valid(const struct chorus_meta_al *b, u64 nr_extents);
int chorus_wire_check_state(const struct chorus_meta_al *b,
			    const struct chorus_wire_hdr *hdr, u64 nr_extents,
			    u32 owner_node);

/* rdma_wire.c */
int chorus_rdma_check_cm_data(const void *data, u8 len, u32 *chunk,
			      u32 *depth, const char **why);
int chorus_rdma_check_imm(u32 imm, u32 byte_len, bool in_msg,
			  const char **why);
int chorus_rdma_check_chunk(const struct chorus_wire_hdr *hdr, u32 n,
			    const struct chorus_wire_hdr *msg, u32 off,
			    const char **why);
int chorus_rdma_check_read(const struct chorus_wire_hdr *hdr,
			   const struct chorus_rdma_read_desc *d,
			   const char **why);

#endif /* CHORUS_WIRE_CHECK_H */
