// SPDX-License-Identifier: GPL-2.0
/*
 * nlfuzz: random and mutated requests to every chorus generic-netlink
 * command, as root and as nobody (no CAP_NET_ADMIN).
 *
 * Setup creates volume "base" on /dev/vda (16 MiB) and fills it with a
 * pattern, and formats /dev/vdb for a volume "fz0" that the requests may
 * create, reconfigure and destroy. Each request is a random command
 * (0..CHORUS_CMD_MAX + 2, sometimes as a dump) with up to 8 attributes:
 * valid ones mutated (type, length, bytes), random ones, nests of random
 * attributes two deep, duplicates. No request names "base".
 *
 * Then: every request got an answer; as nobody, every command that needs
 * CAP_NET_ADMIN said EPERM; "base" still has its data (after the lease is
 * disarmed: a deadline in the past legitimately holds an owner's I/O); the
 * kernel log has no BUG, WARNING or Oops; teardown destroys every volume
 * and unloads the module. The seed is printed; CHORUS_NLFUZZ_SEED=N replays
 * a run.
 */
#include <grp.h>
#include <time.h>
#include <linux/netlink.h>

#include "common.h"

#define BASE_SIZE	(16 * MiB)
#define FZ_SIZE		(16 * MiB)
#define ROOT_ITERS	3000
#define NOBODY_ITERS	1000
#define MAX_SECONDS	40	/* per case, under TCG: the iterations stop there */

static const uint8_t fz_uuid[CHORUS_UUID_LEN] = {
	0xf2, 0x20, 0x6e, 0x11, 0x3c, 0x5d, 0x4e, 0x8a,
	0x9b, 0x01, 0x77, 0x42, 0xd3, 0x19, 0xa0, 0x5e,
};

FIXTURE(nlfuzz) {
	struct chorus_env env;
	uint64_t base_sum;
	uint64_t seed;
};

static uint64_t rnd_state;

/* xorshift64*: the same sequence for the same seed, on every machine. */
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return rnd() % n;
}

FIXTURE_SETUP(nlfuzz)
{
	const char *s = getenv("CHORUS_NLFUZZ_SEED");

	self->seed = s ? strtoull(s, NULL, 0) : 0x5eedc0de;
	env_setup(_metadata, &self->env, true);
	create_ok(&self->env, "base", "/dev/vda", BASE_SIZE, 0, NULL, NULL);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_EQ(0, dev_fill("/dev/chorus0", 0, BASE_SIZE, 0xf00d, 0));
	self->base_sum = checksum("/dev/chorus0", 0, BASE_SIZE);
	ASSERT_EQ(0, chorus_format("/dev/vdb", FZ_SIZE, 4096, fz_uuid));
}

FIXTURE_TEARDOWN(nlfuzz)
{
	env_teardown(_metadata, &self->env);
}

/* A valid attribute of some command, before its mutation. */
static void put_valid(struct genl_msg *m, uint16_t *type, uint8_t *buf, size_t *len)
{
	static const char *const strs[] = { "fz0", "fz1", "/dev/vdb", "10.99.0.1",
					    "127.0.0.1", "::1", "" };
	uint64_t v = rnd();

	*type = 2 + rnd_below(CHORUS_A_MAX - 1);
	switch (*type) {
	case CHORUS_A_VOLUME_NAME:
		*len = snprintf((char *)buf, 64, "fz%u", rnd_below(2)) + 1;
		return;
	case CHORUS_A_BACKING_PATH:
	case CHORUS_A_ADDRESS:
	case CHORUS_A_REASON:
	case CHORUS_A_DISK_NAME:
	case CHORUS_A_DISK_ERROR:
		*len = snprintf((char *)buf, 64, "%s",
				strs[rnd_below(sizeof(strs) / sizeof(strs[0]))]) + 1;
		return;
	case CHORUS_A_UUID:
		memcpy(buf, fz_uuid, sizeof(fz_uuid));
		*len = sizeof(fz_uuid);
		return;
	case CHORUS_A_SIZE_BYTES:
		v = rnd_below(2) ? FZ_SIZE : v;
		/* fall through */
	case CHORUS_A_EPOCH:
	case CHORUS_A_RESYNC_RATE:
	case CHORUS_A_LEASE_DEADLINE_NS:
	case CHORUS_A_LEASE_NOW_NS:
	case CHORUS_A_LEASE_EXPIRIES:
	case CHORUS_A_DISK_FAILED_AT:
	case CHORUS_A_AUTH_KEY_ID:
	case CHORUS_A_AUTH_PREV_KEY_ID:
	case CHORUS_A_AUTH_FAILURES:
		v = rnd_below(2) ? v % 16 : v;
		memcpy(buf, &v, 8);
		*len = 8;
		return;
	case CHORUS_A_PORT:
		*len = 2;
		v = rnd_below(2) ? 7789 : v;
		memcpy(buf, &v, 2);
		return;
	case CHORUS_A_AUTO_DEGRADE:
		*len = 1;
		buf[0] = v % 3;
		return;
	case CHORUS_A_DISKLESS:
	case CHORUS_A_AUTH_DROP_PREVIOUS:
	case CHORUS_A_AUTH_CLEAR:
		*len = 0;
		return;
	case CHORUS_A_AUTH_SECRET:
		/* Around the 16..128 bytes the policy takes. */
		*len = rnd_below(2) ? 16 + rnd_below(113) : rnd_below(161);
		for (v = 0; v < *len; v++)
			buf[v] = rnd();
		return;
	default:	/* u32: small values are the valid ones */
		v = rnd_below(4) ? v % 9 : v;
		if (*type == CHORUS_A_BLOCK_SIZE)
			v = 512U << (v % 4);
		memcpy(buf, &v, 4);
		*len = 4;
	}
}

