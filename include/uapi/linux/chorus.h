/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * chorus - replicated block storage: generic netlink ABI.
 *
 * This header is the only definition of the commands, attributes and
 * enums spoken between chorus.ko and userspace (chorusd, chorusctl).
 * Attribute numbers are ABI: append only, never renumber.
 *
 * Documentation/netlink-abi.rst describes every command.
 */
#ifndef _UAPI_LINUX_CHORUS_H
#define _UAPI_LINUX_CHORUS_H

#include <linux/types.h>

#define CHORUS_GENL_NAME		"chorus"
#define CHORUS_GENL_VERSION		1
#define CHORUS_GENL_MCGRP_EVENTS	"events"

/* Limits, including the terminating NUL for strings. */
#define CHORUS_VOLUME_NAME_MAX		64
#define CHORUS_BACKING_PATH_MAX		256
#define CHORUS_UUID_LEN			16
#define CHORUS_DISK_NAME_MAX		32	/* "chorusN", the kernel's DISK_NAME_LEN */
#define CHORUS_ADDRESS_MAX		48	/* an IPv4 or IPv6 literal */
#define CHORUS_REASON_MAX		128
#define CHORUS_NODE_ID_MAX		32	/* node ids are 1..32 */
#define CHORUS_MAX_PEERS		4	/* peers per volume */
#define CHORUS_MAX_CONNS		8	/* connections per peer */
#define CHORUS_DEFAULT_PORT		7788
#define CHORUS_AUTH_SECRET_MIN		16	/* peer secret, bytes */
#define CHORUS_AUTH_SECRET_MAX		128
#define CHORUS_AUTH_KEEP_MAX_S		604800	/* a week */

