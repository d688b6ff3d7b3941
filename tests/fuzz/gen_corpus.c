// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of the fuzzers: valid messages of every type,
 * built with the kernel's own chorus_wire_init_hdr() and chorus_wire_seal(),
 * in the input layout of each target (see the top of each fuzz_*.c).
 *
 * usage: gen_corpus DIR   (writes DIR/<target>/<name>; tests/fuzz/corpus)
 *
 * Every seed is checked to pass the kernel's checks before it is written,
 * so a seed can never be a malformed message by accident.
 */
#include <errno.h>
#include <sys/stat.h>

#include "fuzz.h"

/* The volume of the seeds: 1 GiB of 4 KiB blocks, 4 MiB AL extents. */
#define SEED_BS_CODE	3		/* 512 << 3 */
#define SEED_BLOCKS	262144ULL
#define SEED_AL_CODE	1		/* 2^22 bytes */
#define SEED_SECTORS	(SEED_BLOCKS * 8)
#define SEED_EPOCH	7
#define SEED_NODE	1
#define SEED_PEER	2

static const char *out_dir;
static u8 buf[1 << 21];
static size_t pos;

static void put(const void *p, size_t n)
{
	FUZZ_CHECK(pos + n <= sizeof(buf), "seed too big");
	memcpy(buf + pos, p, n);
	pos += n;
}

static void put_u8(u8 v) { put(&v, 1); }
static void put_u16(u16 v) { __le16 x = cpu_to_le16(v); put(&x, 2); }
static void put_u32(u32 v) { __le32 x = cpu_to_le32(v); put(&x, 4); }
static void put_u64(u64 v) { __le64 x = cpu_to_le64(v); put(&x, 8); }
static void put_zero(size_t n)
{
	FUZZ_CHECK(pos + n <= sizeof(buf), "seed too big");
	memset(buf + pos, 0, n);
	pos += n;
}

static void put_geom(void)
{
	put_u8(SEED_BS_CODE);
	put_u64(SEED_BLOCKS);
	put_u8(SEED_AL_CODE);
}

static void write_seed(const char *target, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", out_dir, target);
	if (mkdir(path, 0755) && errno != EEXIST)
		FUZZ_CHECK(0, "mkdir %s", path);
	snprintf(path, sizeof(path), "%s/%s/%s", out_dir, target, name);
	f = fopen(path, "wb");
	FUZZ_CHECK(f && fwrite(buf, 1, pos, f) == pos && !fclose(f), "%s", path);
	pos = 0;
}

static u8 zeroes[1 << 20];

static struct chorus_wire_hdr mk(u8 type, u16 flags, u64 sector, u32 len,
				 u32 status, u32 payload_len)
{
	struct chorus_wire_hdr hdr;
	const char *why;
	bool hs = type <= CHORUS_MSG_HELLO_ACK || type == CHORUS_MSG_AUTH ||
		  type == CHORUS_MSG_AUTH_ACK;

	chorus_wire_init_hdr(&hdr, type, hs ? 0 : SEED_EPOCH, hs ? 0 : 42,
			     sector, len);
	hdr.flags = cpu_to_le16(flags);
	hdr.status = cpu_to_le32(status);
	hdr.payload_len = cpu_to_le32(payload_len);
	/* The payloads of the seeds are zeroes. */
	if (flags & CHORUS_MSG_F_PAYLOAD_CRC)
		hdr.payload_crc = cpu_to_le32(spec_crc32c(zeroes, payload_len));
	chorus_wire_seal(&hdr);
	FUZZ_CHECK(!chorus_wire_check_hdr(&hdr, &why), "seed type %u: bad %s",
		   type, why);
	return hdr;
}

