// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the peers of a volume.
 *
 * PEER_ADD and PEER_DEL: each peer's metadata slot and bitmap, its place in
 * chorus_repl.peers; and the write set (WRITESET_REMOVE). Sessions with a
 * peer are in session.c, the handshake in handshake.c, connections in
 * conn.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/slab.h>

#include <net/netlink.h>

#include "chorus.h"
#include "session.h"

/* Peers of a volume. */

/**
 * chorus_peer_find() - look a peer of a volume up by node id
 * @vol: the volume
 * @node_id: the peer's id
 *
 * Context: chorus_repl.conf_lock held.
 * Return: the peer or NULL.
 */
struct chorus_peer *chorus_peer_find(struct chorus_volume *vol, u32 node_id)
{
	int i;

	lockdep_assert_held(&vol->repl.conf_lock);
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (vol->repl.peers[i] && vol->repl.peers[i]->node_id == node_id)
			return vol->repl.peers[i];
	return NULL;
}

static void chorus_peer_disk_workfn(struct work_struct *work);

static struct chorus_peer *chorus_peer_alloc(struct chorus_volume *vol,
					     u32 node_id)
{
	struct chorus_peer *peer = kzalloc(sizeof(*peer), GFP_KERNEL);

	if (!peer)
		return NULL;
	peer->vol = vol;
	peer->node_id = node_id;
	spin_lock_init(&peer->lock);
	xa_init_flags(&peer->inflight, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	chorus_session_init(peer);
	init_waitqueue_head(&peer->replica_wait);
	init_waitqueue_head(&peer->fwd_wait);
	INIT_WORK(&peer->disk_work, chorus_peer_disk_workfn);
	mutex_init(&peer->bm_mutex);
	init_completion(&peer->job_done);
	init_completion(&peer->al_done);
	return peer;
}

/**
 * chorus_peer_free() - free a disconnected peer that is no longer listed
 * @peer: the peer
 */
void chorus_peer_free(struct chorus_peer *peer)
{
	/* Its forwarded requests served here still name it. */
	chorus_fwd_peer_quiesce(peer);
	/*
	 * A work queued while the last session went down must not run late.
	 * The heartbeat and the probe may queue fail_work: cancel them first.
	 */
	cancel_delayed_work_sync(&peer->probe_work);
	cancel_delayed_work_sync(&peer->ping_work);
	cancel_delayed_work_sync(&peer->connect_work);
	cancel_work_sync(&peer->fail_work);
	cancel_work_sync(&peer->disk_work);
	xa_destroy(&peer->inflight);
	chorus_bitmap_free(peer);
	mutex_destroy(&peer->session_mutex);
	mutex_destroy(&peer->bm_mutex);
	kfree(peer);
}

/*
 * Load or create the peer's slot: its bitmap and whether it is current.
 * Neither a diskless peer nor the peers of a diskless access point have
 * one: nothing is ever resynced to the one, and the other never owns.
 */
static int chorus_peer_load_slot(struct chorus_peer *peer,
				 enum chorus_initial_sync initial_sync,
				 struct netlink_ext_ack *extack)
{
	struct chorus_volume *vol = peer->vol;
	u32 flags;
	int slot, ret;

	if (peer->diskless || vol->diskless) {
		peer->meta_slot = -1;
		peer->repl_state = peer->diskless ? CHORUS_REPL_DISKLESS :
						    CHORUS_REPL_UP_TO_DATE;
		peer->in_writeset = false;
		return 0;
	}
	slot = chorus_meta_peer_slot(vol, peer->node_id, &flags);
	if (slot < 0) {
		NL_SET_ERR_MSG(extack, "every peer slot of the metadata is taken");
		return slot;
	}
	peer->meta_slot = slot;
	ret = chorus_bitmap_alloc(peer);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot allocate the peer's bitmap");
		return ret;
	}
	if (flags == ~0U) {
		/* New to this replica: start from a clean slate on disk. */
		flags = 0;
		if (initial_sync != CHORUS_INITIAL_SYNC_NONE) {
			spin_lock_irq(&peer->lock);
			chorus_bitmap_set_all_locked(peer);
			spin_unlock_irq(&peer->lock);
			flags = CHORUS_META_PEER_OUT_OF_DATE |
				CHORUS_META_PEER_FULL_SYNC;
		}
		ret = chorus_bitmap_sync(peer);
		if (!ret)
			ret = chorus_meta_set_peer(vol, slot, peer->node_id, flags);
	} else {
		ret = chorus_bitmap_load(peer);
	}
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot read or write the peer's metadata");
		return ret;
	}
	peer->meta_flags = flags;
	if (flags & CHORUS_META_PEER_OUT_OF_DATE) {
		peer->repl_state = CHORUS_REPL_OUT_OF_DATE;
		peer->in_writeset = false;
	} else if (peer->dirty) {
		/* A member with regions to resync (activity log): it stays. */
		peer->repl_state = CHORUS_REPL_SYNCING;
		peer->in_writeset = true;
	} else {
		peer->repl_state = CHORUS_REPL_UP_TO_DATE;
		peer->in_writeset = true;
	}
	return 0;
}