/**
 * enum chorus_cmd - generic netlink commands of the "chorus" family
 * @CHORUS_CMD_UNSPEC: unused
 * @CHORUS_CMD_VOLUME_CREATE: attach a volume from a backing block device
 *	formatted by "chorusctl volume format". Requires
 *	%CHORUS_A_VOLUME_NAME and %CHORUS_A_BACKING_PATH; the optional
 *	%CHORUS_A_SIZE_BYTES, %CHORUS_A_BLOCK_SIZE and %CHORUS_A_UUID state
 *	what the caller expects of the metadata, and %CHORUS_A_NODE_ID
 *	records this node's id in it (or must match the one recorded).
 *	A volume whose metadata names peers attaches as replica; one that
 *	never had any, as owner at the highest epoch it accepted.
 *	With %CHORUS_A_DISKLESS instead of %CHORUS_A_BACKING_PATH, creates a
 *	diskless access point: a block device with no local replica, whose
 *	every request goes to the owner. It needs %CHORUS_A_SIZE_BYTES,
 *	%CHORUS_A_UUID and %CHORUS_A_NODE_ID (%CHORUS_A_BLOCK_SIZE defaults to
 *	512); %CHORUS_A_EPOCH, if given, is the highest epoch it accepts an
 *	owner below, since it has no metadata to remember one. It is never
 *	the owner.
 *	Replies with the volume as %CHORUS_CMD_VOLUME_GET does.
 *	Needs CAP_NET_ADMIN.
 * @CHORUS_CMD_VOLUME_DESTROY: destroy the volume named by
 *	%CHORUS_A_VOLUME_NAME; fails with -EBUSY while it is open.
 *	Needs CAP_NET_ADMIN.
 * @CHORUS_CMD_VOLUME_GET: doit: the volume named by %CHORUS_A_VOLUME_NAME;
 *	dumpit: every volume. Open to every user.
 * @CHORUS_CMD_EVENT: multicast on the "events" group only: a volume was
 *	created, destroyed or changed state. Carries %CHORUS_A_EVENT and
 *	the volume's attributes as %CHORUS_CMD_VOLUME_GET does; peer events
 *	add %CHORUS_A_PEER (the peer concerned) and %CHORUS_A_REASON.
 * @CHORUS_CMD_LISTEN: accept replication connections on %CHORUS_A_ADDRESS
 *	and %CHORUS_A_PORT (default %CHORUS_DEFAULT_PORT); one listener per
 *	node, shared by every volume. Needs CAP_NET_ADMIN.
 * @CHORUS_CMD_UNLISTEN: stop the listener; established connections stay.
 * @CHORUS_CMD_PEER_ADD: declare peer %CHORUS_A_NODE_ID of volume
 *	%CHORUS_A_VOLUME_NAME at %CHORUS_A_ADDRESS, %CHORUS_A_PORT, with
 *	%CHORUS_A_TRANSPORT and %CHORUS_A_NR_CONNS connections;
 *	%CHORUS_A_INITIAL_SYNC says what a peer new to this volume needs;
 *	%CHORUS_A_DISKLESS declares a peer that is a diskless access point:
 *	it takes no metadata slot and is never in the write set.
 * @CHORUS_CMD_PEER_DEL: forget a peer; refused while it holds I/O.
 * @CHORUS_CMD_PEER_CONNECT: start connecting to a peer (the node with the
 *	lower id dials, the other accepts), retrying with back-off.
 * @CHORUS_CMD_PEER_DISCONNECT: close the peer's connections and stop.
 * @CHORUS_CMD_SET_ROLE: make this node %CHORUS_A_ROLE of the volume;
 *	an owner needs %CHORUS_A_EPOCH, higher than any accepted (equal
 *	only when this node is owner already).
 * @CHORUS_CMD_WRITESET_REMOVE: take peer %CHORUS_A_NODE_ID out of the
 *	write set: it is marked out of date and held I/O completes. With
 *	this node's own id, on an owner whose disk failed: the failure is
 *	recorded, and the writes held because their local part failed
 *	complete on the other members (refused while the disk works or
 *	when no other up-to-date member is in the write set).
 * @CHORUS_CMD_VERIFY_START: compare this replica with peer
 *	%CHORUS_A_NODE_ID region by region.
 * @CHORUS_CMD_VOLUME_SET: change a volume's tunables:
 *	%CHORUS_A_REQUEST_TIMEOUT_MS, %CHORUS_A_PING_INTERVAL_MS,
 *	%CHORUS_A_PING_TIMEOUT_MS, %CHORUS_A_RESYNC_RATE,
 *	%CHORUS_A_AUTO_DEGRADE.
 * @CHORUS_CMD_LEASE_SET: set this node's lease deadline,
 *	%CHORUS_A_LEASE_DEADLINE_NS, at most 60 s ahead; 0 disarms the lease.
 *	Past the deadline every volume this node owns holds its reads and
 *	writes (neither starts nor completes them) until a later deadline is
 *	set, the lease is disarmed, or the node stops being the owner (they
 *	fail with an I/O error then). Disarmed is the state at load: volumes
 *	managed without chorusd never hold.
 * @CHORUS_CMD_LEASE_GET: the lease: %CHORUS_A_LEASE_STATE,
 *	%CHORUS_A_LEASE_DEADLINE_NS, %CHORUS_A_LEASE_NOW_NS,
 *	%CHORUS_A_LEASE_EXPIRIES.
 * @CHORUS_CMD_DISK_ATTACH: give volume %CHORUS_A_VOLUME_NAME, whose disk
 *	failed, the new backing device %CHORUS_A_BACKING_PATH (formatted for
 *	it) while the volume runs; refused on the owner. Replies with the
 *	volume as %CHORUS_CMD_VOLUME_GET does.
 * @CHORUS_CMD_AUTH_SET: the node's peer secret, for every replication
 *	connection (Documentation/wire-protocol.rst, "Authentication"); exactly
 *	one of: %CHORUS_A_AUTH_SECRET, the new current secret, with
 *	%CHORUS_A_AUTH_KEEP_PREVIOUS_S to go on accepting the one it replaces
 *	for that many seconds (a rotation; without it the old one is forgotten
 *	at once); %CHORUS_A_AUTH_DROP_PREVIOUS, stop accepting the previous
 *	secret now; %CHORUS_A_AUTH_CLEAR, forget every secret (authentication
 *	off). Setting the current secret again changes nothing.
 * @CHORUS_CMD_AUTH_GET: whether a secret is set and which, never the
 *	secret: %CHORUS_A_AUTH_KEY_ID, %CHORUS_A_AUTH_PREV_KEY_ID,
 *	%CHORUS_A_AUTH_PREV_REMAINING_S, %CHORUS_A_AUTH_FAILURES.
 * @__CHORUS_CMD_MAX: internal
 * @CHORUS_CMD_MAX: highest command number
 */
enum chorus_cmd {
	CHORUS_CMD_UNSPEC,
	CHORUS_CMD_VOLUME_CREATE,
	CHORUS_CMD_VOLUME_DESTROY,
	CHORUS_CMD_VOLUME_GET,
	CHORUS_CMD_EVENT,
	CHORUS_CMD_LISTEN,
	CHORUS_CMD_UNLISTEN,
	CHORUS_CMD_PEER_ADD,
	CHORUS_CMD_PEER_DEL,
	CHORUS_CMD_PEER_CONNECT,
	CHORUS_CMD_PEER_DISCONNECT,
	CHORUS_CMD_SET_ROLE,
	CHORUS_CMD_WRITESET_REMOVE,
	CHORUS_CMD_VERIFY_START,
	CHORUS_CMD_VOLUME_SET,
	CHORUS_CMD_LEASE_SET,
	CHORUS_CMD_LEASE_GET,
	CHORUS_CMD_DISK_ATTACH,
	CHORUS_CMD_AUTH_SET,
	CHORUS_CMD_AUTH_GET,

	__CHORUS_CMD_MAX,
	CHORUS_CMD_MAX = __CHORUS_CMD_MAX - 1
};

