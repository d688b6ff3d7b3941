// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the generic netlink family "chorus".
 *
 * include/uapi/linux/chorus.h defines the ABI and
 * Documentation/netlink-abi.rst describes it. Every command has its own
 * policy and is validated strictly, so an attribute a command does not
 * take is refused rather than ignored. Commands that change state need
 * CAP_NET_ADMIN; every change is announced on the "events" group.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/inet.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <net/genetlink.h>

#include "auth.h"
#include "chorus.h"
#include "genl.h"

static struct genl_family chorus_genl_family;

enum chorus_genl_mcgrp {
	CHORUS_GENL_MCGRP_EVENTS_ID,
};

static const struct genl_multicast_group chorus_genl_mcgrps[] = {
	[CHORUS_GENL_MCGRP_EVENTS_ID] = { .name = CHORUS_GENL_MCGRP_EVENTS },
};

#define CHORUS_NAME_POLICY \
	{ .type = NLA_NUL_STRING, .len = CHORUS_VOLUME_NAME_MAX - 1 }

#define CHORUS_NODE_ID_POLICY NLA_POLICY_RANGE(NLA_U32, 1, CHORUS_NODE_ID_MAX)

static const struct nla_policy chorus_create_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_VOLUME_NAME]	= CHORUS_NAME_POLICY,
	[CHORUS_A_BACKING_PATH]	= { .type = NLA_NUL_STRING,
				    .len = CHORUS_BACKING_PATH_MAX - 1 },
	[CHORUS_A_SIZE_BYTES]	= { .type = NLA_U64 },
	[CHORUS_A_BLOCK_SIZE]	= { .type = NLA_U32 },
	[CHORUS_A_UUID]		= NLA_POLICY_EXACT_LEN(CHORUS_UUID_LEN),
	[CHORUS_A_NODE_ID]	= CHORUS_NODE_ID_POLICY,
	[CHORUS_A_DISKLESS]	= { .type = NLA_FLAG },
	[CHORUS_A_EPOCH]	= { .type = NLA_U64 },
};

static const struct nla_policy chorus_listen_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_ADDRESS]	= { .type = NLA_NUL_STRING,
				    .len = CHORUS_ADDRESS_MAX - 1 },
	[CHORUS_A_PORT]		= NLA_POLICY_MIN(NLA_U16, 1),
};

static const struct nla_policy chorus_unlisten_policy[CHORUS_A_MAX + 1] = {
};

static const struct nla_policy chorus_peer_add_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_VOLUME_NAME]	= CHORUS_NAME_POLICY,
	[CHORUS_A_NODE_ID]	= CHORUS_NODE_ID_POLICY,
	[CHORUS_A_ADDRESS]	= { .type = NLA_NUL_STRING,
				    .len = CHORUS_ADDRESS_MAX - 1 },
	[CHORUS_A_PORT]		= NLA_POLICY_MIN(NLA_U16, 1),
	[CHORUS_A_TRANSPORT]	= NLA_POLICY_RANGE(NLA_U32, CHORUS_TRANSPORT_TCP,
						   CHORUS_TRANSPORT_RDMA_TCP),
	[CHORUS_A_NR_CONNS]	= NLA_POLICY_RANGE(NLA_U32, 1, CHORUS_MAX_CONNS),
	[CHORUS_A_INITIAL_SYNC]	= NLA_POLICY_RANGE(NLA_U32, CHORUS_INITIAL_SYNC_FULL,
						   CHORUS_INITIAL_SYNC_NONE),
	[CHORUS_A_DISKLESS]	= { .type = NLA_FLAG },
};

static const struct nla_policy chorus_peer_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_VOLUME_NAME]	= CHORUS_NAME_POLICY,
	[CHORUS_A_NODE_ID]	= CHORUS_NODE_ID_POLICY,
};

static const struct nla_policy chorus_role_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_VOLUME_NAME]	= CHORUS_NAME_POLICY,
	[CHORUS_A_ROLE]		= NLA_POLICY_RANGE(NLA_U32, CHORUS_ROLE_OWNER,
						   CHORUS_ROLE_REPLICA),
	[CHORUS_A_EPOCH]	= { .type = NLA_U64 },
};

/* Timeouts and intervals: 100 ms to one hour. */
static struct netlink_range_validation chorus_ms_range = {
	.min = 100,
	.max = 3600000,
};

/* The disk timeout: 0 (off), else checked again in the handler. */
static struct netlink_range_validation chorus_disk_timeout_range = {
	.min = 0,
	.max = CHORUS_DISK_TIMEOUT_MS_MAX,
};

