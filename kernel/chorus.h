/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: declarations shared by the module's
 * files. One file per concern:
 *
 *   main.c     module init/exit, the volume registry
 *   backing.c  the local replica: the lower block device
 *   dev.c      the blk-mq gendisk of a volume and its I/O path
 *   sysfs.c    /sys/block/chorusN/chorus/
 *   genl.c     the generic netlink family "chorus"
 *   lease.c    the node's lease deadline: owners hold I/O past it
 *   auth.c     peer authentication of replication connections (auth.h)
 *   latency.c  read and write latency histograms
 *
 * and replication, declared in repl.h.
 */
#ifndef CHORUS_H
#define CHORUS_H

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/mutex.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>
#include <uapi/linux/chorus.h>
#include <uapi/linux/chorus_meta.h>

#include "repl.h"

struct genl_info;
struct netlink_ext_ack;
struct sk_buff;

/**
 * struct chorus_backing - the local replica of a volume
 * @bdev: the lower block device, opened exclusively by the volume
 * @path: the path it was opened by, as given at creation
 * @mode: the mode it was opened with, needed to release it
 */
struct chorus_backing {
	struct block_device *bdev;
	char path[CHORUS_BACKING_PATH_MAX];
	fmode_t mode;
};

/**
 * struct chorus_meta - a volume's metadata on its backing device
 * @super: in-memory copy of the current superblock
 * @current_copy: the copy holding @super on disk: 0 (A) or 1 (B)
 * @end_bytes: end of the backing device, rounded down to CHORUS_META_BLOCK
 * @md_start: first sector of the metadata area
 *
 * @super's fields and @current_copy change under chorus_repl.meta_lock
 * (chorus_meta_write_super() and its callers) once the volume is attached;
 * at attach they are set under chorus_volumes_lock before anything else can
 * reach the volume. Readers outside meta_lock read single fields that are
 * written whole (the epoch, the peer slots) and accept a stale value. The
 * rest is set at attach.
 */
struct chorus_meta {
	struct chorus_meta_super *super;
	int current_copy;
	u64 end_bytes;
	sector_t md_start;
};

/**
 * struct chorus_stats - per-CPU I/O counters of a volume
 * @reads: completed read requests
 * @read_bytes: bytes they read
 * @writes: completed write requests
 * @write_bytes: bytes they wrote
 * @flushes: completed flush requests
 * @fua_writes: completed writes with FUA
 * @discards: completed discards
 * @write_zeroes: completed write-zeroes requests
 * @errors: requests completed with an error
 * @stale_epoch: messages and handshakes refused for a stale epoch
 * @forwarded: requests forwarded to the owner (forward.c)
 * @forward_resent: forwarded requests held, then sent on a new session
 * @forward_expired: forwarded requests failed by the forward timeout
 * @forward_served: requests of other nodes served here as owner
 * @degraded_reads: reads of an owner whose disk failed, that a replica
 *	served instead (forward.c)
 * @payload_crc_checked: received payloads whose CRC-32C matched (conn.c)
 * @payload_crc_errors: received payloads whose CRC-32C did not
 *
 * Updated with this_cpu_*() on request completion, which may run in hard
 * irq context; readers sum over all CPUs and accept a slightly stale total.
 */
struct chorus_stats {
	u64 reads;
	u64 read_bytes;
	u64 writes;
	u64 write_bytes;
	u64 flushes;
	u64 fua_writes;
	u64 discards;
	u64 write_zeroes;
	u64 errors;
	u64 stale_epoch;
	u64 forwarded;
	u64 forward_resent;
	u64 forward_expired;
	u64 forward_served;
	u64 degraded_reads;
	u64 payload_crc_checked;
	u64 payload_crc_errors;
};

/**
 * struct chorus_stat_desc - how one counter is named and found
 * @name: sysfs file name
 * @attr: netlink attribute, &enum chorus_stat_attr
 * @offset: offset of the u64 in &struct chorus_stats
 */