/**
 * enum chorus_attr - top-level attributes of the "chorus" family
 * @CHORUS_A_UNSPEC: unused
 * @CHORUS_A_PAD: padding for 64-bit attributes
 * @CHORUS_A_VOLUME_NAME: NUL-terminated string, 1..63 characters of
 *	[A-Za-z0-9._-], not starting with '.'; unique per node
 * @CHORUS_A_BACKING_PATH: NUL-terminated absolute path of a block device
 * @CHORUS_A_SIZE_BYTES: u64, volume size in bytes, a multiple of the
 *	block size and at most the backing device's size
 * @CHORUS_A_BLOCK_SIZE: u32, logical block size: 512, 1024, 2048 or 4096
 *	and at least the backing device's logical block size
 * @CHORUS_A_UUID: binary, %CHORUS_UUID_LEN bytes, the volume's identity
 * @CHORUS_A_MINOR: u32, first minor of the volume's block device
 * @CHORUS_A_DISK_NAME: string, kernel name of the block device ("chorus0")
 * @CHORUS_A_STATE: u32, &enum chorus_volume_state
 * @CHORUS_A_EVENT: u32, &enum chorus_event (events only)
 * @CHORUS_A_OPEN_COUNT: u32, how many times the block device is open
 * @CHORUS_A_STATS: nested, &enum chorus_stat_attr
 * @CHORUS_A_NODE_ID: u32, 1..%CHORUS_NODE_ID_MAX: this node's id in the
 *	volume (create, get) or a peer's (peer commands)
 * @CHORUS_A_ADDRESS: string, an IPv4 or IPv6 address literal
 * @CHORUS_A_PORT: u16, TCP port (host byte order)
 * @CHORUS_A_TRANSPORT: u32, &enum chorus_transport
 * @CHORUS_A_NR_CONNS: u32, connections per peer, 1..%CHORUS_MAX_CONNS
 *	(default 2)
 * @CHORUS_A_ROLE: u32, &enum chorus_role
 * @CHORUS_A_EPOCH: u64, the owner's epoch (set role); the highest epoch
 *	accepted (get)
 * @CHORUS_A_PEERS: nested list of %CHORUS_A_PEER
 * @CHORUS_A_PEER: nested, &enum chorus_peer_attr
 * @CHORUS_A_REQUEST_TIMEOUT_MS: u32, how long a peer may take to ack a
 *	write before it is declared unreachable (default 10000)
 * @CHORUS_A_PING_INTERVAL_MS: u32, heartbeat period (default 1000)
 * @CHORUS_A_PING_TIMEOUT_MS: u32, silence after which a peer is
 *	unreachable (default 5000)
 * @CHORUS_A_RESYNC_RATE: u64, resync limit in bytes per second, 0 for
 *	none (default 100 MiB/s)
 * @CHORUS_A_AUTO_DEGRADE: u8, 1: the kernel takes an unreachable peer out
 *	of the write set by itself (no fencing; standalone use only)
 * @CHORUS_A_INITIAL_SYNC: u32, &enum chorus_initial_sync
 * @CHORUS_A_REASON: string, why a peer event happened
 * @CHORUS_A_LEASE_DEADLINE_NS: u64, the lease deadline on CLOCK_BOOTTIME
 *	(the monotonic clock that keeps counting through suspend), in ns;
 *	0: disarmed
 * @CHORUS_A_LEASE_NOW_NS: u64, CLOCK_BOOTTIME when the answer was made
 * @CHORUS_A_LEASE_STATE: u32, &enum chorus_lease_state
 * @CHORUS_A_LEASE_EXPIRIES: u64, deadlines that passed since the module
 *	was loaded
 * @CHORUS_A_DISKLESS: flag: VOLUME_CREATE, a diskless access point (also
 *	in the volume's attributes); PEER_ADD, a peer that is one
 * @CHORUS_A_HELD_IO: u32, requests of the volume held because the lease
 *	deadline passed
 * @CHORUS_A_DISK_TIMEOUT_MS: u32, how long the local disk may complete
 *	nothing while I/O is outstanding before it is declared failed and
 *	detached; 0 disables the check (default 5000, else 1000..600000)
 * @CHORUS_A_DISK_ERROR: string, why the local disk was detached (in the
 *	volume's attributes once %CHORUS_A_STATE is %CHORUS_VOLUME_STATE_FAILED,
 *	and in its %CHORUS_EVENT_VOLUME_STATE event)
 * @CHORUS_A_DISK_FAILED_AT: u64, when the local disk was detached, in
 *	seconds since the epoch (CLOCK_REALTIME)
 * @CHORUS_A_AUTH_SECRET: binary, %CHORUS_AUTH_SECRET_MIN to
 *	%CHORUS_AUTH_SECRET_MAX bytes: the peer secret (AUTH_SET only; never
 *	sent back)
 * @CHORUS_A_AUTH_KEEP_PREVIOUS_S: u32, 1..%CHORUS_AUTH_KEEP_MAX_S: how long
 *	the secret replaced stays accepted
 * @CHORUS_A_AUTH_DROP_PREVIOUS: flag: stop accepting the previous secret
 * @CHORUS_A_AUTH_CLEAR: flag: forget every secret
 * @CHORUS_A_AUTH_KEY_ID: u64, the id of the current secret (the first 8
 *	bytes, little-endian, of HMAC-SHA256(secret, "chorus-key-id")), 0 when
 *	none is set
 * @CHORUS_A_AUTH_PREV_KEY_ID: u64, the id of the previous secret still
 *	accepted, 0 when none
 * @CHORUS_A_AUTH_PREV_REMAINING_S: u32, seconds it is still accepted
 * @CHORUS_A_AUTH_FAILURES: u64, replication connections refused since load
 *	for a wrong or missing proof or a wrong address
 * @CHORUS_A_PAYLOAD_CRC: u8, 0 or 1: this node sends the CRC-32C of every
 *	WRITE, FWD_WRITE, RESYNC_DATA and READ_DATA payload, which the
 *	receiver checks (default 0; a receiver checks a CRC that comes
 *	whatever its own setting)
 * @CHORUS_A_DISK_IN_WRITESET: u8, 1 while this node's own disk is in its
 *	write set; 0 once a failed disk left it (WRITESET_REMOVE with the own
 *	id), and on a diskless volume. A failed disk still in the write set holds every write whose
 *	local part failed
 * @CHORUS_A_DISK_HELD: u32, writes and flushes held because their local
 *	part failed and the failure is not recorded yet
 * @__CHORUS_A_MAX: internal
 * @CHORUS_A_MAX: highest attribute number
 */
