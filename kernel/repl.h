/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: peers, sessions and the replication
 * state of a volume. Documentation/replication.md explains the model.
 *
 *   peer.c           peers of a volume: add, delete, the write set
 *   session.c        sessions: dial, establish, heartbeat, fail, tear down
 *   handshake.c      HELLO and HELLO_ACK on each connection of a session
 *   conn.c           connections: send, replies, receive checks
 *   repl.c           the owner's write path, roles and epochs, the receive switch
 *   replica.c        the replica's apply path
 *   forward.c        a non-owner's I/O shipped to the owner
 *   forward_serve.c  the owner (or a replica) serving it
 *   wire.c           building and checking wire messages (wire_check.h)
 *   bitmap.c         per-peer dirty bitmaps, in memory and on disk
 *   resync.c         bitmap resync and online verify
 *   transport_tcp.c  the TCP transport
 *   transport_rdma.c the RDMA transport (with rdma_*.c, transport_rdma.h)
 *
 * Lock order: chorus_volumes_lock > chorus_repl.conf_lock >
 * chorus_peer.session_mutex > chorus_al.mutex > chorus_peer.bm_mutex >
 * chorus_repl.meta_lock; chorus_peer.session_sem (read) and
 * chorus_conn.send_mutex are taken inside any of them, for one send;
 * chorus_conn.reply_mutex, taken by whoever sends the replies, takes
 * send_mutex and is taken inside none of them;
 * the spinlocks (chorus_repl.peers_lock, chorus_peer.lock,
 * chorus_repl.tree_lock) are innermost and never nest in one another except
 * peers_lock > chorus_peer.lock; chorus_al.waiters_lock may be taken
 * inside peers_lock and takes nothing. The RDMA transport's own locks
 * come before none of these: chorus_rdma_queue.cm_mutex > chorus_rdma_mutex >
 * chorus_rdma_queue.conn_lock > chorus_peer.lock (a queue failing its
 * peer); chorus_rdma_queue.lock, taken in softirq, nests nothing of these.
 * Forwarding: chorus_fwd.lock > chorus_peer.lock (whether a forwarded
 * request's session is still up).
 * Documentation/architecture.md quotes this list; keep them the same.
 */
#ifndef CHORUS_REPL_H
#define CHORUS_REPL_H

#include <linux/interval_tree.h>
#include <linux/kthread.h>
#include <linux/llist.h>
#include <linux/rwsem.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <chorus/wire_check.h>

#include "transport.h"

struct chorus_volume;
struct chorus_peer;
struct netlink_ext_ack;
struct chorus_conn;
struct request;
struct chorus_rdma_queue;

#define CHORUS_HANDSHAKE_TIMEOUT_MS	5000

/**
 * struct chorus_reply - a reply queued from completion context
 * @node: in chorus_conn.replies
 * @conn: the connection to answer on
 * @counted: counted in chorus_peer.replica_inflight
 * @hdr: the header to send
 * @pages: pages of the applied write, freed after sending; NULL if none
 * @nr_pages: entries of @pages
 */
struct chorus_reply {
	struct llist_node node;
	struct chorus_conn *conn;
	bool counted;
	struct chorus_wire_hdr hdr;
	struct page **pages;
	unsigned int nr_pages;
};

#define CHORUS_NR_PATHS	2	/* TCP, RDMA */

/**
 * struct chorus_path_stats - counters of one transport of a peer
 * @sessions: sessions established on it
 * @failures: dial attempts on it that failed
 * @msgs_sent: messages sent on it
 * @bytes_sent: data bytes sent on it
 * @last_error: why a dial on it last failed, cleared when a session is
 *	established on it; under chorus_peer.lock
 */
struct chorus_path_stats {
	atomic64_t sessions;
	atomic64_t failures;
	atomic64_t msgs_sent;
	atomic64_t bytes_sent;
	char last_error[CHORUS_REASON_MAX];
};

/* Index in chorus_peer.paths of a transport (TCP or RDMA). */
static inline int chorus_path_index(u32 transport)
{
	return transport == CHORUS_TRANSPORT_RDMA ? 1 : 0;
}

/**
 * enum chorus_job - a background job of a peer
 * @CHORUS_JOB_NONE: none
 * @CHORUS_JOB_RESYNC: copy the regions of the peer's bitmap
 * @CHORUS_JOB_VERIFY: compare every region with the peer
 */
enum chorus_job {
	CHORUS_JOB_NONE,
	CHORUS_JOB_RESYNC,
	CHORUS_JOB_VERIFY,
};

/**
 * struct chorus_peer - another node holding a replica of a volume
 * @vol: the volume
 * @slot: index in chorus_repl.peers, in the per-request arrays and in the
 *	superblock's peer slots; immutable
 * @node_id: the peer's node id; immutable
 * @meta_slot: the peer's slot in the superblock and its bitmap; immutable
 * @addr: where to dial it; immutable
 * @address: @addr as given; immutable
 * @port: its port; immutable
 * @transport: &enum chorus_transport; immutable
 * @nr_conns: connections per session; immutable
 * @diskless: the peer is a diskless access point: no metadata slot, no
 *	bitmap, never in the write set, no activity log, no resync; immutable
 *
 * @lock: protects the fields below it up to @inflight, and the bitmap bits
 * @conn_state: &enum chorus_conn_state
 * @repl_state: &enum chorus_repl_state (owner's view)
 * @in_writeset: writes are sent to this peer and wait for its ack
 * @gen: session generation; bumped when a session is established
 * @peer_owner: the peer said it is the owner in its handshake; written under
 *	@lock when a session is established, read with READ_ONCE by the
 *	receive threads of that session
 * @fenced: the peer refused this owner's epoch as stale; cleared under @lock
 *	when a session is established, set with WRITE_ONCE by the receive
 *	thread or the dialler that saw the refusal, read with READ_ONCE
 * @disk_failed: the peer said in this session that its disk failed
 *	(CHORUS_WIRE_DISK_FAILED); written under @lock (set by
 *	chorus_peer_disk_failed(), cleared when a session is established),
 *	read under it or with READ_ONCE (a stale read holds a write once more
 *	or starts a resync the peer then refuses)
 * @last_error: why the last session ended
 * @active_transport: transport of the current session, UNSPEC if none
 * @inflight: seq -> request waiting for this peer's ack (sent or held);
 *	entries are removed under @lock, so that one remover wins
 * @next_id: cursor for allocating ids in @inflight; used only by
 *	xa_alloc_cyclic_irq() on the request path, which runs with the queue
 *	not frozen and holds @inflight's xa_lock. That lock is always taken
 *	with interrupts off (the _irq calls, or under @lock): @lock nests it,
 *	and an RDMA queue's CM events take @lock.
 *
 * @session_mutex: serialises establishing and tearing down sessions
 * @session_sem: read-held while sending on @conns, write-held to free them
 * @conns: the connections of the current session; changed under
 *	@session_mutex with @session_sem write-held, read under either
 * @pending: connections accepted for @pending_session, not yet complete;
 *	under @session_mutex
 * @pending_session: session id of @pending, under @session_mutex
 * @want_connect: PEER_CONNECT was given and no PEER_DISCONNECT since; under
 *	@session_mutex
 * @dialler: this node dials (lower node id)
 * @backoff_ms: next reconnect delay, under @session_mutex
 * @dial_gen: bumped by every teardown and every chorus_peer_connect() (a
 *	role or epoch change does both, before and after changing them), under
 *	@session_mutex; the connect work dials without @session_mutex and
 *	drops a dial during which it changed
 * @fail_gen: generation that chorus_peer_fail() asked to tear down, under
 *	@lock
 * @connect_work: dials and handshakes
 * @fail_work: tears down a failed session
 * @disk_work: announces @disk_failed (chorus_peer_disk_failed())
 * @ping_work: heartbeat
 * @probe_work: dialler on the TCP fallback: checks whether RDMA works again
 * @rdma_retry_at: jiffies before which the dialler does not try RDMA, under
 *	@session_mutex
 * @probe_ms: current @probe_work interval, under @session_mutex
 * @paths: per transport (chorus_path_index()): counters, and the last error
 *	under @lock
 * @replica_inflight: writes received and not yet acked
 * @replica_wait: woken when @replica_inflight drops to zero
 * @fwd_serving: requests this peer forwarded that are being served here
 *	(forward.c), from receipt until their answer is sent or dropped
 * @fwd_wait: woken when @fwd_serving drops to zero; the drop and the
 *	wake-up are under @fwd_wait's own lock (chorus_fwd_served_done())
 *
 * @meta_flags: CHORUS_META_PEER_* as last written, under @bm_mutex
 * @bits: dirty bitmap, one bit per chorus_repl.region_sectors, LE layout
 * @nr_bits: bits in @bits
 * @dirty: set bits, under @lock
 * @bm_mutex: held from setting bits until they are on disk, and while
 *	writing bitmap blocks
 *
 * @job: &enum chorus_job running, under @session_mutex
 * @job_thread: runs @job
 * @next_seq: last id given to a job or STATE message, never reused
 * @job_seq: seq of the job message awaiting its answer
 * @job_sector: its sector
 * @al_seq: seq of the STATE awaiting its STATE_ACK
 * @al_status: the STATE_ACK's status
 * @al_done: completed by the STATE_ACK
 * @al_stored: seq of the newest activity log transaction this peer stored
 *	since this node became owner; written under the log's mutex (or
 *	reset by chorus_al_owner_start(), the queue frozen), read with
 *	READ_ONCE (chorus_al_begin())
 * @job_status: the answer's status
 * @job_done: completed by the answer
 *
 * The job_* and al_* fields hand one answer from a receive thread to the
 * one waiter (the job thread, or the session's STATE sender under
 * @session_mutex): the waiter sets @job_seq/@job_sector or @al_seq with
 * WRITE_ONCE before it sends; the receive thread matches them with
 * READ_ONCE, sets the status with WRITE_ONCE and completes; the waiter
 * reads the status after the completion, which orders it. A teardown sets
 * both statuses to an error and completes both, so no waiter outlives the
 * session.
 * @sync_total: bytes to copy in the running resync
 * @sync_done: bytes copied in it
 * @sync_rate: bytes per second over the last interval
 * @verify_done: bytes compared by the last verify
 * @verify_mismatches: regions found different by the last verify
 * @stats: counters, atomic
 */
struct chorus_peer {
	struct chorus_volume *vol;
	int slot;
	u32 node_id;
	int meta_slot;
	struct sockaddr_storage addr;
	char address[CHORUS_ADDRESS_MAX];
	u16 port;
	u32 transport;
	u32 nr_conns;
	bool diskless;

	spinlock_t lock; /* see above */
	enum chorus_conn_state conn_state;
	enum chorus_repl_state repl_state;
	bool in_writeset;
	u32 gen;
	bool peer_owner;
	bool fenced;
	bool disk_failed;
	char last_error[CHORUS_REASON_MAX];
	u32 active_transport;
	struct xarray inflight;
	u32 next_id;

	struct mutex session_mutex; /* see above */
	struct rw_semaphore session_sem;
	struct chorus_conn *conns[CHORUS_MAX_CONNS];
	struct chorus_conn *pending[CHORUS_MAX_CONNS];
	u64 pending_session;
	bool want_connect;
	bool dialler;
	unsigned int backoff_ms;
	u32 dial_gen;
	u32 fail_gen;
	struct delayed_work connect_work;
	struct work_struct fail_work;
	struct work_struct disk_work;
	struct delayed_work ping_work;
	struct delayed_work probe_work;
	unsigned long rdma_retry_at;
	unsigned int probe_ms;
	struct chorus_path_stats paths[CHORUS_NR_PATHS];
	atomic_t replica_inflight;
	wait_queue_head_t replica_wait;
	atomic_t fwd_serving;
	wait_queue_head_t fwd_wait;

	u32 meta_flags;
	unsigned long *bits;
	unsigned long nr_bits;
	unsigned long dirty;
	struct mutex bm_mutex; /* see above */

	enum chorus_job job;
	struct task_struct *job_thread;
	atomic64_t next_seq;
	u64 job_seq;
	u64 job_sector;
	u32 job_status;
	struct completion job_done;
	u64 al_seq;
	u32 al_status;
	struct completion al_done;
	u64 al_stored;
	atomic64_t sync_total;
	atomic64_t sync_done;
	atomic64_t sync_rate;
	atomic64_t verify_done;
	atomic64_t verify_mismatches;

	struct {
		atomic64_t writes_sent;
		atomic64_t bytes_sent;
		atomic64_t reconnects;
		atomic64_t resynced_bytes;
	} stats;
};

#define CHORUS_AL_ACTIVE	64	/* extents in the activity log at once */

/**
 * struct chorus_al - the owner's activity log
 * @mutex: serialises transactions and @block
 * @lock: protects @extents, @pending, @pending_seq, @inflight, @used, @nr
 *	and @stamp; taken from request completion, so with irqs off.
 *	@extents, @nr and @pending_seq change only with @mutex held too;
 *	@pending is set with it, and cleared by a writer whose members
 *	stored the transaction (chorus_al_begin())
 * @extents: the active extents
 * @pending: the extent is not yet in a transaction on disk and stored by
 *	every member of the write set: writes to it must take the slow path
 *	of chorus_al_begin()
 * @pending_seq: the transaction a pending extent is in, U64_MAX while it
 *	is in none on disk yet
 * @inflight: writes in flight per active extent
 * @used: LRU stamp per active extent
 * @nr: active extents
 * @stamp: LRU clock
 * @seq: seq of the last transaction on disk, under @mutex
 * @disk_nr: extents in that transaction, under @mutex
 * @block: transaction buffer, under @mutex
 * @wq: woken when an extent's last write completes, when a member stores
 *	a transaction or leaves the write set, and on @stopping
 * @waiters_lock: protects @waiters; innermost of all (netlink status takes
 *	it with chorus_repl.peers_lock held), irqs off
 * @waiters: the writes waiting in chorus_al_begin() for members to store
 *	a transaction, &struct chorus_al_waiter on their stacks: counted per
 *	member for status (chorus_al_nr_waiting_for())
 * @stopping: the owner steps down: writes waiting for members to store
 *	the log fail. Set and cleared under chorus_repl.conf_lock
 * @shift: sectors per extent, as a shift
 */
struct chorus_al {
	struct mutex mutex; /* see above */
	spinlock_t lock; /* see above */
	u32 extents[CHORUS_AL_ACTIVE];
	bool pending[CHORUS_AL_ACTIVE];
	u64 pending_seq[CHORUS_AL_ACTIVE];
	u32 inflight[CHORUS_AL_ACTIVE];
	u64 used[CHORUS_AL_ACTIVE];
	int nr;
	u64 stamp;
	u64 seq;
	u32 disk_nr;
	struct chorus_meta_al *block;
	wait_queue_head_t wq;
	spinlock_t waiters_lock; /* see above */
	struct list_head waiters;
	bool stopping;
	unsigned int shift;
};

/**
 * struct chorus_fwd - forwarding: a non-owner's requests shipped to the owner
 * @lock: protects which session each request of @inflight was sent on
 *	(chorus_rq.fwd_peer, fwd_gen) and removals from @inflight, so that one
 *	of an answer, an expiry and a role change wins; taken from the timer
 *	work and from receive threads, with irqs off (request completion
 *	reads nothing under it)
 * @inflight: id -> request forwarded and not answered yet, sent or held
 * @next_id: cursor of xa_alloc_cyclic() for @inflight
 * @expire_work: fails requests that found no owner within the forward
 *	timeout; runs every second while @inflight is not empty
 * @take_back_work: starts @inflight's requests here once this node is the
 *	owner (chorus_fwd_take_back()): from a work item, because a write may
 *	wait there for the activity log to reach the write set, which needs
 *	the sessions and write-set changes that the role change (holding
 *	chorus_repl.conf_lock) or the I/O path must not wait for
 * Its counters are in &struct chorus_stats (forwarded, forward_*).
 */
struct chorus_fwd {
	spinlock_t lock; /* see above */
	struct xarray inflight;
	u32 next_id;
	struct delayed_work expire_work;
	struct work_struct take_back_work;
};

/**
 * struct chorus_repl - replication state of a volume
 * @conf_lock: serialises configuration: peers, role, tunables
 * @meta_lock: serialises superblock writes after attach
 * @peers_lock: protects @peers for readers outside the I/O path (netlink
 *	fill); writers also freeze the queue, so the I/O path reads @peers
 *	without a lock
 * @peers: the peers, by slot
 * @nr_peers: non-NULL entries of @peers
 * @role: &enum chorus_role, changed under @conf_lock with the queue frozen,
 *	except when a replica becomes the owner: its forwarded requests would
 *	never drain, so it publishes the role with smp_store_release() after
 *	@epoch, and takes them back (chorus_fwd_take_back(), from a work); and
 *	when an owner whose lease expired hands over (chorus_repl_hand_over()):
 *	then also under chorus_volume.held_lock, before @handover_gen
 * @handover_gen: counts hand-overs, never 0: a request started as the owner
 *	records it (chorus_rq.owner_gen) and is started again, not completed,
 *	once it changed. Written with smp_store_release() under @conf_lock and
 *	chorus_volume.held_lock, after @role; read with smp_load_acquire()
 * @handover_redial: slots of the peers the hand-over disconnected, to dial
 *	again once this node's own bios to its disk ended (@handover_work), or
 *	by the next role change; under @conf_lock
 * @handover_work: the rest of a hand-over, see chorus_repl_hand_over()
 * @superseded_epoch: the highest epoch a peer proved it owns at, in a
 *	handshake with this owner past its lease deadline, not yet acted on
 *	by @supersede_work; 0 for none. Under @meta_lock
 * @superseded_node: the node id of that peer; under @meta_lock
 * @supersede_work: hands over to that peer, see chorus_repl_superseded()
 * @epoch: the owner's epoch. On the owner, set under @conf_lock, before
 *	@role. On a replica, set with WRITE_ONCE by a receive thread
 *	once chorus_meta_set_epoch() recorded a higher one on disk
 *	(chorus_repl_accept_epoch()), or under @conf_lock. Read with READ_ONCE
 * @owner_epoch: on a non-owner, the epoch of the owner this node last
 *	followed, set when a session with it is established
 *	(chorus_repl_follow_owner()); 0 for none. Under @meta_lock
 * @owner_incarnation: that owner's chorus_volume.incarnation, 0 for none:
 *	another incarnation at @owner_epoch is refused. Under @meta_lock;
 *	never persisted
 * @tree_lock: protects @tree and @waiting
 * @tree: writes and resync regions in flight, by sector range
 * @waiting: requests waiting for an overlapping one to finish
 * @conflict_work: starts @waiting requests whose conflicts are gone
 * @range_wq: woken whenever a range leaves @tree
 * @defer_lock: protects @deferred
 * @deferred: writes that need an activity log transaction, to start from
 *	@defer_work
 * @defer_work: starts @deferred requests
 * @region_sectors: sectors per bitmap bit
 * @request_timeout_ms: tunables, see &enum chorus_attr
 * @ping_interval_ms: see above
 * @ping_timeout_ms: see above
 * @resync_rate: see above
 * @auto_degrade: see above
 * @payload_crc: see above; read with READ_ONCE per message sent
 * @al: the activity log
 * @fwd: forwarding to the owner, while this node is not the owner
 */
struct chorus_repl {
	struct mutex conf_lock; /* see above */
	struct mutex meta_lock; /* see above */
	spinlock_t peers_lock; /* see above */
	struct chorus_peer *peers[CHORUS_MAX_PEERS];
	int nr_peers;
	enum chorus_role role;
	u32 handover_gen;
	unsigned long handover_redial; /* under conf_lock */
	struct work_struct handover_work;
	u64 superseded_epoch; /* under meta_lock */
	u32 superseded_node; /* under meta_lock */
	struct work_struct supersede_work;
	u64 epoch;
	u64 owner_epoch; /* under meta_lock */
	u64 owner_incarnation; /* under meta_lock */

	spinlock_t tree_lock; /* see above */
	struct rb_root_cached tree;
	struct list_head waiting;
	struct work_struct conflict_work;
	wait_queue_head_t range_wq;
	spinlock_t defer_lock; /* see above */
	struct list_head deferred;
	struct work_struct defer_work;

	sector_t region_sectors;
	u32 request_timeout_ms;
	u32 ping_interval_ms;
	u32 ping_timeout_ms;
	u64 resync_rate;
	bool auto_degrade;
	bool payload_crc;
	struct chorus_al al;
	struct chorus_fwd fwd;
};

/**
 * struct chorus_range - a range of sectors held in chorus_repl.tree
 * @node: the tree node; start and last are sectors, inclusive
 * @in_tree: whether @node is in the tree
 */
struct chorus_range {
	struct interval_tree_node node;
	bool in_tree;
};

/**
 * struct chorus_rq - per-request state, the blk-mq pdu
 * @pending: parts in flight (local clones, peers), plus one held by the
 *	submitter
 * @status: an error status of one of the local clones, BLK_STS_OK when none
 * @range: the request's sectors while it is in flight (writes with peers)
 * @wait_entry: in the hardware queue's list (dev.c), chorus_repl.deferred
 *	or chorus_repl.waiting: in one of them at a time
 * @seq: per peer slot, the request's id in chorus_peer.inflight; 0 if none
 * @sent_gen: per peer slot, the session it was last sent on
 * @al_held: the request holds its activity log extents
 * @fwd_id: its id in chorus_fwd.inflight while forwarded, 0 otherwise
 * @fwd_peer: the peer (an owner, or a replica for @fwd_replica) it was
 *	last sent to, NULL while held; under chorus_fwd.lock
 * @fwd_gen: that peer's session, under chorus_fwd.lock
 * @fwd_deadline: jiffies after which a forwarded request not yet answered
 *	fails rather than go to an owner: the forward timeout after
 *	@start_ns, its arrival
 * @fwd_replica: a read of an owner whose disk failed, sent to a replica of
 *	the write set (chorus_fwd_read_replica()); set before it is tracked
 * @fwd_tried: slots of the replicas that refused it, under chorus_fwd.lock
 * @local_read_failed: a read whose clone the disk failed (dev.c): it is
 *	started once more, to be read from a replica. WRITE_ONCE from bio
 *	completion, read after the last reference
 * @reread: started once more after @local_read_failed; never again
 * @copies: write-set peers that acked the request while up to date
 *	(chorus_owner_ack_take(), under the peer's lock): only those hold every
 *	acknowledged write. A syncing member's ack is no copy: it lacks the
 *	regions not yet resynced, which only this node's disk holds
 * @replicated: an owner's write or flush, sent to its write set
 *	(chorus_repl_fan_out()); its local part may fail without failing it
 * @local_failed: its local part failed, or was not sent because the disk
 *	had failed (disk.c): it succeeds only if @copies is not 0.
 *	WRITE_ONCE from bio completion, read after the last reference
 * @start_ns: ktime_get_ns() when it was queued, for its latency (latency.c)
 * @owner_gen: chorus_repl.handover_gen when it was started as the owner's
 *	request, 0 for one forwarded or started on a node that is not the
 *	owner. Set by chorus_dev_start(), cleared by chorus_fwd_track(); read
 *	after the last reference
 */
struct chorus_rq {
	atomic_t pending;
	blk_status_t status;
	atomic_t copies;
	bool replicated;
	bool local_failed;
	struct chorus_range range;
	struct list_head wait_entry;
	u32 seq[CHORUS_MAX_PEERS];
	u32 sent_gen[CHORUS_MAX_PEERS];
	bool al_held;
	u32 fwd_id;
	struct chorus_peer *fwd_peer;
	u32 fwd_gen;
	unsigned long fwd_deadline;
	bool fwd_replica;
	u8 fwd_tried;
	bool local_read_failed;
	bool reread;
	u64 start_ns;
	u32 owner_gen;
};

/* repl.c */
void chorus_repl_init(struct chorus_volume *vol);
void chorus_repl_stop(struct chorus_volume *vol);
void chorus_repl_queue_rq(struct chorus_volume *vol, struct request *rq);
void chorus_repl_rq_done(struct chorus_volume *vol, struct request *rq);
enum blk_eh_timer_return chorus_repl_timeout(struct request *rq);
void chorus_repl_send_rq(struct chorus_peer *peer, struct request *rq, u32 gen);
void chorus_repl_restart(struct chorus_volume *vol, struct request *rq);
void chorus_repl_hdr_data(struct chorus_wire_hdr *hdr, struct request *rq,
			  struct chorus_msg_data *data);
void chorus_repl_held_complete(struct chorus_peer *peer);
int chorus_range_lock(struct chorus_volume *vol, struct chorus_range *range,
		      sector_t start, sector_t nr, struct chorus_peer *peer);
void chorus_range_unlock(struct chorus_volume *vol,
			 struct chorus_range *range);
int chorus_repl_recv(struct chorus_conn *conn, const struct chorus_wire_hdr *hdr,
		     struct page **pages, unsigned int nr_pages);
bool chorus_repl_ack_atomic(struct chorus_peer *peer,
			    const struct chorus_wire_hdr *hdr);
bool chorus_conn_recv_atomic(struct chorus_conn *conn,
			     const struct chorus_wire_hdr *hdr);
int chorus_conn_recv(struct chorus_conn *conn, const struct chorus_wire_hdr *hdr,
		     struct page **pages, unsigned int nr_pages);
int chorus_replica_request(struct chorus_conn *conn,
			   const struct chorus_wire_hdr *hdr,
			   struct page **pages, unsigned int nr_pages);
int chorus_replica_answer(struct chorus_conn *conn,
			  const struct chorus_wire_hdr *hdr, u8 type, u32 status);

/* pages.c */
struct page **chorus_pages_alloc(unsigned int nr, gfp_t gfp);
void chorus_pages_free(struct page **pages, unsigned int nr);
void chorus_pages_exit(void);

void chorus_repl_held_end(struct chorus_peer *peer, blk_status_t status);
void chorus_repl_owner_sync(void);

/* role.c */
void chorus_role_init(struct chorus_volume *vol);
void chorus_role_stop(struct chorus_volume *vol);
void chorus_repl_superseded(struct chorus_peer *peer, u64 epoch);
int chorus_repl_set_role(struct chorus_volume *vol, enum chorus_role role,
			 u64 epoch, struct netlink_ext_ack *extack);
int chorus_repl_accept_epoch(struct chorus_volume *vol, u64 epoch);

/* forward.c */
extern unsigned int chorus_forward_timeout_ms;
extern struct workqueue_struct *chorus_fwd_wq;
void chorus_fwd_init(struct chorus_volume *vol);
void chorus_fwd_start(struct chorus_volume *vol, struct request *rq);
void chorus_fwd_dispatch(struct chorus_volume *vol, struct request *rq);
void chorus_fwd_read_replica(struct chorus_volume *vol, struct request *rq);
void chorus_fwd_resend(struct chorus_peer *peer, u32 gen);
void chorus_fwd_fail_all(struct chorus_volume *vol);
void chorus_fwd_take_back(struct chorus_volume *vol);
void chorus_fwd_stop(struct chorus_volume *vol);
int chorus_fwd_answer(struct chorus_conn *conn,
		      const struct chorus_wire_hdr *hdr, struct page **pages,
		      unsigned int nr_pages);

/* forward_serve.c */
int chorus_fwd_serve(struct chorus_conn *conn,
		     const struct chorus_wire_hdr *hdr, struct page **pages,
		     unsigned int nr_pages);
void chorus_fwd_peer_quiesce(struct chorus_peer *peer);
bool chorus_fwd_peer_idle(struct chorus_peer *peer, unsigned long timeout);
bool chorus_fwd_served(struct request *rq);

/**
 * struct chorus_peer_config - what PEER_ADD declares
 * @node_id: the peer's node id, not this node's
 * @addr: where to dial it
 * @address: @addr as text
 * @port: its port
 * @transport: &enum chorus_transport
 * @nr_conns: connections per session
 * @initial_sync: what the peer needs if the metadata does not know it
 * @diskless: the peer is a diskless access point
 */
struct chorus_peer_config {
	u32 node_id;
	struct sockaddr_storage addr;
	const char *address;
	u16 port;
	u32 transport;
	u32 nr_conns;
	enum chorus_initial_sync initial_sync;
	bool diskless;
};

/* peer.c */
int chorus_peer_add(struct chorus_volume *vol,
		    const struct chorus_peer_config *cfg,
		    struct netlink_ext_ack *extack);
int chorus_peer_del(struct chorus_peer *peer, struct netlink_ext_ack *extack);
struct chorus_peer *chorus_peer_find(struct chorus_volume *vol, u32 node_id);
void chorus_peer_connect(struct chorus_peer *peer);
void chorus_peer_disconnect(struct chorus_peer *peer);
void chorus_peer_rearm_ping(struct chorus_peer *peer);
void chorus_peer_fail(struct chorus_peer *peer, u32 gen, const char *reason);
void chorus_peer_teardown(struct chorus_peer *peer, const char *reason);
void chorus_peer_disk_failed(struct chorus_peer *peer);
bool chorus_peer_disk_replaced(struct chorus_peer *peer, u64 disk_gen);
int chorus_peer_take_disk(struct chorus_peer *peer, u64 disk_gen);
int chorus_peer_new_disk(struct chorus_peer *peer);
int chorus_peer_writeset_remove(struct chorus_peer *peer,
				struct netlink_ext_ack *extack);
void chorus_peer_free(struct chorus_peer *peer);
int chorus_conn_send(struct chorus_conn *conn, struct chorus_wire_hdr *hdr,
		     const void *body, const struct chorus_msg_data *data);
void chorus_conn_reply(struct chorus_conn *conn, struct chorus_reply *reply);
void chorus_conn_stop_rx(struct chorus_conn *conn);
int chorus_peer_call(struct chorus_peer *peer, struct chorus_wire_hdr *hdr,
		     const void *body, const struct chorus_msg_data *data,
		     struct completion *done, const char *what);
void chorus_wait_for_stop(void);

int chorus_handshake_accepted(struct chorus_conn *conn);
struct chorus_conn *chorus_conn_alloc(const struct chorus_transport_ops *ops);
void chorus_conn_free(struct chorus_conn *conn);
extern struct workqueue_struct *chorus_wq;
extern struct workqueue_struct *chorus_reply_wq;

/* bitmap.c */
int chorus_bitmap_alloc(struct chorus_peer *peer);
void chorus_bitmap_free(struct chorus_peer *peer);
int chorus_bitmap_load(struct chorus_peer *peer);
int chorus_bitmap_write_all(struct chorus_peer *peer);
int chorus_bitmap_sync(struct chorus_peer *peer);
int chorus_bitmap_write_range(struct chorus_peer *peer, sector_t start,
			      sector_t nr);
unsigned long chorus_bitmap_set_locked(struct chorus_peer *peer, sector_t start,
				       sector_t nr);
void chorus_bitmap_set_all_locked(struct chorus_peer *peer);
void chorus_bitmap_clear_bit_locked(struct chorus_peer *peer,
				    unsigned long bit);
unsigned long chorus_bitmap_next(struct chorus_peer *peer, unsigned long from);

/* actlog.c */
void chorus_al_init(struct chorus_volume *vol);
int chorus_al_attach(struct chorus_volume *vol);
void chorus_al_detach(struct chorus_volume *vol);
bool chorus_al_try_begin(struct chorus_volume *vol, struct request *rq);
int chorus_al_begin(struct chorus_volume *vol, struct request *rq);
u32 chorus_al_nr_waiting_for(struct chorus_peer *peer);
void chorus_al_end(struct chorus_volume *vol, struct request *rq);
int chorus_al_fold(struct chorus_volume *vol);
int chorus_al_clear(struct chorus_volume *vol);
void chorus_al_set_stopping(struct chorus_volume *vol, bool stopping);
void chorus_al_owner_start(struct chorus_volume *vol);
int chorus_al_send(struct chorus_peer *peer);
void chorus_al_answer(struct chorus_peer *peer,
		      const struct chorus_wire_hdr *hdr);
int chorus_al_store(struct chorus_conn *conn, const struct chorus_wire_hdr *hdr,
		    struct page **pages, unsigned int nr_pages);

/* resync.c */
int chorus_job_start(struct chorus_peer *peer, enum chorus_job job,
		     struct netlink_ext_ack *extack);
void chorus_job_stop(struct chorus_peer *peer);
void chorus_job_answer(struct chorus_peer *peer,
		       const struct chorus_wire_hdr *hdr);
int chorus_replica_verify(struct chorus_conn *conn,
			  const struct chorus_wire_hdr *hdr, u32 crc);

/*
 * Whether @peer holds a copy a write or read may stand on: a member of the
 * write set with a disk that works, up to date. Context: @peer's lock held.
 */
static inline bool chorus_peer_is_copy(struct chorus_peer *peer)
{
	lockdep_assert_held(&peer->lock);
	return peer->in_writeset && !peer->diskless && !peer->disk_failed &&
	       peer->repl_state == CHORUS_REPL_UP_TO_DATE;
}

#endif /* CHORUS_REPL_H */