static const struct nla_policy chorus_volume_set_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_VOLUME_NAME]		= CHORUS_NAME_POLICY,
	[CHORUS_A_REQUEST_TIMEOUT_MS]	= NLA_POLICY_FULL_RANGE(NLA_U32, &chorus_ms_range),
	[CHORUS_A_PING_INTERVAL_MS]	= NLA_POLICY_FULL_RANGE(NLA_U32, &chorus_ms_range),
	[CHORUS_A_PING_TIMEOUT_MS]	= NLA_POLICY_FULL_RANGE(NLA_U32, &chorus_ms_range),
	[CHORUS_A_RESYNC_RATE]		= { .type = NLA_U64 },
	[CHORUS_A_AUTO_DEGRADE]		= NLA_POLICY_MAX(NLA_U8, 1),
	[CHORUS_A_PAYLOAD_CRC]		= NLA_POLICY_MAX(NLA_U8, 1),
	[CHORUS_A_DISK_TIMEOUT_MS]	=
		NLA_POLICY_FULL_RANGE(NLA_U32, &chorus_disk_timeout_range),
};

static const struct nla_policy chorus_disk_attach_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_VOLUME_NAME]	= CHORUS_NAME_POLICY,
	[CHORUS_A_BACKING_PATH]	= { .type = NLA_NUL_STRING,
				    .len = CHORUS_BACKING_PATH_MAX - 1 },
};

static const struct nla_policy chorus_lease_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_LEASE_DEADLINE_NS]	= { .type = NLA_U64 },
};

/* How long a replaced secret may stay accepted: a second to a week. */
static struct netlink_range_validation chorus_auth_keep_range = {
	.min = 1,
	.max = CHORUS_AUTH_KEEP_MAX_S,
};

static const struct nla_policy chorus_auth_policy[CHORUS_A_MAX + 1] = {
	[CHORUS_A_AUTH_SECRET]		= NLA_POLICY_RANGE(NLA_BINARY,
							   CHORUS_AUTH_SECRET_MIN,
							   CHORUS_AUTH_SECRET_MAX),
	[CHORUS_A_AUTH_KEEP_PREVIOUS_S]	=
		NLA_POLICY_FULL_RANGE(NLA_U32, &chorus_auth_keep_range),
	[CHORUS_A_AUTH_DROP_PREVIOUS]	= { .type = NLA_FLAG },
	[CHORUS_A_AUTH_CLEAR]		= { .type = NLA_FLAG },
};

static const struct nla_policy chorus_name_policy[CHORUS_A_VOLUME_NAME + 1] = {
	[CHORUS_A_VOLUME_NAME]	= CHORUS_NAME_POLICY,
};

/**
 * chorus_genl_notify() - announce a volume event on the "events" group
 * @vol: the volume, still complete
 * @event: what happened
 *
 * A notification that cannot be allocated is lost; listeners see the
 * state with the next GET.
 * Context: process context.
 */
void chorus_genl_notify(struct chorus_volume *vol, enum chorus_event event)
{
	chorus_genl_notify_peer(vol, event, NULL, NULL);
}

/**
 * chorus_genl_notify_peer() - announce an event, about one peer or none
 * @vol: the volume
 * @event: what happened
 * @peer: the peer concerned, or NULL
 * @reason: why, or NULL
 *
 * Context: process context.
 */
void chorus_genl_notify_peer(struct chorus_volume *vol, enum chorus_event event,
			     struct chorus_peer *peer, const char *reason)
{
	struct sk_buff *skb;
	void *hdr;

	skb = genlmsg_new(chorus_genl_volume_size(), GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &chorus_genl_family, 0, CHORUS_CMD_EVENT);
	if (!hdr)
		goto free;
	if (nla_put_u32(skb, CHORUS_A_EVENT, event) ||
	    (reason && nla_put_string(skb, CHORUS_A_REASON, reason)) ||
	    (peer && chorus_genl_fill_peer(skb, peer, CHORUS_A_PEER)) ||
	    chorus_genl_fill_volume(skb, vol))
		goto free;
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&chorus_genl_family, skb, 0,
			  CHORUS_GENL_MCGRP_EVENTS_ID, GFP_KERNEL);
	return;
free:
	nlmsg_free(skb);
}

/* A reply carrying one volume, the answer to CREATE and GET. */
static struct sk_buff *chorus_genl_reply_new(struct genl_info *info,
					     void **hdr)
{
	struct sk_buff *skb;

	skb = genlmsg_new(chorus_genl_volume_size(), GFP_KERNEL);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put_reply(skb, info, &chorus_genl_family, 0,
				 info->genlhdr->cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static int chorus_genl_reply_volume(struct genl_info *info,
				    struct sk_buff *skb, void *hdr,
				    struct chorus_volume *vol)
{
	int ret = chorus_genl_fill_volume(skb, vol);

	if (ret) {
		nlmsg_free(skb);
		return ret;
	}
	genlmsg_end(skb, hdr);
	return genlmsg_reply(skb, info);
}

/*
 * A diskless access point has no metadata to say what it is: its size,
 * uuid and node id must be given, and its block size is 512 unless given.
 */
static int chorus_genl_check_diskless(struct genl_info *info,
				      struct chorus_volume_config *cfg)
{
	struct netlink_ext_ack *extack = info->extack;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_SIZE_BYTES)) {
		NL_SET_ERR_MSG(extack, "a diskless volume needs its size (CHORUS_A_SIZE_BYTES)");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_UUID)) {
		NL_SET_ERR_MSG(extack, "a diskless volume needs its uuid (CHORUS_A_UUID)");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_NODE_ID)) {
		NL_SET_ERR_MSG(extack, "a diskless volume needs this node's id (CHORUS_A_NODE_ID)");
		return -EINVAL;
	}
	if (!cfg->block_size)
		cfg->block_size = SECTOR_SIZE;
	if (!IS_ALIGNED(cfg->size_bytes, cfg->block_size)) {
		NL_SET_ERR_MSG_ATTR(extack, info->attrs[CHORUS_A_SIZE_BYTES],
				    "size must be a multiple of the block size");
		return -EINVAL;
	}
	if (info->attrs[CHORUS_A_EPOCH])
		cfg->epoch = nla_get_u64(info->attrs[CHORUS_A_EPOCH]);
	return 0;
}

