// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: what the netlink family says about a
 * volume and its peers, in replies and events alike (genl.c sends them).
 * include/uapi/linux/chorus.h defines the attributes.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <net/genetlink.h>

#include "chorus.h"
#include "genl.h"

/* Upper bound of one CHORUS_PEER_A_PATH nest (chorus_genl_fill_path()). */
static size_t chorus_genl_path_size(void)
{
	return nla_total_size(0) +				/* PATH */
	       2 * nla_total_size(sizeof(u32)) +		/* TRANSPORT, ACTIVE */
	       4 * nla_total_size_64bit(sizeof(u64)) +		/* SESSIONS .. */
	       nla_total_size(CHORUS_REASON_MAX);		/* LAST_ERROR */
}

/* Upper bound of what chorus_genl_fill_peer() adds. */
static size_t chorus_genl_peer_size(void)
{
	return nla_total_size(0) +				/* PEER */
	       13 * nla_total_size(sizeof(u32)) +		/* and u8s, PORT */
	       12 * nla_total_size_64bit(sizeof(u64)) +
	       nla_total_size(CHORUS_ADDRESS_MAX) +
	       nla_total_size(CHORUS_REASON_MAX) +		/* LAST_ERROR */
	       2 * chorus_genl_path_size();
}

/**
 * chorus_genl_volume_size() - room a message needs for one volume
 *
 * Return: an upper bound of what chorus_genl_fill_volume() adds, with one
 * peer more than a volume can have (an event's own peer attribute).
 */
size_t chorus_genl_volume_size(void)
{
	return nla_total_size(CHORUS_VOLUME_NAME_MAX) +	/* VOLUME_NAME */
	       nla_total_size(CHORUS_BACKING_PATH_MAX) +	/* BACKING_PATH, DISKLESS */
	       nla_total_size_64bit(sizeof(u64)) +		/* SIZE_BYTES */
	       nla_total_size(sizeof(u32)) +			/* BLOCK_SIZE */
	       nla_total_size(CHORUS_UUID_LEN) +		/* UUID */
	       nla_total_size(sizeof(u32)) +			/* MINOR */
	       nla_total_size(CHORUS_DISK_NAME_MAX) +		/* DISK_NAME */
	       nla_total_size(sizeof(u32)) +			/* STATE */
	       nla_total_size(sizeof(u32)) +			/* EVENT */
	       nla_total_size(sizeof(u32)) +			/* OPEN_COUNT */
	       nla_total_size(0) +				/* STATS */
	       CHORUS_NR_STATS *
			nla_total_size_64bit(sizeof(u64)) +
	       chorus_lat_size() +				/* READ/WRITE_LATENCY */
	       7 * nla_total_size(sizeof(u32)) +		/* NODE_ID .. */
	       2 * nla_total_size_64bit(sizeof(u64)) +		/* EPOCH, RATE */
	       3 * nla_total_size(sizeof(u8)) +		/* AUTO_DEGRADE, CRC, IN_WS */
	       nla_total_size(sizeof(u32)) +			/* DISK_HELD */
	       nla_total_size(CHORUS_REASON_MAX) +		/* REASON */
	       nla_total_size(sizeof(u32)) +			/* DISK_TIMEOUT_MS */
	       nla_total_size(CHORUS_REASON_MAX) +		/* DISK_ERROR */
	       nla_total_size_64bit(sizeof(u64)) +		/* DISK_FAILED_AT */
	       nla_total_size(0) +				/* PEERS */
	       (CHORUS_MAX_PEERS + 1) * chorus_genl_peer_size();
}

static int chorus_genl_fill_stats(struct sk_buff *skb,
				  struct chorus_volume *vol)
{
	struct chorus_stats sum;
	struct nlattr *nest;
	size_t i;