/**
 * chorus_peer_add() - declare a peer of a volume
 * @vol: the volume
 * @cfg: the peer
 * @extack: where to say why not
 *
 * A peer the metadata knows keeps its bitmap and out-of-date mark; a new
 * one is out of date with every bit set, unless @cfg->initial_sync says
 * none. A peer that is up to date joins the write set at once: writes wait
 * for it from now on. A diskless peer never does.
 *
 * Context: process context, chorus_repl.conf_lock held.
 * Return: 0 or a negative errno with a message in @extack.
 */
int chorus_peer_add(struct chorus_volume *vol,
		    const struct chorus_peer_config *cfg,
		    struct netlink_ext_ack *extack)
{
	struct chorus_repl *repl = &vol->repl;
	u32 node_id = cfg->node_id;
	struct chorus_peer *peer;
	int slot, ret;

	lockdep_assert_held(&repl->conf_lock);
	if (!vol->node_id) {
		NL_SET_ERR_MSG(extack, "the volume has no node id: attach it with one");
		return -EINVAL;
	}
	if (node_id == vol->node_id) {
		NL_SET_ERR_MSG(extack, "a peer cannot have this node's own id");
		return -EINVAL;
	}
	if (vol->diskless && cfg->diskless) {
		NL_SET_ERR_MSG(extack,
			       "the peers of a diskless access point cannot be diskless");
		return -EINVAL;
	}
	if (chorus_peer_find(vol, node_id)) {
		NL_SET_ERR_MSG(extack, "the volume already has a peer with this node id");
		return -EEXIST;
	}
	for (slot = 0; slot < CHORUS_MAX_PEERS; slot++)
		if (!repl->peers[slot])
			break;
	if (slot == CHORUS_MAX_PEERS) {
		NL_SET_ERR_MSG(extack, "the volume has the maximum number of peers");
		return -ENOSPC;
	}

	peer = chorus_peer_alloc(vol, node_id);
	if (!peer)
		return -ENOMEM;
	peer->slot = slot;
	peer->addr = cfg->addr;
	strscpy(peer->address, cfg->address, sizeof(peer->address));
	peer->port = cfg->port;
	peer->transport = cfg->transport;
	peer->nr_conns = cfg->nr_conns;
	peer->diskless = cfg->diskless;
	peer->dialler = vol->node_id < node_id;

	ret = chorus_peer_load_slot(peer, cfg->initial_sync, extack);
	if (ret)
		goto free_peer;
	ret = chorus_dev_freeze(vol, extack);
	if (ret)
		goto free_peer;
	spin_lock(&repl->peers_lock);
	repl->peers[slot] = peer;
	repl->nr_peers++;
	spin_unlock(&repl->peers_lock);
	chorus_dev_unfreeze(vol);
	pr_info("%s: peer %u at %s port %u added, %s\n", vol->name, node_id,
		peer->address, peer->port, peer->diskless ? "diskless" :
		peer->repl_state == CHORUS_REPL_UP_TO_DATE ? "up to date" :
		"out of date");
	chorus_genl_notify_peer(vol, CHORUS_EVENT_PEER_ADDED, peer, NULL);
	return 0;

free_peer:
	chorus_peer_free(peer);
	return ret;
}