/* One message of every type, and the variants of the flags. */
static const struct seed {
	const char *name;
	u8 type;
	u16 flags;
	u32 len;
	u32 status;
	u32 payload;
} seeds[] = {
	{ "hello", CHORUS_MSG_HELLO, 0, 0, 0, 96 },
	{ "hello-ack", CHORUS_MSG_HELLO_ACK, 0, 0, 0, 96 },
	{ "hello-ack-refused", CHORUS_MSG_HELLO_ACK, 0, 0, CHORUS_WIRE_REFUSED, 96 },
	{ "write", CHORUS_MSG_WRITE, 0, 4096, 0, 4096 },
	{ "write-fua", CHORUS_MSG_WRITE, CHORUS_MSG_F_FUA, 4096, 0, 4096 },
	{ "write-1m", CHORUS_MSG_WRITE, 0, 1 << 20, 0, 1 << 20 },
	{ "write-crc", CHORUS_MSG_WRITE, CHORUS_MSG_F_PAYLOAD_CRC, 4096, 0, 4096 },
	{ "write-discard", CHORUS_MSG_WRITE, CHORUS_MSG_F_DISCARD, 65536, 0, 0 },
	{ "write-zeroes-fua", CHORUS_MSG_WRITE,
	  CHORUS_MSG_F_ZEROES | CHORUS_MSG_F_FUA, 65536, 0, 0 },
	{ "write-ack", CHORUS_MSG_WRITE_ACK, 0, 4096, 0, 0 },
	{ "write-ack-len0", CHORUS_MSG_WRITE_ACK, 0, 0, CHORUS_WIRE_IO_ERROR, 0 },
	{ "flush", CHORUS_MSG_FLUSH, 0, 0, 0, 0 },
	{ "flush-ack", CHORUS_MSG_FLUSH_ACK, 0, 0, CHORUS_WIRE_DISK_FAILED, 0 },
	{ "read", CHORUS_MSG_READ, 0, 8192, 0, 0 },
	{ "read-data", CHORUS_MSG_READ_DATA, 0, 8192, 0, 8192 },
	{ "read-data-error", CHORUS_MSG_READ_DATA, 0, 8192, CHORUS_WIRE_IO_ERROR, 0 },
	{ "ping", CHORUS_MSG_PING, 0, 0, 0, 0 },
	{ "pong", CHORUS_MSG_PONG, 0, 0, CHORUS_WIRE_DISK_FAILED, 0 },
	{ "resync-data", CHORUS_MSG_RESYNC_DATA, 0, 65536, 0, 65536 },
	{ "resync-data-crc", CHORUS_MSG_RESYNC_DATA, CHORUS_MSG_F_PAYLOAD_CRC, 4096, 0, 4096 },
	{ "resync-ack", CHORUS_MSG_RESYNC_ACK, 0, 65536, 0, 0 },
	{ "verify-req", CHORUS_MSG_VERIFY_REQ, 0, 65536, 0, 4 },
	{ "verify-reply", CHORUS_MSG_VERIFY_REPLY, 0, 65536, CHORUS_WIRE_MISMATCH, 0 },
	{ "state", CHORUS_MSG_STATE, 0, 0, 0, 4096 },
	{ "state-ack", CHORUS_MSG_STATE_ACK, 0, 0, 0, 0 },
	{ "fwd-write", CHORUS_MSG_FWD_WRITE, CHORUS_MSG_F_FUA, 4096, 0, 4096 },
	{ "fwd-write-discard", CHORUS_MSG_FWD_WRITE, CHORUS_MSG_F_DISCARD, 4096, 0, 0 },
	{ "fwd-write-ack", CHORUS_MSG_FWD_WRITE_ACK, 0, 4096, CHORUS_WIRE_NOT_MEMBER, 0 },
	{ "fwd-flush", CHORUS_MSG_FWD_FLUSH, 0, 0, 0, 0 },
	{ "fwd-flush-ack", CHORUS_MSG_FWD_FLUSH_ACK, 0, 0, CHORUS_WIRE_STALE_EPOCH, 0 },
	{ "replica-read", CHORUS_MSG_REPLICA_READ, 0, 8192, 0, 0 },
	{ "hello-auth", CHORUS_MSG_HELLO, CHORUS_MSG_F_AUTH, 0, 0, 176 },
	{ "hello-ack-auth", CHORUS_MSG_HELLO_ACK, CHORUS_MSG_F_AUTH, 0, 0, 176 },
	{ "hello-ack-auth-failed", CHORUS_MSG_HELLO_ACK, 0, 0,
	  CHORUS_WIRE_AUTH_FAILED, 96 },
	{ "auth", CHORUS_MSG_AUTH, 0, 0, 0, 32 },
	{ "auth-ack", CHORUS_MSG_AUTH_ACK, 0, 0, 0, 0 },
	{ "auth-ack-failed", CHORUS_MSG_AUTH_ACK, 0, 0, CHORUS_WIRE_AUTH_FAILED, 0 },
};