static int chorus_genl_parse_create(struct genl_info *info,
				    struct chorus_volume_config *cfg)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **attrs = info->attrs;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_VOLUME_NAME)) {
		NL_SET_ERR_MSG(extack, "missing volume name (CHORUS_A_VOLUME_NAME)");
		return -EINVAL;
	}
	cfg->diskless = nla_get_flag(attrs[CHORUS_A_DISKLESS]);
	if (cfg->diskless && attrs[CHORUS_A_BACKING_PATH]) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[CHORUS_A_BACKING_PATH],
				    "a diskless volume has no backing device");
		return -EINVAL;
	}
	if (!cfg->diskless && GENL_REQ_ATTR_CHECK(info, CHORUS_A_BACKING_PATH)) {
		NL_SET_ERR_MSG(extack, "missing backing device path (CHORUS_A_BACKING_PATH)");
		return -EINVAL;
	}

	cfg->name = nla_data(attrs[CHORUS_A_VOLUME_NAME]);
	if (!chorus_volume_name_valid(cfg->name)) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[CHORUS_A_VOLUME_NAME],
				    "invalid volume name: use 1-63 of A-Z a-z 0-9 . _ - and do not start with '.'");
		return -EINVAL;
	}
	if (!cfg->diskless)
		cfg->backing_path = nla_data(attrs[CHORUS_A_BACKING_PATH]);

	if (attrs[CHORUS_A_SIZE_BYTES]) {
		cfg->size_bytes = nla_get_u64(attrs[CHORUS_A_SIZE_BYTES]);
		if (!cfg->size_bytes) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[CHORUS_A_SIZE_BYTES],
					    "size must not be zero");
			return -EINVAL;
		}
	}
	if (attrs[CHORUS_A_BLOCK_SIZE]) {
		cfg->block_size = nla_get_u32(attrs[CHORUS_A_BLOCK_SIZE]);
		if (cfg->block_size < SECTOR_SIZE || cfg->block_size > PAGE_SIZE ||
		    !is_power_of_2(cfg->block_size)) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[CHORUS_A_BLOCK_SIZE],
					    "block size must be 512, 1024, 2048 or 4096");
			return -EINVAL;
		}
	}
	if (attrs[CHORUS_A_UUID]) {
		import_uuid(&cfg->uuid, nla_data(attrs[CHORUS_A_UUID]));
		if (uuid_is_null(&cfg->uuid)) {
			NL_SET_ERR_MSG_ATTR(extack, attrs[CHORUS_A_UUID],
					    "uuid must not be all zeroes");
			return -EINVAL;
		}
		cfg->uuid_set = true;
	}
	if (attrs[CHORUS_A_NODE_ID])
		cfg->node_id = nla_get_u32(attrs[CHORUS_A_NODE_ID]);
	if (cfg->diskless)
		return chorus_genl_check_diskless(info, cfg);
	if (attrs[CHORUS_A_EPOCH]) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[CHORUS_A_EPOCH],
				    "only a diskless volume is given its epoch: others keep it in their metadata");
		return -EINVAL;
	}
	return 0;
}

static int chorus_genl_create_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct chorus_volume_config cfg = {};
	struct chorus_volume *vol;
	struct sk_buff *reply;
	void *hdr;
	int ret;

	ret = chorus_genl_parse_create(info, &cfg);
	if (ret)
		return ret;

	/* Allocated first: once the volume exists, answering cannot fail. */
	reply = chorus_genl_reply_new(info, &hdr);
	if (!reply)
		return -ENOMEM;

	mutex_lock(&chorus_volumes_lock);
	ret = chorus_volume_create(&cfg, info->extack, &vol);
	if (ret) {
		mutex_unlock(&chorus_volumes_lock);
		nlmsg_free(reply);
		return ret;
	}
	chorus_genl_notify(vol, CHORUS_EVENT_VOLUME_CREATED);
	ret = chorus_genl_reply_volume(info, reply, hdr, vol);
	mutex_unlock(&chorus_volumes_lock);
	return ret;
}