enum chorus_attr {
	CHORUS_A_UNSPEC,
	CHORUS_A_PAD,
	CHORUS_A_VOLUME_NAME,
	CHORUS_A_BACKING_PATH,
	CHORUS_A_SIZE_BYTES,
	CHORUS_A_BLOCK_SIZE,
	CHORUS_A_UUID,
	CHORUS_A_MINOR,
	CHORUS_A_DISK_NAME,
	CHORUS_A_STATE,
	CHORUS_A_EVENT,
	CHORUS_A_OPEN_COUNT,
	CHORUS_A_STATS,
	CHORUS_A_NODE_ID,
	CHORUS_A_ADDRESS,
	CHORUS_A_PORT,
	CHORUS_A_TRANSPORT,
	CHORUS_A_NR_CONNS,
	CHORUS_A_ROLE,
	CHORUS_A_EPOCH,
	CHORUS_A_PEERS,
	CHORUS_A_PEER,
	CHORUS_A_REQUEST_TIMEOUT_MS,
	CHORUS_A_PING_INTERVAL_MS,
	CHORUS_A_PING_TIMEOUT_MS,
	CHORUS_A_RESYNC_RATE,
	CHORUS_A_AUTO_DEGRADE,
	CHORUS_A_INITIAL_SYNC,
	CHORUS_A_REASON,
	CHORUS_A_LEASE_DEADLINE_NS,
	CHORUS_A_LEASE_NOW_NS,
	CHORUS_A_LEASE_STATE,
	CHORUS_A_LEASE_EXPIRIES,
	CHORUS_A_HELD_IO,
	CHORUS_A_DISKLESS,
	CHORUS_A_DISK_TIMEOUT_MS,
	CHORUS_A_DISK_ERROR,
	CHORUS_A_DISK_FAILED_AT,
	CHORUS_A_AUTH_SECRET,
	CHORUS_A_AUTH_KEEP_PREVIOUS_S,
	CHORUS_A_AUTH_DROP_PREVIOUS,
	CHORUS_A_AUTH_CLEAR,
	CHORUS_A_AUTH_KEY_ID,
	CHORUS_A_AUTH_PREV_KEY_ID,
	CHORUS_A_AUTH_PREV_REMAINING_S,
	CHORUS_A_AUTH_FAILURES,
	CHORUS_A_PAYLOAD_CRC,
	CHORUS_A_DISK_IN_WRITESET,
	CHORUS_A_DISK_HELD,

	__CHORUS_A_MAX,
	CHORUS_A_MAX = __CHORUS_A_MAX - 1
};

