// SPDX-License-Identifier: GPL-2.0
/* Raw generic netlink for the chorus selftests. See genl.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "genl.h"

#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif
#ifndef NLM_F_CAPPED
#define NLM_F_CAPPED 0x100
#endif
#ifndef NLM_F_ACK_TLVS
#define NLM_F_ACK_TLVS 0x200
#endif
/* Added in 6.2 upstream, backported to Debian's 6.1; keep building on older headers. */
#define X_NLMSGERR_ATTR_MSG		1
#define X_NLMSGERR_ATTR_OFFS		2
#define X_NLMSGERR_ATTR_MISS_TYPE	5
#define X_NLMSGERR_ATTR_MISS_NEST	6

#define RX_BUF (64 * 1024)

int genl_open(struct genl_sock *s)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	socklen_t salen = sizeof(sa);
	struct timeval tv = { .tv_sec = 60 };
	int one = 1, rcvbuf = 1 << 20;

	memset(s, 0, sizeof(*s));
	s->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (s->fd < 0)
		return -errno;
	if (bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(s->fd, (struct sockaddr *)&sa, &salen) < 0 ||
	    setsockopt(s->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) < 0 ||
	    setsockopt(s->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		int err = -errno;

		close(s->fd);
		s->fd = -1;
		return err;
	}
	setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	s->portid = sa.nl_pid;
	s->seq = (uint32_t)time(NULL);
	genl_resolve_chorus(s);
	return 0;
}

void genl_close(struct genl_sock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void msg_init(struct genl_msg *m, uint16_t family, uint8_t cmd, uint16_t flags)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
	struct genlmsghdr *g;

	memset(m->buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
	g->cmd = cmd;
	g->version = CHORUS_GENL_VERSION;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
	m->nests = 0;
}

size_t msg_put(struct genl_msg *m, uint16_t type, const void *data, size_t len)
{
	struct nlattr *nla = (struct nlattr *)(m->buf + m->len);
	size_t off = m->len;
	size_t total = NLA_ALIGN(NLA_HDRLEN + len);

	if (m->len + total > sizeof(m->buf)) {
		fprintf(stderr, "# msg_put: message too large\n");
		return off;
	}
	nla->nla_type = type;
	nla->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy(m->buf + m->len + NLA_HDRLEN, data, len);
	memset(m->buf + m->len + NLA_HDRLEN + len, 0, total - NLA_HDRLEN - len);
	m->len += total;
	return off;
}

size_t msg_put_u8(struct genl_msg *m, uint16_t type, uint8_t v)
{
	return msg_put(m, type, &v, sizeof(v));
}

size_t msg_put_u16(struct genl_msg *m, uint16_t type, uint16_t v)
{
	return msg_put(m, type, &v, sizeof(v));
}

size_t msg_put_u32(struct genl_msg *m, uint16_t type, uint32_t v)
{
	return msg_put(m, type, &v, sizeof(v));
}

size_t msg_put_u64(struct genl_msg *m, uint16_t type, uint64_t v)
{
	return msg_put(m, type, &v, sizeof(v));
}

size_t msg_put_str(struct genl_msg *m, uint16_t type, const char *str)
{
	return msg_put(m, type, str, strlen(str) + 1);
}

size_t msg_put_str_nonul(struct genl_msg *m, uint16_t type, const char *str)
{
	return msg_put(m, type, str, strlen(str));
}

size_t msg_nest_start(struct genl_msg *m, uint16_t type)
{
	size_t off = msg_put(m, type | NLA_F_NESTED, NULL, 0);

	if (m->nests < (int)(sizeof(m->nest) / sizeof(m->nest[0])))
		m->nest[m->nests++] = off;
	return off;
}

void msg_nest_end(struct genl_msg *m)
{
	struct nlattr *nla;

	if (!m->nests)
		return;
	nla = (struct nlattr *)(m->buf + m->nest[--m->nests]);
	nla->nla_len = m->len - m->nest[m->nests];
}

static void parse_ack_tlvs(const unsigned char *p, size_t len, struct genl_err *e)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *nla = (const struct nlattr *)p;
		size_t alen = nla->nla_len;
		const unsigned char *d = p + NLA_HDRLEN;
		size_t dlen;

		if (alen < NLA_HDRLEN || alen > len)
			break;
		dlen = alen - NLA_HDRLEN;
		switch (nla->nla_type & NLA_TYPE_MASK) {
		case X_NLMSGERR_ATTR_MSG:
			snprintf(e->msg, sizeof(e->msg), "%.*s", (int)dlen, (const char *)d);
			break;
		case X_NLMSGERR_ATTR_OFFS:
			if (dlen >= 4) {
				memcpy(&e->offs, d, 4);
				e->has_offs = true;
			}
			break;
		case X_NLMSGERR_ATTR_MISS_TYPE:
			if (dlen >= 4) {
				memcpy(&e->miss_type, d, 4);
				e->has_miss_type = true;
			}
			break;
		case X_NLMSGERR_ATTR_MISS_NEST:
			if (dlen >= 4) {
				memcpy(&e->miss_nest, d, 4);
				e->has_miss_nest = true;
			}
			break;
		}
		if (NLA_ALIGN(alen) >= len)
			break;
		p += NLA_ALIGN(alen);
		len -= NLA_ALIGN(alen);
	}
}