/* The handshake's messages: no session carries them. */
static bool seed_handshake(const struct seed *s)
{
	return s->type <= CHORUS_MSG_HELLO_ACK || s->type == CHORUS_MSG_AUTH ||
	       s->type == CHORUS_MSG_AUTH_ACK;
}

static struct chorus_wire_hdr mk_seed(const struct seed *s)
{
	bool range = spec_type_has_range(s->type);

	return mk(s->type, s->flags, range ? 2048 : 0, s->len, s->status,
		  s->payload);
}

static void gen_hdr(void)
{
	struct chorus_wire_hdr hdr;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(seeds); i++) {
		hdr = mk_seed(&seeds[i]);
		put_u8(1);
		put_geom();
		put(&hdr, sizeof(hdr));
		write_seed("fuzz_hdr", seeds[i].name);
	}
	/* Unsealed: the raw path, hdr_crc as given. */
	hdr = mk_seed(&seeds[4]);
	put_u8(0);
	put_geom();
	put(&hdr, sizeof(hdr));
	write_seed("fuzz_hdr", "write-fua-raw");
}

static const u8 seed_uuid[16] = {
	0x6c, 0x3f, 0x0d, 0x7e, 0x21, 0x4b, 0x4a, 0x1e,
	0x9a, 0x55, 0x10, 0x2f, 0x83, 0x77, 0xc4, 0x01,
};

/* The incarnation of the seeds' peer; SEED_OTHER_INC is another one. */
#define SEED_INC	0x0123456789abcdefULL
#define SEED_OTHER_INC	0x7edcba9876543211ULL

static void put_hello(u16 index, u32 flags, u64 epoch, u64 incarnation)
{
	struct chorus_wire_hello h;

	memset(&h, 0, sizeof(h));
	h.proto_min = cpu_to_le16(CHORUS_WIRE_VERSION);
	h.proto_max = cpu_to_le16(CHORUS_WIRE_VERSION);
	h.conn_index = cpu_to_le16(index);
	h.nr_conns = cpu_to_le16(2);
	h.node_id = cpu_to_le32(SEED_PEER);
	h.peer_node_id = cpu_to_le32(SEED_NODE);
	memcpy(h.volume_uuid, seed_uuid, sizeof(seed_uuid));
	h.data_sectors = cpu_to_le64(SEED_SECTORS);
	h.block_size = cpu_to_le32(4096);
	h.flags = cpu_to_le32(flags);
	h.epoch = cpu_to_le64(epoch);
	h.session_id = cpu_to_le64(0x1234567890abcdefULL);
	h.current_gen = cpu_to_le64(99);
	h.incarnation = cpu_to_le64(incarnation);
	put(&h, sizeof(h));
}

/* The authentication part: a HELLO offers two ids, a HELLO_ACK proves. */
static void put_hello_auth(bool ack)
{
	struct chorus_wire_hello_auth a;
	const char *why;

	memset(&a, 0, sizeof(a));
	memset(a.nonce, ack ? 0xa5 : 0x5a, sizeof(a.nonce));
	a.key_ids[0] = cpu_to_le64(0x1122334455667788ULL);
	if (ack)
		memset(a.mac, 0x3c, sizeof(a.mac));
	else
		a.key_ids[1] = cpu_to_le64(0x0102030405060708ULL);
	FUZZ_CHECK(!chorus_wire_check_hello_auth(&a, ack ? CHORUS_MSG_HELLO_ACK :
						 CHORUS_MSG_HELLO, &why),
		   "auth seed: %s", why);
	put(&a, sizeof(a));
}

/*
 * ctl bits: 1 seal, 2 acceptor, 4 we own, 8 peer diskless; 0x80: auth.
 * This node follows the owner SEED_INC at @pinned (0: none); the hello
 * carries @incarnation.
 */
