// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: resync and online verify.
 *
 * Both run on the owner in a job thread per peer and walk the volume one
 * bitmap region at a time. For each region the thread holds the region in
 * the volume's interval tree (so no write to it is in flight), reads it
 * from the local replica and sends it (RESYNC_DATA) or its crc32c
 * (VERIFY_REQ), then waits for the answer. A resync clears the region's
 * bit when the peer has written it, and ends when no bit is left; the
 * peer is then up to date. It stops when the local disk has failed: the
 * copy it would send is older than the writes since. The rate is limited
 * by a simple schedule: after N bytes, at least N / rate seconds have
 * passed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/crc32c.h>
#include <linux/delay.h>
#include <linux/slab.h>

#include <net/netlink.h>

#include "chorus.h"

#define CHORUS_PROGRESS_EVENT_SECS	5

/**
 * struct chorus_region_buf - pages holding one region
 * @pages: the pages
 * @nr: entries of @pages
 */
struct chorus_region_buf {
	struct page **pages;
	unsigned int nr;
};

static void chorus_region_buf_free(struct chorus_region_buf *buf)
{
	chorus_pages_free(buf->pages, buf->nr);
}

static int chorus_region_buf_alloc(struct chorus_region_buf *buf,
				   unsigned int bytes)
{
	buf->nr = DIV_ROUND_UP(bytes, PAGE_SIZE);
	buf->pages = chorus_pages_alloc(buf->nr, GFP_KERNEL);
	return buf->pages ? 0 : -ENOMEM;
}

/* Read @bytes at @sector of the local replica into @buf. */
static int chorus_region_read(struct chorus_volume *vol,
			      struct chorus_region_buf *buf, sector_t sector,
			      unsigned int bytes)
{
	struct bio *bio;
	unsigned int i;
	int ret;

	bio = bio_alloc(vol->backing.bdev, buf->nr, REQ_OP_READ, GFP_KERNEL);
	bio->bi_iter.bi_sector = sector;
	for (i = 0; bytes > i * PAGE_SIZE; i++)
		__bio_add_page(bio, buf->pages[i],
			       min_t(unsigned int, bytes - i * PAGE_SIZE,
				     PAGE_SIZE), 0);
	ret = submit_bio_wait(bio);
	bio_put(bio);
	return ret;
}

static u32 chorus_region_crc(struct chorus_region_buf *buf, unsigned int bytes)
{
	u32 crc = ~0U;
	unsigned int i;

	for (i = 0; bytes > i * PAGE_SIZE; i++)
		crc = crc32c(crc, page_address(buf->pages[i]),
			     min_t(unsigned int, bytes - i * PAGE_SIZE, PAGE_SIZE));
	return ~crc;
}

/*
 * Send one job message on the session's first connection, with a fresh
 * seq, and wait for its answer.
 */
static int chorus_job_exchange(struct chorus_peer *peer,
			       struct chorus_wire_hdr *hdr, const void *body,
			       const struct chorus_msg_data *data, u32 *status)
{
	int ret;

	/* Ids never repeat across jobs, so a late answer matches nothing. */
	hdr->seq = cpu_to_le64(atomic64_inc_return(&peer->next_seq));
	reinit_completion(&peer->job_done);
	WRITE_ONCE(peer->job_sector, le64_to_cpu(hdr->sector));
	WRITE_ONCE(peer->job_seq, le64_to_cpu(hdr->seq));
	ret = chorus_peer_call(peer, hdr, body, data, &peer->job_done,
			       "resync or verify request timeout");
	if (!ret)
		*status = READ_ONCE(peer->job_status);
	if (!ret && *status == CHORUS_WIRE_DISK_FAILED)
		chorus_peer_disk_failed(peer);
	return ret;
}

/**
 * chorus_job_answer() - an answer to the running job's request arrived
 * @peer: the peer
 * @hdr: RESYNC_ACK or VERIFY_REPLY
 *
 * An answer to anything but the request awaited is ignored.
 * Context: the receive thread.
 */
void chorus_job_answer(struct chorus_peer *peer,
		       const struct chorus_wire_hdr *hdr)
{
	u8 expect = READ_ONCE(peer->job) == CHORUS_JOB_RESYNC ?
		    CHORUS_MSG_RESYNC_ACK : CHORUS_MSG_VERIFY_REPLY;

	if (le64_to_cpu(hdr->seq) != READ_ONCE(peer->job_seq) ||
	    hdr->type != expect ||
	    le64_to_cpu(hdr->sector) != READ_ONCE(peer->job_sector))
		return;
	WRITE_ONCE(peer->job_status, le32_to_cpu(hdr->status));
	complete(&peer->job_done);
}