	chorus_volume_stats(vol, &sum);
	nest = nla_nest_start(skb, CHORUS_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < CHORUS_NR_STATS; i++) {
		const struct chorus_stat_desc *desc = &chorus_stat_descs[i];

		if (nla_put_u64_64bit(skb, desc->attr,
				      chorus_stat_value(&sum, desc),
				      CHORUS_STAT_PAD)) {
			nla_nest_cancel(skb, nest);
			return -EMSGSIZE;
		}
	}
	if (chorus_lat_fill(skb, vol)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* Context: chorus_repl.peers_lock held, or the peer not yet listed. */
/* One CHORUS_PEER_A_PATH nest. Context: may be under peers_lock. */
static int chorus_genl_fill_path(struct sk_buff *skb, struct chorus_peer *peer,
				 u32 transport, u32 active)
{
	struct chorus_path_stats *path = &peer->paths[chorus_path_index(transport)];
	char last_error[CHORUS_REASON_MAX];
	struct nlattr *nest;
	unsigned long flags;

	spin_lock_irqsave(&peer->lock, flags);
	strscpy(last_error, path->last_error, sizeof(last_error));
	spin_unlock_irqrestore(&peer->lock, flags);

	nest = nla_nest_start(skb, CHORUS_PEER_A_PATH);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, CHORUS_PATH_A_TRANSPORT, transport) ||
	    nla_put_u8(skb, CHORUS_PATH_A_ACTIVE, active == transport) ||
	    nla_put_u64_64bit(skb, CHORUS_PATH_A_SESSIONS,
			      atomic64_read(&path->sessions), CHORUS_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PATH_A_FAILURES,
			      atomic64_read(&path->failures), CHORUS_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PATH_A_MSGS_SENT,
			      atomic64_read(&path->msgs_sent), CHORUS_PATH_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PATH_A_BYTES_SENT,
			      atomic64_read(&path->bytes_sent), CHORUS_PATH_A_PAD) ||
	    (last_error[0] &&
	     nla_put_string(skb, CHORUS_PATH_A_LAST_ERROR, last_error))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The peer's counters, atomic: no lock. */
static int chorus_genl_fill_peer_counters(struct sk_buff *skb,
					  struct chorus_peer *peer)
{
	if (nla_put_u64_64bit(skb, CHORUS_PEER_A_WRITES_SENT,
			      atomic64_read(&peer->stats.writes_sent),
			      CHORUS_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_BYTES_SENT,
			      atomic64_read(&peer->stats.bytes_sent),
			      CHORUS_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_RECONNECTS,
			      atomic64_read(&peer->stats.reconnects),
			      CHORUS_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_RESYNCED_BYTES,
			      atomic64_read(&peer->stats.resynced_bytes),
			      CHORUS_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_VERIFY_DONE_BYTES,
			      atomic64_read(&peer->verify_done),
			      CHORUS_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_VERIFY_MISMATCHES,
			      atomic64_read(&peer->verify_mismatches),
			      CHORUS_PEER_A_PAD))
		return -EMSGSIZE;
	return 0;
}

/**
 * chorus_genl_fill_peer() - put one peer into a message
 * @skb: the message
 * @peer: the peer
 * @attr: the nest it goes in: %CHORUS_A_PEER
 *
 * Context: any context that may take @peer->lock; under the volume's
 * peers_lock or not.
 * Return: 0, or -EMSGSIZE with nothing of the peer left in @skb.
 */
int chorus_genl_fill_peer(struct sk_buff *skb, struct chorus_peer *peer, int attr)
{
	enum chorus_conn_state conn_state;
	enum chorus_repl_state repl_state;
	char last_error[CHORUS_REASON_MAX];
	bool in_writeset, owner, syncing, disk_failed;
	u32 held = 0, al_waiting, active;
	u64 dirty;
	struct nlattr *nest;
	struct request *rq;
	unsigned long idx, flags;

	/* Under peers_lock or not: keep the caller's irq state. */
	spin_lock_irqsave(&peer->lock, flags);
	conn_state = peer->conn_state;
	repl_state = peer->repl_state;
	in_writeset = peer->in_writeset;
	owner = peer->peer_owner;
	disk_failed = peer->disk_failed;
	dirty = (u64)peer->dirty * (peer->vol->repl.region_sectors << SECTOR_SHIFT);
	strscpy(last_error, peer->last_error, sizeof(last_error));
	active = peer->active_transport;
	xa_for_each(&peer->inflight, idx, rq)
		held++;
	spin_unlock_irqrestore(&peer->lock, flags);
	al_waiting = chorus_al_nr_waiting_for(peer);
	held += al_waiting;
	syncing = READ_ONCE(peer->job) == CHORUS_JOB_RESYNC;

	nest = nla_nest_start(skb, attr);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, CHORUS_PEER_A_NODE_ID, peer->node_id) ||
	    nla_put_string(skb, CHORUS_PEER_A_ADDRESS, peer->address) ||
	    nla_put_u16(skb, CHORUS_PEER_A_PORT, peer->port) ||
	    nla_put_u32(skb, CHORUS_PEER_A_TRANSPORT, peer->transport) ||
	    nla_put_u32(skb, CHORUS_PEER_A_NR_CONNS, peer->nr_conns) ||
	    nla_put_u32(skb, CHORUS_PEER_A_CONN_STATE, conn_state) ||
	    nla_put_u32(skb, CHORUS_PEER_A_REPL_STATE, repl_state) ||
	    nla_put_u8(skb, CHORUS_PEER_A_IN_WRITESET, in_writeset) ||
	    nla_put_u8(skb, CHORUS_PEER_A_DISK_FAILED, disk_failed) ||
	    nla_put_u32(skb, CHORUS_PEER_A_ROLE, owner ? CHORUS_ROLE_OWNER :
			CHORUS_ROLE_REPLICA) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_DIRTY_BYTES, dirty,
			      CHORUS_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_SYNC_TOTAL_BYTES,
			      syncing ? atomic64_read(&peer->sync_total) : 0,
			      CHORUS_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_SYNC_DONE_BYTES,
			      syncing ? atomic64_read(&peer->sync_done) : 0,
			      CHORUS_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, CHORUS_PEER_A_SYNC_RATE,
			      atomic64_read(&peer->sync_rate), CHORUS_PEER_A_PAD) ||
	    nla_put_u32(skb, CHORUS_PEER_A_HELD, held) ||
	    nla_put_u32(skb, CHORUS_PEER_A_AL_WAITING, al_waiting) ||
	    chorus_genl_fill_peer_counters(skb, peer) ||
	    nla_put_u8(skb, CHORUS_PEER_A_VERIFY_RUNNING,
		       READ_ONCE(peer->job) == CHORUS_JOB_VERIFY) ||
	    (last_error[0] &&
	     nla_put_string(skb, CHORUS_PEER_A_LAST_ERROR, last_error)) ||
	    nla_put_u32(skb, CHORUS_PEER_A_ACTIVE_TRANSPORT, active) ||
	    ((peer->transport != CHORUS_TRANSPORT_TCP &&
	      chorus_genl_fill_path(skb, peer, CHORUS_TRANSPORT_RDMA, active)) ||
	     (peer->transport != CHORUS_TRANSPORT_RDMA &&
	      chorus_genl_fill_path(skb, peer, CHORUS_TRANSPORT_TCP, active)))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int chorus_genl_fill_repl(struct sk_buff *skb, struct chorus_volume *vol)
{
	struct chorus_repl *repl = &vol->repl;
	struct nlattr *nest;
	int i, ret = 0;

	if ((vol->node_id && nla_put_u32(skb, CHORUS_A_NODE_ID, vol->node_id)) ||
	    nla_put_u32(skb, CHORUS_A_ROLE, READ_ONCE(repl->role)) ||
	    nla_put_u64_64bit(skb, CHORUS_A_EPOCH, READ_ONCE(repl->epoch),
			      CHORUS_A_PAD) ||
	    nla_put_u32(skb, CHORUS_A_REQUEST_TIMEOUT_MS,
			READ_ONCE(repl->request_timeout_ms)) ||
	    nla_put_u32(skb, CHORUS_A_PING_INTERVAL_MS,
			READ_ONCE(repl->ping_interval_ms)) ||
	    nla_put_u32(skb, CHORUS_A_PING_TIMEOUT_MS,
			READ_ONCE(repl->ping_timeout_ms)) ||
	    nla_put_u64_64bit(skb, CHORUS_A_RESYNC_RATE,
			      READ_ONCE(repl->resync_rate), CHORUS_A_PAD) ||
	    nla_put_u8(skb, CHORUS_A_AUTO_DEGRADE, READ_ONCE(repl->auto_degrade)) ||
	    nla_put_u8(skb, CHORUS_A_PAYLOAD_CRC, READ_ONCE(repl->payload_crc)))
		return -EMSGSIZE;

	nest = nla_nest_start(skb, CHORUS_A_PEERS);
	if (!nest)
		return -EMSGSIZE;
	spin_lock(&repl->peers_lock);
	for (i = 0; i < CHORUS_MAX_PEERS && !ret; i++)
		if (repl->peers[i])
			ret = chorus_genl_fill_peer(skb, repl->peers[i],
						    CHORUS_A_PEER);
	spin_unlock(&repl->peers_lock);
	if (ret) {
		nla_nest_cancel(skb, nest);
		return ret;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/**
 * chorus_genl_fill_volume() - put a volume's attributes, peers and counters
 * into a message
 * @skb: the message, with room for chorus_genl_volume_size()
 * @vol: the volume, which must stay complete meanwhile
 *
 * Context: process context; takes the volume's peers_lock.
 * Return: 0 or -EMSGSIZE.
 */
int chorus_genl_fill_volume(struct sk_buff *skb, struct chorus_volume *vol)
{
	u64 size = (u64)vol->nr_sectors << SECTOR_SHIFT;

	if (nla_put_string(skb, CHORUS_A_VOLUME_NAME, vol->name) ||
	    (vol->diskless ? nla_put_flag(skb, CHORUS_A_DISKLESS) :
	     nla_put_string(skb, CHORUS_A_BACKING_PATH, vol->backing.path)) ||
	    nla_put_u64_64bit(skb, CHORUS_A_SIZE_BYTES, size, CHORUS_A_PAD) ||
	    nla_put_u32(skb, CHORUS_A_BLOCK_SIZE, vol->block_size) ||
	    nla_put(skb, CHORUS_A_UUID, CHORUS_UUID_LEN, &vol->uuid) ||
	    nla_put_u32(skb, CHORUS_A_MINOR, vol->index) ||
	    nla_put_string(skb, CHORUS_A_DISK_NAME, vol->disk->disk_name) ||
	    nla_put_u32(skb, CHORUS_A_STATE, chorus_volume_state(vol)) ||
	    nla_put_u32(skb, CHORUS_A_OPEN_COUNT, READ_ONCE(vol->open_count)) ||
	    nla_put_u32(skb, CHORUS_A_HELD_IO, chorus_dev_nr_held(vol)) ||
	    chorus_disk_fill(skb, vol) || chorus_genl_fill_repl(skb, vol))
		return -EMSGSIZE;
	return chorus_genl_fill_stats(skb, vol);
}
