// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the activity log.
 *
 * The owner keeps a set of at most CHORUS_AL_ACTIVE extents (4 MiB each as
 * formatted) in which writes may be in flight. Before a write to an extent
 * outside the set goes out, the extent is added (evicting the least
 * recently used idle one), the whole set is written to the local AL ring
 * with FUA and shipped in a STATE message to every connected member of the
 * write set, which writes it to its own AL ring before answering. Writes
 * to the new extent go out only once every member of the write set stored
 * that transaction: a member that is not connected gets the log when its
 * session is established (before any held write), or leaves the write set.
 * So after any crash, every region where replicas may differ is named in
 * the last transaction of the old owner, on its own disk and on every
 * member that may become the next owner. (Writes to a new extent wait
 * while a member is unreachable; every write waits for that member
 * anyway.)
 *
 * A node folds its last transaction into the bitmaps of all its peer slots
 * when it attaches and when it becomes owner, then writes an empty one:
 * those extents are resynced from the (new) owner before the peers are
 * up to date again (invariant 6). An owner that steps down or detaches
 * with nothing in flight writes and ships an empty transaction, so a clean
 * handover costs no resync. A detaching owner writes an empty one locally;
 * a detaching replica keeps what its owner shipped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/slab.h>
#include <net/netlink.h>

#include "chorus.h"

void chorus_al_init(struct chorus_volume *vol)
{
	struct chorus_al *al = &vol->repl.al;

	mutex_init(&al->mutex);
	spin_lock_init(&al->lock);
	init_waitqueue_head(&al->wq);
	spin_lock_init(&al->waiters_lock);
	INIT_LIST_HEAD(&al->waiters);
}

/* The volume's number of activity-log extents, which a log may name. */
static u64 chorus_al_nr_extents(struct chorus_volume *vol)
{
	return DIV_ROUND_UP_ULL(vol->nr_sectors, 1ULL << vol->repl.al.shift);
}

static void chorus_al_seal(struct chorus_meta_al *b, u64 seq)
{
	b->magic = cpu_to_le64(CHORUS_META_AL_MAGIC);
	b->seq = cpu_to_le64(seq);
	b->crc = cpu_to_le32(chorus_meta_crc_of(b, offsetof(struct chorus_meta_al, crc)));
}

/* Write the set in al->block as transaction seq + 1. */
static int chorus_al_write(struct chorus_volume *vol)
{
	struct chorus_al *al = &vol->repl.al;
	struct chorus_meta_al *b = al->block;
	int ret;

	lockdep_assert_held(&al->mutex);
	chorus_al_seal(b, al->seq + 1);
	ret = chorus_meta_al_io(vol, al->seq + 1, b, REQ_OP_WRITE | REQ_FUA);
	if (ret) {
		pr_err_ratelimited("%s: cannot write the activity log (%d)\n",
				   vol->name, ret);
		return ret;
	}
	al->seq++;
	al->disk_nr = le32_to_cpu(b->nr_extents);
	return 0;
}

/* Fill al->block with this owner's active set. */
static void chorus_al_fill(struct chorus_volume *vol)
{
	struct chorus_al *al = &vol->repl.al;
	struct chorus_meta_al *b = al->block;
	int i;

	memset(b, 0, sizeof(*b));
	b->epoch = cpu_to_le64(READ_ONCE(vol->repl.epoch));
	b->owner_node = cpu_to_le32(vol->node_id);
	spin_lock_irq(&al->lock);
	for (i = 0; i < al->nr; i++)
		b->extents[i] = cpu_to_le32(al->extents[i]);
	b->nr_extents = cpu_to_le32(al->nr);
	spin_unlock_irq(&al->lock);
}

/* Set the bits of extent @e in an on-disk bitmap block @buf covering @block. */
static bool chorus_al_mark_block(struct chorus_volume *vol, void *buf,
				 unsigned long block, u32 e)
{
	const unsigned long per_block = CHORUS_META_BLOCK * BITS_PER_BYTE;
	sector_t rs = vol->repl.region_sectors;
	sector_t start = (sector_t)e << vol->repl.al.shift;
	sector_t end = min_t(sector_t, start + (1ULL << vol->repl.al.shift),
			     vol->nr_sectors);
	unsigned long bit = div64_u64(start, rs), last = div64_u64(end - 1, rs);
	bool any = false;

	for (; bit <= last; bit++) {
		if (bit / per_block != block)
			continue;
		__set_bit_le(bit % per_block, buf);
		any = true;
	}
	return any;
}

