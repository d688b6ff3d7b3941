/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus - replicated block storage: what session.c, handshake.c and
 * peer.c share, and nothing else uses. The rest of the module reaches
 * peers and sessions through repl.h.
 */
#ifndef CHORUS_SESSION_H
#define CHORUS_SESSION_H

#include "repl.h"

/**
 * struct chorus_hello_seen - what a peer's handshake said of it
 * @owner: it is the owner
 * @epoch: its epoch (its own as owner, the highest it accepted otherwise)
 * @disk_gen: its disk's generation id (current_gen)
 * @incarnation: its volume's incarnation (chorus_volume.incarnation)
 * @handing_over: a refused dial: the peer, the owner at a lower epoch than
 *	this owner's, answered NOT_MEMBER because it is handing over to this
 *	node (chorus_repl_superseded()); dial again soon
 */
struct chorus_hello_seen {
	bool owner;
	u64 epoch;
	u64 disk_gen;
	u64 incarnation;
	bool handing_over;
};

/* session.c */
void chorus_session_init(struct chorus_peer *peer);
void chorus_peer_establish(struct chorus_peer *peer, struct chorus_conn **conns,
			   const struct chorus_hello_seen *seen);
void __chorus_peer_teardown(struct chorus_peer *peer, const char *reason);
void chorus_peer_free_pending(struct chorus_peer *peer);

/* handshake.c */
const char *chorus_peer_dial(struct chorus_peer *peer,
			     const struct chorus_transport_ops *ops,
			     struct chorus_conn **conns,
			     struct chorus_hello_seen *seen);

#endif /* CHORUS_SESSION_H */
