/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: the replication wire protocol.
 *
 * Every message is a 64-byte little-endian header, optionally followed by
 * payload_len bytes. Documentation/wire-protocol.rst describes each type;
 * this header is the only definition of the layout. Every field of every
 * received message is checked (kernel/wire.c) before anything acts on it.
 */
#ifndef CHORUS_WIRE_H
#define CHORUS_WIRE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>

#define CHORUS_WIRE_MAGIC		0x524f4843U	/* "CHOR" */
#define CHORUS_WIRE_VERSION		1
#define CHORUS_WIRE_MAX_PAYLOAD		BIT(20)
#define CHORUS_WIRE_HDR_CRC_LEN		52

/**
 * enum chorus_msg_type - what a message is
 * @CHORUS_MSG_HELLO: first message on a connection, dialler to acceptor;
 *	payload &struct chorus_wire_hello
 * @CHORUS_MSG_HELLO_ACK: the acceptor's answer; status 0 or why it refused,
 *	payload &struct chorus_wire_hello
 * @CHORUS_MSG_WRITE: owner to replica: write len bytes at sector
 * @CHORUS_MSG_WRITE_ACK: replica to owner: the WRITE with this seq completed
 * @CHORUS_MSG_FLUSH: owner to replica: flush the volatile cache
 * @CHORUS_MSG_FLUSH_ACK: replica to owner: the FLUSH completed
 * @CHORUS_MSG_READ: access point to owner: read len bytes at sector for
 *	the access point's own block device (forwarding)
 * @CHORUS_MSG_READ_DATA: owner to access point: the data of the READ with
 *	this seq (len bytes of payload when status is OK, none otherwise)
 * @CHORUS_MSG_PING: heartbeat
 * @CHORUS_MSG_PONG: heartbeat answer
 * @CHORUS_MSG_RESYNC_DATA: owner to replica: one region of a resync
 * @CHORUS_MSG_RESYNC_ACK: replica to owner: the region is written
 * @CHORUS_MSG_VERIFY_REQ: owner to replica: compare a region with the
 *	crc32c in the 4-byte payload
 * @CHORUS_MSG_VERIFY_REPLY: replica to owner: status 0 or MISMATCH
 * @CHORUS_MSG_STATE: owner to replica: the owner's activity log, a
 *	&struct chorus_meta_al of CHORUS_META_BLOCK bytes, to keep until a new
 *	owner takes over
 * @CHORUS_MSG_NACK: reserved
 * @CHORUS_MSG_STATE_ACK: replica to owner: the STATE is on disk
 * @CHORUS_MSG_FWD_WRITE: access point to owner: a write (discard, write
 *	zeroes) submitted to the access point's block device, for the owner
 *	to apply as its own; flags and payload as WRITE
 * @CHORUS_MSG_FWD_WRITE_ACK: owner to access point: the FWD_WRITE with
 *	this seq completed on the whole write set (or why not)
 * @CHORUS_MSG_FWD_FLUSH: access point to owner: a flush of its block device
 * @CHORUS_MSG_FWD_FLUSH_ACK: owner to access point: the FWD_FLUSH completed
 * @CHORUS_MSG_REPLICA_READ: owner whose disk failed to an up-to-date member
 *	of its write set: read len bytes at sector from the replica's own disk;
 *	answered with READ_DATA
 * @CHORUS_MSG_AUTH: dialler to acceptor, after a HELLO_ACK that carried
 *	CHORUS_MSG_F_AUTH: the dialler's proof, &struct chorus_wire_auth
 * @CHORUS_MSG_AUTH_ACK: acceptor to dialler: status 0 when the proof is
 *	right and the connection joins the session, else why not
 * @__CHORUS_MSG_MAX: one past the last type, not a type
 */