/* Mark @b's extents in the bitmap of a superblock slot no peer has loaded. */
static int chorus_al_mark_slot(struct chorus_volume *vol, int slot,
			       const struct chorus_meta_al *b, void *buf)
{
	const unsigned long per_block = CHORUS_META_BLOCK * BITS_PER_BYTE;
	unsigned long blocks = DIV_ROUND_UP(DIV_ROUND_UP_ULL(vol->nr_sectors,
						vol->repl.region_sectors), per_block);
	u32 i, nr = le32_to_cpu(b->nr_extents);
	unsigned long block;
	bool dirty;
	int ret;

	for (block = 0; block < blocks; block++) {
		ret = chorus_meta_bitmap_io(vol, slot, block, buf, REQ_OP_READ);
		if (ret)
			return ret;
		dirty = false;
		for (i = 0; i < nr; i++)
			dirty |= chorus_al_mark_block(vol, buf, block,
						      le32_to_cpu(b->extents[i]));
		if (dirty) {
			ret = chorus_meta_bitmap_io(vol, slot, block, buf,
						    REQ_OP_WRITE | REQ_FUA);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static struct chorus_peer *chorus_al_slot_peer(struct chorus_volume *vol,
					       int slot)
{
	int i;

	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (vol->repl.peers[i] && vol->repl.peers[i]->meta_slot == slot)
			return vol->repl.peers[i];
	return NULL;
}

/* Mark @b's extents in a loaded peer's bitmap; it needs a resync. */
static int chorus_al_mark_peer(struct chorus_peer *peer,
			       const struct chorus_meta_al *b)
{
	struct chorus_volume *vol = peer->vol;
	u32 i, nr = le32_to_cpu(b->nr_extents);
	int ret;

	mutex_lock(&peer->bm_mutex);
	spin_lock_irq(&peer->lock);
	for (i = 0; i < nr; i++) {
		sector_t start = (sector_t)le32_to_cpu(b->extents[i]) <<
				 vol->repl.al.shift;

		chorus_bitmap_set_locked(peer, start,
					 min_t(sector_t, 1ULL << vol->repl.al.shift,
					       vol->nr_sectors - start));
	}
	/* Still a member: it is resynced as soon as it is connected. */
	if (nr && peer->repl_state == CHORUS_REPL_UP_TO_DATE)
		peer->repl_state = CHORUS_REPL_SYNCING;
	spin_unlock_irq(&peer->lock);
	ret = chorus_bitmap_write_all(peer);
	mutex_unlock(&peer->bm_mutex);
	return ret;
}

/* Read the last valid transaction into al->block; false if there is none. */
static int chorus_al_read_last(struct chorus_volume *vol, bool *found)
{
	struct chorus_al *al = &vol->repl.al;
	u32 n, slots = chorus_meta_al_slots(vol);
	u64 best = 0;
	void *buf;
	int ret = 0;

	*found = false;
	buf = kmalloc(CHORUS_META_BLOCK, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for (n = 0; n < slots && !ret; n++) {
		struct chorus_meta_al *b = buf;

		ret = chorus_meta_al_io(vol, n, buf, REQ_OP_READ);
		if (ret || !chorus_al_block_valid(b, chorus_al_nr_extents(vol)))
			continue;
		if (!*found || le64_to_cpu(b->seq) > best) {
			best = le64_to_cpu(b->seq);
			memcpy(al->block, b, CHORUS_META_BLOCK);
			*found = true;
		}
	}
	kfree(buf);
	if (!ret)
		al->seq = max(al->seq, best);
	return ret;
}

/**
 * chorus_al_fold() - turn the last activity log into resync work
 * @vol: the volume; no write is in flight (attach, or the queue frozen)
 *
 * Every extent of the last transaction (this node's own as a crashed
 * owner, or the one the last owner shipped) is set in the bitmap of every
 * peer slot; then an empty transaction is written.
 *
 * Context: process context, chorus_repl.conf_lock held or attaching.
 * Return: 0 or a negative errno; the log is left as it was on error.
 */
int chorus_al_fold(struct chorus_volume *vol)
{
	struct chorus_al *al = &vol->repl.al;
	struct chorus_meta_super *sb = vol->meta.super;
	struct chorus_meta_al *last;
	struct chorus_peer *peer;
	bool found;
	void *buf;
	int slot, ret;

	mutex_lock(&al->mutex);
	ret = chorus_al_read_last(vol, &found);
	if (ret || !found || !al->block->nr_extents)
		goto unlock;
	last = kmemdup(al->block, CHORUS_META_BLOCK, GFP_KERNEL);
	buf = kmalloc(CHORUS_META_BLOCK, GFP_KERNEL);
	if (!last || !buf) {
		ret = -ENOMEM;
		goto free;
	}
	pr_info("%s: activity log of node %u at epoch %llu names %u extents: resyncing them\n",
		vol->name, le32_to_cpu(last->owner_node), le64_to_cpu(last->epoch),
		le32_to_cpu(last->nr_extents));
	for (slot = 0; slot < le32_to_cpu(sb->max_peers) && !ret; slot++) {
		if (!le32_to_cpu(sb->peers[slot].node_id))
			continue;
		peer = chorus_al_slot_peer(vol, slot);
		ret = peer ? chorus_al_mark_peer(peer, last) :
			     chorus_al_mark_slot(vol, slot, last, buf);
	}
	if (!ret) {
		chorus_al_fill(vol);
		ret = chorus_al_write(vol);
	}
free:
	kfree(buf);
	kfree(last);
unlock:
	mutex_unlock(&al->mutex);
	return ret;
}

/**
 * chorus_al_attach() - load the activity log when a volume is attached
 * @vol: the volume, metadata loaded, no peers yet
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int chorus_al_attach(struct chorus_volume *vol)
{
	struct chorus_al *al = &vol->repl.al;
	u32 shift = le32_to_cpu(vol->meta.super->al_extent_shift);

	/* A request (at most 1 MiB) must span at most two extents. */
	if (shift < 21 || shift > 30) {
		pr_err("%s: activity log extent shift %u is not in 21..30\n",
		       vol->name, shift);
		return -EUCLEAN;
	}
	al->shift = shift - SECTOR_SHIFT;
	al->block = kzalloc(CHORUS_META_BLOCK, GFP_KERNEL);
	if (!al->block)
		return -ENOMEM;
	return chorus_al_fold(vol);
}

/**
 * chorus_al_detach() - an owner writes an empty log on a clean detach
 * @vol: the volume, idle, its sessions closed (so the log is local only)
 */
void chorus_al_detach(struct chorus_volume *vol)
{
	struct chorus_al *al = &vol->repl.al;

	mutex_lock(&al->mutex);
	/* A replica keeps the log its owner shipped: the next owner needs it. */
	if (al->block && al->disk_nr && vol->repl.role == CHORUS_ROLE_OWNER) {
		spin_lock_irq(&al->lock);
		al->nr = 0;
		spin_unlock_irq(&al->lock);
		chorus_al_fill(vol);
		chorus_al_write(vol);
	}
	mutex_unlock(&al->mutex);
	kfree(al->block);
	al->block = NULL;
}

/*
 * Send al->block as STATE to @peer and wait for its STATE_ACK. Context:
 * al->mutex held.
 */
static int chorus_al_send_block(struct chorus_peer *peer)
{
	struct chorus_volume *vol = peer->vol;
	struct chorus_al *al = &vol->repl.al;
	struct page *page = virt_to_page(al->block);
	struct chorus_msg_data data = { .pages = &page, .len = CHORUS_META_BLOCK };
	struct chorus_wire_hdr hdr;
	int ret;

	lockdep_assert_held(&al->mutex);
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_STATE, READ_ONCE(vol->repl.epoch),
			     atomic64_inc_return(&peer->next_seq), 0, 0);
	hdr.payload_len = cpu_to_le32(CHORUS_META_BLOCK);
	reinit_completion(&peer->al_done);
	WRITE_ONCE(peer->al_seq, le64_to_cpu(hdr.seq));
	ret = chorus_peer_call(peer, &hdr, NULL, &data, &peer->al_done,
			       "activity log not acknowledged");
	if (ret)
		return ret;
	/*
	 * A member that cannot keep the log gets no write: its session is
	 * failed, so the write is held until the next session sends the log
	 * again.
	 */
	if (READ_ONCE(peer->al_status) == CHORUS_WIRE_DISK_FAILED) {
		/* Held like a member away, but its session stays. */
		chorus_peer_disk_failed(peer);
		return -EIO;
	}
	if (READ_ONCE(peer->al_status) != CHORUS_WIRE_OK) {
		chorus_peer_fail(peer, READ_ONCE(peer->gen),
				 "peer did not store the activity log");
		return -EIO;
	}
	WRITE_ONCE(peer->al_stored, le64_to_cpu(al->block->seq));
	wake_up_all(&al->wq);
	return 0;
}

/**
 * chorus_al_send() - give a peer this owner's activity log
 * @peer: a peer whose session was just established
 *
 * Context: process context; session_mutex held.
 * Return: 0 or a negative errno (the session is failed).
 */
int chorus_al_send(struct chorus_peer *peer)
{
	struct chorus_al *al = &peer->vol->repl.al;
	int ret;

	lockdep_assert_held(&peer->session_mutex);
	mutex_lock(&al->mutex);
	chorus_al_fill(peer->vol);
	chorus_al_seal(al->block, al->seq);
	ret = chorus_al_send_block(peer);
	mutex_unlock(&al->mutex);
	return ret;
}

/**
 * chorus_al_clear() - an owner stepping down empties its log everywhere
 * @vol: the volume, its queue frozen
 *
 * Context: process context, conf_lock held.
 * Return: 0 or the error of the local write.
 */
int chorus_al_clear(struct chorus_volume *vol)
{
	struct chorus_al *al = &vol->repl.al;
	int i, ret;

	lockdep_assert_held(&vol->repl.conf_lock);
	mutex_lock(&al->mutex);
	spin_lock_irq(&al->lock);
	al->nr = 0;
	spin_unlock_irq(&al->lock);
	chorus_al_fill(vol);
	ret = chorus_al_write(vol);
	for (i = 0; i < CHORUS_MAX_PEERS && !ret; i++) {
		struct chorus_peer *peer = vol->repl.peers[i];

		if (peer && !peer->diskless &&
		    READ_ONCE(peer->conn_state) == CHORUS_CONN_CONNECTED)
			chorus_al_send_block(peer);
	}
	mutex_unlock(&al->mutex);
	return ret;
}

/* The first and last activity-log extent a request touches. */
static void chorus_al_extents(const struct chorus_al *al, struct request *rq,
			      u32 *first, u32 *last)
{
	*first = blk_rq_pos(rq) >> al->shift;
	*last = (blk_rq_pos(rq) + blk_rq_sectors(rq) - 1) >> al->shift;
}

static int chorus_al_find(struct chorus_al *al, u32 e)
{
	int i;

	lockdep_assert_held(&al->lock);
	for (i = 0; i < al->nr; i++)
		if (al->extents[i] == e)
			return i;
	return -1;
}

/* Take a reference on every extent of [first, last] that is active. */
static bool chorus_al_get_active(struct chorus_al *al, u32 first, u32 last)
{
	int idx[2], n = last - first + 1, i;

	lockdep_assert_held(&al->lock);
	for (i = 0; i < n; i++) {
		idx[i] = chorus_al_find(al, first + i);
		if (idx[i] < 0 || al->pending[idx[i]])
			return false;
	}
	for (i = 0; i < n; i++) {
		al->inflight[idx[i]]++;
		al->used[idx[i]] = ++al->stamp;
	}
	return true;
}

/* Make room for one extent: a free entry or the LRU idle one; -1 if none. */
static int chorus_al_victim(struct chorus_al *al)
{
	int i, best = -1;

	lockdep_assert_held(&al->lock);
	if (al->nr < CHORUS_AL_ACTIVE)
		return al->nr++;
	for (i = 0; i < al->nr; i++)
		if (!al->inflight[i] && (best < 0 || al->used[i] < al->used[best]))
			best = i;
	return best;
}

static bool chorus_al_room(struct chorus_al *al)
{
	bool room;
	int i;

	spin_lock_irq(&al->lock);
	room = al->nr < CHORUS_AL_ACTIVE;
	for (i = 0; i < al->nr && !room; i++)
		room = !al->inflight[i];
	spin_unlock_irq(&al->lock);
	return room;
}

/**
 * chorus_al_try_begin() - hold a write's extents if they are on disk already
 * @vol: the volume; this node is owner with peers
 * @rq: a write, discard or write-zeroes of at most two extents
 *
 * The fast path of chorus_al_begin(): no I/O, no waiting. An extent made
 * active by a transaction still being written, or not yet stored by every
 * member of the write set, does not count.
 *
 * Context: any; takes @vol's activity log spinlock.
 * Return: true with the extents held until chorus_al_end().
 */
bool chorus_al_try_begin(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_al *al = &vol->repl.al;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	u32 first, last;
	unsigned long flags;
	bool held;

	if (rqd->al_held)
		return true;
	chorus_al_extents(al, rq, &first, &last);
	spin_lock_irqsave(&al->lock, flags);
	held = chorus_al_get_active(al, first, last);
	spin_unlock_irqrestore(&al->lock, flags);
	rqd->al_held = held;
	return held;
}

/*
 * Hold extent @e for a write: one that is active already, or a new pending
 * one (evicting the LRU idle extent if the log is full). Notes in @seq the
 * transaction a pending extent is in, and in @unlogged that it is in none
 * on disk yet. False, holding nothing, when every extent is busy.
 */
static bool chorus_al_hold(struct chorus_al *al, u32 e, bool *unlogged,
			   u64 *seq)
{
	int slot;

	spin_lock_irq(&al->lock);
	slot = chorus_al_find(al, e);
	if (slot < 0) {
		slot = chorus_al_victim(al);
		if (slot < 0) {
			spin_unlock_irq(&al->lock);
			return false;
		}
		al->extents[slot] = e;
		al->pending[slot] = true;
		al->pending_seq[slot] = U64_MAX;
		al->inflight[slot] = 0;
	}
	if (al->pending[slot] && al->pending_seq[slot] == U64_MAX)
		*unlogged = true;
	else if (al->pending[slot])
		*seq = max(*seq, al->pending_seq[slot]);
	al->inflight[slot]++;
	al->used[slot] = ++al->stamp;
	spin_unlock_irq(&al->lock);
	return true;
}

/*
 * Write the set as a new transaction, which its pending extents are then
 * in, and ship it to every connected member of the write set. Context:
 * al->mutex held.
 */
static int chorus_al_log(struct chorus_volume *vol)
{
	struct chorus_al *al = &vol->repl.al;
	int i, ret;

	lockdep_assert_held(&al->mutex);
	chorus_al_fill(vol);
	ret = chorus_al_write(vol);
	/*
	 * A write error detached the disk (chorus_meta_al_io()): written
	 * again, the transaction skips the disk and goes to the write set, as
	 * for an owner whose disk failed before, and the write that needed it
	 * stands on the write set too. Failing it would fail a write the
	 * replicas can hold (make check-cluster-rdma, stop 35: the owner's
	 * first failed I/O was a log write).
	 */
	if (ret && chorus_disk_failed(vol))
		ret = chorus_al_write(vol);
	if (ret)
		return ret;
	spin_lock_irq(&al->lock);
	for (i = 0; i < al->nr; i++)
		if (al->pending[i] && al->pending_seq[i] == U64_MAX)
			al->pending_seq[i] = al->seq;
	spin_unlock_irq(&al->lock);
	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		struct chorus_peer *peer = vol->repl.peers[i];
		bool send;

		if (!peer)
			continue;
		spin_lock_irq(&peer->lock);
		send = peer->in_writeset &&
		       peer->conn_state == CHORUS_CONN_CONNECTED;
		spin_unlock_irq(&peer->lock);
		/*
		 * A member not connected, or one that fails here, gets the
		 * log when its next session is established, before any
		 * held write.
		 */
		if (send)
			chorus_al_send_block(peer);
	}
	return 0;
}

/* Every member of the write set stored transaction @seq or a later one. */
static bool chorus_al_members_have(struct chorus_volume *vol, u64 seq)
{
	int i;

	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		struct chorus_peer *peer = vol->repl.peers[i];

		if (peer && READ_ONCE(peer->in_writeset) &&
		    READ_ONCE(peer->al_stored) < seq)
			return false;
	}
	return true;
}