/* Context: chorus_volumes_lock held. */
static struct chorus_volume *chorus_genl_find(struct genl_info *info)
{
	struct nlattr *name = info->attrs[CHORUS_A_VOLUME_NAME];
	struct chorus_volume *vol;

	lockdep_assert_held(&chorus_volumes_lock);
	vol = chorus_volume_find(nla_data(name));
	if (!vol)
		NL_SET_ERR_MSG_ATTR(info->extack, name, "no volume with this name");
	return vol;
}

static int chorus_genl_destroy_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct chorus_volume *vol;
	int ret = -ENOENT;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_VOLUME_NAME)) {
		NL_SET_ERR_MSG(info->extack, "missing volume name (CHORUS_A_VOLUME_NAME)");
		return -EINVAL;
	}

	mutex_lock(&chorus_volumes_lock);
	vol = chorus_genl_find(info);
	if (vol)
		ret = chorus_volume_destroy(vol, info->extack);
	mutex_unlock(&chorus_volumes_lock);
	return ret;
}

static int chorus_genl_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct chorus_volume *vol;
	struct sk_buff *reply;
	void *hdr;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_VOLUME_NAME)) {
		NL_SET_ERR_MSG(info->extack, "missing volume name (CHORUS_A_VOLUME_NAME)");
		return -EINVAL;
	}

	reply = chorus_genl_reply_new(info, &hdr);
	if (!reply)
		return -ENOMEM;

	mutex_lock(&chorus_volumes_lock);
	vol = chorus_genl_find(info);
	if (!vol) {
		mutex_unlock(&chorus_volumes_lock);
		nlmsg_free(reply);
		return -ENOENT;
	}
	ret = chorus_genl_reply_volume(info, reply, hdr, vol);
	mutex_unlock(&chorus_volumes_lock);
	return ret;
}

/* cb->args[0]: registry id to resume the dump from. */
static int chorus_genl_get_dumpit(struct sk_buff *skb,
				  struct netlink_callback *cb)
{
	struct chorus_volume *vol;
	int index = cb->args[0];
	void *hdr;

	mutex_lock(&chorus_volumes_lock);
	while ((vol = chorus_volume_next(&index))) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &chorus_genl_family,
				  NLM_F_MULTI, CHORUS_CMD_VOLUME_GET);
		if (!hdr)
			break;
		if (chorus_genl_fill_volume(skb, vol)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		index++;
	}
	mutex_unlock(&chorus_volumes_lock);
	cb->args[0] = index;
	return skb->len;
}

static int chorus_genl_parse_addr(struct genl_info *info,
				  struct sockaddr_storage *ss, u16 *portp)
{
	struct nlattr *a = info->attrs[CHORUS_A_ADDRESS];
	const char *text;
	u16 port = CHORUS_DEFAULT_PORT;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_ADDRESS)) {
		NL_SET_ERR_MSG(info->extack, "missing address (CHORUS_A_ADDRESS)");
		return -EINVAL;
	}
	if (info->attrs[CHORUS_A_PORT])
		port = nla_get_u16(info->attrs[CHORUS_A_PORT]);
	text = nla_data(a);
	memset(ss, 0, sizeof(*ss));
	if (in4_pton(text, -1, (u8 *)&((struct sockaddr_in *)ss)->sin_addr.s_addr,
		     '\0', NULL)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (in6_pton(text, -1,
			    (u8 *)&((struct sockaddr_in6 *)ss)->sin6_addr,
			    '\0', NULL)) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else {
		NL_SET_ERR_MSG_ATTR(info->extack, a,
				    "not an IPv4 or IPv6 address literal");
		return -EINVAL;
	}
	*portp = port;
	return 0;
}

static int chorus_genl_listen_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sockaddr_storage ss;
	u16 port;
	int ret;

	ret = chorus_genl_parse_addr(info, &ss, &port);
	if (ret)
		return ret;
	return chorus_transports_listen(&ss, info->extack);
}

static int chorus_genl_unlisten_doit(struct sk_buff *skb, struct genl_info *info)
{
	/* Not under chorus_volumes_lock: handshakes in progress take it. */
	chorus_transports_unlisten();
	return 0;
}

/*
 * Find the volume (and, with @need_peer, the peer) a command names; the
 * peer is NULL for a WRITESET_REMOVE of this node's own id. On success
 * chorus_volumes_lock and the volume's conf_lock are held; the caller
 * releases them with chorus_genl_unlock().
 */
