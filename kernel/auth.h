/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: peer authentication (auth.c), for the
 * handshake and the netlink family.
 */
#ifndef CHORUS_AUTH_H
#define CHORUS_AUTH_H

#include <linux/socket.h>
#include <linux/types.h>
#include <chorus/wire.h>
#include <uapi/linux/chorus.h>

struct netlink_ext_ack;

/**
 * enum chorus_auth_label - whose proof an HMAC is
 * @CHORUS_AUTH_ACCEPTOR: the acceptor's, in HELLO_ACK
 * @CHORUS_AUTH_DIALLER: the dialler's, in AUTH
 */
enum chorus_auth_label {
	CHORUS_AUTH_ACCEPTOR,
	CHORUS_AUTH_DIALLER,
};

/**
 * struct chorus_auth_info - the node's secrets, as netlink reports them
 * @key_id: id of the current secret, 0 when there is none
 * @prev_key_id: id of the previous secret still accepted, 0 when none
 * @prev_remaining_s: seconds the previous one is still accepted
 * @failures: connections refused by authentication since load
 */
struct chorus_auth_info {
	u64 key_id;
	u64 prev_key_id;
	u32 prev_remaining_s;
	u64 failures;
};

int chorus_auth_set(const u8 *secret, unsigned int len, u32 keep_s,
		    struct netlink_ext_ack *extack);
void chorus_auth_drop_previous(void);
void chorus_auth_clear(void);
void chorus_auth_get(struct chorus_auth_info *info);
void chorus_auth_exit(void);

bool chorus_auth_enabled(void);
bool chorus_auth_offer(struct chorus_wire_hello_auth *a);
u64 chorus_auth_choose(const struct chorus_wire_hello_auth *offered);
int chorus_auth_mac(u64 key_id, enum chorus_auth_label label,
		    const struct chorus_wire_hello_full *hello,
		    const struct chorus_wire_hello_full *ack, u8 *mac);
int chorus_auth_verify(u64 key_id, enum chorus_auth_label label,
		       const struct chorus_wire_hello_full *hello,
		       const struct chorus_wire_hello_full *ack,
		       const u8 *mac);
void chorus_auth_count_failure(void);
bool chorus_addr_same_host(const struct sockaddr_storage *a,
			   const struct sockaddr_storage *b);

#endif /* CHORUS_AUTH_H */