/* A write waiting for the members to store transaction @seq. */
struct chorus_al_waiter {
	struct list_head entry; /* in chorus_al.waiters */
	u64 seq;
};

/**
 * chorus_al_nr_waiting_for() - writes waiting for a member's activity log
 * @peer: a peer of a volume this node owns
 *
 * Return: the writes waiting in chorus_al_begin() for a transaction @peer
 * has not stored, 0 when @peer is not in the write set. They are waiting
 * for @peer as much as those sent to it and not acknowledged, before any
 * of their data is sent: status adds them to its held writes.
 *
 * Context: any; takes chorus_al.waiters_lock (irqs saved).
 */
u32 chorus_al_nr_waiting_for(struct chorus_peer *peer)
{
	struct chorus_al *al = &peer->vol->repl.al;
	struct chorus_al_waiter *w;
	unsigned long flags;
	u64 stored;
	u32 nr = 0;

	if (!READ_ONCE(peer->in_writeset))
		return 0;
	stored = READ_ONCE(peer->al_stored);
	spin_lock_irqsave(&al->waiters_lock, flags);
	list_for_each_entry(w, &al->waiters, entry)
		nr += w->seq > stored;
	spin_unlock_irqrestore(&al->waiters_lock, flags);
	return nr;
}

/*
 * Wait, listed in al->waiters, until every member of the write set has
 * transaction @seq or left the write set, or the owner steps down.
 */