/**
 * enum chorus_stat_attr - per-volume counters, nested in %CHORUS_A_STATS
 *
 * All but the latency histograms are u64 and count since the volume was
 * created.
 * @CHORUS_STAT_UNSPEC: unused
 * @CHORUS_STAT_PAD: padding
 * @CHORUS_STAT_READS: completed read requests
 * @CHORUS_STAT_READ_BYTES: bytes read
 * @CHORUS_STAT_WRITES: completed write requests
 * @CHORUS_STAT_WRITE_BYTES: bytes written
 * @CHORUS_STAT_FLUSHES: completed flush requests
 * @CHORUS_STAT_FUA_WRITES: completed writes that carried FUA
 * @CHORUS_STAT_DISCARDS: completed discard requests
 * @CHORUS_STAT_WRITE_ZEROES: completed write-zeroes requests
 * @CHORUS_STAT_ERRORS: requests completed with an error
 * @CHORUS_STAT_STALE_EPOCH: replication messages refused for an epoch
 *	older than the highest accepted
 * @CHORUS_STAT_FORWARDED: requests this node, not the owner, forwarded to
 *	the owner
 * @CHORUS_STAT_FORWARD_RESENT: forwarded requests held (no owner, or their
 *	session ended) and sent when a session with an owner came up
 * @CHORUS_STAT_FORWARD_EXPIRED: forwarded requests failed because no owner
 *	took them within the forward timeout
 * @CHORUS_STAT_FORWARD_SERVED: requests other nodes forwarded that this
 *	node served as owner
 * @CHORUS_STAT_READ_LATENCY: nested, &enum chorus_lat_attr: how long the
 *	reads counted in %CHORUS_STAT_READS took
 * @CHORUS_STAT_WRITE_LATENCY: nested, &enum chorus_lat_attr: the same for
 *	%CHORUS_STAT_WRITES
 * @CHORUS_STAT_DEGRADED_READS: u64, on an owner whose disk failed: reads
 *	that a replica of the write set served instead
 * @CHORUS_STAT_PAYLOAD_CRC_CHECKED: u64, replication messages received
 *	whose payload CRC-32C was checked and matched
 * @CHORUS_STAT_PAYLOAD_CRC_ERRORS: u64, replication messages received
 *	whose payload did not match its CRC-32C (each closed its session)
 * @__CHORUS_STAT_MAX: internal
 * @CHORUS_STAT_MAX: highest counter number
 */
enum chorus_stat_attr {
	CHORUS_STAT_UNSPEC,
	CHORUS_STAT_PAD,
	CHORUS_STAT_READS,
	CHORUS_STAT_READ_BYTES,
	CHORUS_STAT_WRITES,
	CHORUS_STAT_WRITE_BYTES,
	CHORUS_STAT_FLUSHES,
	CHORUS_STAT_FUA_WRITES,
	CHORUS_STAT_DISCARDS,
	CHORUS_STAT_WRITE_ZEROES,
	CHORUS_STAT_ERRORS,
	CHORUS_STAT_STALE_EPOCH,
	CHORUS_STAT_FORWARDED,
	CHORUS_STAT_FORWARD_RESENT,
	CHORUS_STAT_FORWARD_EXPIRED,
	CHORUS_STAT_FORWARD_SERVED,
	CHORUS_STAT_READ_LATENCY,
	CHORUS_STAT_WRITE_LATENCY,
	CHORUS_STAT_DEGRADED_READS,
	CHORUS_STAT_PAYLOAD_CRC_CHECKED,
	CHORUS_STAT_PAYLOAD_CRC_ERRORS,

	__CHORUS_STAT_MAX,
	CHORUS_STAT_MAX = __CHORUS_STAT_MAX - 1
};

/*
 * Latency histogram buckets: bucket i (0 <= i < CHORUS_LAT_BUCKETS - 1)
 * counts the requests that took at most CHORUS_LAT_FIRST_US << i
 * microseconds and more than the bucket before it allows (16 us .. 16.8 s);
 * the last bucket counts the slower ones. A request's latency runs from
 * the block layer handing it to chorus to its completion.
 */
#define CHORUS_LAT_FIRST_US	16
#define CHORUS_LAT_BUCKETS	22

/**
 * enum chorus_lat_attr - a latency histogram, nested in
 *	%CHORUS_STAT_READ_LATENCY or %CHORUS_STAT_WRITE_LATENCY
 *
 * Counts since the volume was created; the buckets are not cumulative.
 * @CHORUS_LAT_A_UNSPEC: unused
 * @CHORUS_LAT_A_PAD: padding
 * @CHORUS_LAT_A_SUM_NS: u64, the latencies of the requests counted, added
 *	up, in nanoseconds
 * @CHORUS_LAT_A_BUCKET: u64, repeated %CHORUS_LAT_BUCKETS times: the
 *	requests in each bucket, the fastest bucket first
 * @__CHORUS_LAT_A_MAX: internal
 * @CHORUS_LAT_A_MAX: highest histogram attribute number
 */
enum chorus_lat_attr {
	CHORUS_LAT_A_UNSPEC,
	CHORUS_LAT_A_PAD,
	CHORUS_LAT_A_SUM_NS,
	CHORUS_LAT_A_BUCKET,

	__CHORUS_LAT_A_MAX,
	CHORUS_LAT_A_MAX = __CHORUS_LAT_A_MAX - 1
};

/**
 * enum chorus_volume_state - what a volume can do now
 * @CHORUS_VOLUME_STATE_UNSPEC: unused
 * @CHORUS_VOLUME_STATE_ONLINE: serving I/O
 * @CHORUS_VOLUME_STATE_FAILED: the local disk returned an I/O error or
 *	completed nothing within the disk timeout, and is detached: a
 *	replica applies nothing more and answers that its disk failed, its
 *	metadata stays as it was; an owner sends nothing more to it: its
 *	writes stand on the up-to-date members of the write set and its reads
 *	are served by one of them (with none, each fails)
 * @__CHORUS_VOLUME_STATE_MAX: internal
 */