struct chorus_stat_desc {
	const char *name;
	u16 attr;
	size_t offset;
};

#define CHORUS_NR_STATS	17
extern const struct chorus_stat_desc chorus_stat_descs[CHORUS_NR_STATS];

static inline u64 chorus_stat_value(const struct chorus_stats *sum,
				    const struct chorus_stat_desc *desc)
{
	return *(const u64 *)((const u8 *)sum + desc->offset);
}

/* Which histogram of &struct chorus_lat. */
#define CHORUS_LAT_READ		0
#define CHORUS_LAT_WRITE	1
#define CHORUS_LAT_NR_OPS	2

/**
 * struct chorus_lat_hist - a latency histogram (latency.c)
 * @bucket: requests per bucket, as %CHORUS_LAT_BUCKETS in the uapi says
 * @sum_ns: their latencies added up, in ns
 */
struct chorus_lat_hist {
	u64 bucket[CHORUS_LAT_BUCKETS];
	u64 sum_ns;
};

/**
 * struct chorus_lat - per-CPU latency histograms of a volume
 * @hist: indexed by %CHORUS_LAT_READ or %CHORUS_LAT_WRITE
 *
 * Updated like &struct chorus_stats, with this_cpu_*() on completion.
 */
struct chorus_lat {
	struct chorus_lat_hist hist[CHORUS_LAT_NR_OPS];
};

/**
 * struct chorus_disk_health - the health of a volume's local disk (disk.c)
 * @lock: protects @error, @failed_at and @started; taken from bio
 *	completion, so with irqs off. Innermost: nothing is taken under it
 * @failed: the disk failed and is detached; set once, under @lock, read
 *	with READ_ONCE (a reader that misses it sends one more request to a
 *	disk that fails it)
 * @error: why it failed, under @lock
 * @failed_at: when, CLOCK_REALTIME seconds, under @lock
 * @inflight: bios submitted to the disk and not completed
 * @progress: jiffies of the last completion, or of the submission that
 *	found the disk idle; WRITE_ONCE/READ_ONCE (a stale value only moves
 *	the stall check by one period)
 * @timeout_ms: how long the disk may complete nothing while @inflight,
 *	0 for no limit; WRITE_ONCE by VOLUME_SET
 * @watch: looks for a stall while @inflight, on chorus_wq
 * @failed_work: logs and announces the failure from process context
 * @started: @failed_work may be queued: the volume is complete and not
 *	being torn down or given a new disk (chorus_disk_start(), _stop())
 */
struct chorus_disk_health {
	spinlock_t lock; /* see above */
	bool started;
	bool failed;
	char error[CHORUS_REASON_MAX];
	time64_t failed_at;
	atomic_t inflight;
	unsigned long progress;
	unsigned int timeout_ms;
	struct delayed_work watch;
	struct work_struct failed_work;
};