static void put_random(struct genl_msg *m, int depth);

static void put_one(struct genl_msg *m, int depth)
{
	uint8_t buf[160];	/* an AUTH_SECRET of up to 160 bytes */
	uint16_t type;
	size_t len, i;

	switch (rnd_below(10)) {
	case 0 ... 5:
		put_valid(m, &type, buf, &len);
		if (rnd_below(3) == 0) {	/* mutate */
			switch (rnd_below(4)) {
			case 0:
				len = rnd_below(sizeof(buf));
				break;
			case 1:
				type = rnd_below(CHORUS_A_MAX + 4);
				break;
			default:
				if (len)
					buf[rnd_below(len)] ^= 1 << rnd_below(8);
			}
			for (i = 0; i < len; i++)
				if (rnd_below(len + 1) == 0)
					buf[i] = rnd();
		}
		break;
	case 6 ... 7:
		type = rnd_below(CHORUS_A_MAX + 4);
		len = rnd_below(40);
		for (i = 0; i < len; i++)
			buf[i] = rnd();
		break;
	default:
		if (depth >= 2)
			return;
		type = rnd_below(2) ? CHORUS_A_PEERS + rnd_below(2) : rnd_below(CHORUS_A_MAX + 4);
		msg_nest_start(m, type);
		for (i = rnd_below(4); i; i--)
			put_random(m, depth + 1);
		msg_nest_end(m);
		return;
	}
	msg_put(m, type, buf, len);
	if (rnd_below(10) == 0)
		msg_put(m, type, buf, len);	/* a duplicate */
}

/* Inside a nest: chorus_peer_attr's types, or anything. */
static void put_random(struct genl_msg *m, int depth)
{
	uint8_t buf[16];
	uint64_t v = rnd();

	if (rnd_below(3) == 0) {
		put_one(m, depth);
		return;
	}
	v = rnd_below(2) ? v % 9 : v;
	memcpy(buf, &v, sizeof(v));
	msg_put(m, rnd_below(CHORUS_PEER_A_MAX + 3), buf, rnd_below(3) ? 4 : rnd_below(16));
}

static uint8_t build(struct genl_msg *m, uint16_t family)
{
	uint8_t cmd = rnd_below(CHORUS_CMD_MAX + 3);
	int i, n = rnd_below(9);

	msg_init(m, family, cmd, rnd_below(8) == 0 ? NLM_F_DUMP : 0);
	for (i = 0; i < n && m->len < GENL_MSG_MAX - 1024; i++)
		put_one(m, 0);
	return cmd;
}

static bool needs_admin(uint8_t cmd)
{
	return cmd >= CHORUS_CMD_VOLUME_CREATE && cmd <= CHORUS_CMD_MAX &&
	       cmd != CHORUS_CMD_VOLUME_GET && cmd != CHORUS_CMD_EVENT &&
	       cmd != CHORUS_CMD_LEASE_GET && cmd != CHORUS_CMD_AUTH_GET;
}