/**
 * chorus_peer_del() - forget a peer and free its metadata slot
 * @peer: the peer
 * @extack: where to say why not
 *
 * Context: process context, chorus_repl.conf_lock held.
 * Return: 0, or -EBUSY while I/O is held for the peer.
 */
int chorus_peer_del(struct chorus_peer *peer, struct netlink_ext_ack *extack)
{
	struct chorus_volume *vol = peer->vol;
	struct chorus_repl *repl = &vol->repl;
	int ret;

	lockdep_assert_held(&repl->conf_lock);
	/* A frozen queue has no request in flight, so none is held. */
	ret = chorus_dev_freeze(vol, extack);
	if (ret)
		return ret;
	chorus_peer_disconnect(peer);
	spin_lock(&repl->peers_lock);
	repl->peers[peer->slot] = NULL;
	repl->nr_peers--;
	spin_unlock(&repl->peers_lock);
	chorus_dev_unfreeze(vol);

	if (peer->meta_slot >= 0 && chorus_meta_set_peer(vol, peer->meta_slot, 0, 0))
		pr_warn("%s: cannot free the metadata slot of peer %u\n",
			vol->name, peer->node_id);
	pr_info("%s: peer %u removed\n", vol->name, peer->node_id);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_PEER_REMOVED, peer, NULL);
	chorus_peer_free(peer);
	return 0;
}

/**
 * chorus_peer_disk_failed() - a peer said that its disk failed
 * @peer: the peer; it answered CHORUS_WIRE_DISK_FAILED (to a write, a
 *	log, a resync or verify request, or a heartbeat)
 *
 * Its session stays up (it can still forward as an access point) and its
 * part of every write stays held, as for an unreachable member, until it
 * leaves the write set: userspace records that first (invariant 4), or
 * auto_degrade does it here. The log line and the event come from a work
 * item, once per session.
 *
 * Context: process context (a receive thread, the job thread, a session
 * being established).
 */
void chorus_peer_disk_failed(struct chorus_peer *peer)
{
	bool first;

	spin_lock_irq(&peer->lock);
	first = !peer->disk_failed;
	peer->disk_failed = true;
	spin_unlock_irq(&peer->lock);
	if (first)
		queue_work(chorus_wq, &peer->disk_work);
}

static void chorus_peer_disk_workfn(struct work_struct *work)
{
	struct chorus_peer *peer =
		container_of(work, struct chorus_peer, disk_work);
	struct chorus_volume *vol = peer->vol;

	pr_warn("%s: peer %u: its disk failed; its writes are held until it leaves the write set\n",
		vol->name, peer->node_id);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_PEER_STATE, peer,
				"peer's disk failed");
	if (READ_ONCE(vol->repl.auto_degrade) &&
	    READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER &&
	    READ_ONCE(peer->in_writeset)) {
		pr_warn("%s: auto_degrade takes peer %u out of the write set\n",
			vol->name, peer->node_id);
		chorus_peer_writeset_remove(peer, NULL);
	}
}

/**
 * chorus_peer_writeset_remove() - take a peer out of the write set
 * @peer: the peer
 * @extack: where to say why not; NULL from auto_degrade
 *
 * The peer is marked out of date: the regions of every write held for it
 * are set in its bitmap, the bitmap and the mark are written to disk, and
 * only then do the held writes complete. If that write fails the writes
 * stay held, because completing them would lose the record.
 *
 * Context: process context.
 * Return: 0 or a negative errno with a message in @extack.
 */
int chorus_peer_writeset_remove(struct chorus_peer *peer,
				struct netlink_ext_ack *extack)
{
	struct chorus_volume *vol = peer->vol;
	struct request *rq;
	unsigned long idx;
	int ret;

	if (peer->diskless) {
		NL_SET_ERR_MSG(extack,
			       "a diskless access point is never in the write set");
		return -EINVAL;
	}
	mutex_lock(&peer->session_mutex);
	chorus_job_stop(peer);
	mutex_unlock(&peer->session_mutex);

