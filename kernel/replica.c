// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the replica's apply path.
 *
 * On a replica, chorus_replica_request() checks each request from the
 * owner against the volume and the epoch, applies it to the backing device
 * with the same flags (a bio per message, from the connection's receive
 * thread), and queues the answer once the backing device completed it;
 * the answers leave from chorus_reply_wq (conn.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/slab.h>

#include "chorus.h"

static void chorus_replica_endio(struct bio *bio)
{
	struct chorus_reply *reply = bio->bi_private;
	struct chorus_volume *vol = reply->conn->peer->vol;

	chorus_disk_io_end(vol, bio);
	/* A write the disk did not take fails the disk (disk.c). */
	if (bio->bi_status && bio->bi_status != BLK_STS_NOTSUPP)
		reply->hdr.status = cpu_to_le32(CHORUS_WIRE_DISK_FAILED);
	else if (bio->bi_status)
		reply->hdr.status = cpu_to_le32(CHORUS_WIRE_IO_ERROR);
	bio_put(bio);
	chorus_conn_reply(reply->conn, reply);
}

static struct chorus_reply *chorus_reply_new(struct chorus_conn *conn,
					     const struct chorus_wire_hdr *req,
					     u8 type, u32 status)
{
	struct chorus_reply *reply = kzalloc(sizeof(*reply), GFP_NOIO);

	if (!reply)
		return NULL;
	reply->conn = conn;
	chorus_wire_init_hdr(&reply->hdr, type, le64_to_cpu(req->epoch),
			     le64_to_cpu(req->seq), le64_to_cpu(req->sector),
			     le32_to_cpu(req->len));
	reply->hdr.status = cpu_to_le32(status);
	return reply;
}

static int chorus_replica_apply(struct chorus_conn *conn,
				const struct chorus_wire_hdr *hdr,
				struct page **pages, unsigned int nr_pages,
				u8 ack_type)
{
	struct chorus_peer *peer = conn->peer;
	struct chorus_volume *vol = peer->vol;
	u16 flags = le16_to_cpu(hdr->flags);
	u32 len = le32_to_cpu(hdr->len);
	struct chorus_reply *reply;
	blk_opf_t opf;
	struct bio *bio;
	unsigned int i;

	reply = chorus_reply_new(conn, hdr, ack_type, CHORUS_WIRE_OK);
	if (!reply) {
		chorus_pages_free(pages, nr_pages);
		return -ENOMEM;
	}
	reply->pages = pages;
	reply->nr_pages = nr_pages;
	reply->counted = true;
	atomic_inc(&peer->replica_inflight);

	if (hdr->type == CHORUS_MSG_FLUSH)
		opf = REQ_OP_WRITE | REQ_PREFLUSH | REQ_SYNC;
	else if (flags & CHORUS_MSG_F_DISCARD)
		opf = REQ_OP_DISCARD;
	else if (flags & CHORUS_MSG_F_ZEROES)
		opf = REQ_OP_WRITE_ZEROES;
	else
		opf = REQ_OP_WRITE | REQ_SYNC;
	/*
	 * A resynced region must be durable before the owner clears its bit
	 * and, at the end, calls the replica up to date.
	 */
	if ((flags & CHORUS_MSG_F_FUA) || hdr->type == CHORUS_MSG_RESYNC_DATA)
		opf |= REQ_FUA;

	bio = bio_alloc(vol->backing.bdev, nr_pages, opf, GFP_NOIO);
	bio->bi_iter.bi_sector = le64_to_cpu(hdr->sector);
	bio->bi_private = reply;
	bio->bi_end_io = chorus_replica_endio;
	if (nr_pages) {
		for (i = 0; i < nr_pages; i++) {
			unsigned int n = min_t(u32, len - i * PAGE_SIZE,
					       PAGE_SIZE);

			__bio_add_page(bio, pages[i], n, 0);
		}
	} else if (hdr->type != CHORUS_MSG_FLUSH) {
		bio->bi_iter.bi_size = len;
	}
	chorus_disk_io_start(vol);
	submit_bio(bio);
	return 0;
}

/**
 * chorus_replica_answer() - queue an answer without data to a request
 * @conn: the connection the request came on
 * @hdr: the request; epoch, seq, sector and len are echoed
 * @type: the answer's type
 * @status: &enum chorus_wire_status
 *
 * Context: process context.
 * Return: 0 or -ENOMEM (the session is closed).
 */
int chorus_replica_answer(struct chorus_conn *conn,
			  const struct chorus_wire_hdr *hdr, u8 type, u32 status)
{
	struct chorus_reply *reply = chorus_reply_new(conn, hdr, type, status);

	if (!reply)
		return -ENOMEM;
	chorus_conn_reply(conn, reply);
	return 0;
}

static u8 chorus_ack_type(u8 type)
{
	switch (type) {
	case CHORUS_MSG_WRITE:
		return CHORUS_MSG_WRITE_ACK;
	case CHORUS_MSG_FLUSH:
		return CHORUS_MSG_FLUSH_ACK;
	case CHORUS_MSG_RESYNC_DATA:
		return CHORUS_MSG_RESYNC_ACK;
	case CHORUS_MSG_STATE:
		return CHORUS_MSG_STATE_ACK;
	default:
		return CHORUS_MSG_VERIFY_REPLY;
	}
}

/**
 * chorus_replica_request() - a request from the owner, on a replica
 * @conn: the connection it came on
 * @hdr: WRITE, FLUSH, RESYNC_DATA, VERIFY_REQ or STATE, checked
 * @pages: its payload, owned by this function; NULL if none
 * @nr_pages: entries of @pages
 *
 * Checks who sends it and its epoch, then applies, verifies or stores it;
 * the answer is queued once that is done.
 * Context: the transport's receive context; may sleep.
 * Return: 0, or a negative errno that closes the session.
 */
int chorus_replica_request(struct chorus_conn *conn,
			   const struct chorus_wire_hdr *hdr,
			   struct page **pages, unsigned int nr_pages)
{
	struct chorus_peer *peer = conn->peer;
	struct chorus_volume *vol = peer->vol;
	u8 ack = chorus_ack_type(hdr->type);
	int ret;

	/* A diskless access point has nothing to write, verify or keep. */
	if (vol->diskless || READ_ONCE(vol->repl.role) != CHORUS_ROLE_REPLICA ||
	    !READ_ONCE(peer->peer_owner)) {
		chorus_pages_free(pages, nr_pages);
		return chorus_replica_answer(conn, hdr, ack, CHORUS_WIRE_NOT_MEMBER);
	}
	/* Detached: nothing is applied, stored or compared (disk.c). */
	if (chorus_disk_failed(vol)) {
		chorus_pages_free(pages, nr_pages);
		return chorus_replica_answer(conn, hdr, ack,
					     CHORUS_WIRE_DISK_FAILED);
	}
	ret = chorus_repl_accept_epoch(vol, le64_to_cpu(hdr->epoch));
	if (ret) {
		chorus_pages_free(pages, nr_pages);
		if (ret != -ESTALE)
			return chorus_replica_answer(conn, hdr, ack,
						     CHORUS_WIRE_IO_ERROR);
		this_cpu_inc(vol->stats->stale_epoch);
		pr_warn_ratelimited("%s: peer %u: refused a message of stale epoch %llu\n",
				    vol->name, peer->node_id,
				    le64_to_cpu(hdr->epoch));
		chorus_genl_notify_peer(vol, CHORUS_EVENT_STALE_EPOCH, peer,
					"message with a stale epoch refused");
		return chorus_replica_answer(conn, hdr, ack,
					     CHORUS_WIRE_STALE_EPOCH);
	}
	if (hdr->type == CHORUS_MSG_STATE)
		return chorus_al_store(conn, hdr, pages, nr_pages);
	if (hdr->type == CHORUS_MSG_VERIFY_REQ) {
		u32 crc = le32_to_cpu(*(__le32 *)page_address(pages[0]));

		chorus_pages_free(pages, nr_pages);
		return chorus_replica_verify(conn, hdr, crc);
	}
	return chorus_replica_apply(conn, hdr, pages, nr_pages, ack);
}