/* Sleep as long as the rate limit asks; false when the job must stop. */
static bool chorus_job_throttle(struct chorus_peer *peer, unsigned long start,
				u64 bytes)
{
	u64 rate = READ_ONCE(peer->vol->repl.resync_rate);
	unsigned long due;

	if (!rate)
		return !kthread_should_stop();
	due = start + (unsigned long)div64_u64(bytes * HZ, rate);
	while (time_before(jiffies, due) && !kthread_should_stop())
		schedule_timeout_interruptible(min_t(long, due - jiffies, HZ / 10));
	return !kthread_should_stop();
}

/*
 * Every second: the measured rate. Every CHORUS_PROGRESS_EVENT_SECS: an
 * event. @last and @last_bytes track the rate, @last_event the events.
 */
static void chorus_job_progress(struct chorus_peer *peer, unsigned long *last,
				u64 *last_bytes, unsigned long *last_event,
				u64 bytes, enum chorus_event event,
				const char *what)
{
	unsigned long elapsed = jiffies - *last;

	if (elapsed >= HZ) {
		atomic64_set(&peer->sync_rate,
			     div64_u64((bytes - *last_bytes) * HZ, elapsed));
		*last = jiffies;
		*last_bytes = bytes;
	}
	if (time_after_eq(jiffies, *last_event + CHORUS_PROGRESS_EVENT_SECS * HZ)) {
		chorus_genl_notify_peer(peer->vol, event, peer, what);
		*last_event = jiffies;
	}
}

/* The peer has every region: it is up to date. */
static void chorus_resync_done(struct chorus_peer *peer)
{
	struct chorus_volume *vol = peer->vol;
	int ret;

	ret = chorus_bitmap_sync(peer);
	if (!ret)
		ret = chorus_meta_set_peer(vol, peer->meta_slot, peer->node_id, 0);
	if (ret) {
		pr_err("%s: peer %u: cannot record the end of the resync (%d)\n",
		       vol->name, peer->node_id, ret);
		return;
	}
	peer->meta_flags = 0;
	spin_lock_irq(&peer->lock);
	if (peer->in_writeset && !peer->dirty)
		peer->repl_state = CHORUS_REPL_UP_TO_DATE;
	spin_unlock_irq(&peer->lock);
	pr_info("%s: peer %u: resync done, up to date\n", vol->name,
		peer->node_id);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_RESYNC, peer, "resync done");
}

static int chorus_resync_region(struct chorus_peer *peer,
				struct chorus_region_buf *buf, unsigned long bit,
				unsigned int *bytesp)
{
	struct chorus_volume *vol = peer->vol;
	sector_t rs = vol->repl.region_sectors;
	sector_t start = (sector_t)bit * rs;
	sector_t nr = min_t(sector_t, rs, vol->nr_sectors - start);
	unsigned int bytes = nr << SECTOR_SHIFT;
	struct chorus_msg_data data = { .pages = buf->pages, .len = bytes };
	struct chorus_range range = {};
	struct chorus_wire_hdr hdr;
	u32 status;
	int ret;

	ret = chorus_range_lock(vol, &range, start, nr, peer);
	if (ret)
		return ret;
	/*
	 * A detached disk lacks the writes made since it failed (they reached
	 * the write set only): copied, it would overwrite them on the peer,
	 * which would then count as up to date. A write that skipped the disk
	 * saw the failure before it left the range tree, so it is seen here.
	 */
	if (chorus_disk_failed(vol)) {
		pr_warn_ratelimited("%s: resync: the local disk failed: it is no source\n",
				    vol->name);
		ret = -EIO;
		goto unlock;
	}
	ret = chorus_region_read(vol, buf, start, bytes);
	if (ret) {
		pr_err_ratelimited("%s: resync: cannot read sector %llu (%d)\n",
				   vol->name, (u64)start, ret);
		goto unlock;
	}
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_RESYNC_DATA,
			     READ_ONCE(vol->repl.epoch), 0, start, bytes);
	hdr.payload_len = cpu_to_le32(bytes);
	ret = chorus_job_exchange(peer, &hdr, NULL, &data, &status);
	if (!ret && status != CHORUS_WIRE_OK)
		ret = -EIO;
	if (!ret) {
		spin_lock_irq(&peer->lock);
		chorus_bitmap_clear_bit_locked(peer, bit);
		spin_unlock_irq(&peer->lock);
		*bytesp = bytes;
	}