static void parse_error(const struct nlmsghdr *nlh, struct genl_err *e)
{
	const struct nlmsgerr *err = NLMSG_DATA(nlh);
	const unsigned char *p;
	size_t off;

	if (nlh->nlmsg_len < NLMSG_HDRLEN + sizeof(*err)) {
		e->err = -EPROTO;
		return;
	}
	e->err = err->error;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	off = NLMSG_HDRLEN + sizeof(*err);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(err->msg.nlmsg_len) - NLMSG_HDRLEN;
	if (off >= nlh->nlmsg_len)
		return;
	p = (const unsigned char *)nlh + off;
	parse_ack_tlvs(p, nlh->nlmsg_len - off, e);
}

static void parse_done(const struct nlmsghdr *nlh, struct genl_err *e)
{
	int err = 0;

	if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
		memcpy(&err, NLMSG_DATA(nlh), sizeof(int));
	e->err = err;
	if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    nlh->nlmsg_len > NLMSG_HDRLEN + sizeof(int))
		parse_ack_tlvs((const unsigned char *)NLMSG_DATA(nlh) + sizeof(int),
			       nlh->nlmsg_len - NLMSG_HDRLEN - sizeof(int), e);
}

static void put_u64_stat(struct chorus_vol *v, const unsigned char *d, size_t dlen, int t)
{
	if (t <= 0 || t > CHORUS_STAT_MAX)
		return;
	/* The latency histograms are nests: present is all that is checked here. */
	if (t == CHORUS_STAT_READ_LATENCY || t == CHORUS_STAT_WRITE_LATENCY) {
		v->has_stat[t] = true;
		return;
	}
	if (dlen != 8) {
		v->bad_len++;
		return;
	}
	v->has_stat[t] = true;
	memcpy(&v->stat[t], d, 8);
}

static void parse_stats(struct chorus_vol *v, const unsigned char *p, size_t len)
{
	while (len >= NLA_HDRLEN) {
		const struct nlattr *nla = (const struct nlattr *)p;
		size_t alen = nla->nla_len;

		if (alen < NLA_HDRLEN || alen > len)
			break;
		if ((nla->nla_type & NLA_TYPE_MASK) != CHORUS_STAT_PAD)
			put_u64_stat(v, p + NLA_HDRLEN, alen - NLA_HDRLEN,
				     nla->nla_type & NLA_TYPE_MASK);
		if (NLA_ALIGN(alen) >= len)
			break;
		p += NLA_ALIGN(alen);
		len -= NLA_ALIGN(alen);
	}
}

static void get_u32(struct chorus_vol *v, uint32_t *dst, const unsigned char *d, size_t dlen)
{
	if (dlen != 4) {
		v->bad_len++;
		return;
	}
	memcpy(dst, d, 4);
}

static void get_str(struct chorus_vol *v, char *dst, size_t dstlen,
		    const unsigned char *d, size_t dlen)
{
	if (!dlen || d[dlen - 1] != '\0' || dlen > dstlen) {
		v->bad_len++;
		snprintf(dst, dstlen, "%.*s", (int)dlen, (const char *)d);
		return;
	}
	memcpy(dst, d, dlen);
}