static int chorus_genl_lock(struct genl_info *info, bool need_peer,
			    struct chorus_volume **volp,
			    struct chorus_peer **peerp)
{
	struct chorus_volume *vol;
	struct chorus_peer *peer = NULL;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_VOLUME_NAME)) {
		NL_SET_ERR_MSG(info->extack, "missing volume name (CHORUS_A_VOLUME_NAME)");
		return -EINVAL;
	}
	if (need_peer && GENL_REQ_ATTR_CHECK(info, CHORUS_A_NODE_ID)) {
		NL_SET_ERR_MSG(info->extack, "missing peer node id (CHORUS_A_NODE_ID)");
		return -EINVAL;
	}
	mutex_lock(&chorus_volumes_lock);
	vol = chorus_genl_find(info);
	if (!vol) {
		mutex_unlock(&chorus_volumes_lock);
		return -ENOENT;
	}
	mutex_lock(&vol->repl.conf_lock);
	if (need_peer) {
		u32 node_id = nla_get_u32(info->attrs[CHORUS_A_NODE_ID]);

		peer = chorus_peer_find(vol, node_id);
		/* WRITESET_REMOVE of this node's own, failed, disk. */
		if (!peer && !(node_id && node_id == vol->node_id &&
			       info->genlhdr->cmd == CHORUS_CMD_WRITESET_REMOVE)) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[CHORUS_A_NODE_ID],
					    "the volume has no peer with this node id");
			mutex_unlock(&vol->repl.conf_lock);
			mutex_unlock(&chorus_volumes_lock);
			return -ENOENT;
		}
	}
	*volp = vol;
	if (peerp)
		*peerp = peer;
	return 0;
}

static void chorus_genl_unlock(struct chorus_volume *vol)
{
	mutex_unlock(&vol->repl.conf_lock);
	mutex_unlock(&chorus_volumes_lock);
}

static int chorus_genl_peer_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct chorus_peer_config cfg = {
		.transport = CHORUS_TRANSPORT_TCP,
		.nr_conns = 2,
		.initial_sync = CHORUS_INITIAL_SYNC_FULL,
	};
	struct chorus_volume *vol;
	int ret;

	ret = chorus_genl_parse_addr(info, &cfg.addr, &cfg.port);
	if (ret)
		return ret;
	cfg.address = nla_data(attrs[CHORUS_A_ADDRESS]);
	if (attrs[CHORUS_A_TRANSPORT])
		cfg.transport = nla_get_u32(attrs[CHORUS_A_TRANSPORT]);
	if (attrs[CHORUS_A_NR_CONNS])
		cfg.nr_conns = nla_get_u32(attrs[CHORUS_A_NR_CONNS]);
	if (attrs[CHORUS_A_INITIAL_SYNC])
		cfg.initial_sync = nla_get_u32(attrs[CHORUS_A_INITIAL_SYNC]);
	cfg.diskless = nla_get_flag(attrs[CHORUS_A_DISKLESS]);
	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_NODE_ID)) {
		NL_SET_ERR_MSG(info->extack, "missing peer node id (CHORUS_A_NODE_ID)");
		return -EINVAL;
	}
	cfg.node_id = nla_get_u32(attrs[CHORUS_A_NODE_ID]);
	ret = chorus_genl_lock(info, false, &vol, NULL);
	if (ret)
		return ret;
	ret = chorus_peer_add(vol, &cfg, info->extack);
	chorus_genl_unlock(vol);
	return ret;
}

static int chorus_genl_peer_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct chorus_volume *vol;
	struct chorus_peer *peer;
	int ret;

	ret = chorus_genl_lock(info, true, &vol, &peer);
	if (ret)
		return ret;
	switch (info->genlhdr->cmd) {
	case CHORUS_CMD_PEER_DEL:
		ret = chorus_peer_del(peer, info->extack);
		break;
	case CHORUS_CMD_PEER_CONNECT:
		chorus_peer_connect(peer);
		break;
	case CHORUS_CMD_PEER_DISCONNECT:
		chorus_peer_disconnect(peer);
		break;
	case CHORUS_CMD_WRITESET_REMOVE:
		if (READ_ONCE(vol->repl.role) != CHORUS_ROLE_OWNER) {
			NL_SET_ERR_MSG(info->extack, "only the owner has a write set");
			ret = -EINVAL;
		} else {
			ret = peer ? chorus_peer_writeset_remove(peer, info->extack) :
				     chorus_disk_leave_writeset(vol, info->extack);
		}
		break;
	case CHORUS_CMD_VERIFY_START:
		if (READ_ONCE(vol->repl.role) != CHORUS_ROLE_OWNER) {
			NL_SET_ERR_MSG(info->extack, "verify runs on the owner");
			ret = -EINVAL;
			break;
		}
		mutex_lock(&peer->session_mutex);
		ret = chorus_job_start(peer, CHORUS_JOB_VERIFY, info->extack);
		mutex_unlock(&peer->session_mutex);
		break;
	default:
		ret = -EOPNOTSUPP;
	}
	chorus_genl_unlock(vol);
	return ret;
}