static void chorus_al_wait_listed(struct chorus_volume *vol, u64 seq)
{
	struct chorus_al *al = &vol->repl.al;
	struct chorus_al_waiter w = { .seq = seq };

	spin_lock_irq(&al->waiters_lock);
	list_add_tail(&w.entry, &al->waiters);
	spin_unlock_irq(&al->waiters_lock);
	/* Idle: a member may be away for long, it is no hung task. */
	wait_event_idle(al->wq, chorus_al_members_have(vol, seq) ||
			READ_ONCE(al->stopping));
	spin_lock_irq(&al->waiters_lock);
	list_del(&w.entry);
	spin_unlock_irq(&al->waiters_lock);
}

/*
 * Wait until every member of the write set stored transaction @seq (or
 * left the write set), then let the fast path use the extents it made
 * active. Fails when the owner steps down meanwhile.
 */
static int chorus_al_wait_members(struct chorus_volume *vol, u64 seq)
{
	struct chorus_al *al = &vol->repl.al;
	int i;

	if (!chorus_al_members_have(vol, seq)) {
		pr_info_ratelimited("%s: writes to a new extent wait until every member of the write set has the activity log\n",
				    vol->name);
		chorus_al_wait_listed(vol, seq);
		if (!chorus_al_members_have(vol, seq))
			return -EIO;
	}
	spin_lock_irq(&al->lock);
	for (i = 0; i < al->nr; i++)
		if (al->pending[i] && al->pending_seq[i] <= seq)
			al->pending[i] = false;
	spin_unlock_irq(&al->lock);
	return 0;
}