void chorus_vol_parse(const void *attrs, size_t len, struct chorus_vol *v)
{
	const unsigned char *p = attrs;

	while (len >= NLA_HDRLEN) {
		const struct nlattr *nla = (const struct nlattr *)p;
		size_t alen = nla->nla_len, dlen;
		const unsigned char *d = p + NLA_HDRLEN;
		int t = nla->nla_type & NLA_TYPE_MASK;

		if (alen < NLA_HDRLEN || alen > len)
			break;
		dlen = alen - NLA_HDRLEN;
		if (t > 0 && t <= CHORUS_A_MAX) {
			v->has[t] = true;
			v->dup[t]++;
		}
		switch (t) {
		case CHORUS_A_VOLUME_NAME:
			get_str(v, v->name, sizeof(v->name), d, dlen);
			break;
		case CHORUS_A_BACKING_PATH:
			get_str(v, v->backing, sizeof(v->backing), d, dlen);
			break;
		case CHORUS_A_DISK_NAME:
			get_str(v, v->disk_name, sizeof(v->disk_name), d, dlen);
			break;
		case CHORUS_A_SIZE_BYTES:
			if (dlen == 8)
				memcpy(&v->size, d, 8);
			else
				v->bad_len++;
			break;
		case CHORUS_A_BLOCK_SIZE:
			get_u32(v, &v->block_size, d, dlen);
			break;
		case CHORUS_A_UUID:
			v->uuid_len = dlen;
			if (dlen == CHORUS_UUID_LEN)
				memcpy(v->uuid, d, dlen);
			else
				v->bad_len++;
			break;
		case CHORUS_A_MINOR:
			get_u32(v, &v->minor, d, dlen);
			break;
		case CHORUS_A_STATE:
			get_u32(v, &v->state, d, dlen);
			break;
		case CHORUS_A_EVENT:
			get_u32(v, &v->event, d, dlen);
			break;
		case CHORUS_A_OPEN_COUNT:
			get_u32(v, &v->open_count, d, dlen);
			break;
		case CHORUS_A_STATS:
			parse_stats(v, d, dlen);
			break;
		default:
			break;
		}
		if (NLA_ALIGN(alen) >= len)
			break;
		p += NLA_ALIGN(alen);
		len -= NLA_ALIGN(alen);
	}
}

static int send_msg(struct genl_sock *s, struct genl_msg *m)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	ssize_t n;

	nlh->nlmsg_len = m->len;
	nlh->nlmsg_seq = ++s->seq;
	nlh->nlmsg_pid = 0;
	n = sendto(s->fd, m->buf, m->len, 0, (struct sockaddr *)&sa, sizeof(sa));
	if (n < 0)
		return -errno;
	if ((size_t)n != m->len)
		return -EMSGSIZE;
	return 0;
}

int genl_xfer(struct genl_sock *s, struct genl_msg *m, struct genl_err *e,
	      struct chorus_vol *vols, int max, int *nvols)
{
	struct nlmsghdr *req = (struct nlmsghdr *)m->buf;
	static unsigned char buf[RX_BUF] __attribute__((aligned(8)));
	struct genl_err local;
	bool dump;
	int n_out = 0, err;

	if (!e)
		e = &local;
	memset(e, 0, sizeof(*e));
	if (nvols)
		*nvols = 0;
	req->nlmsg_flags |= NLM_F_ACK;
	dump = (req->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	err = send_msg(s, m);
	if (err) {
		e->err = err;
		snprintf(e->msg, sizeof(e->msg), "(send failed: %s)", strerror(-err));
		return err;
	}
	for (;;) {
		ssize_t n = recv(s->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nlh;
		size_t len;

		if (n < 0) {
			e->err = errno == EAGAIN ? -ETIMEDOUT : -errno;
			snprintf(e->msg, sizeof(e->msg), "(recv failed: %s)", strerror(-e->err));
			return e->err;
		}
		len = (size_t)n;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_seq != req->nlmsg_seq)
				continue;	/* stale answer to an earlier request */
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				parse_error(nlh, e);
				goto out;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				parse_done(nlh, e);
				goto out;
			}
			if (nlh->nlmsg_type == s->family || nlh->nlmsg_type == req->nlmsg_type) {
				struct genlmsghdr *g = NLMSG_DATA(nlh);

				if (vols && n_out < max) {
					memset(&vols[n_out], 0, sizeof(vols[n_out]));
					vols[n_out].cmd = g->cmd;
					chorus_vol_parse((unsigned char *)g + GENL_HDRLEN,
							 nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN,
							 &vols[n_out]);
				}
				n_out++;
			}
		}
		(void)dump;
	}
