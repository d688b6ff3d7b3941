/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: the transports, as the rest of chorus
 * sees them.
 *
 * A transport (transport_tcp.c; transport_rdma.c with rdma_*.c) is one
 * &struct chorus_transport_ops. Only transport.c names a transport's ops
 * table, mapping &enum chorus_transport to it; sessions dial through
 * chorus_transport(), and listen, unlisten, module init and exit go to
 * every transport through the chorus_transports_*() functions. Received
 * messages go up through chorus_conn_recv() and accepted connections
 * through chorus_handshake_accepted(); a transport that sends replies from
 * its own receive context (TCP) takes them with chorus_conn_send_replies().
 */
#ifndef CHORUS_TRANSPORT_H
#define CHORUS_TRANSPORT_H

#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/socket.h>
#include <linux/workqueue.h>
#include <chorus/wire.h>

struct chorus_conn;
struct chorus_peer;
struct chorus_rdma_queue;
struct chorus_tcp_queue;
struct netlink_ext_ack;
struct page;
struct request;

/**
 * struct chorus_msg_data - data sent after a header, never copied
 * @rq: send the data of this request's bios, or
 * @pages: send @len bytes from these pages (each full but the last)
 * @len: bytes of @pages
 * @more: more messages follow at once on this connection: the transport may
 *	hold this one back until the next (TCP: MSG_MORE), so that a batch of
 *	acks leaves in as few segments as it fits
 * @detached: the caller frees @pages as soon as the send returns: the
 *	transport keeps its own references to them for as long as it needs
 *	them after that (TCP: the stack's; RDMA: until the SEND completes)
 * @nowait: do not wait for buffer space: when the message cannot start
 *	at once, send nothing and return -EAGAIN (TCP: the socket's write
 *	space callback comes once it has room); a message that started is
 *	sent whole
 */
struct chorus_msg_data {
	struct request *rq;
	struct page **pages;
	unsigned int len;
	bool more;
	bool detached;
	bool nowait;
};

/**
 * struct chorus_transport_ops - what a transport provides
 * @name: "tcp" or "rdma"
 * @transport: %CHORUS_TRANSPORT_TCP or %CHORUS_TRANSPORT_RDMA
 * @init: module init: what the transport needs before any connection
 * @exit: module exit, after @unlisten and once every connection is freed
 * @listen: accept connections on @addr (its port, for RDMA on any address)
 *	and hand each to chorus_handshake_accepted() from process context
 * @unlisten: stop accepting; return once handshakes under way are over
 * @probe: whether a connection to @addr comes up now, without a handshake;
 *	NULL when the transport has nothing to fall back from
 * @connect: dial @addr; on success the connection can send and
 *	chorus_transport_ops.recv_sync works. May sleep.
 * @send: send a header, an optional small @body (HELLO, VERIFY_REQ) and
 *	optional data, in order with other sends on @conn. May sleep; callers
 *	serialise with chorus_conn.send_mutex.
 * @recv_sync: receive one header and up to @body_len bytes of payload into
 *	@body (the header's payload_len says how many; a longer payload is
 *	-EPROTO), waiting at most @timeout_ms; used for the handshake only.
 * @start_rx: start receiving: each message is handed to chorus_conn_recv()
 *	from the transport's own context until an error or @shutdown.
 * @shutdown: fail pending and future sends and receives, and send nothing
 *	more once it returns (TCP aborts the connection: what is queued is
 *	dropped); may wait briefly (RDMA: up to 500 ms) for sends already
 *	posted to reach the peer
 * @stop_rx: wait until the receive context has stopped
 * @kick_replies: optional: send chorus_conn.replies from the transport's
 *	receive context (TCP's io work, with chorus_conn_send_replies());
 *	false when it is not receiving, and chorus_conn.reply_work sends them.
 *	Any context, including hard irq.
 * @release: free the transport's part of @conn
 * @peer_addr: the address an accepted @conn comes from (its port too);
 *	0 or a negative errno
 */
struct chorus_transport_ops {
	const char *name;
	u32 transport;
	int (*init)(void);
	void (*exit)(void);
	int (*listen)(const struct sockaddr_storage *addr,
		      struct netlink_ext_ack *extack);
	void (*unlisten)(void);
	bool (*probe)(const struct sockaddr_storage *addr, int timeout_ms);
	int (*connect)(struct chorus_conn *conn,
		       const struct sockaddr_storage *addr, int timeout_ms);
	int (*send)(struct chorus_conn *conn, const struct chorus_wire_hdr *hdr,
		    const void *body, const struct chorus_msg_data *data);
	int (*recv_sync)(struct chorus_conn *conn, struct chorus_wire_hdr *hdr,
			 void *body, size_t body_len, int timeout_ms);
	int (*start_rx)(struct chorus_conn *conn);
	void (*shutdown)(struct chorus_conn *conn);
	void (*stop_rx)(struct chorus_conn *conn);
	bool (*kick_replies)(struct chorus_conn *conn);
	void (*release)(struct chorus_conn *conn);
	int (*peer_addr)(struct chorus_conn *conn, struct sockaddr_storage *ss);
};

/* The transports' tables: for transport.c's map only. */
extern const struct chorus_transport_ops chorus_tcp_ops;
extern const struct chorus_transport_ops chorus_rdma_ops;

const struct chorus_transport_ops *chorus_transport(u32 transport);
int chorus_transports_init(void);
void chorus_transports_exit(void);
int chorus_transports_listen(const struct sockaddr_storage *addr,
			     struct netlink_ext_ack *extack);
void chorus_transports_unlisten(void);

/**
 * struct chorus_conn - one connection of a peer's session
 * @peer: the peer, set once the handshake named it
 * @ops: the transport
 * @sock: TCP: the socket
 * @tcp: TCP: the receive state and io work, from chorus_transport_ops.start_rx
 * @queue: RDMA: the queue pair and its buffers
 * @rx_thread: RDMA: the receive thread
 * @index: position in the session
 * @gen: the session generation it belongs to
 * @send_mutex: serialises sends, so messages never interleave
 * @replies: replies to send from process context (acks, PONG), added in
 *	any context
 * @reply_mutex: serialises the senders of @replies (the transport's
 *	chorus_transport_ops.kick_replies context and @reply_work)
 * @reply_next: replies taken from @replies in the order they were added and
 *	not sent yet (the socket was full); under @reply_mutex
 * @reply_work: sends @replies when the transport does not
 * @last_rx: jiffies of the last message received on this connection;
 *	WRITE_ONCE by its receive context (and the RDMA receive completion's
 *	acks), READ_ONCE by the heartbeat, which pings every connection (a
 *	stale value only delays a timeout by one period)
 */
struct chorus_conn {
	struct chorus_peer *peer;
	const struct chorus_transport_ops *ops;
	struct socket *sock;
	struct chorus_tcp_queue *tcp;
	struct chorus_rdma_queue *queue;
	struct task_struct *rx_thread;
	int index;
	u32 gen;
	struct mutex send_mutex; /* serialises sends */
	struct llist_head replies;
	struct mutex reply_mutex; /* serialises the senders of @replies */
	struct llist_node *reply_next; /* under reply_mutex */
	struct work_struct reply_work;
	unsigned long last_rx;
};

int chorus_conn_send_replies(struct chorus_conn *conn, unsigned int budget,
			     bool nowait);

#endif /* CHORUS_TRANSPORT_H */