unlock:
	chorus_range_unlock(vol, &range);
	return ret;
}

static void chorus_resync_run(struct chorus_peer *peer)
{
	struct chorus_volume *vol = peer->vol;
	unsigned int region = vol->repl.region_sectors << SECTOR_SHIFT;
	unsigned long bit = 0, start = jiffies, last = jiffies, regions = 0;
	unsigned long last_event = jiffies;
	struct chorus_region_buf buf;
	u64 done = 0, last_done = 0;
	bool finished = false;
	int ret = 0;

	if (chorus_region_buf_alloc(&buf, region))
		return;
	spin_lock_irq(&peer->lock);
	atomic64_set(&peer->sync_total, (u64)peer->dirty * region);
	spin_unlock_irq(&peer->lock);
	atomic64_set(&peer->sync_done, 0);
	pr_info("%s: peer %u: resync of %llu bytes started\n", vol->name,
		peer->node_id, (u64)atomic64_read(&peer->sync_total));
	chorus_genl_notify_peer(vol, CHORUS_EVENT_RESYNC, peer, "resync started");

	while (!kthread_should_stop()) {
		unsigned int bytes = 0;

		bit = chorus_bitmap_next(peer, bit);
		if (bit >= peer->nr_bits) {
			/* Bits set behind the cursor are picked up again. */
			spin_lock_irq(&peer->lock);
			finished = !peer->dirty;
			spin_unlock_irq(&peer->lock);
			if (finished)
				break;
			bit = 0;
			continue;
		}
		ret = chorus_resync_region(peer, &buf, bit, &bytes);
		if (ret)
			break;
		done += bytes;
		atomic64_set(&peer->sync_done, done);
		atomic64_add(bytes, &peer->stats.resynced_bytes);
		if (++regions % 256 == 0)
			chorus_bitmap_sync(peer);
		chorus_job_progress(peer, &last, &last_done, &last_event, done,
				    CHORUS_EVENT_RESYNC, "resync progress");
		if (!chorus_job_throttle(peer, start, done))
			break;
		bit++;
	}
	chorus_region_buf_free(&buf);
	if (finished)
		chorus_resync_done(peer);
	else if (ret && ret != -EINTR)
		pr_warn("%s: peer %u: resync stopped (%d)\n", vol->name,
			peer->node_id, ret);
}

static void chorus_verify_run(struct chorus_peer *peer)
{
	struct chorus_volume *vol = peer->vol;
	sector_t rs = vol->repl.region_sectors;
	unsigned long bit, start = jiffies, last = jiffies, last_event = jiffies;
	struct chorus_region_buf buf;
	u64 done = 0, last_done = 0;
	char reason[CHORUS_REASON_MAX];
	int ret = 0;

	if (chorus_region_buf_alloc(&buf, rs << SECTOR_SHIFT))
		return;
	atomic64_set(&peer->verify_done, 0);
	atomic64_set(&peer->verify_mismatches, 0);
	pr_info("%s: peer %u: verify started\n", vol->name, peer->node_id);

	for (bit = 0; bit < peer->nr_bits && !kthread_should_stop(); bit++) {
		sector_t sector = (sector_t)bit * rs;
		sector_t nr = min_t(sector_t, rs, vol->nr_sectors - sector);
		unsigned int bytes = nr << SECTOR_SHIFT;
		struct chorus_range range = {};
		struct chorus_wire_hdr hdr;
		__le32 crc;
		u32 status;

		ret = chorus_range_lock(vol, &range, sector, nr, peer);
		if (ret)
			break;
		ret = chorus_region_read(vol, &buf, sector, bytes);
		if (!ret) {
			crc = cpu_to_le32(chorus_region_crc(&buf, bytes));
			chorus_wire_init_hdr(&hdr, CHORUS_MSG_VERIFY_REQ,
					     READ_ONCE(vol->repl.epoch), 0, sector,
					     bytes);
			hdr.payload_len = cpu_to_le32(sizeof(crc));
			ret = chorus_job_exchange(peer, &hdr, &crc, NULL, &status);
		}
		chorus_range_unlock(vol, &range);
		if (ret)
			break;
		if (status == CHORUS_WIRE_MISMATCH) {
			atomic64_inc(&peer->verify_mismatches);
			snprintf(reason, sizeof(reason),
				 "verify mismatch at sector %llu, %u bytes",
				 (u64)sector, bytes);
			pr_warn("%s: peer %u: %s\n", vol->name, peer->node_id,
				reason);
			chorus_genl_notify_peer(vol, CHORUS_EVENT_VERIFY, peer,
						reason);
		} else if (status != CHORUS_WIRE_OK) {
			ret = -EIO;
			break;
		}
		done += bytes;
		atomic64_set(&peer->verify_done, done);
		chorus_job_progress(peer, &last, &last_done, &last_event, done,
				    CHORUS_EVENT_VERIFY, "verify progress");
		if (!chorus_job_throttle(peer, start, done))
			break;
	}
	chorus_region_buf_free(&buf);
	snprintf(reason, sizeof(reason), "verify %s: %llu bytes compared, %llu mismatches",
		 bit >= peer->nr_bits ? "done" : "stopped", done,
		 (u64)atomic64_read(&peer->verify_mismatches));
	pr_info("%s: peer %u: %s\n", vol->name, peer->node_id, reason);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_VERIFY, peer, reason);
}