enum chorus_volume_state {
	CHORUS_VOLUME_STATE_UNSPEC,
	CHORUS_VOLUME_STATE_ONLINE,
	CHORUS_VOLUME_STATE_FAILED,

	__CHORUS_VOLUME_STATE_MAX,
};

/**
 * enum chorus_event - what a %CHORUS_CMD_EVENT announces
 * @CHORUS_EVENT_UNSPEC: unused
 * @CHORUS_EVENT_VOLUME_CREATED: a volume was created
 * @CHORUS_EVENT_VOLUME_DESTROYED: a volume was destroyed
 * @CHORUS_EVENT_VOLUME_STATE: a volume's %CHORUS_A_STATE changed
 * @CHORUS_EVENT_ROLE: the volume's role or epoch changed; an owner superseded
 *	in a handshake adds the peer that superseded it (%CHORUS_A_PEER) and
 *	%CHORUS_A_REASON
 * @CHORUS_EVENT_PEER_STATE: a peer's connection state changed (%CHORUS_A_PEER,
 *	%CHORUS_A_REASON)
 * @CHORUS_EVENT_WRITESET: a peer joined or left the write set
 * @CHORUS_EVENT_RESYNC: a resync started, progressed (every 5 s) or ended
 * @CHORUS_EVENT_VERIFY: a verify found a mismatch or ended
 * @CHORUS_EVENT_STALE_EPOCH: a message with an old epoch was refused
 * @CHORUS_EVENT_PEER_ADDED: a peer was declared
 * @CHORUS_EVENT_PEER_REMOVED: a peer was forgotten
 * @CHORUS_EVENT_LEASE_EXPIRED: the lease deadline passed while this node
 *	owns the volume: its I/O is held (%CHORUS_A_HELD_IO)
 * @CHORUS_EVENT_AUTH_FAILED: a replication connection for the volume was
 *	refused for who it comes from: a wrong or missing proof of the peer
 *	secret, or an address other than the peer's (%CHORUS_A_PEER,
 *	%CHORUS_A_REASON, which names the address)
 * @__CHORUS_EVENT_MAX: internal
 */
enum chorus_event {
	CHORUS_EVENT_UNSPEC,
	CHORUS_EVENT_VOLUME_CREATED,
	CHORUS_EVENT_VOLUME_DESTROYED,
	CHORUS_EVENT_VOLUME_STATE,
	CHORUS_EVENT_ROLE,
	CHORUS_EVENT_PEER_STATE,
	CHORUS_EVENT_WRITESET,
	CHORUS_EVENT_RESYNC,
	CHORUS_EVENT_VERIFY,
	CHORUS_EVENT_STALE_EPOCH,
	CHORUS_EVENT_PEER_ADDED,
	CHORUS_EVENT_PEER_REMOVED,
	CHORUS_EVENT_LEASE_EXPIRED,
	CHORUS_EVENT_AUTH_FAILED,

	__CHORUS_EVENT_MAX,
};

/**
 * enum chorus_peer_attr - one peer, nested in %CHORUS_A_PEER
 * @CHORUS_PEER_A_UNSPEC: unused
 * @CHORUS_PEER_A_PAD: padding
 * @CHORUS_PEER_A_NODE_ID: u32
 * @CHORUS_PEER_A_ADDRESS: string
 * @CHORUS_PEER_A_PORT: u16
 * @CHORUS_PEER_A_TRANSPORT: u32, &enum chorus_transport
 * @CHORUS_PEER_A_NR_CONNS: u32
 * @CHORUS_PEER_A_CONN_STATE: u32, &enum chorus_conn_state
 * @CHORUS_PEER_A_REPL_STATE: u32, &enum chorus_repl_state
 * @CHORUS_PEER_A_IN_WRITESET: u8
 * @CHORUS_PEER_A_ROLE: u32, the peer's role as it said in its handshake
 * @CHORUS_PEER_A_DIRTY_BYTES: u64, data the peer lacks (bitmap)
 * @CHORUS_PEER_A_SYNC_TOTAL_BYTES: u64, size of the running resync
 * @CHORUS_PEER_A_SYNC_DONE_BYTES: u64, bytes of it done
 * @CHORUS_PEER_A_SYNC_RATE: u64, bytes per second over the last seconds
 * @CHORUS_PEER_A_WRITES_SENT: u64
 * @CHORUS_PEER_A_BYTES_SENT: u64
 * @CHORUS_PEER_A_HELD: u32, writes waiting for this peer now: sent and not
 *	acknowledged, or not sent yet because they wait for it to store the
 *	activity log (%CHORUS_PEER_A_AL_WAITING of them)
 * @CHORUS_PEER_A_RECONNECTS: u64, sessions established
 * @CHORUS_PEER_A_RESYNCED_BYTES: u64, bytes resynced since PEER_ADD
 * @CHORUS_PEER_A_VERIFY_DONE_BYTES: u64, bytes compared by the last verify
 * @CHORUS_PEER_A_VERIFY_MISMATCHES: u64, regions that differed
 * @CHORUS_PEER_A_VERIFY_RUNNING: u8
 * @CHORUS_PEER_A_LAST_ERROR: string, why the last session ended
 * @CHORUS_PEER_A_ACTIVE_TRANSPORT: u32, &enum chorus_transport of the
 *	session carrying the traffic now (%CHORUS_TRANSPORT_TCP or
 *	%CHORUS_TRANSPORT_RDMA); %CHORUS_TRANSPORT_UNSPEC when there is none
 * @CHORUS_PEER_A_PATH: nested &enum chorus_path_attr, repeated: one per
 *	transport the peer may use (two for %CHORUS_TRANSPORT_RDMA_TCP)
 * @CHORUS_PEER_A_DISK_FAILED: u8, 1: the peer said in this session that its
 *	disk failed; its part of every write stays held until it leaves the
 *	write set (or the session ends)
 * @CHORUS_PEER_A_AL_WAITING: u32, writes to an extent new in the activity
 *	log waiting for this member of the write set to store it (counted in
 *	%CHORUS_PEER_A_HELD too): a member that is away, or whose disk failed
 *	under a log write, holds them until it stores the log or leaves the
 *	write set
 * @__CHORUS_PEER_A_MAX: internal
 * @CHORUS_PEER_A_MAX: highest peer attribute number
 */