struct run_result {
	int done;
	int errs[8];		/* a few answers, for the log */
	int not_eperm;		/* admin commands that did not say EPERM */
	int first_bad_cmd;
	int first_bad_err;
	int setup_err;
};

static void fuzz_run(struct genl_sock *s, uint64_t seed, int iters, bool nobody,
		     struct run_result *r)
{
	static struct genl_msg m;
	time_t end = time(NULL) + MAX_SECONDS;
	struct chorus_vol out[4];
	struct genl_err e;
	int err, n;
	uint8_t cmd;

	rnd_state = seed ? seed : 1;
	for (r->done = 0; r->done < iters && time(NULL) < end; r->done++) {
		cmd = build(&m, s->family);
		err = genl_xfer(s, &m, &e, out, 4, &n);
		if (r->done < 8)
			r->errs[r->done] = err;
		if (nobody && needs_admin(cmd) && err != -EPERM && !r->not_eperm++) {
			r->first_bad_cmd = cmd;
			r->first_bad_err = err;
		}
	}
}

static int lease_disarm(struct genl_sock *s)
{
	struct genl_msg m;
	struct genl_err e;

	msg_init(&m, s->family, CHORUS_CMD_LEASE_SET, 0);
	msg_put_u64(&m, CHORUS_A_LEASE_DEADLINE_NS, 0);
	return genl_xfer(s, &m, &e, NULL, 0, NULL);
}

static void __base_kept(struct __test_metadata *_metadata, FIXTURE_DATA(nlfuzz) *self)
{
	struct chorus_vol v;
	struct genl_err e;

	ASSERT_EQ(0, lease_disarm(&self->env.nl));
	ASSERT_EQ(0, chorus_get(&self->env.nl, "base", &v, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_EQ(BASE_SIZE, v.size);
	ASSERT_EQ(self->base_sum, checksum("/dev/chorus0", 0, BASE_SIZE))
		TH_LOG("base's data changed");
}
#define base_kept() __base_kept(_metadata, self)

TEST_F_TIMEOUT(nlfuzz, random_requests_as_root, 180)
{
	struct run_result r = { 0 };

	TH_LOG("seed %#llx (CHORUS_NLFUZZ_SEED to replay)", (unsigned long long)self->seed);
	fuzz_run(&self->env.nl, self->seed, ROOT_ITERS, false, &r);
	TH_LOG("%d requests; first answers %d %d %d %d %d %d %d %d", r.done, r.errs[0],
	       r.errs[1], r.errs[2], r.errs[3], r.errs[4], r.errs[5], r.errs[6], r.errs[7]);
	EXPECT_LE(ROOT_ITERS / 10, r.done) TH_LOG("too few requests in %d s", MAX_SECONDS);
	base_kept();
}

static void nobody_child(int wfd, uint64_t seed)
{
	struct run_result r = { 0 };
	struct genl_sock s;

	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		r.setup_err = -errno;
	else
		r.setup_err = genl_open(&s);
	if (!r.setup_err)
		fuzz_run(&s, seed, NOBODY_ITERS, true, &r);
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

TEST_F_TIMEOUT(nlfuzz, random_requests_as_nobody, 180)
{
	struct run_result r = { 0 };
	int pfd[2], status;
	pid_t pid;

	TH_LOG("seed %#llx (CHORUS_NLFUZZ_SEED to replay)", (unsigned long long)self->seed);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pfd[0]);
		nobody_child(pfd[1], self->seed + 1);
	}
	close(pfd[1]);
	ASSERT_EQ((ssize_t)sizeof(r), read(pfd[0], &r, sizeof(r)));
	close(pfd[0]);
	waitpid(pid, &status, 0);
	ASSERT_EQ(0, r.setup_err) TH_LOG("child setup: %s", strerror(-r.setup_err));
	TH_LOG("%d requests as nobody", r.done);
	EXPECT_LE(NOBODY_ITERS / 10, r.done);
	EXPECT_EQ(0, r.not_eperm)
		TH_LOG("command %d answered %d to nobody, not EPERM", r.first_bad_cmd,
		       r.first_bad_err);
	base_kept();
}

CHORUS_HARNESS_MAIN