/**
 * chorus_al_begin() - make sure a write's extents are in the activity log
 * @vol: the volume; this node is owner with peers
 * @rq: a write, discard or write-zeroes of at most two extents
 *
 * An extent not in the log yet is added, the log written and shipped, and
 * the write waits until every member of the write set stored it (see the
 * top of this file).
 *
 * Context: process context; may sleep (log write, STATE round trips, a
 * member away).
 * Return: 0 with the extents held until chorus_al_end(), or a negative
 * errno (the request must fail).
 */
int chorus_al_begin(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_al *al = &vol->repl.al;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	bool unlogged = false;
	u32 first, last, e;
	u64 seq = 0;
	int ret = 0;

	if (chorus_al_try_begin(vol, rq))
		return 0;
	chorus_al_extents(al, rq, &first, &last);

	mutex_lock(&al->mutex);
	/*
	 * Take a reference on each extent as soon as it is active, so that
	 * making room for the second cannot evict the first.
	 */
	for (e = first; e <= last; e++) {
		if (chorus_al_hold(al, e, &unlogged, &seq))
			continue;
		/*
		 * Every extent is busy: wait for one to drain, without the
		 * mutex. The writes in them may be held for a member away,
		 * and that member's next session needs the mutex to get the
		 * log before they can complete.
		 */
		mutex_unlock(&al->mutex);
		wait_event_idle(al->wq, chorus_al_room(al));
		mutex_lock(&al->mutex);
		e--;
	}
	rqd->al_held = true;
	if (unlogged) {
		ret = chorus_al_log(vol);
		seq = al->seq;
	}
	mutex_unlock(&al->mutex);
	return ret ?: chorus_al_wait_members(vol, seq);
}

