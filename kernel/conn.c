// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: connections.
 *
 * A connection is one transport connection (struct chorus_conn, its
 * transport's ops behind it) of a peer's session. This file sends on it
 * (chorus_conn_send()), queues replies sent from process context, receives
 * (chorus_conn_recv(): checks each message, then hands it to the
 * replication layer) and frees it. The session that owns the connections
 * is in session.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32c.h>
#include <linux/kthread.h>
#include <linux/slab.h>

#include "chorus.h"

/* Connections and replies. */

static void chorus_reply_free(struct chorus_reply *reply)
{
	struct chorus_peer *peer = reply->conn->peer;

	chorus_pages_free(reply->pages, reply->nr_pages);
	if (reply->counted &&
	    atomic_dec_and_test(&peer->replica_inflight))
		wake_up_all(&peer->replica_wait);
	kfree(reply);
}

/**
 * chorus_conn_send_replies() - send the connection's queued replies in order
 * @conn: the connection
 * @budget: send at most this many
 * @nowait: leave the rest for later when the socket is full, instead of
 *	waiting for room
 *
 * All but the last of those taken together go out with "more", so the acks
 * of writes that completed together share segments. A reply that finds the
 * socket full (@nowait) stays first in line (chorus_conn.reply_next) for the
 * next call: the transport calls again once the socket has room. A reply whose
 * send failed is dropped; the failure fails the session.
 *
 * Context: process context; may sleep (for another sender of the
 * connection, not for buffer space).
 * Return: how many replies were sent or dropped.
 */
int chorus_conn_send_replies(struct chorus_conn *conn, unsigned int budget,
			     bool nowait)
{
	struct chorus_msg_data data = { .nowait = nowait };
	struct chorus_reply *reply;
	struct llist_node *node;
	int done = 0;

	mutex_lock(&conn->reply_mutex);
	while (done < budget) {
		if (!conn->reply_next)
			WRITE_ONCE(conn->reply_next,
				   llist_reverse_order(llist_del_all(&conn->replies)));
		node = conn->reply_next;
		if (!node)
			break;
		reply = llist_entry(node, struct chorus_reply, node);
		data.more = node->next && done + 1 < budget;
		if (chorus_conn_send(conn, &reply->hdr, NULL, &data) == -EAGAIN)
			break;
		WRITE_ONCE(conn->reply_next, node->next);
		chorus_reply_free(reply);
		done++;
	}
	mutex_unlock(&conn->reply_mutex);
	return done;
}

/*
 * The replies of a transport that does not send them itself, and of any
 * connection once its receive context stopped: these wait for room (acks to
 * an owner that stopped reading fail with the session).
 */
static void chorus_conn_reply_workfn(struct work_struct *work)
{
	struct chorus_conn *conn =
		container_of(work, struct chorus_conn, reply_work);

	chorus_conn_send_replies(conn, UINT_MAX, false);
}

/**
 * chorus_conn_stop_rx() - stop receiving; replies leave from the reply work
 * @conn: the connection, shut down
 *
 * Replies the transport's receive context held back (a full socket) and
 * those of writes still on the backing device are sent, or dropped on the
 * shut-down connection, by chorus_conn.reply_work from now on.
 * Context: process context; may sleep.
 */
void chorus_conn_stop_rx(struct chorus_conn *conn)
{
	conn->ops->stop_rx(conn);
	queue_work(chorus_reply_wq, &conn->reply_work);
}

/**
 * chorus_conn_reply() - send a reply from process context
 * @conn: the connection the request came on
 * @reply: the reply, freed once sent
 *
 * Context: any, including hard irq (bio completion).
 */
void chorus_conn_reply(struct chorus_conn *conn, struct chorus_reply *reply)
{
	llist_add(&reply->node, &conn->replies);
	if (!conn->ops->kick_replies || !conn->ops->kick_replies(conn))
		queue_work(chorus_reply_wq, &conn->reply_work);
}

struct chorus_conn *chorus_conn_alloc(const struct chorus_transport_ops *ops)
{
	struct chorus_conn *conn = kzalloc(sizeof(*conn), GFP_KERNEL);

	if (!conn)
		return NULL;
	conn->ops = ops;
	mutex_init(&conn->send_mutex);
	mutex_init(&conn->reply_mutex);
	init_llist_head(&conn->replies);
	INIT_WORK(&conn->reply_work, chorus_conn_reply_workfn);
	return conn;
}

/**
 * chorus_conn_free() - close and free a connection that has no receiver
 * running and no replies pending
 * @conn: the connection
 */
void chorus_conn_free(struct chorus_conn *conn)
{
	if (!conn)
		return;
	conn->ops->shutdown(conn);
	conn->ops->stop_rx(conn);
	conn->ops->release(conn);
	mutex_destroy(&conn->reply_mutex);
	mutex_destroy(&conn->send_mutex);
	kfree(conn);
}

/* CRC-32C of a request's data, the bytes a WRITE or FWD_WRITE carries. */
static u32 chorus_rq_crc(struct request *rq)
{
	struct req_iterator iter;
	struct bio_vec bv;
	u32 crc = ~0U;

	rq_for_each_segment(bv, rq, iter) {
		void *p = bvec_kmap_local(&bv);

		crc = crc32c(crc, p, bv.bv_len);
		kunmap_local(p);
	}
	return ~crc;
}

/* CRC-32C of @len bytes in @pages, each full but the last. */
static u32 chorus_pages_crc(struct page **pages, unsigned int len)
{
	unsigned int i, n;
	u32 crc = ~0U;

	for (i = 0; len; i++, len -= n) {
		n = min_t(unsigned int, len, PAGE_SIZE);
		crc = crc32c(crc, page_address(pages[i]), n);
	}
	return ~crc;
}

/*
 * With the volume's payload_crc on, a message whose type may carry it gets
 * the CRC-32C of its data. The data cannot change until the message is
 * answered: the volume's queue asks for stable pages (dev.c), and resync
 * and read buffers are the sender's own.
 */
static void chorus_conn_set_crc(struct chorus_conn *conn,
				struct chorus_wire_hdr *hdr,
				const struct chorus_msg_data *data)
{
	u32 crc;

	if (!data || !data->len || !conn->peer ||
	    !READ_ONCE(conn->peer->vol->repl.payload_crc) ||
	    !chorus_wire_type_may_crc(hdr->type))
		return;
	crc = data->rq ? chorus_rq_crc(data->rq) :
			 chorus_pages_crc(data->pages, data->len);
	hdr->flags |= cpu_to_le16(CHORUS_MSG_F_PAYLOAD_CRC);
	hdr->payload_crc = cpu_to_le32(crc);
}

/**
 * chorus_conn_send() - seal a header and send it with its payload
 * @conn: the connection
 * @hdr: the header; its crc is computed here, and its payload's when the
 *	volume's payload_crc is on and the type may carry one
 * @body: small payload of le32_to_cpu(hdr->payload_len) bytes, or NULL
 * @data: data pages, or NULL
 *
 * Context: process context; may sleep.
 * Return: 0 or a negative errno.
 */
int chorus_conn_send(struct chorus_conn *conn, struct chorus_wire_hdr *hdr,
		     const void *body, const struct chorus_msg_data *data)
{
	int ret;

	chorus_conn_set_crc(conn, hdr, data);
	chorus_wire_seal(hdr);
	mutex_lock(&conn->send_mutex);
	ret = conn->ops->send(conn, hdr, body, data);
	mutex_unlock(&conn->send_mutex);
	if (!ret && conn->peer) {
		struct chorus_path_stats *path =
			&conn->peer->paths[chorus_path_index(conn->ops->transport)];

		atomic64_inc(&path->msgs_sent);
		if (data)
			atomic64_add(data->len, &path->bytes_sent);
	}
	return ret;
}

/**
 * chorus_conn_recv_atomic() - act on a message where it arrives, if it can be
 * @conn: the connection it came on, part of an established session
 * @hdr: a message of a header only, checked by chorus_wire_check_hdr()
 *
 * The transport's completion offers each message of a header only here
 * first. An owner's OK acks qualify (chorus_repl_ack_atomic()): acting on
 * them where they arrive spares the receive thread's wake-up per write.
 * Context: any (the RDMA receive completion, softirq).
 * Return: true when done with @hdr; false to hand it to chorus_conn_recv()
 * from the receive thread, as any message.
 */
bool chorus_conn_recv_atomic(struct chorus_conn *conn,
			     const struct chorus_wire_hdr *hdr)
{
	struct chorus_peer *peer = conn->peer;
	const char *why;

	if (hdr->payload_len || le16_to_cpu(hdr->flags) & CHORUS_MSG_F_PAYLOAD_CRC ||
	    chorus_wire_check_range(peer->vol->nr_sectors, peer->vol->block_size,
				    hdr, &why))
		return false;
	if (!chorus_repl_ack_atomic(peer, hdr))
		return false;
	WRITE_ONCE(conn->last_rx, jiffies);
	return true;
}

/**
 * chorus_conn_recv() - act on one received message
 * @conn: the connection it came on, part of an established session
 * @hdr: the header, already checked by chorus_wire_check_hdr()
 * @pages: the payload, owned by this function from now on; NULL if none
 * @nr_pages: entries of @pages
 *
 * Checks the message against the volume and its payload crc, then hands it
 * to chorus_repl_recv().
 * Context: the transport's receive context; may sleep.
 * Return: 0, or a negative errno that closes the session.
 */
int chorus_conn_recv(struct chorus_conn *conn, const struct chorus_wire_hdr *hdr,
		     struct page **pages, unsigned int nr_pages)
{
	struct chorus_peer *peer = conn->peer;
	const char *why;

	WRITE_ONCE(conn->last_rx, jiffies);
	if (chorus_wire_check_range(peer->vol->nr_sectors, peer->vol->block_size,
				    hdr, &why)) {
		pr_warn_ratelimited("%s: peer %u: message out of range, bad %s; closing\n",
				    peer->vol->name, peer->node_id, why);
		goto proto;
	}
	if (le16_to_cpu(hdr->flags) & CHORUS_MSG_F_PAYLOAD_CRC) {
		u32 len = le32_to_cpu(hdr->payload_len);

		/* A crc over nothing, or over pages the transport did not fill. */
		if (!len || !pages || nr_pages != DIV_ROUND_UP(len, PAGE_SIZE)) {
			pr_warn_ratelimited("%s: peer %u: payload_crc without its payload; closing\n",
					    peer->vol->name, peer->node_id);
			goto proto;
		}
		if (chorus_pages_crc(pages, len) != le32_to_cpu(hdr->payload_crc)) {
			this_cpu_inc(peer->vol->stats->payload_crc_errors);
			pr_warn_ratelimited("%s: peer %u: bad payload_crc; closing\n",
					    peer->vol->name, peer->node_id);
			goto proto;
		}
		this_cpu_inc(peer->vol->stats->payload_crc_checked);
	}

	return chorus_repl_recv(conn, hdr, pages, nr_pages);

proto:
	if (pages)
		chorus_pages_free(pages, nr_pages);
	return -EPROTO;
}

/**
 * chorus_wait_for_stop() - a kthread whose work is over waits to be reaped
 *
 * Context: a kthread that kthread_stop() will stop.
 */
void chorus_wait_for_stop(void)
{
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
}