	/* Held from setting the bits until they are on disk. */
	mutex_lock(&peer->bm_mutex);
	spin_lock_irq(&peer->lock);
	if (!peer->in_writeset) {
		spin_unlock_irq(&peer->lock);
		mutex_unlock(&peer->bm_mutex);
		NL_SET_ERR_MSG(extack, "the peer is not in the write set");
		return -EALREADY;
	}
	peer->in_writeset = false;
	peer->repl_state = CHORUS_REPL_OUT_OF_DATE;
	xa_for_each(&peer->inflight, idx, rq)
		if (req_op(rq) != REQ_OP_FLUSH)
			chorus_bitmap_set_locked(peer, blk_rq_pos(rq),
						 blk_rq_sectors(rq));
	spin_unlock_irq(&peer->lock);
	/* Writes to a new extent no longer wait for its log (actlog.c). */
	wake_up_all(&vol->repl.al.wq);

	ret = chorus_bitmap_write_all(peer);
	if (!ret)
		ret = chorus_meta_set_peer(vol, peer->meta_slot, peer->node_id,
					   peer->meta_flags |
					   CHORUS_META_PEER_OUT_OF_DATE);
	mutex_unlock(&peer->bm_mutex);
	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot record the change in the metadata; I/O stays held");
		pr_err("%s: cannot mark peer %u out of date (%d); I/O stays held\n",
		       vol->name, peer->node_id, ret);
		return ret;
	}
	peer->meta_flags |= CHORUS_META_PEER_OUT_OF_DATE;
	chorus_repl_held_complete(peer);
	pr_info("%s: peer %u left the write set, out of date\n", vol->name,
		peer->node_id);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_WRITESET, peer,
				"left the write set");
	return 0;
}

/* Whether an up-to-date member with a working disk is in the write set. */
static bool chorus_writeset_has_copy(struct chorus_volume *vol)
{
	struct chorus_peer *peer;
	bool copy = false;
	int i;

	spin_lock_irq(&vol->repl.peers_lock);
	for (i = 0; i < CHORUS_MAX_PEERS && !copy; i++) {
		peer = vol->repl.peers[i];
		if (!peer)
			continue;
		spin_lock(&peer->lock);
		copy = chorus_peer_is_copy(peer);
		spin_unlock(&peer->lock);
	}
	spin_unlock_irq(&vol->repl.peers_lock);
	return copy;
}

/**
 * chorus_disk_leave_writeset() - the owner's failed disk leaves the write set
 * @vol: the volume; this node is its owner
 * @extack: where to say why not; NULL from auto_degrade
 *
 * Invariant 4 for the owner's own disk: userspace recorded the failure
 * (or auto_degrade is on), so the writes held because their local part
 * failed complete on the other members (chorus_dev_disk_leave()). Nothing
 * is written: a failed disk's metadata is not written again.
 *
 * Context: process context.
 * Return: 0, -EINVAL (the disk works, or no other copy is in the write
 * set) or -EALREADY, with a message in @extack.
 */
int chorus_disk_leave_writeset(struct chorus_volume *vol,
			       struct netlink_ext_ack *extack)
{
	if (!chorus_disk_failed(vol)) {
		NL_SET_ERR_MSG(extack,
			       "the local disk works: the owner writes every request to it");
		return -EINVAL;
	}
	if (READ_ONCE(vol->disk_left_writeset)) {
		NL_SET_ERR_MSG(extack, "the local disk is not in the write set");
		return -EALREADY;
	}
	if (!chorus_writeset_has_copy(vol)) {
		NL_SET_ERR_MSG(extack,
			       "no other up-to-date member is in the write set: the writes stay held");
		return -EINVAL;
	}
	chorus_dev_disk_leave(vol);
	pr_info("%s: the failed local disk left the write set; writes stand on the members\n",
		vol->name);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_WRITESET, NULL,
				"the local disk left the write set");
	return 0;
}

/**
 * chorus_peer_disk_replaced() - whether a peer comes with a disk its slot
 *	does not know
 * @peer: the peer
 * @disk_gen: the current_gen of its HELLO: the id its disk got when it
 *	was formatted
 *
 * Context: any.
 * Return: true when the slot counts against another disk of the peer; not
 * for a disk the slot never saw (a new slot, or metadata from before).
 */
bool chorus_peer_disk_replaced(struct chorus_peer *peer, u64 disk_gen)
{
	u64 known;

	if (peer->meta_slot < 0)
		return false;
	known = chorus_meta_peer_disk(peer->vol, peer->meta_slot);
	return known && known != disk_gen;
}