enum chorus_msg_type {
	CHORUS_MSG_HELLO = 1,
	CHORUS_MSG_HELLO_ACK,
	CHORUS_MSG_WRITE,
	CHORUS_MSG_WRITE_ACK,
	CHORUS_MSG_FLUSH,
	CHORUS_MSG_FLUSH_ACK,
	CHORUS_MSG_READ,
	CHORUS_MSG_READ_DATA,
	CHORUS_MSG_PING,
	CHORUS_MSG_PONG,
	CHORUS_MSG_RESYNC_DATA,
	CHORUS_MSG_RESYNC_ACK,
	CHORUS_MSG_VERIFY_REQ,
	CHORUS_MSG_VERIFY_REPLY,
	CHORUS_MSG_STATE,
	CHORUS_MSG_NACK,
	CHORUS_MSG_STATE_ACK,
	CHORUS_MSG_FWD_WRITE,
	CHORUS_MSG_FWD_WRITE_ACK,
	CHORUS_MSG_FWD_FLUSH,
	CHORUS_MSG_FWD_FLUSH_ACK,
	CHORUS_MSG_REPLICA_READ,
	CHORUS_MSG_AUTH,
	CHORUS_MSG_AUTH_ACK,

	__CHORUS_MSG_MAX,
};

/* chorus_wire_hdr.flags */
#define CHORUS_MSG_F_FUA		BIT(0)	/* write through */
#define CHORUS_MSG_F_PAYLOAD_CRC	BIT(1)	/* payload_crc is set */
#define CHORUS_MSG_F_DISCARD		BIT(2)	/* WRITE: discard, no payload */
#define CHORUS_MSG_F_ZEROES		BIT(3)	/* WRITE: write zeroes, no payload */
/* HELLO, HELLO_ACK: &struct chorus_wire_hello_auth follows the hello */
#define CHORUS_MSG_F_AUTH		BIT(4)

/**
 * enum chorus_wire_status - outcome carried by acks and HELLO_ACK
 * @CHORUS_WIRE_OK: done
 * @CHORUS_WIRE_IO_ERROR: the replica's backing device failed the I/O
 * @CHORUS_WIRE_STALE_EPOCH: the epoch is older than the highest accepted
 * @CHORUS_WIRE_NOT_MEMBER: the receiver does not take this from the sender
 *	(for forwarded requests: the receiver is not the owner, or the session
 *	they came on is no longer its current one)
 * @CHORUS_WIRE_BAD_REQUEST: the request makes no sense to the receiver
 * @CHORUS_WIRE_MISMATCH: VERIFY_REPLY: the region differs
 * @CHORUS_WIRE_REFUSED: HELLO_ACK: uuid, size or block size differ, or
 *	both nodes are owner
 * @CHORUS_WIRE_DISK_FAILED: the replica's disk failed (an I/O error, or no
 *	completion within its disk timeout) and is detached: it applies,
 *	stores and compares nothing until a new disk is attached. Also in the
 *	PONG of a replica whose disk failed, so that its owner learns it
 *	while no write is in flight
 * @CHORUS_WIRE_AUTH_FAILED: HELLO_ACK, AUTH_ACK: one node has a peer
 *	secret and the other none, they share no secret, or a proof is wrong
 * @__CHORUS_WIRE_STATUS_MAX: one past the last status, not a status
 */
enum chorus_wire_status {
	CHORUS_WIRE_OK,
	CHORUS_WIRE_IO_ERROR,
	CHORUS_WIRE_STALE_EPOCH,
	CHORUS_WIRE_NOT_MEMBER,
	CHORUS_WIRE_BAD_REQUEST,
	CHORUS_WIRE_MISMATCH,
	CHORUS_WIRE_REFUSED,
	CHORUS_WIRE_DISK_FAILED,
	CHORUS_WIRE_AUTH_FAILED,

	__CHORUS_WIRE_STATUS_MAX,
};

/**
 * struct chorus_wire_hdr - header of every message
 * @magic: CHORUS_WIRE_MAGIC
 * @version: CHORUS_WIRE_VERSION
 * @type: &enum chorus_msg_type
 * @flags: CHORUS_MSG_F_*, only those the type allows
 * @payload_len: bytes following the header
 * @volume_id: reserved for multiplexing volumes; 0
 * @epoch: the owner's epoch (requests) or the epoch answered (acks)
 * @seq: the sender's id of a request; its ack echoes it
 * @sector: first 512-byte sector of the data concerned
 * @len: bytes of data concerned
 * @status: &enum chorus_wire_status, in acks
 * @payload_crc: crc32c of the payload when CHORUS_MSG_F_PAYLOAD_CRC is set
 * @hdr_crc: crc32c of the bytes before it
 * @reserved: zero
 */
struct chorus_wire_hdr {
	__le32 magic;
	__u8 version;
	__u8 type;
	__le16 flags;
	__le32 payload_len;
	__le32 volume_id;
	__le64 epoch;
	__le64 seq;
	__le64 sector;
	__le32 len;
	__le32 status;
	__le32 payload_crc;
	__le32 hdr_crc;
	__u8 reserved[8];
};