/**
 * chorus_al_set_stopping() - fail, or stop failing, writes that wait for
 *	members to store the log
 * @vol: the volume
 * @stopping: true when the owner steps down; false when that failed
 *
 * Context: process context, chorus_repl.conf_lock held.
 */
void chorus_al_set_stopping(struct chorus_volume *vol, bool stopping)
{
	lockdep_assert_held(&vol->repl.conf_lock);
	WRITE_ONCE(vol->repl.al.stopping, stopping);
	if (stopping)
		wake_up_all(&vol->repl.al.wq);
}

/**
 * chorus_al_owner_start() - this node becomes owner, its queue frozen
 * @vol: the volume
 *
 * What the members stored came from an earlier owner: none counts until
 * its session to this owner is established and ships this node's log.
 *
 * Context: process context, chorus_repl.conf_lock held.
 */
void chorus_al_owner_start(struct chorus_volume *vol)
{
	int i;

	lockdep_assert_held(&vol->repl.conf_lock);
	WRITE_ONCE(vol->repl.al.stopping, false);
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (vol->repl.peers[i])
			WRITE_ONCE(vol->repl.peers[i]->al_stored, 0);
}

/**
 * chorus_al_end() - a write that held activity log extents completed
 * @vol: the volume
 * @rq: the request
 *
 * Context: any, including hard irq.
 */
