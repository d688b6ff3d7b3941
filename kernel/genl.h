/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: the netlink family's messages
 * (genl_fill.c), for genl.c, which sends them.
 */
#ifndef CHORUS_GENL_H
#define CHORUS_GENL_H

#include <linux/skbuff.h>

struct chorus_volume;
struct chorus_peer;

size_t chorus_genl_volume_size(void);
int chorus_genl_fill_volume(struct sk_buff *skb, struct chorus_volume *vol);
int chorus_genl_fill_peer(struct sk_buff *skb, struct chorus_peer *peer, int attr);

#endif /* CHORUS_GENL_H */