enum chorus_peer_attr {
	CHORUS_PEER_A_UNSPEC,
	CHORUS_PEER_A_PAD,
	CHORUS_PEER_A_NODE_ID,
	CHORUS_PEER_A_ADDRESS,
	CHORUS_PEER_A_PORT,
	CHORUS_PEER_A_TRANSPORT,
	CHORUS_PEER_A_NR_CONNS,
	CHORUS_PEER_A_CONN_STATE,
	CHORUS_PEER_A_REPL_STATE,
	CHORUS_PEER_A_IN_WRITESET,
	CHORUS_PEER_A_ROLE,
	CHORUS_PEER_A_DIRTY_BYTES,
	CHORUS_PEER_A_SYNC_TOTAL_BYTES,
	CHORUS_PEER_A_SYNC_DONE_BYTES,
	CHORUS_PEER_A_SYNC_RATE,
	CHORUS_PEER_A_WRITES_SENT,
	CHORUS_PEER_A_BYTES_SENT,
	CHORUS_PEER_A_HELD,
	CHORUS_PEER_A_RECONNECTS,
	CHORUS_PEER_A_RESYNCED_BYTES,
	CHORUS_PEER_A_VERIFY_DONE_BYTES,
	CHORUS_PEER_A_VERIFY_MISMATCHES,
	CHORUS_PEER_A_VERIFY_RUNNING,
	CHORUS_PEER_A_LAST_ERROR,
	CHORUS_PEER_A_ACTIVE_TRANSPORT,
	CHORUS_PEER_A_PATH,
	CHORUS_PEER_A_DISK_FAILED,
	CHORUS_PEER_A_AL_WAITING,

	__CHORUS_PEER_A_MAX,
	CHORUS_PEER_A_MAX = __CHORUS_PEER_A_MAX - 1
};

/**
 * enum chorus_path_attr - one path of a peer, nested in %CHORUS_PEER_A_PATH
 * @CHORUS_PATH_A_UNSPEC: unused
 * @CHORUS_PATH_A_PAD: padding
 * @CHORUS_PATH_A_TRANSPORT: u32, %CHORUS_TRANSPORT_TCP or
 *	%CHORUS_TRANSPORT_RDMA
 * @CHORUS_PATH_A_ACTIVE: u8, the current session uses this path
 * @CHORUS_PATH_A_SESSIONS: u64, sessions established on this path
 * @CHORUS_PATH_A_FAILURES: u64, dial attempts on this path that failed
 * @CHORUS_PATH_A_MSGS_SENT: u64, messages sent on this path
 * @CHORUS_PATH_A_BYTES_SENT: u64, data bytes sent on this path
 * @CHORUS_PATH_A_LAST_ERROR: string, why this path last failed
 * @__CHORUS_PATH_A_MAX: internal
 * @CHORUS_PATH_A_MAX: highest path attribute number
 */
enum chorus_path_attr {
	CHORUS_PATH_A_UNSPEC,
	CHORUS_PATH_A_PAD,
	CHORUS_PATH_A_TRANSPORT,
	CHORUS_PATH_A_ACTIVE,
	CHORUS_PATH_A_SESSIONS,
	CHORUS_PATH_A_FAILURES,
	CHORUS_PATH_A_MSGS_SENT,
	CHORUS_PATH_A_BYTES_SENT,
	CHORUS_PATH_A_LAST_ERROR,