/**
 * struct chorus_volume - one volume on this node
 * @name: unique name on this node; immutable
 * @uuid: identity of the volume; immutable
 * @incarnation: random, never 0, chosen when the volume is created and
 *	never persisted: which volume object this is, sent in every HELLO
 *	(chorus_wire_hello.incarnation); immutable
 * @index: registry id, also the first minor and the N of "chorusN"; immutable
 * @nr_sectors: size in 512-byte sectors; immutable
 * @block_size: logical block size in bytes; immutable
 * @backing: the local replica; immutable while the volume exists, no
 *	device when @diskless
 * @meta: the replica's on-disk metadata; immutable. A diskless volume's
 *	superblock is in memory only (chorus_meta_init_diskless())
 * @diskless: an access point without a local replica: every request goes
 *	to the owner, and it never becomes the owner; immutable
 * @node_id: this node's id in the volume, 0 if none; immutable
 * @repl: replication state
 * @tag_set: blk-mq tag set of @disk
 * @disk: the block device exported as /dev/chorusN
 * @bio_set: clones of incoming bios sent to @backing
 * @stats: per-CPU counters
 * @lat: per-CPU latency histograms
 * @health: the health of @backing's device
 * @lock: protects @open_count and @dying
 * @open_count: how many times @disk is open
 * @dying: set once destruction began; opens fail from then on
 * @held_lock: protects @held_start, @held_done, @nr_held, @held_fail,
 *	@held_disk, @nr_disk_held and @disk_left_writeset, and a hand-over's
 *	change of chorus_repl.role and handover_gen (chorus_dev_hand_over());
 *	taken from request completion, so with irqs off. Innermost: nothing
 *	is taken under it
 * @held_start: requests not started because the lease deadline had passed
 *	(dev.c), linked by chorus_rq.wait_entry
 * @held_done: requests done but not completed, for the same reason
 * @nr_held: entries of both lists; read without the lock with READ_ONCE
 * @held_fail: fail, instead of holding, what the lease would hold: set
 *	while the node gives up ownership (chorus_dev_release_held())
 * @held_disk: writes and flushes done whose local part failed, not
 *	completed until the failure is recorded (@disk_left_writeset), under
 *	@held_lock; linked by chorus_rq.wait_entry
 * @nr_disk_held: entries of @held_disk; read without the lock with
 *	READ_ONCE
 * @disk_left_writeset: the failed local disk left this node's write set
 *	(WRITESET_REMOVE with the own id, chorus_disk_leave_writeset()): a
 *	write whose local part failed stands on the members' acks from then
 *	on. Written under @held_lock, read with READ_ONCE; cleared when a new
 *	disk is attached
 */
struct chorus_volume {
	char name[CHORUS_VOLUME_NAME_MAX];
	uuid_t uuid;
	u64 incarnation;
	int index;
	sector_t nr_sectors;
	u32 block_size;
	struct chorus_backing backing;
	struct chorus_meta meta;
	bool diskless;
	u32 node_id;
	struct chorus_repl repl;

	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
	struct bio_set bio_set;
	struct chorus_stats __percpu *stats;
	struct chorus_lat __percpu *lat;

	struct chorus_disk_health health;

	struct mutex lock; /* protects open_count and dying */
	unsigned int open_count;
	bool dying;

	spinlock_t held_lock; /* see above */
	struct list_head held_start;
	struct list_head held_done;
	unsigned int nr_held;
	bool held_fail;
	struct list_head held_disk;
	unsigned int nr_disk_held;
	bool disk_left_writeset;
};

/**
 * struct chorus_lease_info - the node's lease, as netlink reports it
 * @deadline: CLOCK_BOOTTIME ns, 0 when disarmed
 * @now: CLOCK_BOOTTIME ns when read
 * @expiries: deadlines that passed since load
 * @state: &enum chorus_lease_state
 */
struct chorus_lease_info {
	u64 deadline;
	u64 now;
	u64 expiries;
	u32 state;
};

/**
 * struct chorus_volume_config - what a caller asks for when attaching a volume
 * @name: volume name, already validated by chorus_volume_name_valid()
 * @backing_path: path of the formatted backing block device
 * @size_bytes: expected size, 0 for "whatever the metadata says"
 * @block_size: expected logical block size, 0 for "whatever the metadata
 *	says"; otherwise a power of two from 512 to PAGE_SIZE, checked by the
 *	caller
 * @uuid: expected identity, when @uuid_set
 * @uuid_set: whether @uuid was given
 * @node_id: this node's id to record, 0 for none
 * @diskless: no backing device: size, uuid and node id are required and
 *	@backing_path is NULL
 * @epoch: for @diskless, the highest epoch accepted so far
 *
 * Size, block size and uuid are fixed when the backing device is formatted;
 * an attach only states what it expects, and a mismatch refuses it. A
 * diskless access point has no metadata: it is told them.
 */