static void hello_seed_pin(const char *name, u8 ctl, u16 index, u32 flags,
			   u64 epoch, u64 our_epoch, u64 highest, u64 pinned,
			   u64 incarnation)
{
	bool auth = ctl & 0x80;
	struct chorus_wire_hdr hdr = mk(ctl & 2 ? CHORUS_MSG_HELLO :
					CHORUS_MSG_HELLO_ACK,
					auth ? CHORUS_MSG_F_AUTH : 0, 0, 0, 0,
					auth ? 176 : 96);

	ctl &= 0x7f;

	put_u8(ctl);
	put_u32(SEED_NODE);
	put_u32(SEED_PEER);
	put(seed_uuid, sizeof(seed_uuid));
	put_u64(SEED_SECTORS);
	put_u8(SEED_BS_CODE);
	put_u8(1);		/* nr_conns 2 */
	put_u64(our_epoch);
	put_u64(highest);
	put_u64(pinned);
	put_u64(pinned ? SEED_INC : 0);
	put(&hdr, sizeof(hdr));
	put_hello(index, flags, epoch, incarnation);
	if (auth)
		put_hello_auth(!(ctl & 2));
	write_seed("fuzz_hello", name);
}

static void hello_seed(const char *name, u8 ctl, u16 index, u32 flags,
		       u64 epoch, u64 our_epoch, u64 highest)
{
	hello_seed_pin(name, ctl, index, flags, epoch, our_epoch, highest, 0,
		       SEED_INC);
}

static void gen_hello(void)
{
	hello_seed("acceptor-owner-hello", 1 | 2 | 4, 0, 0, 7, 7, 7);
	hello_seed("acceptor-replica-hello", 1 | 2, 1, CHORUS_HELLO_F_OWNER, 8, 7, 7);
	hello_seed("acceptor-diskless", 1 | 2 | 4 | 8, 1, CHORUS_HELLO_F_DISKLESS, 0, 7, 7);
	hello_seed("acceptor-stale-owner", 1 | 2, 0, CHORUS_HELLO_F_OWNER, 6, 7, 7);
	hello_seed("dialler-owner-ack", 1, 0, CHORUS_HELLO_F_OWNER, 7, 5, 5);
	hello_seed("dialler-replica-ack", 1 | 4, 1, 0, 7, 7, 7);
	hello_seed("dialler-higher-epoch", 1 | 4, 0, 0, 9, 7, 7);
	hello_seed("raw-acceptor", 2 | 4, 0, 0, 7, 7, 7);
	hello_seed("acceptor-auth-hello", 0x80 | 1 | 2 | 4, 0, 0, 7, 7, 7);
	hello_seed("dialler-auth-ack", 0x80 | 1, 1, CHORUS_HELLO_F_OWNER, 7, 5, 5);
	/* One incarnation of the owner per epoch (check 9a). */
	hello_seed_pin("acceptor-same-incarnation", 1 | 2, 0, CHORUS_HELLO_F_OWNER,
		       7, 7, 7, 7, SEED_INC);
	hello_seed_pin("acceptor-other-incarnation", 1 | 2, 0, CHORUS_HELLO_F_OWNER,
		       7, 7, 7, 7, SEED_OTHER_INC);
	hello_seed_pin("dialler-owner-at-a-new-epoch", 1, 1, CHORUS_HELLO_F_OWNER,
		       8, 7, 7, 7, SEED_OTHER_INC);
}

static struct chorus_meta_al al;

static void mk_al(u32 nr)
{
	u32 i;

	memset(&al, 0, sizeof(al));
	al.magic = cpu_to_le64(CHORUS_META_AL_MAGIC);
	al.seq = cpu_to_le64(12);
	al.epoch = cpu_to_le64(SEED_EPOCH);
	al.owner_node = cpu_to_le32(SEED_PEER);
	al.nr_extents = cpu_to_le32(nr);
	for (i = 0; i < nr; i++)
		al.extents[i] = cpu_to_le32(i * 7 % 256);
	al.crc = cpu_to_le32(spec_crc32c(&al, offsetof(struct chorus_meta_al, crc)));
	FUZZ_CHECK(chorus_al_block_valid(&al, 256), "AL seed");
}

static void gen_state(void)
{
	static const u32 nrs[] = { 0, 1, 64, 256, 1000 };
	char name[32];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(nrs); i++) {
		mk_al(nrs[i]);
		put_u8(0);
		put_geom();
		put_u64(SEED_EPOCH);
		put_u32(SEED_PEER);
		put(&al, sizeof(al));
		snprintf(name, sizeof(name), "extents-%u", nrs[i]);
		write_seed("fuzz_state", name);
	}
}