	__CHORUS_PATH_A_MAX,
	CHORUS_PATH_A_MAX = __CHORUS_PATH_A_MAX - 1
};

/**
 * enum chorus_transport - how replication traffic moves
 * @CHORUS_TRANSPORT_UNSPEC: unused
 * @CHORUS_TRANSPORT_TCP: kernel TCP sockets only
 * @CHORUS_TRANSPORT_RDMA: RDMA verbs (rdma_cm, RC queue pairs) only
 * @CHORUS_TRANSPORT_RDMA_TCP: RDMA, and TCP while RDMA cannot connect;
 *	back to RDMA as soon as its route works again
 * @__CHORUS_TRANSPORT_MAX: internal
 */
enum chorus_transport {
	CHORUS_TRANSPORT_UNSPEC,
	CHORUS_TRANSPORT_TCP,
	CHORUS_TRANSPORT_RDMA,
	CHORUS_TRANSPORT_RDMA_TCP,

	__CHORUS_TRANSPORT_MAX,
};

/**
 * enum chorus_role - what this node does for a volume
 * @CHORUS_ROLE_UNSPEC: unused
 * @CHORUS_ROLE_OWNER: orders and replicates writes; the attach default
 *	of a volume that never had peers,
 *	at the highest epoch the metadata has accepted
 * @CHORUS_ROLE_REPLICA: applies the owner's writes; the block device is
 *	read-only
 * @__CHORUS_ROLE_MAX: internal
 */
enum chorus_role {
	CHORUS_ROLE_UNSPEC,
	CHORUS_ROLE_OWNER,
	CHORUS_ROLE_REPLICA,

	__CHORUS_ROLE_MAX,
};

/**
 * enum chorus_conn_state - a peer's connection
 * @CHORUS_CONN_UNSPEC: unused
 * @CHORUS_CONN_DISCONNECTED: not wanted (no PEER_CONNECT, or disconnected)
 * @CHORUS_CONN_CONNECTING: dialling or waiting to be dialled
 * @CHORUS_CONN_CONNECTED: every connection of the session is up
 * @CHORUS_CONN_UNREACHABLE: the session failed; reconnecting
 * @__CHORUS_CONN_MAX: internal
 */
enum chorus_conn_state {
	CHORUS_CONN_UNSPEC,
	CHORUS_CONN_DISCONNECTED,
	CHORUS_CONN_CONNECTING,
	CHORUS_CONN_CONNECTED,
	CHORUS_CONN_UNREACHABLE,

	__CHORUS_CONN_MAX,
};

/**
 * enum chorus_repl_state - a peer's replica, as the owner sees it
 * @CHORUS_REPL_UNSPEC: unused
 * @CHORUS_REPL_UP_TO_DATE: in the write set and identical
 * @CHORUS_REPL_OUT_OF_DATE: out of the write set; its bitmap grows
 * @CHORUS_REPL_SYNCING: back in the write set, its bitmap being copied
 * @CHORUS_REPL_DISKLESS: a diskless access point: no replica, never in the
 *	write set
 * @__CHORUS_REPL_MAX: internal
 */
enum chorus_repl_state {
	CHORUS_REPL_UNSPEC,
	CHORUS_REPL_UP_TO_DATE,
	CHORUS_REPL_OUT_OF_DATE,
	CHORUS_REPL_SYNCING,
	CHORUS_REPL_DISKLESS,

	__CHORUS_REPL_MAX,
};

/**
 * enum chorus_initial_sync - what a peer new to a volume's metadata needs
 * @CHORUS_INITIAL_SYNC_UNSPEC: unused
 * @CHORUS_INITIAL_SYNC_FULL: copy every region (the default)
 * @CHORUS_INITIAL_SYNC_NONE: nothing: the operator asserts that both
 *	replicas were formatted together and never written apart. Wrong use
 *	leaves the replicas different.
 * @__CHORUS_INITIAL_SYNC_MAX: internal
 */
enum chorus_initial_sync {
	CHORUS_INITIAL_SYNC_UNSPEC,
	CHORUS_INITIAL_SYNC_FULL,
	CHORUS_INITIAL_SYNC_NONE,

	__CHORUS_INITIAL_SYNC_MAX,
};

/**
 * enum chorus_lease_state - the node's lease deadline (%CHORUS_A_LEASE_STATE)
 * @CHORUS_LEASE_UNSPEC: unused
 * @CHORUS_LEASE_DISARMED: no deadline: owners serve I/O without a lease
 * @CHORUS_LEASE_VALID: the deadline is ahead
 * @CHORUS_LEASE_EXPIRED: the deadline passed: owners hold their I/O
 * @__CHORUS_LEASE_MAX: internal
 */
enum chorus_lease_state {
	CHORUS_LEASE_UNSPEC,
	CHORUS_LEASE_DISARMED,
	CHORUS_LEASE_VALID,
	CHORUS_LEASE_EXPIRED,

	__CHORUS_LEASE_MAX,
};

#endif /* _UAPI_LINUX_CHORUS_H */
