// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: roles and epochs.
 *
 * SET_ROLE makes this node the owner or a replica of a volume: every
 * session ends and starts again, so that peers learn the new role in the
 * handshake, with the queue frozen meanwhile (chorus_repl_set_role()). Two
 * changes cannot wait for a freeze, because what is in flight would never
 * drain: a replica becoming the owner takes back what it forwarded
 * (forward.c), and an owner whose lease deadline passed, holding its I/O,
 * hands that I/O over (chorus_repl_hand_over()): it becomes a replica and
 * starts every request it had not completed again, forwarded to the owner
 * it then follows, instead of failing it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/delay.h>
#include <net/netlink.h>

#include "chorus.h"

static void chorus_role_handover_workfn(struct work_struct *work);
static void chorus_role_supersede_workfn(struct work_struct *work);

/**
 * chorus_role_init() - initialise the role state of a new volume
 * @vol: the volume
 */
void chorus_role_init(struct chorus_volume *vol)
{
	vol->repl.role = CHORUS_ROLE_OWNER;
	vol->repl.handover_gen = 1;
	INIT_WORK(&vol->repl.handover_work, chorus_role_handover_workfn);
	INIT_WORK(&vol->repl.supersede_work, chorus_role_supersede_workfn);
}

/**
 * chorus_role_stop() - wait for a hand-over's works, if one is running
 * @vol: the volume, being destroyed; its peers stay for the works to read
 *
 * Context: process context, chorus_repl.conf_lock not held.
 */
void chorus_role_stop(struct chorus_volume *vol)
{
	cancel_work_sync(&vol->repl.supersede_work);
	cancel_work_sync(&vol->repl.handover_work);
}

/*
 * An owner steps down: what it holds for a peer it cannot reach would never
 * drain, and no ack for it can come at this epoch, so those writes fail. No
 * application saw them acknowledged; where they reached this node's disk,
 * the new owner's resync of the activity log it was shipped overwrites them
 * (Documentation/cluster.md, "Stepping down"). Parts for a connected peer
 * are left to drain. Context: conf_lock held.
 */
static void chorus_repl_fail_unreachable(struct chorus_volume *vol)
{
	struct chorus_peer *peer;
	bool connected;
	int i;

	lockdep_assert_held(&vol->repl.conf_lock);
	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		peer = vol->repl.peers[i];
		if (!peer || xa_empty(&peer->inflight))
			continue;
		spin_lock_irq(&peer->lock);
		connected = peer->conn_state == CHORUS_CONN_CONNECTED;
		spin_unlock_irq(&peer->lock);
		if (connected)
			continue;
		pr_warn("%s: stepping down: writes held for unreachable peer %u fail\n",
			vol->name, peer->node_id);
		chorus_repl_held_end(peer, BLK_STS_IOERR);
	}
}

/*
 * An owner stepping down freezes its queue. A write failed above may start
 * one that waited for its range, held for the same unreachable peer for
 * good: while waiting, fail each second what was held meanwhile.
 */
static int chorus_repl_step_down_freeze(struct chorus_volume *vol,
					struct netlink_ext_ack *extack)
{
	int i;

	lockdep_assert_held(&vol->repl.conf_lock);
	chorus_dev_freeze_start(vol);
	for (i = 0; i < 10; i++) {
		if (chorus_dev_freeze_wait(vol, HZ))
			return 0;
		chorus_repl_fail_unreachable(vol);
	}
	chorus_dev_freeze_refused(vol, extack);
	return -EBUSY;
}

/**
 * chorus_repl_accept_epoch() - a replica checks and records an epoch
 * @vol: the volume
 * @epoch: the epoch a message carries
 *
 * A higher epoch is written to the superblock before it is accepted, so a
 * replica never goes back to an older owner after a restart.
 *
 * Context: process context.
 * Return: 0, -ESTALE for an epoch older than the highest accepted, or the
 * error of the superblock write.
 */
int chorus_repl_accept_epoch(struct chorus_volume *vol, u64 epoch)
{
	u64 highest;
	int ret;

	if (likely(epoch == READ_ONCE(vol->repl.epoch)))
		return 0;
	highest = chorus_meta_highest_epoch(vol);
	if (epoch < highest)
		return -ESTALE;
	ret = chorus_meta_set_epoch(vol, epoch);
	if (ret)
		return ret;
	WRITE_ONCE(vol->repl.epoch, epoch);
	return 0;
}