static int chorus_genl_role_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct chorus_volume *vol;
	u64 epoch = 0;
	u32 role;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_ROLE)) {
		NL_SET_ERR_MSG(info->extack, "missing role (CHORUS_A_ROLE)");
		return -EINVAL;
	}
	role = nla_get_u32(info->attrs[CHORUS_A_ROLE]);
	if (role == CHORUS_ROLE_OWNER) {
		if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_EPOCH)) {
			NL_SET_ERR_MSG(info->extack, "an owner needs an epoch (CHORUS_A_EPOCH)");
			return -EINVAL;
		}
		epoch = nla_get_u64(info->attrs[CHORUS_A_EPOCH]);
	} else if (info->attrs[CHORUS_A_EPOCH]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[CHORUS_A_EPOCH],
				    "only an owner takes an epoch");
		return -EINVAL;
	}
	ret = chorus_genl_lock(info, false, &vol, NULL);
	if (ret)
		return ret;
	ret = chorus_repl_set_role(vol, role, epoch, info->extack);
	chorus_genl_unlock(vol);
	return ret;
}

/* 0 turns the stall check off; otherwise at least a second. */
static int chorus_genl_set_disk_timeout(struct chorus_volume *vol,
					const struct nlattr *attr,
					struct netlink_ext_ack *extack)
{
	u32 ms;

	if (!attr)
		return 0;
	ms = nla_get_u32(attr);
	if (ms && ms < CHORUS_DISK_TIMEOUT_MS_MIN) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "the disk timeout is 0 (off) or 1000..600000 ms");
		return -EINVAL;
	}
	WRITE_ONCE(vol->health.timeout_ms, ms);
	return 0;
}

/* The heartbeats of @vol's sessions follow a new interval now. */
static void chorus_genl_rearm_pings(struct chorus_volume *vol)
{
	int i;

	lockdep_assert_held(&vol->repl.conf_lock);
	for (i = 0; i < CHORUS_MAX_PEERS; i++)
		if (vol->repl.peers[i])
			chorus_peer_rearm_ping(vol->repl.peers[i]);
}

static int chorus_genl_volume_set_doit(struct sk_buff *skb,
				       struct genl_info *info)
{
	struct nlattr **attrs = info->attrs;
	struct chorus_volume *vol;
	struct chorus_repl *repl;
	u32 interval, timeout;
	bool shorter;
	int ret;

	ret = chorus_genl_lock(info, false, &vol, NULL);
	if (ret)
		return ret;
	repl = &vol->repl;
	ret = chorus_genl_set_disk_timeout(vol, attrs[CHORUS_A_DISK_TIMEOUT_MS],
					   info->extack);
	if (ret)
		goto unlock;
	interval = attrs[CHORUS_A_PING_INTERVAL_MS] ?
		   nla_get_u32(attrs[CHORUS_A_PING_INTERVAL_MS]) :
		   repl->ping_interval_ms;
	timeout = attrs[CHORUS_A_PING_TIMEOUT_MS] ?
		  nla_get_u32(attrs[CHORUS_A_PING_TIMEOUT_MS]) :
		  repl->ping_timeout_ms;
	if (timeout <= interval) {
		NL_SET_ERR_MSG(info->extack,
			       "the ping timeout must be longer than the ping interval");
		ret = -EINVAL;
		goto unlock;
	}
	shorter = interval < repl->ping_interval_ms;
	WRITE_ONCE(repl->ping_interval_ms, interval);
	WRITE_ONCE(repl->ping_timeout_ms, timeout);
	/* Only sooner: a longer one applies from the ping queued now on. */
	if (shorter)
		chorus_genl_rearm_pings(vol);
	if (attrs[CHORUS_A_REQUEST_TIMEOUT_MS]) {
		WRITE_ONCE(repl->request_timeout_ms,
			   nla_get_u32(attrs[CHORUS_A_REQUEST_TIMEOUT_MS]));
		chorus_dev_set_timeout(vol);
	}
	if (attrs[CHORUS_A_RESYNC_RATE])
		WRITE_ONCE(repl->resync_rate,
			   nla_get_u64(attrs[CHORUS_A_RESYNC_RATE]));
	if (attrs[CHORUS_A_AUTO_DEGRADE])
		WRITE_ONCE(repl->auto_degrade,
			   nla_get_u8(attrs[CHORUS_A_AUTO_DEGRADE]));
	if (attrs[CHORUS_A_PAYLOAD_CRC])
		WRITE_ONCE(repl->payload_crc,
			   nla_get_u8(attrs[CHORUS_A_PAYLOAD_CRC]));
unlock:
	chorus_genl_unlock(vol);
	return ret;
}

/* A new disk for a volume whose disk failed; replies with the volume. */
static int chorus_genl_disk_attach_doit(struct sk_buff *skb,
					struct genl_info *info)
{
	struct chorus_volume *vol;
	struct sk_buff *reply;
	void *hdr;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_BACKING_PATH)) {
		NL_SET_ERR_MSG(info->extack,
			       "missing backing device path (CHORUS_A_BACKING_PATH)");
		return -EINVAL;
	}
	reply = chorus_genl_reply_new(info, &hdr);
	if (!reply)
		return -ENOMEM;
	ret = chorus_genl_lock(info, false, &vol, NULL);
	if (ret) {
		nlmsg_free(reply);
		return ret;
	}
	ret = chorus_disk_attach(vol, nla_data(info->attrs[CHORUS_A_BACKING_PATH]),
				 info->extack);
	if (ret)
		nlmsg_free(reply);
	else
		ret = chorus_genl_reply_volume(info, reply, hdr, vol);
	chorus_genl_unlock(vol);
	return ret;
}