static int chorus_job_threadfn(void *data)
{
	struct chorus_peer *peer = data;

	if (READ_ONCE(peer->job) == CHORUS_JOB_RESYNC)
		chorus_resync_run(peer);
	else
		chorus_verify_run(peer);
	WRITE_ONCE(peer->job, CHORUS_JOB_NONE);
	/* chorus_job_stop() reaps the thread. */
	chorus_wait_for_stop();
	return 0;
}

/**
 * chorus_job_stop() - stop a peer's job thread, if any
 * @peer: the peer
 *
 * Context: process context, session_mutex held.
 */
void chorus_job_stop(struct chorus_peer *peer)
{
	lockdep_assert_held(&peer->session_mutex);
	if (!peer->job_thread)
		return;
	kthread_stop(peer->job_thread);
	peer->job_thread = NULL;
	WRITE_ONCE(peer->job, CHORUS_JOB_NONE);
}

/**
 * chorus_job_start() - start a resync or a verify towards a peer
 * @peer: a connected peer
 * @job: what to run
 * @extack: where to say why not
 *
 * Context: process context, session_mutex held.
 * Return: 0, -EBUSY while another job runs, -ENOTCONN without a session.
 */
int chorus_job_start(struct chorus_peer *peer, enum chorus_job job,
		     struct netlink_ext_ack *extack)
{
	struct task_struct *t;

	lockdep_assert_held(&peer->session_mutex);
	if (peer->diskless || peer->vol->diskless) {
		NL_SET_ERR_MSG(extack,
			       "a diskless access point has no replica to resync or verify");
		return -EINVAL;
	}
	if (!peer->conns[0]) {
		NL_SET_ERR_MSG(extack, "the peer is not connected");
		return -ENOTCONN;
	}
	if (READ_ONCE(peer->job) != CHORUS_JOB_NONE) {
		NL_SET_ERR_MSG(extack, "a resync or verify of this peer is running");
		return -EBUSY;
	}
	chorus_job_stop(peer);
	WRITE_ONCE(peer->job, job);
	t = kthread_run(chorus_job_threadfn, peer, "chorus-%s/%u",
			job == CHORUS_JOB_RESYNC ? "sync" : "verify",
			peer->node_id);
	if (IS_ERR(t)) {
		WRITE_ONCE(peer->job, CHORUS_JOB_NONE);
		return PTR_ERR(t);
	}
	peer->job_thread = t;
	return 0;
}

/**
 * chorus_replica_verify() - compare a region with the owner's checksum
 * @conn: the connection the VERIFY_REQ came on
 * @hdr: the request, range checked
 * @crc: the owner's crc32c of the region
 *
 * Context: the receive thread; reads synchronously.
 * Return: 0, or a negative errno that closes the session.
 */
int chorus_replica_verify(struct chorus_conn *conn,
			  const struct chorus_wire_hdr *hdr, u32 crc)
{
	struct chorus_volume *vol = conn->peer->vol;
	unsigned int bytes = le32_to_cpu(hdr->len);
	struct chorus_region_buf buf;
	u32 status;

	if (chorus_region_buf_alloc(&buf, bytes))
		return -ENOMEM;
	if (chorus_region_read(vol, &buf, le64_to_cpu(hdr->sector), bytes))
		status = CHORUS_WIRE_IO_ERROR;
	else if (chorus_region_crc(&buf, bytes) != crc)
		status = CHORUS_WIRE_MISMATCH;
	else
		status = CHORUS_WIRE_OK;
	chorus_region_buf_free(&buf);
	return chorus_replica_answer(conn, hdr, CHORUS_MSG_VERIFY_REPLY, status);
}
