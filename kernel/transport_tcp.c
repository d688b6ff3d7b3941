// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the TCP transport.
 *
 * Kernel sockets with TCP_NODELAY. A message goes out under one hold of the
 * socket lock: the header with kernel_sendmsg_locked(), data pages with
 * kernel_sendpage_locked(), so bio pages are never copied (nvme-tcp sends
 * pages the same way). Each connection has a receive thread that reads a
 * header, checks it, reads the payload into fresh pages (16 per call) and
 * hands the message to chorus_conn_recv(), under a block plug flushed
 * whenever the socket is drained. The listener is a thread blocked in
 * accept; each accepted socket is handed to chorus_handshake_accepted() on
 * chorus_accept_wq.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/kthread.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <net/tcp.h>

#include <net/netlink.h>

#include "chorus.h"

static int chorus_tcp_addrlen(const struct sockaddr_storage *addr)
{
	return addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					     sizeof(struct sockaddr_in);
}

static int chorus_tcp_sockopts(struct socket *sock)
{
	tcp_sock_set_nodelay(sock->sk);
	sock->sk->sk_allocation = GFP_NOIO;
	sock->sk->sk_use_task_frag = false;
	return 0;
}

static int chorus_tcp_connect(struct chorus_conn *conn,
			      const struct sockaddr_storage *addr,
			      int timeout_ms)
{
	struct socket *sock;
	int ret;

	ret = sock_create_kern(&init_net, addr->ss_family, SOCK_STREAM,
			       IPPROTO_TCP, &sock);
	if (ret)
		return ret;
	chorus_tcp_sockopts(sock);
	sock->sk->sk_sndtimeo = msecs_to_jiffies(timeout_ms);
	ret = kernel_connect(sock, (struct sockaddr *)addr,
			     chorus_tcp_addrlen(addr), 0);
	if (ret) {
		sock_release(sock);
		return ret;
	}
	/* From now on a stuck peer is found by the heartbeat, not by send. */
	sock->sk->sk_sndtimeo = MAX_SCHEDULE_TIMEOUT;
	conn->sock = sock;
	return 0;
}

static int chorus_tcp_send_buf(struct sock *sk, const void *buf, size_t len,
			       int flags)
{
	struct kvec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = flags | MSG_NOSIGNAL };
	int ret;

	while (iov.iov_len) {
		ret = kernel_sendmsg_locked(sk, &msg, &iov, 1, iov.iov_len);
		if (ret <= 0)
			return ret ? ret : -ECONNRESET;
		iov.iov_base += ret;
		iov.iov_len -= ret;
	}
	return 0;
}

static int chorus_tcp_send_page(struct sock *sk, struct page *page,
				int offset, size_t len, int flags)
{
	int ret;

	flags |= MSG_NOSIGNAL;
	while (len) {
		/* Slab pages must not be referenced by the stack's skbs. */
		if (sendpage_ok(page))
			ret = kernel_sendpage_locked(sk, page, offset, len, flags);
		else
			ret = sock_no_sendpage_locked(sk, page, offset, len, flags);
		if (ret <= 0)
			return ret ? ret : -ECONNRESET;
		offset += ret;
		len -= ret;
	}
	return 0;
}

/*
 * Flags for a data page: one followed by more of the same message is not
 * pushed at all (nvme-tcp's MSG_SENDPAGE_NOTLAST); the last one of a
 * message with more messages behind it is pushed corked (MSG_MORE).
 */
static int chorus_tcp_piece_flags(bool left, bool batch)
{
	if (left)
		return MSG_MORE | MSG_SENDPAGE_NOTLAST;
	return batch ? MSG_MORE : 0;
}