/*
 * A later deadline lets go of what an expired one held: every volume starts
 * or completes its held requests.
 */
static int chorus_genl_lease_set_doit(struct sk_buff *skb,
				      struct genl_info *info)
{
	struct chorus_volume *vol;
	int index = 0, ret;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_LEASE_DEADLINE_NS)) {
		NL_SET_ERR_MSG(info->extack,
			       "missing lease deadline (CHORUS_A_LEASE_DEADLINE_NS)");
		return -EINVAL;
	}
	ret = chorus_lease_set(nla_get_u64(info->attrs[CHORUS_A_LEASE_DEADLINE_NS]),
			       info->extack);
	if (ret || chorus_lease_expired())
		return ret;
	mutex_lock(&chorus_volumes_lock);
	while ((vol = chorus_volume_next(&index))) {
		chorus_dev_release_held(vol, false);
		index++;
	}
	mutex_unlock(&chorus_volumes_lock);
	return 0;
}

static int chorus_genl_lease_get_doit(struct sk_buff *skb,
				      struct genl_info *info)
{
	struct chorus_lease_info lease;
	struct sk_buff *reply;
	void *hdr;

	chorus_lease_get(&lease);
	reply = genlmsg_new(3 * nla_total_size_64bit(sizeof(u64)) +
			    nla_total_size(sizeof(u32)), GFP_KERNEL);
	if (!reply)
		return -ENOMEM;
	hdr = genlmsg_put_reply(reply, info, &chorus_genl_family, 0,
				CHORUS_CMD_LEASE_GET);
	if (!hdr ||
	    nla_put_u32(reply, CHORUS_A_LEASE_STATE, lease.state) ||
	    nla_put_u64_64bit(reply, CHORUS_A_LEASE_DEADLINE_NS, lease.deadline,
			      CHORUS_A_PAD) ||
	    nla_put_u64_64bit(reply, CHORUS_A_LEASE_NOW_NS, lease.now,
			      CHORUS_A_PAD) ||
	    nla_put_u64_64bit(reply, CHORUS_A_LEASE_EXPIRIES, lease.expiries,
			      CHORUS_A_PAD)) {
		nlmsg_free(reply);
		return -EMSGSIZE;
	}
	genlmsg_end(reply, hdr);
	return genlmsg_reply(reply, info);
}

/*
 * One of: a new secret (optionally keeping the old one for a while), drop
 * the previous secret, clear them all. The secret is not logged or kept
 * beyond the keyed transform (auth.c).
 */
static int chorus_genl_auth_set_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct nlattr *secret = info->attrs[CHORUS_A_AUTH_SECRET];
	struct nlattr *keep = info->attrs[CHORUS_A_AUTH_KEEP_PREVIOUS_S];
	bool drop = nla_get_flag(info->attrs[CHORUS_A_AUTH_DROP_PREVIOUS]);
	bool clear = nla_get_flag(info->attrs[CHORUS_A_AUTH_CLEAR]);

	if (!!secret + drop + clear != 1) {
		NL_SET_ERR_MSG(info->extack,
			       "give exactly one of a secret (CHORUS_A_AUTH_SECRET), DROP_PREVIOUS or CLEAR");
		return -EINVAL;
	}
	if (keep && !secret) {
		NL_SET_ERR_MSG_ATTR(info->extack, keep,
				    "KEEP_PREVIOUS_S goes with a new secret");
		return -EINVAL;
	}
	if (drop) {
		chorus_auth_drop_previous();
		return 0;
	}
	if (clear) {
		chorus_auth_clear();
		return 0;
	}
	return chorus_auth_set(nla_data(secret), nla_len(secret),
			       keep ? nla_get_u32(keep) : 0, info->extack);
}

static int chorus_genl_auth_get_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct chorus_auth_info auth;
	struct sk_buff *reply;
	void *hdr;

	chorus_auth_get(&auth);
	reply = genlmsg_new(3 * nla_total_size_64bit(sizeof(u64)) +
			    nla_total_size(sizeof(u32)), GFP_KERNEL);
	if (!reply)
		return -ENOMEM;
	hdr = genlmsg_put_reply(reply, info, &chorus_genl_family, 0,
				CHORUS_CMD_AUTH_GET);
	if (!hdr ||
	    nla_put_u64_64bit(reply, CHORUS_A_AUTH_KEY_ID, auth.key_id,
			      CHORUS_A_PAD) ||
	    nla_put_u64_64bit(reply, CHORUS_A_AUTH_PREV_KEY_ID,
			      auth.prev_key_id, CHORUS_A_PAD) ||
	    nla_put_u32(reply, CHORUS_A_AUTH_PREV_REMAINING_S,
			auth.prev_remaining_s) ||
	    nla_put_u64_64bit(reply, CHORUS_A_AUTH_FAILURES, auth.failures,
			      CHORUS_A_PAD)) {
		nlmsg_free(reply);
		return -EMSGSIZE;
	}
	genlmsg_end(reply, hdr);
	return genlmsg_reply(reply, info);
}