/* The metadata side of becoming, or staying, the owner at @epoch. */
static int chorus_repl_owner_meta(struct chorus_volume *vol, u64 epoch,
				  struct netlink_ext_ack *extack)
{
	int ret = chorus_meta_set_epoch(vol, epoch);

	if (ret) {
		NL_SET_ERR_MSG(extack, "cannot write the epoch to the metadata");
		return ret;
	}
	/*
	 * Whatever the last owner may have had in flight is resynced; an
	 * owner restating its epoch keeps its own log.
	 */
	if (vol->repl.role != CHORUS_ROLE_OWNER) {
		ret = chorus_al_fold(vol);
		if (ret) {
			NL_SET_ERR_MSG(extack, "cannot read or fold the activity log");
			return ret;
		}
	}
	chorus_al_owner_start(vol);
	return 0;
}

/*
 * Whether this node may take @role at @epoch: a diskless access point or a
 * node whose disk failed has no copy to own, and a new owner needs a newer
 * epoch than any this replica accepted (only the owner itself may restate
 * its own). Context: chorus_repl.conf_lock held.
 */
static int chorus_repl_may_own(struct chorus_volume *vol, enum chorus_role role,
			       u64 epoch, struct netlink_ext_ack *extack)
{
	bool owner = vol->repl.role == CHORUS_ROLE_OWNER;
	u64 highest = chorus_meta_highest_epoch(vol);

	lockdep_assert_held(&vol->repl.conf_lock);
	if (role != CHORUS_ROLE_OWNER)
		return 0;
	if (vol->diskless) {
		NL_SET_ERR_MSG(extack,
			       "a diskless access point cannot be the owner: it has no replica");
		return -EINVAL;
	}
	if (!owner && chorus_disk_failed(vol)) {
		NL_SET_ERR_MSG(extack,
			       "the local disk failed and is detached: this node has no up-to-date copy to own");
		return -EIO;
	}
	if (epoch < highest || (epoch == highest && !owner)) {
		NL_SET_ERR_MSG(extack,
			       "epoch is older than the highest this replica accepted (or equal to it)");
		return -ESTALE;
	}
	return 0;
}

/* Restart, as superseded, what every peer holds: none is connected now. */
static void chorus_role_restart_held(struct chorus_volume *vol)
{
	int i;

	lockdep_assert_held(&vol->repl.conf_lock);
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (vol->repl.peers[i])
			chorus_repl_held_end(vol->repl.peers[i], BLK_STS_IOERR);
}

/*
 * The rest of a hand-over, which the caller of chorus_repl_hand_over() may
 * not wait for: a fan-out that found this node the owner just before the
 * role changed may have stored its parts after the peers' held requests
 * were restarted, so they are restarted once more when every such fan-out
 * ended. Then, before any session can bring the new owner's writes and
 * resync, the bios this node sent its disk as the owner must have ended:
 * one landing later could overwrite newer data. Then the peers are dialled
 * again.
 */
static void chorus_role_handover_workfn(struct work_struct *work)
{
	struct chorus_repl *repl =
		container_of(work, struct chorus_repl, handover_work);
	struct chorus_volume *vol = container_of(repl, struct chorus_volume, repl);
	unsigned long since = jiffies;
	bool warned = false;
	int i;

	chorus_repl_owner_sync();
	mutex_lock(&repl->conf_lock);
	if (repl->role != CHORUS_ROLE_OWNER)
		chorus_role_restart_held(vol);
	mutex_unlock(&repl->conf_lock);

	while (atomic_read(&vol->health.inflight)) {
		if (!warned && time_after(jiffies, since + 10 * HZ)) {
			pr_warn("%s: %d bios of the owner still on the disk: no session until they end\n",
				vol->name, atomic_read(&vol->health.inflight));
			warned = true;
		}
		msleep(20);
	}

	mutex_lock(&repl->conf_lock);
	for_each_set_bit(i, &repl->handover_redial, CHORUS_MAX_PEERS)
		if (repl->peers[i])
			chorus_peer_connect(repl->peers[i]);
	repl->handover_redial = 0;
	mutex_unlock(&repl->conf_lock);
}