static void put_msg(const struct seed *s)
{
	struct chorus_wire_hdr hdr = mk_seed(s);

	put(&hdr, sizeof(hdr));
	if (s->type == CHORUS_MSG_STATE) {
		mk_al(3);
		put(&al, sizeof(al));
	} else {
		put_zero(s->payload);
	}
}

static void gen_stream(void)
{
	size_t i;

	/* Every type a session carries, one after the other. */
	put_u8(1);
	put_geom();
	put_u32(SEED_PEER);
	for (i = 0; i < ARRAY_SIZE(seeds); i++)
		if (!seed_handshake(&seeds[i]) && seeds[i].payload <= 8192)
			put_msg(&seeds[i]);
	write_seed("fuzz_stream", "session");
	/* Each on its own, after a PING. */
	for (i = 0; i < ARRAY_SIZE(seeds); i++) {
		if (seed_handshake(&seeds[i]) || seeds[i].payload > 8192)
			continue;
		put_u8(1);
		put_geom();
		put_u32(SEED_PEER);
		put_msg(&seeds[16]);
		put_msg(&seeds[i]);
		write_seed("fuzz_stream", seeds[i].name);
	}
}

/* One receive buffer: imm, byte count, header, (READ) descriptor. */
static void put_buf(u32 imm, u32 n, const struct chorus_wire_hdr *hdr)
{
	put_u32(imm);
	put_u32(hdr ? sizeof(*hdr) + n : 0);
	if (hdr)
		put(hdr, sizeof(*hdr));
}

static void put_cm(void)
{
	put_u8(sizeof(struct chorus_rdma_cm_data));
	put_u16(CHORUS_RDMA_VERSION);
	put_u16(32);
	put_u32(CHORUS_RDMA_CHUNK);
	put_zero(8);
}

/* A message sent by SEND, cut into chunks as rdma_send.c does. */
static void put_chunks(const struct chorus_wire_hdr *hdr, u32 credits)
{
	u32 len = le32_to_cpu(hdr->payload_len), off = 0, n;

	do {
		n = len - off < CHORUS_RDMA_CHUNK ? len - off : CHORUS_RDMA_CHUNK;
		put_buf(credits, n, hdr);
		off += n;
	} while (off < len);
}

static void gen_rdma(void)
{
	struct chorus_wire_hdr hdr;
	size_t i;

	/* The handshake, a credit return, every type by SEND. */
	put_u8(1);
	put_cm();
	hdr = mk_seed(&seeds[0]);
	put_chunks(&hdr, 0);
	put_buf(CHORUS_RDMA_CREDIT_ONLY | 8, 0, NULL);
	for (i = 1; i < ARRAY_SIZE(seeds); i++) {
		if (seeds[i].payload > 4 * CHORUS_RDMA_CHUNK)
			continue;
		hdr = mk_seed(&seeds[i]);
		put_chunks(&hdr, 1 | (1 << CHORUS_RDMA_DONE_SHIFT));
	}
	write_seed("fuzz_rdma", "session");
	/* A 1 MiB write by SEND: 16 chunks. */
	put_u8(1);
	put_cm();
	hdr = mk_seed(&seeds[5]);
	put_chunks(&hdr, 2);
	write_seed("fuzz_rdma", "write-1m-chunks");
	/* A write of 100 KiB: a whole chunk and a partial one. */
	put_u8(1);
	put_cm();
	hdr = mk(CHORUS_MSG_WRITE, 0, 2048, 102400, 0, 102400);
	put_chunks(&hdr, 0);
	write_seed("fuzz_rdma", "write-100k");
	/* READ messages: a 1 MiB write, 64 KiB of resync. */
	put_u8(1);
	put_cm();
	hdr = mk_seed(&seeds[5]);
	put_buf(CHORUS_RDMA_READ | 1, sizeof(struct chorus_rdma_read_desc), &hdr);
	put_u64(0x10000);
	put_u32(0x1234);
	put_u32(1 << 20);
	hdr = mk_seed(&seeds[18]);
	put_buf(CHORUS_RDMA_READ, sizeof(struct chorus_rdma_read_desc), &hdr);
	put_u64(0x20000);
	put_u32(0x5678);
	put_u32(65536);
	write_seed("fuzz_rdma", "read");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	out_dir = argv[1];
	fuzz_selftest();
	gen_hdr();
	gen_hello();
	gen_state();
	gen_stream();
	gen_rdma();
	return 0;
}
