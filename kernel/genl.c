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
#include <net/genetlink.h>

#include "chorus.h"

static struct genl_family chorus_genl_family;

enum chorus_genl_mcgrp {
	CHORUS_GENL_MCGRP_EVENTS_ID,
};

static const struct genl_multicast_group chorus_genl_mcgrps[] = {
	[CHORUS_GENL_MCGRP_EVENTS_ID] = { .name = CHORUS_GENL_MCGRP_EVENTS },
};

#define CHORUS_NAME_POLICY \
	{ .type = NLA_NUL_STRING, .len = CHORUS_VOLUME_NAME_MAX - 1 }

static const struct nla_policy chorus_create_policy[CHORUS_A_UUID + 1] = {
	[CHORUS_A_VOLUME_NAME]	= CHORUS_NAME_POLICY,
	[CHORUS_A_BACKING_PATH]	= { .type = NLA_NUL_STRING,
				    .len = CHORUS_BACKING_PATH_MAX - 1 },
	[CHORUS_A_SIZE_BYTES]	= { .type = NLA_U64 },
	[CHORUS_A_BLOCK_SIZE]	= { .type = NLA_U32 },
	[CHORUS_A_UUID]		= NLA_POLICY_EXACT_LEN(CHORUS_UUID_LEN),
};

static const struct nla_policy chorus_name_policy[CHORUS_A_VOLUME_NAME + 1] = {
	[CHORUS_A_VOLUME_NAME]	= CHORUS_NAME_POLICY,
};

/* Upper bound of what chorus_genl_fill_volume() adds. */
static size_t chorus_genl_volume_size(void)
{
	return nla_total_size(CHORUS_VOLUME_NAME_MAX) +	/* VOLUME_NAME */
	       nla_total_size(CHORUS_BACKING_PATH_MAX) +	/* BACKING_PATH */
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
			nla_total_size_64bit(sizeof(u64));
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
	nla_nest_end(skb, nest);
	return 0;
}

static int chorus_genl_fill_volume(struct sk_buff *skb,
				   struct chorus_volume *vol)
{
	u64 size = (u64)vol->nr_sectors << SECTOR_SHIFT;

	if (nla_put_string(skb, CHORUS_A_VOLUME_NAME, vol->name) ||
	    nla_put_string(skb, CHORUS_A_BACKING_PATH, vol->backing.path) ||
	    nla_put_u64_64bit(skb, CHORUS_A_SIZE_BYTES, size, CHORUS_A_PAD) ||
	    nla_put_u32(skb, CHORUS_A_BLOCK_SIZE, vol->block_size) ||
	    nla_put(skb, CHORUS_A_UUID, CHORUS_UUID_LEN, &vol->uuid) ||
	    nla_put_u32(skb, CHORUS_A_MINOR, vol->index) ||
	    nla_put_string(skb, CHORUS_A_DISK_NAME, vol->disk->disk_name) ||
	    nla_put_u32(skb, CHORUS_A_STATE, chorus_volume_state(vol)) ||
	    nla_put_u32(skb, CHORUS_A_OPEN_COUNT, READ_ONCE(vol->open_count)))
		return -EMSGSIZE;
	return chorus_genl_fill_stats(skb, vol);
}

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
	struct sk_buff *skb;
	void *hdr;

	skb = genlmsg_new(chorus_genl_volume_size(), GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &chorus_genl_family, 0, CHORUS_CMD_EVENT);
	if (!hdr)
		goto free;
	if (nla_put_u32(skb, CHORUS_A_EVENT, event) ||
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

static int chorus_genl_parse_create(struct genl_info *info,
				    struct chorus_volume_config *cfg)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **attrs = info->attrs;

	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_VOLUME_NAME)) {
		NL_SET_ERR_MSG(extack, "missing volume name (CHORUS_A_VOLUME_NAME)");
		return -EINVAL;
	}
	if (GENL_REQ_ATTR_CHECK(info, CHORUS_A_BACKING_PATH)) {
		NL_SET_ERR_MSG(extack, "missing backing device path (CHORUS_A_BACKING_PATH)");
		return -EINVAL;
	}

	cfg->name = nla_data(attrs[CHORUS_A_VOLUME_NAME]);
	if (!chorus_volume_name_valid(cfg->name)) {
		NL_SET_ERR_MSG_ATTR(extack, attrs[CHORUS_A_VOLUME_NAME],
				    "invalid volume name: use 1-63 of A-Z a-z 0-9 . _ - and do not start with '.'");
		return -EINVAL;
	}
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