/**
 * chorus_repl_hand_over() - an owner past its lease deadline becomes a replica
 * @vol: the volume; this node its owner, with peers, its lease expired
 *
 * The node stops being the owner without failing what it holds: the
 * requests the lease holds, those held for unreachable peers and those
 * waiting for the activity log start again, forwarded to the owner this
 * node follows next (chorus_dev_hand_over(), chorus_dev_restart()). No
 * request begun as the owner completes here from then on, so no write is
 * acknowledged under the old epoch after it; a block write is idempotent,
 * and the new owner orders overlapping ones once for every replica. The
 * activity log keeps its extents: the new owner resyncs them to this node.
 * Every session ends first, and the peers are dialled again only once the
 * owner's bios have left the disk (&chorus_repl.handover_work).
 *
 * @by: the peer that proved it superseded this node, or NULL for SET_ROLE
 * @epoch: the epoch @by owns at, already on disk; 0 with @by NULL
 *
 * Context: process context, chorus_repl.conf_lock held.
 * Return: 0.
 */
static int chorus_repl_hand_over(struct chorus_volume *vol,
				 struct chorus_peer *by, u64 epoch)
{
	struct chorus_repl *repl = &vol->repl;
	unsigned int held = chorus_dev_nr_held(vol);
	char reason[CHORUS_REASON_MAX];
	int i;

	lockdep_assert_held(&repl->conf_lock);
	for (i = 0; i < CHORUS_MAX_PEERS; i++) {
		if (!repl->peers[i])
			continue;
		if (READ_ONCE(repl->peers[i]->want_connect))
			__set_bit(i, &repl->handover_redial);
		chorus_peer_disconnect(repl->peers[i]);
	}
	chorus_al_set_stopping(vol, true);
	chorus_dev_hand_over(vol);
	chorus_role_restart_held(vol);
	queue_work(chorus_wq, &repl->handover_work);
	if (!by) {
		pr_info("%s: role replica, epoch %llu: handed over past the lease deadline, %u held requests forwarded\n",
			vol->name, READ_ONCE(repl->epoch), held);
		chorus_genl_notify(vol, CHORUS_EVENT_ROLE);
		return 0;
	}
	snprintf(reason, sizeof(reason), "superseded by peer %u at epoch %llu",
		 by->node_id, epoch);
	pr_info("%s: role replica: %s: handed over past the lease deadline, %u held requests forwarded\n",
		vol->name, reason, held);
	chorus_genl_notify_peer(vol, CHORUS_EVENT_ROLE, by, reason);
	return 0;
}

/*
 * A peer proved it owns the volume at a higher epoch (chorus_repl_superseded()):
 * with every condition checked again, now under conf_lock, record its epoch
 * on disk, so that nothing makes this node the owner at the old one again,
 * and hand over. The replica this node becomes follows that owner once
 * dialled again (chorus_repl_follow_owner()).
 */
static void chorus_role_supersede_workfn(struct work_struct *work)
{
	struct chorus_repl *repl =
		container_of(work, struct chorus_repl, supersede_work);
	struct chorus_volume *vol = container_of(repl, struct chorus_volume, repl);
	struct chorus_peer *peer = NULL;
	u64 epoch;
	u32 node;

	mutex_lock(&repl->conf_lock);
	mutex_lock(&repl->meta_lock);
	epoch = repl->superseded_epoch;
	node = repl->superseded_node;
	repl->superseded_epoch = 0;
	mutex_unlock(&repl->meta_lock);
	if (epoch)
		peer = chorus_peer_find(vol, node);
	if (!peer || peer->diskless || repl->role != CHORUS_ROLE_OWNER ||
	    !chorus_lease_expired() || epoch <= repl->epoch ||
	    epoch < chorus_meta_highest_epoch(vol))
		goto unlock;
	if (chorus_meta_set_epoch(vol, epoch)) {
		pr_warn("%s: superseded by peer %u at epoch %llu, but cannot write the epoch: still the owner, holding\n",
			vol->name, node, epoch);
		goto unlock;
	}
	chorus_repl_hand_over(vol, peer, epoch);
unlock:
	mutex_unlock(&repl->conf_lock);
}

/**
 * chorus_repl_superseded() - a peer proved that it owns the volume at a
 *	higher epoch than this owner's
 * @peer: the peer, configured with a replica
 * @epoch: the epoch its hello, proven with the peer secret when there is
 *	one, says it owns at
 *
 * The handshake calls this for an owner past its lease deadline. The
 * hand-over runs from &chorus_repl.supersede_work, which checks every
 * condition again: the handshake holds locks that the hand-over takes.
 *
 * Context: process context; the handshake's locks (chorus_volumes_lock,
 * conf_lock, the peer's session_mutex) may be held, meta_lock not.
 */