/* chorus_wire_hello.flags */
#define CHORUS_HELLO_F_OWNER		BIT(0)	/* the sender owns the volume */
#define CHORUS_HELLO_F_DISKLESS		BIT(1)	/* the sender has no replica */

/**
 * struct chorus_wire_hello - payload of HELLO and HELLO_ACK
 * @proto_min: lowest protocol version the sender speaks
 * @proto_max: highest protocol version the sender speaks
 * @conn_index: which connection of the session this is, from 0
 * @nr_conns: connections in the session
 * @node_id: the sender's node id
 * @peer_node_id: the node id the sender believes it talks to
 * @volume_uuid: the volume
 * @data_sectors: the volume's size in sectors
 * @block_size: the volume's logical block size
 * @flags: CHORUS_HELLO_F_*
 * @epoch: the sender's epoch: its own as owner, the highest accepted as
 *	replica
 * @session_id: random, chosen by the dialler for all connections of one
 *	session
 * @current_gen: the sender's data generation id
 * @incarnation: random, never 0, chosen when the sender's volume was
 *	created (never persisted): the same uuid and epoch created again is
 *	another incarnation, which a non-owner that follows the owner at that
 *	epoch refuses
 * @reserved: zero
 */
struct chorus_wire_hello {
	__le16 proto_min;
	__le16 proto_max;
	__le16 conn_index;
	__le16 nr_conns;
	__le32 node_id;
	__le32 peer_node_id;
	__u8 volume_uuid[16];
	__le64 data_sectors;
	__le32 block_size;
	__le32 flags;
	__le64 epoch;
	__le64 session_id;
	__le64 current_gen;
	__le64 incarnation;
	__u8 reserved[16];
};

#define CHORUS_AUTH_NONCE_LEN		32
#define CHORUS_AUTH_MAC_LEN		32	/* HMAC-SHA256 */
#define CHORUS_AUTH_MAX_KEYS		2	/* current and previous */

/**
 * struct chorus_wire_hello_auth - what HELLO and HELLO_ACK carry after the
 *	hello when their header has CHORUS_MSG_F_AUTH
 * @nonce: 32 random bytes, fresh for this connection
 * @key_ids: HELLO: the ids of the sender's secrets, current first, 0 for
 *	none; HELLO_ACK: the one the acceptor chose from them, then 0
 * @mac: HELLO: zero; HELLO_ACK: the acceptor's proof
 *	(Documentation/wire-protocol.rst, "Authentication")
 */
struct chorus_wire_hello_auth {
	__u8 nonce[CHORUS_AUTH_NONCE_LEN];
	__le64 key_ids[CHORUS_AUTH_MAX_KEYS];
	__u8 mac[CHORUS_AUTH_MAC_LEN];
};

/**
 * struct chorus_wire_hello_full - a HELLO or HELLO_ACK payload with its
 *	authentication part, as kept by the handshake
 * @hello: the hello
 * @auth: valid when the header had CHORUS_MSG_F_AUTH
 */
struct chorus_wire_hello_full {
	struct chorus_wire_hello hello;
	struct chorus_wire_hello_auth auth;
};

/**
 * struct chorus_wire_auth - payload of AUTH
 * @mac: the dialler's proof
 */
struct chorus_wire_auth {
	__u8 mac[CHORUS_AUTH_MAC_LEN];
};

static inline void chorus_wire_size_checks(void)
{
	BUILD_BUG_ON(sizeof(struct chorus_wire_hdr) != 64);
	BUILD_BUG_ON(offsetof(struct chorus_wire_hdr, hdr_crc) !=
		     CHORUS_WIRE_HDR_CRC_LEN);
	BUILD_BUG_ON(sizeof(struct chorus_wire_hello) != 96);
	BUILD_BUG_ON(offsetof(struct chorus_wire_hello, incarnation) != 72);
	BUILD_BUG_ON(sizeof(struct chorus_wire_hello_auth) != 80);
	BUILD_BUG_ON(sizeof(struct chorus_wire_hello_full) != 176);
	BUILD_BUG_ON(sizeof(struct chorus_wire_auth) != 32);
}

#endif /* CHORUS_WIRE_H */
