/* SPDX-License-Identifier: GPL-2.0 */
/*
 * chorus fuzzers: what the targets share. Each target (fuzz_*.c) feeds
 * bytes to the kernel's own checks (kernel/wire.c, kernel/rdma_wire.c,
 * compiled as they are) the way a receive path does, and asserts what the
 * code after that path relies on (FUZZ_CHECK), and that the checks agree
 * with Documentation/wire-protocol.rst (spec.c), so that a logic error
 * fails as surely as a crash.
 */
#ifndef CHORUS_FUZZ_H
#define CHORUS_FUZZ_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/errno.h>
#include <linux/types.h>
#include <chorus/wire_check.h>
#include <uapi/linux/chorus.h>

/* A broken invariant: say which, and abort so that libFuzzer saves the input. */
#define FUZZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant broken: %s: ",\
				__FILE__, __LINE__, #cond);		\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

#define FUZZ_PAGE_SIZE		4096U
#define FUZZ_BIO_MAX_VECS	256U	/* the kernel's BIO_MAX_VECS */
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define FUZZ_DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))

/* The input, read front to back; past its end every byte reads as 0. */
struct fuzz_in {
	const u8 *p;
	size_t n;
};

static inline void fuzz_take(struct fuzz_in *in, void *dst, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memcpy(dst, in->p, k);
	memset((u8 *)dst + k, 0, len - k);
	in->p += k;
	in->n -= k;
}

static inline u8 fuzz_u8(struct fuzz_in *in)
{
	u8 v;

	fuzz_take(in, &v, sizeof(v));
	return v;
}

static inline u16 fuzz_u16(struct fuzz_in *in)
{
	__le16 v;

	fuzz_take(in, &v, sizeof(v));
	return le16_to_cpu(v);
}

static inline u32 fuzz_u32(struct fuzz_in *in)
{
	__le32 v;

	fuzz_take(in, &v, sizeof(v));
	return le32_to_cpu(v);
}

static inline u64 fuzz_u64(struct fuzz_in *in)
{
	__le64 v;

	fuzz_take(in, &v, sizeof(v));
	return le64_to_cpu(v);
}

/*
 * A volume's geometry as the kernel allows it (genl.c, meta.c, actlog.c):
 * at least one block, a block size that is a power of 2 from 512 to a page,
 * an activity-log extent of 2^21..2^30 bytes.
 */
struct fuzz_geom {
	u64 nr_sectors;
	u32 block_size;
	u32 al_shift;	/* in sectors, as chorus_al.shift */
	u64 al_extents;
};

void fuzz_geom_take(struct fuzz_in *in, struct fuzz_geom *g);

/* spec.c: Documentation/wire-protocol.rst, written out independently. */
bool spec_type_known(u8 type);
bool spec_type_has_range(u8 type);
bool spec_hdr_ok(const struct chorus_wire_hdr *hdr);
bool spec_range_ok(const struct fuzz_geom *g, const struct chorus_wire_hdr *hdr);
u32 spec_hello_status(const struct chorus_wire_hello *h,
		      const struct chorus_wire_hello_want *want);
bool spec_hello_supersedes(const struct chorus_wire_hello *h,
			   const struct chorus_wire_hello_want *want);
bool spec_hello_auth_ok(const struct chorus_wire_hello_auth *a, u8 type);
bool spec_state_ok(const struct chorus_meta_al *b, u64 epoch, u64 nr_extents,
		   u32 owner_node);
u32 spec_crc32c(const void *buf, size_t len);

/* Checks of an accepted header that every target makes. */
void fuzz_check_accepted_hdr(const struct chorus_wire_hdr *hdr);

/* kshim.c */
void fuzz_selftest(void);

#endif