struct chorus_volume_config {
	const char *name;
	const char *backing_path;
	u64 size_bytes;
	u32 block_size;
	uuid_t uuid;
	bool uuid_set;
	u32 node_id;
	bool diskless;
	u64 epoch;
};

/* main.c: parameters and the registry. */
extern unsigned int chorus_queue_depth;
extern struct mutex chorus_volumes_lock;
bool chorus_volume_name_valid(const char *name);
struct chorus_volume *chorus_volume_find(const char *name);
int chorus_volume_create(const struct chorus_volume_config *cfg,
			 struct netlink_ext_ack *extack,
			 struct chorus_volume **out);
int chorus_volume_destroy(struct chorus_volume *vol,
			  struct netlink_ext_ack *extack);
struct chorus_volume *chorus_volume_next(int *index);
enum chorus_volume_state chorus_volume_state(struct chorus_volume *vol);
void chorus_volume_stats(struct chorus_volume *vol, struct chorus_stats *sum);

/* meta.c */
int chorus_meta_read(struct chorus_backing *backing,
		     const struct chorus_volume_config *cfg,
		     struct chorus_meta *meta, struct netlink_ext_ack *extack);
int chorus_meta_load(struct chorus_volume *vol,
		     const struct chorus_volume_config *cfg,
		     struct netlink_ext_ack *extack);
int chorus_meta_init_diskless(struct chorus_volume *vol,
			      const struct chorus_volume_config *cfg);
int chorus_meta_open(struct chorus_volume *vol, struct netlink_ext_ack *extack);
void chorus_meta_close(struct chorus_volume *vol);
void chorus_meta_release(struct chorus_meta *meta);
int chorus_meta_set_epoch(struct chorus_volume *vol, u64 epoch);
u64 chorus_meta_highest_epoch(struct chorus_volume *vol);
int chorus_meta_peer_slot(struct chorus_volume *vol, u32 node_id, u32 *flags);
int chorus_meta_set_peer_disk(struct chorus_volume *vol, int slot, u32 flags,
			      u64 disk_gen);
u64 chorus_meta_peer_disk(struct chorus_volume *vol, int slot);
int chorus_meta_set_peer(struct chorus_volume *vol, int slot, u32 node_id,
			 u32 flags);
int chorus_meta_bitmap_io(struct chorus_volume *vol, int slot,
			  unsigned long block, void *buf, blk_opf_t opf);
unsigned long chorus_meta_bitmap_blocks(struct chorus_volume *vol);
int chorus_meta_al_io(struct chorus_volume *vol, u64 seq, void *buf,
		      blk_opf_t opf);
u32 chorus_meta_al_slots(struct chorus_volume *vol);
u32 chorus_meta_crc_of(const void *buf, size_t len);

/* backing.c */
int chorus_backing_open(struct chorus_backing *backing, const char *path,
			void *holder, struct netlink_ext_ack *extack);
void chorus_backing_close(struct chorus_backing *backing);

/* disk.c */
#define CHORUS_DISK_TIMEOUT_MS_DEFAULT	5000
#define CHORUS_DISK_TIMEOUT_MS_MIN	1000
#define CHORUS_DISK_TIMEOUT_MS_MAX	600000
void chorus_disk_init(struct chorus_volume *vol);
void chorus_disk_start(struct chorus_volume *vol);
void chorus_disk_stop(struct chorus_volume *vol);
void chorus_disk_io_start(struct chorus_volume *vol);
void chorus_disk_io_end(struct chorus_volume *vol, struct bio *bio);
__printf(2, 3)
void chorus_disk_fail(struct chorus_volume *vol, const char *fmt, ...);
int chorus_disk_fill(struct sk_buff *skb, struct chorus_volume *vol);

/* disk_attach.c */
int chorus_disk_attach(struct chorus_volume *vol, const char *path,
		       struct netlink_ext_ack *extack);