void chorus_repl_superseded(struct chorus_peer *peer, u64 epoch)
{
	struct chorus_repl *repl = &peer->vol->repl;

	mutex_lock(&repl->meta_lock);
	if (epoch > repl->superseded_epoch) {
		repl->superseded_epoch = epoch;
		repl->superseded_node = peer->node_id;
	}
	mutex_unlock(&repl->meta_lock);
	queue_work(chorus_wq, &repl->supersede_work);
}

/**
 * chorus_repl_set_role() - make this node the owner or a replica
 * @vol: the volume
 * @role: the new role
 * @epoch: the owner's epoch, for %CHORUS_ROLE_OWNER
 * @extack: where to say why not
 *
 * Every session is closed and reopened, so that peers learn the new role
 * in the handshake; the queue is frozen meanwhile, except when a replica
 * becomes the owner (see chorus_repl.role).
 *
 * Context: process context, chorus_repl.conf_lock held.
 * Return: 0 or a negative errno with a message in @extack.
 */
int chorus_repl_set_role(struct chorus_volume *vol, enum chorus_role role,
			 u64 epoch, struct netlink_ext_ack *extack)
{
	struct chorus_repl *repl = &vol->repl;
	u64 highest = chorus_meta_highest_epoch(vol);
	/* A forwarder that becomes the owner keeps what it forwarded. */
	bool take_back = repl->role != CHORUS_ROLE_OWNER &&
			 role == CHORUS_ROLE_OWNER;
	int i, ret;

	lockdep_assert_held(&repl->conf_lock);
	ret = chorus_repl_may_own(vol, role, epoch, extack);
	if (ret)
		return ret;
	if (repl->role == CHORUS_ROLE_OWNER && role != CHORUS_ROLE_OWNER &&
	    repl->nr_peers && chorus_lease_expired())
		return chorus_repl_hand_over(vol, NULL, 0);
	/*
	 * A node that gives up ownership fails what an expired lease holds,
	 * and what waits for a peer it cannot reach; a replica that stays one
	 * fails what it holds for an owner: the freeze below would wait for
	 * them forever. A replica that becomes the owner is not frozen: what
	 * it forwarded stays in flight, held (its sessions end below), and is
	 * started here once it is the owner. Until then its role says
	 * replica, so nothing else reaches the activity log or the peers.
	 */
	if (repl->role != CHORUS_ROLE_OWNER && !take_back)
		chorus_fwd_fail_all(vol);
	if (role != CHORUS_ROLE_OWNER) {
		chorus_dev_release_held(vol, true);
		if (repl->role == CHORUS_ROLE_OWNER) {
			chorus_al_set_stopping(vol, true);
			chorus_repl_fail_unreachable(vol);
		}
	}
	if (take_back)
		ret = 0;
	else if (repl->role == CHORUS_ROLE_OWNER && role != CHORUS_ROLE_OWNER)
		ret = chorus_repl_step_down_freeze(vol, extack);
	else
		ret = chorus_dev_freeze(vol, extack);
	if (ret) {
		chorus_al_set_stopping(vol, false);
		return ret;
	}
	if (role == CHORUS_ROLE_OWNER) {
		ret = chorus_repl_owner_meta(vol, epoch, extack);
		if (ret)
			goto unfreeze;
	} else {
		epoch = highest;
		/* Nothing is in flight: a clean handover needs no resync. */
		if (repl->role == CHORUS_ROLE_OWNER && chorus_al_clear(vol))
			pr_warn("%s: cannot clear the activity log\n", vol->name);
	}
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (repl->peers[i])
			chorus_peer_teardown(repl->peers[i], "role changed");
	WRITE_ONCE(repl->epoch, epoch);
	/* Pairs with chorus_repl_dispatch(): the epoch before the role. */
	smp_store_release(&repl->role, role);
	if (take_back)
		chorus_fwd_take_back(vol);
	chorus_dev_clear_held_fail(vol);
	/* With the peers a hand-over has not dialled again yet. */
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (repl->peers[i] && (READ_ONCE(repl->peers[i]->want_connect) ||
				       test_bit(i, &repl->handover_redial)))
			chorus_peer_connect(repl->peers[i]);
	repl->handover_redial = 0;
	pr_info("%s: role %s, epoch %llu\n", vol->name,
		role == CHORUS_ROLE_OWNER ? "owner" : "replica", epoch);
unfreeze:
	if (!take_back)
		chorus_dev_unfreeze(vol);
	if (!ret)
		chorus_genl_notify(vol, CHORUS_EVENT_ROLE);
	return ret;
}
