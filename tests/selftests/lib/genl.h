/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw generic netlink for the chorus selftests.
 *
 * No libnl on purpose: tests must be able to build malformed requests
 * (wrong attribute types and lengths, strings without NUL, oversized or
 * unknown attributes, duplicates) and see exactly what the kernel answers,
 * including the extended ack (message, offending attribute offset, missing
 * attribute type).
 */
#ifndef CHORUS_SELFTEST_GENL_H
#define CHORUS_SELFTEST_GENL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/chorus.h>

#define GENL_MSG_MAX	8192

/* A request being built: netlink header + genl header + attributes. */
struct genl_msg {
	size_t len;
	size_t nest[8];		/* offsets of open nests */
	int nests;
	unsigned char buf[GENL_MSG_MAX] __attribute__((aligned(8)));
};

/* What the kernel said about a request. */
struct genl_err {
	int err;		/* 0 or a negative errno */
	char msg[512];		/* NLMSGERR_ATTR_MSG, "" when absent */
	bool has_offs;		/* NLMSGERR_ATTR_OFFS present */
	uint32_t offs;		/* offset of the bad attribute in the request */
	bool has_miss_type;	/* NLMSGERR_ATTR_MISS_TYPE present */
	uint32_t miss_type;
	bool has_miss_nest;
	uint32_t miss_nest;
};

struct genl_sock {
	int fd;
	uint32_t portid;
	uint32_t seq;
	uint16_t family;	/* resolved chorus family id, 0 if none */
	uint32_t mcgrp_events;	/* resolved "events" group id, 0 if none */
};

/* A decoded volume (CHORUS_CMD_VOLUME_GET / EVENT payload). */
struct chorus_vol {
	uint8_t cmd;			/* genl command of the message */
	bool has[CHORUS_A_MAX + 1];	/* which attributes were present */
	int dup[CHORUS_A_MAX + 1];	/* how many times each appeared */
	char name[CHORUS_VOLUME_NAME_MAX + 16];
	char backing[CHORUS_BACKING_PATH_MAX + 16];
	char disk_name[64];
	uint64_t size;
	uint32_t block_size;
	uint8_t uuid[CHORUS_UUID_LEN];
	uint32_t uuid_len;
	uint32_t minor;
	uint32_t state;
	uint32_t event;
	uint32_t open_count;
	bool has_stat[CHORUS_STAT_MAX + 1];
	uint64_t stat[CHORUS_STAT_MAX + 1];
	int bad_len;			/* attributes with an unexpected length */
};

/* Socket. genl_open() resolves the chorus family when it is registered. */
int genl_open(struct genl_sock *s);
void genl_close(struct genl_sock *s);
/* Resolve any family (and optionally one of its multicast groups) via nlctrl.
 * Returns 0, -ENOENT when the family (or group) is not there, or -errno. */
int genl_resolve(struct genl_sock *s, const char *family, uint16_t *id,
		 const char *group, uint32_t *grp_id);
int genl_resolve_chorus(struct genl_sock *s);
int genl_subscribe(struct genl_sock *s, uint32_t group);

/* Building requests. */
void msg_init(struct genl_msg *m, uint16_t family, uint8_t cmd, uint16_t flags);
/* Returns the offset of the attribute header inside the message. */
size_t msg_put(struct genl_msg *m, uint16_t type, const void *data, size_t len);
size_t msg_put_u8(struct genl_msg *m, uint16_t type, uint8_t v);
size_t msg_put_u16(struct genl_msg *m, uint16_t type, uint16_t v);
size_t msg_put_u32(struct genl_msg *m, uint16_t type, uint32_t v);
size_t msg_put_u64(struct genl_msg *m, uint16_t type, uint64_t v);
size_t msg_put_str(struct genl_msg *m, uint16_t type, const char *str);	/* with NUL */
size_t msg_put_str_nonul(struct genl_msg *m, uint16_t type, const char *str);
size_t msg_nest_start(struct genl_msg *m, uint16_t type);
void msg_nest_end(struct genl_msg *m);

/*
 * Send a request (NLM_F_ACK is added) and read until the ack / NLMSG_DONE.
 * Every data message is decoded into vols[0..max-1] (may be NULL/0), the
 * number of decoded messages is stored in *nvols. Returns e->err.
 */
int genl_xfer(struct genl_sock *s, struct genl_msg *m, struct genl_err *e,
	      struct chorus_vol *vols, int max, int *nvols);

/* Receive one multicast message within timeout_ms; 0, -ETIMEDOUT or -errno. */
int genl_recv_event(struct genl_sock *s, int timeout_ms, struct chorus_vol *v);

/* Decode chorus attributes starting at attrs (len bytes). */
void chorus_vol_parse(const void *attrs, size_t len, struct chorus_vol *v);

/* High level helpers. Return 0 or -errno; e may be NULL. */
struct chorus_create_args {
	const char *name;
	const char *backing;
	uint64_t size;			/* 0: attribute left out */
	uint32_t block_size;		/* 0: attribute left out */
	const uint8_t *uuid;		/* NULL: attribute left out */
};
int chorus_create(struct genl_sock *s, const struct chorus_create_args *a,
		  struct chorus_vol *out, struct genl_err *e);
int chorus_destroy(struct genl_sock *s, const char *name, struct genl_err *e);
int chorus_get(struct genl_sock *s, const char *name, struct chorus_vol *out,
	       struct genl_err *e);
/* Dump all volumes into vols (max entries); returns count or -errno. */
int chorus_dump(struct genl_sock *s, struct chorus_vol *vols, int max,
		struct genl_err *e);

/* "8-4-4-4-12" lowercase form of a 16 byte uuid; buf >= 37 bytes. */
void uuid_fmt(const uint8_t *uuid, char *buf);
/* Printable description of an error for logs. */
const char *genl_err_str(const struct genl_err *e, char *buf, size_t len);

#endif