out:
	if (nvols)
		*nvols = n_out;
	return e->err;
}

int genl_resolve(struct genl_sock *s, const char *family, uint16_t *id,
		 const char *group, uint32_t *grp_id)
{
	static unsigned char buf[RX_BUF] __attribute__((aligned(8)));
	struct genl_msg m;
	struct nlmsghdr *req;
	bool found_grp = false;
	int err;

	msg_init(&m, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, NLM_F_ACK);
	((struct genlmsghdr *)(m.buf + NLMSG_HDRLEN))->version = 1;
	msg_put_str(&m, CTRL_ATTR_FAMILY_NAME, family);
	req = (struct nlmsghdr *)m.buf;
	err = send_msg(s, &m);
	if (err)
		return err;
	if (id)
		*id = 0;
	for (;;) {
		ssize_t n = recv(s->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *nlh;
		size_t len;

		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		len = (size_t)n;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
			if (nlh->nlmsg_seq != req->nlmsg_seq)
				continue;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				struct genl_err e = { 0 };

				parse_error(nlh, &e);
				if (e.err)
					return e.err;
				if (group && !found_grp)
					return -ENOENT;
				return 0;
			}
			if (nlh->nlmsg_type == GENL_ID_CTRL) {
				unsigned char *p = (unsigned char *)NLMSG_DATA(nlh) + GENL_HDRLEN;
				size_t alen = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

				while (alen >= NLA_HDRLEN) {
					struct nlattr *nla = (struct nlattr *)p;
					int t = nla->nla_type & NLA_TYPE_MASK;

					if (nla->nla_len < NLA_HDRLEN || (size_t)nla->nla_len > alen)
						break;
					if (t == CTRL_ATTR_FAMILY_ID && id)
						memcpy(id, p + NLA_HDRLEN, 2);
					if (t == CTRL_ATTR_MCAST_GROUPS && group) {
						/* nest of nests: { {NAME, ID}, ... } */
						unsigned char *q = p + NLA_HDRLEN;
						size_t ql = nla->nla_len - NLA_HDRLEN;

						while (ql >= NLA_HDRLEN) {
							struct nlattr *g = (struct nlattr *)q;
							unsigned char *r = q + NLA_HDRLEN;
							size_t rl;
							const char *gname = NULL;
							uint32_t gid = 0;

							if (g->nla_len < NLA_HDRLEN || (size_t)g->nla_len > ql)
								break;
							rl = g->nla_len - NLA_HDRLEN;
							while (rl >= NLA_HDRLEN) {
								struct nlattr *a = (struct nlattr *)r;

								if (a->nla_len < NLA_HDRLEN || (size_t)a->nla_len > rl)
									break;
								if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_NAME)
									gname = (const char *)r + NLA_HDRLEN;
								if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GRP_ID)
									memcpy(&gid, r + NLA_HDRLEN, 4);
								if ((size_t)NLA_ALIGN(a->nla_len) >= rl)
									break;
								rl -= NLA_ALIGN(a->nla_len);
								r += NLA_ALIGN(a->nla_len);
							}
							if (gname && !strcmp(gname, group)) {
								found_grp = true;
								if (grp_id)
									*grp_id = gid;
							}
							if ((size_t)NLA_ALIGN(g->nla_len) >= ql)
								break;
							ql -= NLA_ALIGN(g->nla_len);
							q += NLA_ALIGN(g->nla_len);
						}
					}
					if ((size_t)NLA_ALIGN(nla->nla_len) >= alen)
						break;
					alen -= NLA_ALIGN(nla->nla_len);
					p += NLA_ALIGN(nla->nla_len);
				}
			}
		}
	}
}

int genl_resolve_chorus(struct genl_sock *s)
{
	uint16_t id = 0;
	uint32_t grp = 0;
	int err;

	s->family = 0;
	s->mcgrp_events = 0;
	err = genl_resolve(s, CHORUS_GENL_NAME, &id, CHORUS_GENL_MCGRP_EVENTS, &grp);
	if (err == -ENOENT && id) {
		/* family there, group missing */
		s->family = id;
		return -ENOENT;
	}
	if (err)
		return err;
	s->family = id;
	s->mcgrp_events = grp;
	return 0;
}