static int chorus_tcp_send_data(struct sock *sk,
				const struct chorus_msg_data *data, bool batch)
{
	unsigned int i, left = data->len;
	struct req_iterator iter;
	struct bio_vec bv;
	int ret;

	if (data->rq) {
		rq_for_each_segment(bv, data->rq, iter) {
			left -= bv.bv_len;
			ret = chorus_tcp_send_page(sk, bv.bv_page, bv.bv_offset,
						   bv.bv_len,
						   chorus_tcp_piece_flags(left, batch));
			if (ret)
				return ret;
		}
		return 0;
	}
	for (i = 0; left; i++) {
		size_t n = min_t(size_t, left, PAGE_SIZE);

		left -= n;
		ret = chorus_tcp_send_page(sk, data->pages[i], 0, n,
					   chorus_tcp_piece_flags(left, batch));
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * A message goes out under one hold of the socket lock (the locked
 * variants of sendmsg and sendpage, as kTLS uses them): taking and
 * releasing it, and processing the backlog at each release, once per
 * message instead of once per page. A send that waits for buffer space
 * releases the lock while it waits (sk_stream_wait_memory()), so the
 * receive path and tcp_abort() are not held up.
 */
static int chorus_tcp_send(struct chorus_conn *conn,
			   const struct chorus_wire_hdr *hdr, const void *body,
			   const struct chorus_msg_data *data)
{
	struct sock *sk = conn->sock->sk;
	u32 body_len = body ? le32_to_cpu(hdr->payload_len) : 0;
	bool more = data && data->len;
	bool batch = data && data->more;
	int ret;

	lock_sock(sk);
	ret = chorus_tcp_send_buf(sk, hdr, sizeof(*hdr),
				  (body_len || more || batch) ? MSG_MORE : 0);
	if (!ret && body_len)
		ret = chorus_tcp_send_buf(sk, body, body_len,
					  (more || batch) ? MSG_MORE : 0);
	if (!ret && more)
		ret = chorus_tcp_send_data(sk, data, batch);
	release_sock(sk);
	return ret;
}

static int chorus_tcp_recv_buf(struct socket *sock, void *buf, size_t len)
{
	struct kvec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_WAITALL | MSG_NOSIGNAL };
	int ret;

	ret = kernel_recvmsg(sock, &msg, &iov, 1, len, msg.msg_flags);
	if (ret == len)
		return 0;
	if (ret < 0)
		return ret;
	return -ECONNRESET;
}

static int chorus_tcp_recv_sync(struct chorus_conn *conn,
				struct chorus_wire_hdr *hdr, void *body,
				size_t body_len, int timeout_ms)
{
	struct socket *sock = conn->sock;
	const char *why;
	u32 payload;
	int ret;

	sock->sk->sk_rcvtimeo = msecs_to_jiffies(timeout_ms);
	ret = chorus_tcp_recv_buf(sock, hdr, sizeof(*hdr));
	if (ret)
		return ret;
	if (chorus_wire_check_hdr(hdr, &why)) {
		pr_warn_ratelimited("handshake: malformed header: %s\n", why);
		return -EPROTO;
	}
	payload = le32_to_cpu(hdr->payload_len);
	if (payload > body_len)
		return -EPROTO;
	return payload ? chorus_tcp_recv_buf(sock, body, payload) : 0;
}

static int chorus_tcp_peer_addr(struct chorus_conn *conn,
				struct sockaddr_storage *ss)
{
	int ret;

	memset(ss, 0, sizeof(*ss));
	ret = kernel_getpeername(conn->sock, (struct sockaddr *)ss);
	return ret < 0 ? ret : 0;
}

/* Pages a payload is read into per call: a bvec array on the stack. */
#define CHORUS_TCP_RECV_PAGES	16

/* Read @len bytes into @pages, each full but the last, a batch per call. */
static int chorus_tcp_recv_pages(struct socket *sock, struct page **pages,
				 u32 len)
{
	struct bio_vec bvec[CHORUS_TCP_RECV_PAGES];
	struct msghdr msg = { .msg_flags = MSG_WAITALL | MSG_NOSIGNAL };
	unsigned int nr;
	size_t want;
	int ret;

	while (len) {
		want = 0;
		for (nr = 0; nr < CHORUS_TCP_RECV_PAGES && len > want; nr++) {
			size_t n = min_t(size_t, len - want, PAGE_SIZE);

			bvec_set_page(&bvec[nr], pages[nr], n, 0);
			want += n;
		}
		iov_iter_bvec(&msg.msg_iter, ITER_DEST, bvec, nr, want);
		ret = sock_recvmsg(sock, &msg, msg.msg_flags);
		if (ret != want)
			return ret < 0 ? ret : -ECONNRESET;
		pages += nr;
		len -= want;
	}
	return 0;
}

/*
 * Read a payload into pages of its own (recycled ones first, pages.c); on
 * success the caller owns them.
 */
static int chorus_tcp_recv_payload(struct socket *sock, u32 len,
				   struct page ***pagesp, unsigned int *nrp)
{
	unsigned int nr = DIV_ROUND_UP(len, PAGE_SIZE);
	struct page **pages;
	int ret;

	pages = chorus_pages_alloc(nr, GFP_NOIO);
	if (!pages)
		return -ENOMEM;
	ret = chorus_tcp_recv_pages(sock, pages, len);
	if (ret) {
		chorus_pages_free(pages, nr);
		return ret;
	}
	*pagesp = pages;
	*nrp = nr;
	return 0;
}

/*
 * The bios of messages that arrive together (a replica's writes) are
 * submitted under one plug, as DRBD's receiver does, and the plug is
 * flushed, from here, once the socket has nothing more to read: the backing
 * device gets them as one batch and completes them together, so that their
 * acks leave together too. (A plug flushed by schedule() would go out
 * through kblockd, a hop more.)
 */
static void chorus_tcp_unplug_if_drained(struct sock *sk,
					 struct blk_plug *plug)
{
	if (!skb_queue_empty_lockless(&sk->sk_receive_queue))
		return;
	blk_finish_plug(plug);
	blk_start_plug(plug);
}

static int chorus_tcp_rx_thread(void *data)
{
	struct chorus_conn *conn = data;
	struct chorus_peer *peer = conn->peer;
	struct socket *sock = conn->sock;
	struct chorus_wire_hdr hdr;
	const char *why = "connection closed";
	struct blk_plug plug;
	struct page **pages;
	unsigned int nr;
	u32 len;
	int ret;

	sock->sk->sk_rcvtimeo = MAX_SCHEDULE_TIMEOUT;
	blk_start_plug(&plug);
	while (!kthread_should_stop()) {
		chorus_tcp_unplug_if_drained(sock->sk, &plug);
		ret = chorus_tcp_recv_buf(sock, &hdr, sizeof(hdr));
		if (ret)
			break;
		if (chorus_wire_check_hdr(&hdr, &why)) {
			pr_warn_ratelimited("%s: peer %u: malformed message, bad %s; closing\n",
					    peer->vol->name, peer->node_id, why);
			break;
		}
		pages = NULL;
		nr = 0;
		len = le32_to_cpu(hdr.payload_len);
		if (len) {
			ret = chorus_tcp_recv_payload(sock, len, &pages, &nr);
			if (ret) {
				why = "connection closed";
				break;
			}
		}
		ret = chorus_conn_recv(conn, &hdr, pages, nr);
		if (ret) {
			why = "protocol error";
			break;
		}
		why = "connection closed";
	}
	blk_finish_plug(&plug);
	chorus_peer_fail(peer, conn->gen, why);
	chorus_wait_for_stop();
	return 0;
}

static int chorus_tcp_start_rx(struct chorus_conn *conn)
{
	struct task_struct *t;

	t = kthread_run(chorus_tcp_rx_thread, conn, "chorus-rx/%u.%d",
			conn->peer->node_id, conn->index);
	if (IS_ERR(t))
		return PTR_ERR(t);
	conn->rx_thread = t;
	return 0;
}

/*
 * A connection that ends sends nothing more: it is aborted (a RST), which
 * drops what is still queued or unacknowledged and fails every send and
 * receive blocked on it. A graceful shutdown would leave the socket
 * retransmitting until the teardown released it, and the orphan after
 * that: a forwarded write the access point has since failed could reach
 * the owner once the link is back, on a session the owner still takes for
 * current. What was sent before (a handshake refusal) is still read by the
 * other side, ahead of the reset.
 */
static void chorus_tcp_shutdown(struct chorus_conn *conn)
{
	if (conn->sock)
		tcp_abort(conn->sock->sk, ECONNABORTED);
}

static void chorus_tcp_stop_rx(struct chorus_conn *conn)
{
	if (conn->rx_thread) {
		kthread_stop(conn->rx_thread);
		conn->rx_thread = NULL;
	}
}

static void chorus_tcp_release(struct chorus_conn *conn)
{
	if (conn->sock) {
		sock_release(conn->sock);
		conn->sock = NULL;
	}
}

/*
 * The listener: one per node. chorus_listen_mutex protects the two
 * pointers; the accept thread only gets the socket. Accepted connections
 * shake hands on chorus_accept_wq, made at module init.
 */
static DEFINE_MUTEX(chorus_listen_mutex);
static struct socket *chorus_listen_sock;
static struct task_struct *chorus_listen_thread;
static struct workqueue_struct *chorus_accept_wq;

struct chorus_accept_work {
	struct work_struct work;
	struct chorus_conn *conn;
};

static void chorus_accept_workfn(struct work_struct *work)
{
	struct chorus_accept_work *aw =
		container_of(work, struct chorus_accept_work, work);

	if (chorus_handshake_accepted(aw->conn))
		chorus_conn_free(aw->conn);
	kfree(aw);
}

static int chorus_listen_threadfn(void *data)
{
	struct socket *lsock = data;
	struct chorus_accept_work *aw;
	struct socket *sock;
	int ret;

	while (!kthread_should_stop()) {
		ret = kernel_accept(lsock, &sock, 0);
		if (ret) {
			if (kthread_should_stop())
				break;
			if (ret == -EINVAL)	/* shut down */
				break;
			msleep(100);
			continue;
		}
		chorus_tcp_sockopts(sock);
		aw = kzalloc(sizeof(*aw), GFP_KERNEL);
		if (aw)
			aw->conn = chorus_conn_alloc(&chorus_tcp_ops);
		if (!aw || !aw->conn) {
			kfree(aw);
			sock_release(sock);
			continue;
		}
		aw->conn->sock = sock;
		INIT_WORK(&aw->work, chorus_accept_workfn);
		queue_work(chorus_accept_wq, &aw->work);
	}
	chorus_wait_for_stop();
	return 0;
}

/*
 * TCP's listen op: chorus_transports_listen() serialises it with unlisten
 * and refuses a second listener.
 */
static int chorus_tcp_listen(const struct sockaddr_storage *addr,
			     struct netlink_ext_ack *extack)
{
	struct task_struct *t;
	struct socket *sock;
	int ret;

	ret = sock_create_kern(&init_net, addr->ss_family, SOCK_STREAM,
			       IPPROTO_TCP, &sock);
	if (ret)
		return ret;
	sock_set_reuseaddr(sock->sk);
	ret = kernel_bind(sock, (struct sockaddr *)addr, chorus_tcp_addrlen(addr));
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot bind the listener to this address and port");
		goto release_sock;
	}
	ret = kernel_listen(sock, 64);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot listen on the socket");
		goto release_sock;
	}
	t = kthread_run(chorus_listen_threadfn, sock, "chorus-listen");
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		goto release_sock;
	}
	mutex_lock(&chorus_listen_mutex);
	chorus_listen_sock = sock;
	chorus_listen_thread = t;
	mutex_unlock(&chorus_listen_mutex);
	return 0;

