// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the TCP transport.
 *
 * Kernel sockets with TCP_NODELAY. A message goes out under one hold of the
 * socket lock: the header with kernel_sendmsg_locked(), data pages with
 * kernel_sendpage_locked(), so bio pages are never copied (nvme-tcp sends
 * pages the same way). Once the handshake is over, each connection's
 * socket callbacks queue its io work (nvmet-tcp's shape): it reads what the
 * socket has without waiting, keeps a message read in part for its next
 * run, hands each whole one to chorus_conn_recv() under a block plug, and
 * sends the connection's replies while the socket has room. The listener
 * is a thread blocked in accept; each accepted socket is handed to
 * chorus_handshake_accepted() on chorus_accept_wq.
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
 * Whether a message can start without waiting for buffer space. When it
 * cannot, SOCK_NOSPACE makes TCP call sk_write_space once the peer's acks
 * free room (tcp_check_space()), as a send that found no room does; the
 * socket lock held, those acks wait in the backlog until release_sock().
 */
static bool chorus_tcp_has_room(struct sock *sk)
{
	if (sk_stream_memory_free(sk))
		return true;
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	return false;
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
	if (data && data->nowait && !chorus_tcp_has_room(sk)) {
		release_sock(sk);
		return -EAGAIN;
	}
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

/**
 * struct chorus_tcp_queue - a connection's receive side: nvmet-tcp's io work
 * @conn: the connection
 * @io_work: reads what the socket has, hands each message on, sends the
 *	connection's replies; queued by the socket's callbacks and by
 *	chorus_tcp_kick_replies(), on chorus_tcp_io_wq
 * @io_cpu: the CPU the latest data came in on: @io_work runs there
 * @stopped: set by chorus_tcp_stop_rx(); nothing queues @io_work after
 * @failed: the connection failed; @io_work receives no more
 * @hdr: the header being read; @hdr_len bytes of it so far
 * @hdr_len: see @hdr
 * @pages: the payload being read, once @hdr is complete and says there is
 *	one; @data_len bytes of it so far
 * @nr_pages: entries of @pages
 * @data_len: see @pages
 * @data_ready: the socket's callbacks before chorus_tcp_start_rx()
 * @write_space: see @data_ready
 * @state_change: see @data_ready
 *
 * Everything from @failed on belongs to @io_work, which runs once at a time.
 */
struct chorus_tcp_queue {
	struct chorus_conn *conn;
	struct work_struct io_work;
	int io_cpu;
	bool stopped;
	bool failed;
	struct chorus_wire_hdr hdr;
	u32 hdr_len;
	struct page **pages;
	unsigned int nr_pages;
	u32 data_len;
	void (*data_ready)(struct sock *sk);
	void (*write_space)(struct sock *sk);
	void (*state_change)(struct sock *sk);
};

static struct workqueue_struct *chorus_tcp_io_wq;

/*
 * Budgets of one io work run, as nvmet-tcp's: messages read, then replies
 * sent, in turns, until the socket is drained and no reply is left or the
 * run did CHORUS_TCP_IO_BUDGET of them; then the work queues itself again.
 */
#define CHORUS_TCP_RECV_BUDGET	8
#define CHORUS_TCP_SEND_BUDGET	8
#define CHORUS_TCP_IO_BUDGET	64

/* Pages a payload is read into per call: a bvec array on the stack. */
#define CHORUS_TCP_RECV_PAGES	16

static void chorus_tcp_queue_io(struct chorus_tcp_queue *q)
{
	if (!READ_ONCE(q->stopped))
		queue_work_on(READ_ONCE(q->io_cpu), chorus_tcp_io_wq, &q->io_work);
}

/* Read what the socket has of @len bytes, without waiting. */
static int chorus_tcp_recv_nowait(struct socket *sock, void *buf, size_t len)
{
	struct kvec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	int ret;

	ret = kernel_recvmsg(sock, &msg, &iov, 1, len, msg.msg_flags);
	return ret ? ret : -ECONNRESET;
}

/*
 * Read what the socket has of the payload into its pages, each full but the
 * last, from @q->data_len on, a batch of pages per call.
 */
static int chorus_tcp_recv_data_nowait(struct chorus_tcp_queue *q, u32 len)
{
	struct bio_vec bvec[CHORUS_TCP_RECV_PAGES];
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	unsigned int i = q->data_len / PAGE_SIZE, nr;
	u32 off = q->data_len % PAGE_SIZE;
	size_t want = 0;
	int ret;

	for (nr = 0; nr < CHORUS_TCP_RECV_PAGES && q->data_len + want < len;
	     nr++, i++, off = 0) {
		size_t n = min_t(size_t, len - q->data_len - want,
				 PAGE_SIZE - off);

		bvec_set_page(&bvec[nr], q->pages[i], n, off);
		want += n;
	}
	iov_iter_bvec(&msg.msg_iter, ITER_DEST, bvec, nr, want);
	ret = sock_recvmsg(q->conn->sock, &msg, msg.msg_flags);
	if (ret <= 0)
		return ret ? ret : -ECONNRESET;
	q->data_len += ret;
	return 0;
}

/* The header is complete: check it and make room for its payload. */
static int chorus_tcp_got_hdr(struct chorus_tcp_queue *q, const char **why)
{
	u32 len = le32_to_cpu(q->hdr.payload_len);

	if (chorus_wire_check_hdr(&q->hdr, why)) {
		pr_warn_ratelimited("%s: peer %u: malformed message, bad %s; closing\n",
				    q->conn->peer->vol->name,
				    q->conn->peer->node_id, *why);
		return -EPROTO;
	}
	if (!len)
		return 0;
	q->nr_pages = DIV_ROUND_UP(len, PAGE_SIZE);
	/* Recycled pages first (pages.c); this work is on the I/O path. */
	q->pages = chorus_pages_alloc(q->nr_pages, GFP_NOIO);
	if (!q->pages) {
		*why = "memory for a payload";
		return -ENOMEM;
	}
	q->data_len = 0;
	return 0;
}

/*
 * Read one message as far as the socket has it. Return: 1 when a whole one
 * was handed to chorus_conn_recv(), -EAGAIN when the socket is drained (what
 * was read stays in @q for the next run), another negative errno with @why
 * when the connection is to fail.
 */
static int chorus_tcp_recv_one(struct chorus_tcp_queue *q, const char **why)
{
	u32 len = le32_to_cpu(q->hdr.payload_len);
	struct page **pages;
	int ret;

	*why = "connection closed";
	if (q->hdr_len < sizeof(q->hdr)) {
		ret = chorus_tcp_recv_nowait(q->conn->sock,
					     (u8 *)&q->hdr + q->hdr_len,
					     sizeof(q->hdr) - q->hdr_len);
		if (ret < 0)
			return ret;
		q->hdr_len += ret;
		if (q->hdr_len < sizeof(q->hdr))
			return -EAGAIN;
		ret = chorus_tcp_got_hdr(q, why);
		if (ret)
			return ret;
		len = le32_to_cpu(q->hdr.payload_len);
	}
	while (q->pages && q->data_len < len) {
		ret = chorus_tcp_recv_data_nowait(q, len);
		if (ret)
			return ret;
	}
	pages = q->pages;
	q->pages = NULL;
	q->hdr_len = 0;
	ret = chorus_conn_recv(q->conn, &q->hdr, pages, pages ? q->nr_pages : 0);
	if (ret) {
		*why = "protocol error";
		return ret;
	}
	return 1;
}

/* Read and hand on up to @budget messages. Return: how many. */
static int chorus_tcp_recv_msgs(struct chorus_tcp_queue *q, int budget)
{
	struct chorus_peer *peer = q->conn->peer;
	const char *why;
	int n = 0, ret;

	if (q->failed)
		return 0;
	while (n < budget) {
		ret = chorus_tcp_recv_one(q, &why);
		if (ret == -EAGAIN)
			break;
		if (ret < 0) {
			q->failed = true;
			chorus_peer_fail(peer, q->conn->gen, why);
			break;
		}
		n++;
	}
	return n;
}

/*
 * The io work. The bios of messages read in one turn are submitted under one
 * plug, flushed from here once the socket is drained or the turn's budget is
 * spent, as DRBD's receiver does: the backing device gets them as one batch
 * and completes them together, so that their acks leave together too. (A
 * plug flushed by schedule() would go out through kblockd, a hop more.)
 * Replies go out only while the socket has room; write space queues the
 * work again, as nvmet-tcp's io work never waits to send.
 */
static void chorus_tcp_io_workfn(struct work_struct *work)
{
	struct chorus_tcp_queue *q =
		container_of(work, struct chorus_tcp_queue, io_work);
	struct chorus_conn *conn = q->conn;
	struct blk_plug plug;
	int ops = 0, n;
	bool pending;

	do {
		if (READ_ONCE(q->stopped))
			return;
		blk_start_plug(&plug);
		n = chorus_tcp_recv_msgs(q, CHORUS_TCP_RECV_BUDGET);
		blk_finish_plug(&plug);
		pending = n == CHORUS_TCP_RECV_BUDGET;
		ops += n;
		n = chorus_conn_send_replies(conn, CHORUS_TCP_SEND_BUDGET, true);
		pending |= n == CHORUS_TCP_SEND_BUDGET;
		ops += n;
	} while (pending && ops < CHORUS_TCP_IO_BUDGET);
	if (pending)
		chorus_tcp_queue_io(q);
}

/* The socket's callbacks, under sk_callback_lock for sk_user_data. */
static void chorus_tcp_data_ready(struct sock *sk)
{
	struct chorus_tcp_queue *q;

	read_lock_bh(&sk->sk_callback_lock);
	q = sk->sk_user_data;
	if (q) {
		WRITE_ONCE(q->io_cpu, smp_processor_id());
		chorus_tcp_queue_io(q);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* Senders waiting for room are woken as before; held replies go out. */
static void chorus_tcp_write_space(struct sock *sk)
{
	struct chorus_tcp_queue *q;

	read_lock_bh(&sk->sk_callback_lock);
	q = sk->sk_user_data;
	if (q) {
		q->write_space(sk);
		if (READ_ONCE(q->conn->reply_next) && sk_stream_is_writeable(sk))
			chorus_tcp_queue_io(q);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/* A reset or a close: the io work finds it on its next read. */
static void chorus_tcp_state_change(struct sock *sk)
{
	struct chorus_tcp_queue *q;

	read_lock_bh(&sk->sk_callback_lock);
	q = sk->sk_user_data;
	if (q) {
		q->state_change(sk);
		chorus_tcp_queue_io(q);
	}
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * A reply queued in any context (a bio's completion: hard irq) goes out
 * from the io work, on the CPU the connection's data comes in on.
 */
static bool chorus_tcp_kick_replies(struct chorus_conn *conn)
{
	struct chorus_tcp_queue *q = conn->tcp;

	if (!q || READ_ONCE(q->stopped))
		return false;
	chorus_tcp_queue_io(q);
	return true;
}

static int chorus_tcp_start_rx(struct chorus_conn *conn)
{
	struct sock *sk = conn->sock->sk;
	struct chorus_tcp_queue *q;

	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	q->conn = conn;
	q->io_cpu = raw_smp_processor_id();
	INIT_WORK(&q->io_work, chorus_tcp_io_workfn);
	conn->tcp = q;

	write_lock_bh(&sk->sk_callback_lock);
	q->data_ready = sk->sk_data_ready;
	q->write_space = sk->sk_write_space;
	q->state_change = sk->sk_state_change;
	sk->sk_user_data = q;
	sk->sk_data_ready = chorus_tcp_data_ready;
	sk->sk_write_space = chorus_tcp_write_space;
	sk->sk_state_change = chorus_tcp_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	/* What came after the handshake, before the callbacks. */
	chorus_tcp_queue_io(q);
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

/*
 * The socket's callbacks are given back first, so nothing but a racing
 * chorus_tcp_kick_replies() queues the io work once it is cancelled, and
 * that run returns at once (chorus_tcp_release() cancels it again).
 */
static void chorus_tcp_stop_rx(struct chorus_conn *conn)
{
	struct chorus_tcp_queue *q = conn->tcp;
	struct sock *sk;

	if (!q)
		return;
	sk = conn->sock->sk;
	WRITE_ONCE(q->stopped, true);
	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = q->data_ready;
	sk->sk_write_space = q->write_space;
	sk->sk_state_change = q->state_change;
	write_unlock_bh(&sk->sk_callback_lock);
	cancel_work_sync(&q->io_work);
}

static void chorus_tcp_release(struct chorus_conn *conn)
{
	struct chorus_tcp_queue *q = conn->tcp;

	if (q) {
		cancel_work_sync(&q->io_work);
		if (q->pages)
			chorus_pages_free(q->pages, q->nr_pages);
		kfree(q);
		conn->tcp = NULL;
	}
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

/*
 * The io work runs where the data came in (bound), ahead of normal work
 * (high priority), and with a rescuer: it completes the owner's writes and
 * sends the replica's acks, which memory reclaim may wait for.
 */
static int chorus_tcp_init(void)
{
	chorus_tcp_io_wq = alloc_workqueue("chorus_tcp_io",
					   WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	if (!chorus_tcp_io_wq)
		return -ENOMEM;
	chorus_accept_wq = alloc_workqueue("chorus_accept", 0, 0);
	if (!chorus_accept_wq) {
		destroy_workqueue(chorus_tcp_io_wq);
		return -ENOMEM;
	}
	return 0;
}

static void chorus_tcp_exit(void)
{
	destroy_workqueue(chorus_accept_wq);
	destroy_workqueue(chorus_tcp_io_wq);
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
	.kick_replies	= chorus_tcp_kick_replies,
	.release	= chorus_tcp_release,
};