int genl_subscribe(struct genl_sock *s, uint32_t group)
{
	if (setsockopt(s->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)
		return -errno;
	return 0;
}

int genl_recv_event(struct genl_sock *s, int timeout_ms, struct chorus_vol *v)
{
	static unsigned char buf[RX_BUF] __attribute__((aligned(8)));
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };

	for (;;) {
		struct nlmsghdr *nlh;
		ssize_t n;
		size_t len;
		int r = poll(&pfd, 1, timeout_ms);

		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			return -errno;
		len = (size_t)n;
		for (nlh = (struct nlmsghdr *)buf; NLMSG_OK(nlh, len); nlh = NLMSG_NEXT(nlh, len)) {
			struct genlmsghdr *g = NLMSG_DATA(nlh);

			if (nlh->nlmsg_type != s->family)
				continue;
			memset(v, 0, sizeof(*v));
			v->cmd = g->cmd;
			chorus_vol_parse((unsigned char *)g + GENL_HDRLEN,
					 nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN, v);
			/* one event per call; the rest of the buffer is lost, so
			 * the kernel sends one per skb: fine in practice */
			return 0;
		}
	}
}

static void put_create_args(struct genl_msg *m, const struct chorus_create_args *a)
{
	if (a->name)
		msg_put_str(m, CHORUS_A_VOLUME_NAME, a->name);
	if (a->backing)
		msg_put_str(m, CHORUS_A_BACKING_PATH, a->backing);
	if (a->size)
		msg_put_u64(m, CHORUS_A_SIZE_BYTES, a->size);
	if (a->block_size)
		msg_put_u32(m, CHORUS_A_BLOCK_SIZE, a->block_size);
	if (a->uuid)
		msg_put(m, CHORUS_A_UUID, a->uuid, CHORUS_UUID_LEN);
}

int chorus_create(struct genl_sock *s, const struct chorus_create_args *a,
		  struct chorus_vol *out, struct genl_err *e)
{
	struct genl_msg m;
	struct chorus_vol tmp;
	int n = 0, err;

	msg_init(&m, s->family, CHORUS_CMD_VOLUME_CREATE, 0);
	put_create_args(&m, a);
	err = genl_xfer(s, &m, e, out ? out : &tmp, 1, &n);
	if (!err && out && n == 0)
		memset(out, 0, sizeof(*out));
	return err;
}

int chorus_destroy(struct genl_sock *s, const char *name, struct genl_err *e)
{
	struct genl_msg m;

	msg_init(&m, s->family, CHORUS_CMD_VOLUME_DESTROY, 0);
	if (name)
		msg_put_str(&m, CHORUS_A_VOLUME_NAME, name);
	return genl_xfer(s, &m, e, NULL, 0, NULL);
}

int chorus_get(struct genl_sock *s, const char *name, struct chorus_vol *out,
	       struct genl_err *e)
{
	struct genl_msg m;
	struct chorus_vol tmp;
	int n = 0, err;

	msg_init(&m, s->family, CHORUS_CMD_VOLUME_GET, 0);
	if (name)
		msg_put_str(&m, CHORUS_A_VOLUME_NAME, name);
	err = genl_xfer(s, &m, e, out ? out : &tmp, 1, &n);
	if (!err && n == 0) {
		if (out)
			memset(out, 0, sizeof(*out));
		return -ENODATA;
	}
	return err;
}

int chorus_dump(struct genl_sock *s, struct chorus_vol *vols, int max,
		struct genl_err *e)
{
	struct genl_msg m;
	int n = 0, err;

	msg_init(&m, s->family, CHORUS_CMD_VOLUME_GET, NLM_F_DUMP);
	err = genl_xfer(s, &m, e, vols, max, &n);
	return err ? err : n;
}

void uuid_fmt(const uint8_t *u, char *buf)
{
	sprintf(buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
		u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

const char *genl_err_str(const struct genl_err *e, char *buf, size_t len)
{
	int n = snprintf(buf, len, "err=%d (%s) extack=\"%s\"", e->err,
			 e->err ? strerror(-e->err) : "ok", e->msg);

	if (e->has_offs && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - n, " bad_attr_offs=%u", e->offs);
	if (e->has_miss_type && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - n, " miss_type=%u", e->miss_type);
	if (e->has_miss_nest && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - n, " miss_nest=%u", e->miss_nest);
	return buf;
}