/* Whether the local disk failed and is detached. Context: any. */
static inline bool chorus_disk_failed(struct chorus_volume *vol)
{
	return READ_ONCE(vol->health.failed);
}

/* dev.c */
/* What chorus_dev_hold() and chorus_dev_hold_disk() did with a request. */
enum chorus_hold {
	CHORUS_HOLD_NONE,	/* nothing: it goes on */
	CHORUS_HOLD_TAKEN,	/* held, or failed while ownership is given up */
	CHORUS_HOLD_RESTART,	/* superseded by a hand-over: it starts again */
};

int chorus_dev_major_register(void);
void chorus_dev_major_unregister(void);
int chorus_dev_create(struct chorus_volume *vol,
		      struct netlink_ext_ack *extack);
void chorus_dev_destroy(struct chorus_volume *vol);
void chorus_dev_end(struct chorus_volume *vol, struct request *rq,
		    blk_status_t status);
void chorus_dev_queue_work(struct request *rq);
void chorus_dev_restart(struct chorus_volume *vol, struct request *rq);
void chorus_dev_done(struct chorus_volume *vol, struct request *rq,
		     blk_status_t status);

/* dev_held.c */
enum chorus_hold chorus_dev_hold(struct chorus_volume *vol, struct request *rq,
				 struct list_head *list);
enum chorus_hold chorus_dev_hold_disk(struct chorus_volume *vol,
				      struct request *rq);
void chorus_dev_disk_leave(struct chorus_volume *vol);
void chorus_dev_hand_over(struct chorus_volume *vol);
void chorus_dev_release_held(struct chorus_volume *vol, bool fail);
unsigned int chorus_dev_nr_held(struct chorus_volume *vol);
void chorus_dev_clear_held_fail(struct chorus_volume *vol);
int chorus_disk_leave_writeset(struct chorus_volume *vol,
			       struct netlink_ext_ack *extack);

/* lease.c */
bool chorus_lease_expired(void);
int chorus_lease_set(u64 deadline, struct netlink_ext_ack *extack);
void chorus_lease_get(struct chorus_lease_info *info);
void chorus_lease_exit(void);

/* latency.c */
int chorus_lat_alloc(struct chorus_volume *vol);
void chorus_lat_free(struct chorus_volume *vol);
void chorus_lat_account(struct chorus_volume *vol, struct request *rq,
			blk_status_t status);
int chorus_lat_fill(struct sk_buff *skb, struct chorus_volume *vol);
size_t chorus_lat_size(void);

/* sysfs.c */
extern const struct attribute_group *chorus_disk_groups[];
void chorus_sysfs_init(void);

/* genl.c */
int chorus_genl_register(void);
void chorus_genl_unregister(void);
void chorus_genl_notify(struct chorus_volume *vol, enum chorus_event event);
void chorus_genl_notify_peer(struct chorus_volume *vol, enum chorus_event event,
			     struct chorus_peer *peer, const char *reason);
struct chorus_volume *chorus_volume_find_uuid(const uuid_t *uuid);

/* dev.c, for repl.c */
void chorus_rq_put(struct request *rq);
void chorus_dev_submit_local(struct chorus_volume *vol, struct request *rq);
void chorus_dev_read(struct chorus_volume *vol, struct request *rq);
void chorus_dev_set_timeout(struct chorus_volume *vol);
int chorus_dev_freeze(struct chorus_volume *vol, struct netlink_ext_ack *extack);
void chorus_dev_freeze_start(struct chorus_volume *vol);
bool chorus_dev_freeze_wait(struct chorus_volume *vol, unsigned long timeout);
void chorus_dev_freeze_refused(struct chorus_volume *vol, struct netlink_ext_ack *extack);
void chorus_dev_unfreeze(struct chorus_volume *vol);

/* transport_tcp.c, peer.c */

#endif /* CHORUS_H */