release_sock:
	sock_release(sock);
	return ret;
}

/* Stop accepting; handshakes under way finish first. */
static void chorus_tcp_unlisten(void)
{
	mutex_lock(&chorus_listen_mutex);
	if (chorus_listen_sock) {
		kernel_sock_shutdown(chorus_listen_sock, SHUT_RDWR);
		kthread_stop(chorus_listen_thread);
		sock_release(chorus_listen_sock);
		chorus_listen_sock = NULL;
		chorus_listen_thread = NULL;
	}
	mutex_unlock(&chorus_listen_mutex);
	flush_workqueue(chorus_accept_wq);
}

static int chorus_tcp_init(void)
{
	chorus_accept_wq = alloc_workqueue("chorus_accept", 0, 0);
	return chorus_accept_wq ? 0 : -ENOMEM;
}

static void chorus_tcp_exit(void)
{
	destroy_workqueue(chorus_accept_wq);
}

const struct chorus_transport_ops chorus_tcp_ops = {
	.name		= "tcp",
	.transport	= CHORUS_TRANSPORT_TCP,
	.init		= chorus_tcp_init,
	.exit		= chorus_tcp_exit,
	.listen		= chorus_tcp_listen,
	.unlisten	= chorus_tcp_unlisten,
	.connect	= chorus_tcp_connect,
	.send		= chorus_tcp_send,
	.recv_sync	= chorus_tcp_recv_sync,
	.peer_addr	= chorus_tcp_peer_addr,
	.start_rx	= chorus_tcp_start_rx,
	.shutdown	= chorus_tcp_shutdown,
	.stop_rx	= chorus_tcp_stop_rx,
	.release	= chorus_tcp_release,
};