/**
 * chorus_peer_take_disk() - count the peer's bitmap against the disk it
 *	connected with
 * @peer: the peer; if its disk is new, out of the write set of this node
 *	as owner (the handshake refuses a member's: chorus_hello_check())
 * @disk_gen: the current_gen of its HELLO
 *
 * A disk the slot never saw is recorded. A replaced one (the old disk
 * failed and the replica was formatted on a new one) holds none of the
 * volume: every region is set in the bitmap and the slot marked for a full
 * copy, on disk before the new disk is recorded, so that the resync that
 * starts next copies everything, and a crash in between sets them again.
 *
 * Context: session_mutex held; may sleep.
 * Return: 0, or a negative errno when the metadata cannot be written.
 */
int chorus_peer_take_disk(struct chorus_peer *peer, u64 disk_gen)
{
	struct chorus_volume *vol = peer->vol;
	bool replaced;
	u32 flags;
	int ret = 0;

	lockdep_assert_held(&peer->session_mutex);
	if (peer->meta_slot < 0 ||
	    chorus_meta_peer_disk(vol, peer->meta_slot) == disk_gen)
		return 0;
	replaced = chorus_peer_disk_replaced(peer, disk_gen);
	mutex_lock(&peer->bm_mutex);
	flags = peer->meta_flags;
	if (replaced) {
		spin_lock_irq(&peer->lock);
		if (peer->in_writeset &&
		    READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER) {
			ret = -EBUSY;
		} else {
			/* A replica's view of a member it would own with. */
			peer->in_writeset = false;
			peer->repl_state = CHORUS_REPL_OUT_OF_DATE;
			chorus_bitmap_set_all_locked(peer);
		}
		spin_unlock_irq(&peer->lock);
		flags |= CHORUS_META_PEER_OUT_OF_DATE |
			 CHORUS_META_PEER_FULL_SYNC;
		if (!ret)
			ret = chorus_bitmap_write_all(peer);
	}
	if (!ret)
		ret = chorus_meta_set_peer_disk(vol, peer->meta_slot, flags,
						disk_gen);
	if (!ret)
		peer->meta_flags = flags;
	mutex_unlock(&peer->bm_mutex);
	if (!ret && replaced) {
		pr_warn("%s: peer %u has a new disk: every region is copied to it\n",
			vol->name, peer->node_id);
		chorus_genl_notify_peer(vol, CHORUS_EVENT_PEER_STATE, peer,
					"peer's disk was replaced: full resync");
	}
	return ret;
}

/**
 * chorus_peer_new_disk() - give a peer its slot on this node's new disk
 * @peer: the peer, disconnected; this node's failed disk was just replaced
 *
 * The new disk holds none of the volume yet, so its slot starts as a peer
 * new to this replica does with a full initial sync (chorus_peer_add()):
 * what the volume would have if it were attached anew on that disk.
 *
 * Context: process context, chorus_repl.conf_lock held.
 * Return: 0, or a negative errno when the new disk's metadata cannot be
 * written.
 */
int chorus_peer_new_disk(struct chorus_peer *peer)
{
	struct chorus_volume *vol = peer->vol;
	u32 flags = CHORUS_META_PEER_OUT_OF_DATE | CHORUS_META_PEER_FULL_SYNC;
	u32 old_flags;
	int slot, ret;

	lockdep_assert_held(&vol->repl.conf_lock);
	if (peer->meta_slot < 0)
		return 0;
	slot = chorus_meta_peer_slot(vol, peer->node_id, &old_flags);
	if (slot < 0)
		return slot;
	mutex_lock(&peer->bm_mutex);
	spin_lock_irq(&peer->lock);
	chorus_bitmap_set_all_locked(peer);
	peer->repl_state = CHORUS_REPL_OUT_OF_DATE;
	peer->in_writeset = false;
	peer->meta_slot = slot;
	spin_unlock_irq(&peer->lock);
	ret = chorus_bitmap_write_all(peer);
	if (!ret)
		ret = chorus_meta_set_peer(vol, slot, peer->node_id, flags);
	if (!ret)
		peer->meta_flags = flags;
	mutex_unlock(&peer->bm_mutex);
	return ret;
}