void chorus_al_end(struct chorus_volume *vol, struct request *rq)
{
	struct chorus_al *al = &vol->repl.al;
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	u32 first, last;
	unsigned long flags;
	bool wake = false;
	u32 e;
	int i;

	if (!rqd->al_held)
		return;
	rqd->al_held = false;
	chorus_al_extents(al, rq, &first, &last);
	spin_lock_irqsave(&al->lock, flags);
	for (e = first; e <= last; e++) {
		i = chorus_al_find(al, e);
		if (!WARN_ON_ONCE(i < 0) && !--al->inflight[i])
			wake = true;
	}
	spin_unlock_irqrestore(&al->lock, flags);
	if (wake)
		wake_up_all(&al->wq);
}

/**
 * chorus_al_answer() - a STATE_ACK arrived
 * @peer: the peer
 * @hdr: the answer
 *
 * Context: the receive thread.
 */
void chorus_al_answer(struct chorus_peer *peer, const struct chorus_wire_hdr *hdr)
{
	if (le64_to_cpu(hdr->seq) != READ_ONCE(peer->al_seq))
		return;
	WRITE_ONCE(peer->al_status, le32_to_cpu(hdr->status));
	complete(&peer->al_done);
}

/**
 * chorus_al_store() - a replica keeps the owner's activity log
 * @conn: the connection the STATE came on
 * @hdr: the header, epoch already accepted
 * @pages: one page with the &struct chorus_meta_al; freed here
 * @nr_pages: 1
 *
 * Context: the receive thread.
 * Return: 0, or -EPROTO for a malformed log (the session is closed).
 */
int chorus_al_store(struct chorus_conn *conn, const struct chorus_wire_hdr *hdr,
		    struct page **pages, unsigned int nr_pages)
{
	struct chorus_peer *peer = conn->peer;
	struct chorus_volume *vol = peer->vol;
	struct chorus_meta_al *b = page_address(pages[0]);
	struct chorus_al *al = &vol->repl.al;
	u32 status = CHORUS_WIRE_OK;
	int ret = 0;

	if (chorus_wire_check_state(b, hdr, chorus_al_nr_extents(vol),
				    peer->node_id)) {
		pr_warn_ratelimited("%s: peer %u: malformed activity log; closing\n",
				    vol->name, peer->node_id);
		ret = -EPROTO;
		goto free;
	}
	mutex_lock(&al->mutex);
	memcpy(al->block, b, CHORUS_META_BLOCK);
	if (chorus_al_write(vol))
		status = chorus_disk_failed(vol) ? CHORUS_WIRE_DISK_FAILED :
						   CHORUS_WIRE_IO_ERROR;
	mutex_unlock(&al->mutex);
	ret = chorus_replica_answer(conn, hdr, CHORUS_MSG_STATE_ACK, status);
free:
	chorus_pages_free(pages, nr_pages);
	return ret;
}