/* Every policy array has CHORUS_A_MAX + 1 entries. */
#define CHORUS_GENL_OP(_cmd, _doit, _policy)				\
	{								\
		.cmd		= _cmd,					\
		.flags		= GENL_ADMIN_PERM,			\
		.doit		= _doit,				\
		.policy		= _policy,				\
		.maxattr	= CHORUS_A_MAX,				\
	}

static const struct genl_ops chorus_genl_ops[] = {
	{
		.cmd		= CHORUS_CMD_VOLUME_CREATE,
		.flags		= GENL_ADMIN_PERM,
		.doit		= chorus_genl_create_doit,
		.policy		= chorus_create_policy,
		.maxattr	= ARRAY_SIZE(chorus_create_policy) - 1,
	},
	{
		.cmd		= CHORUS_CMD_VOLUME_DESTROY,
		.flags		= GENL_ADMIN_PERM,
		.doit		= chorus_genl_destroy_doit,
		.policy		= chorus_name_policy,
		.maxattr	= ARRAY_SIZE(chorus_name_policy) - 1,
	},
	{
		.cmd		= CHORUS_CMD_VOLUME_GET,
		.doit		= chorus_genl_get_doit,
		.dumpit		= chorus_genl_get_dumpit,
		.policy		= chorus_name_policy,
		.maxattr	= ARRAY_SIZE(chorus_name_policy) - 1,
	},
	CHORUS_GENL_OP(CHORUS_CMD_LISTEN, chorus_genl_listen_doit,
		       chorus_listen_policy),
	CHORUS_GENL_OP(CHORUS_CMD_UNLISTEN, chorus_genl_unlisten_doit,
		       chorus_unlisten_policy),
	CHORUS_GENL_OP(CHORUS_CMD_PEER_ADD, chorus_genl_peer_add_doit,
		       chorus_peer_add_policy),
	CHORUS_GENL_OP(CHORUS_CMD_PEER_DEL, chorus_genl_peer_doit,
		       chorus_peer_policy),
	CHORUS_GENL_OP(CHORUS_CMD_PEER_CONNECT, chorus_genl_peer_doit,
		       chorus_peer_policy),
	CHORUS_GENL_OP(CHORUS_CMD_PEER_DISCONNECT, chorus_genl_peer_doit,
		       chorus_peer_policy),
	CHORUS_GENL_OP(CHORUS_CMD_SET_ROLE, chorus_genl_role_doit,
		       chorus_role_policy),
	CHORUS_GENL_OP(CHORUS_CMD_WRITESET_REMOVE, chorus_genl_peer_doit,
		       chorus_peer_policy),
	CHORUS_GENL_OP(CHORUS_CMD_VERIFY_START, chorus_genl_peer_doit,
		       chorus_peer_policy),
	CHORUS_GENL_OP(CHORUS_CMD_VOLUME_SET, chorus_genl_volume_set_doit,
		       chorus_volume_set_policy),
	CHORUS_GENL_OP(CHORUS_CMD_LEASE_SET, chorus_genl_lease_set_doit,
		       chorus_lease_policy),
	{
		.cmd		= CHORUS_CMD_LEASE_GET,
		.doit		= chorus_genl_lease_get_doit,
		.policy		= chorus_lease_policy,
		.maxattr	= CHORUS_A_MAX,
	},
	CHORUS_GENL_OP(CHORUS_CMD_DISK_ATTACH, chorus_genl_disk_attach_doit,
		       chorus_disk_attach_policy),
	CHORUS_GENL_OP(CHORUS_CMD_AUTH_SET, chorus_genl_auth_set_doit,
		       chorus_auth_policy),
	/* Ids and counts only, never a secret: as open as the other GETs. */
	{
		.cmd		= CHORUS_CMD_AUTH_GET,
		.doit		= chorus_genl_auth_get_doit,
		.policy		= chorus_auth_policy,
		.maxattr	= CHORUS_A_MAX,
	},
};

static struct genl_family chorus_genl_family __ro_after_init = {
	.name		= CHORUS_GENL_NAME,
	.version	= CHORUS_GENL_VERSION,
	.maxattr	= CHORUS_A_MAX,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.ops		= chorus_genl_ops,
	.n_ops		= ARRAY_SIZE(chorus_genl_ops),
	.mcgrps		= chorus_genl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(chorus_genl_mcgrps),
};

int chorus_genl_register(void)
{
	return genl_register_family(&chorus_genl_family);
}

void chorus_genl_unregister(void)
{
	genl_unregister_family(&chorus_genl_family);
}
