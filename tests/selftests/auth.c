// SPDX-License-Identifier: GPL-2.0
/*
 * auth: peer authentication of replication connections (2 VMs), over TCP
 * and over RDMA (soft-RoCE): every case runs once per fixture variant.
 *
 * Runs on vm1 (node 1, the owner, which dials) and drives vm2 (node 2, the
 * replica, which accepts). Each VM gets secret files in /run/chorus-auth
 * (root, mode 0600) and `chorusctl auth set` hands one to its module. Cases:
 * a shared secret makes a session that carries fio verify, a different one
 * is refused; an impostor that knows the volume, node 1's id and address
 * and the secret's id, but not the secret, gets no session, no byte
 * written and does not disturb the real one (tests/selftests/wire_inject.py,
 * which also proves the documented HMAC input by authenticating with the
 * right secret); a node without a secret is refused by one with it and the
 * other way round; a rotation under fio with both secrets accepted for a
 * window, the old one refused after it; a connection from an address other
 * than the peer's is refused. Every refusal is checked in the acceptor's
 * log, its counter and its events. Both VMs unload the module at the end
 * with their secrets set, and the harness fails on kernel warnings.
 *
 * make check runs the first case over TCP only (chorus_in_check_lane());
 * make check-all-variants runs everything.
 */
#include "common.h"
#include "repl_lab.h"

#define PEER		2
#define VOL		RL_VOL
#define UUID		RL_UUID
#define EPOCH		5
#define FIO		RL_FIO
#define KEYS		"/run/chorus-auth"
#define EVENTS		"/tmp/chorus-auth-events"
/* Written to KEYS/NAME.key on both VMs; never printed by chorus. */
#define SECRET_A	"chorus-auth-selftest-secret-A-0123456789"
#define SECRET_B	"chorus-auth-selftest-secret-B-9876543210"

FIXTURE(auth) {
	struct chorus_env env;
	char inject[4096];
	bool teardown_entered;	/* a failed ASSERT in the teardown re-enters it */
};

FIXTURE_VARIANT(auth) {
	const char *dialler;	/* node 1's --transport */
	const char *acceptor;	/* node 2's: also TCP, for wire_inject.py */
	const char *check_cases;
};

FIXTURE_VARIANT_ADD(auth, tcp) {
	.dialler = "tcp",
	.acceptor = "tcp",
	.check_cases = "shared_secret_connects_another_is_refused",
};

FIXTURE_VARIANT_ADD(auth, rdma) {
	.dialler = "rdma",
	.acceptor = "rdma+tcp",
	.check_cases = "",
};

#define RXE_ADD	"rdma link show | grep -q '^link rxe0/' || rdma link add rxe0 type rxe netdev eth0"

/* The secret files on @vm: a.key and b.key, root, 0600. */
static int write_keys(int vm)
{
	return rl_on(vm, "mkdir -p " KEYS " && cd " KEYS " && umask 077 && "
		     "printf %%s '" SECRET_A "' > a.key && printf '%%s\\n' '" SECRET_B
		     "' > b.key && chmod 600 a.key b.key");
}

/* `auth set` on @vm with KEYS/@key.key and @opts. */
static int auth_set(int vm, const char *key, const char *opts)
{
	return rl_on(vm, "%s auth set --secret-file " KEYS "/%s.key %s >/dev/null", rl_ctl(),
		     key, opts);
}

/* A field of `auth show --json` on @vm, "" if none. */
static void auth_field(int vm, const char *field, char *out, size_t len)
{
	if (rl_on_out(vm, out, len, "%s auth show --json | jq -r '.%s // \"\"'", rl_ctl(),
		      field))
		out[0] = '\0';
}

static uint64_t auth_failures(int vm)
{
	char out[64];

	auth_field(vm, "failures", out, sizeof(out));
	return strtoull(out, NULL, 10);
}

static const char *mark_tag;	/* vm2's marker of this case */

/* Lines of vm2's kernel log since the case's marker that contain @what. */
static uint64_t log_lines(const char *what)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "dmesg | sed -n '/%s/,$p' | grep -c '%s' || true", mark_tag,
		 what);
	return rl_cmd_u64(PEER, cmd);
}

/* Events of kind @event that vm2's listener (listen_events()) printed. */
static uint64_t events_seen(const char *event)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "grep -c '\"event\":\"%s\"' " EVENTS " || true", event);
	return rl_cmd_u64(PEER, cmd);
}

/*
 * vm2 prints its events to EVENTS for @secs seconds (times the timeout
 * scale: on the debug kernel the case's steps take that much longer), in
 * the background.
 */
static int listen_events(int secs)
{
	int rc = rl_on(PEER, "rm -f " EVENTS "; setsid %s --json events --timeout %d > "
		       EVENTS " 2>&1 < /dev/null & sleep 1", rl_ctl(), secs * rl_scale());

	return rc;
}

/* Wait until peer @node's last_error on @vm contains @what; false on timeout. */
static bool wait_error(int vm, int node, const char *what, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();
	char out[256];

	do {
		rl_peer_field(vm, node, "last_error", out, sizeof(out));
		if (strstr(out, what))
			return true;
		usleep(300 * 1000);
	} while (now_ms() < end);
	fprintf(stderr, "# vm%d: peer %d last_error is \"%s\", not \"%s\"\n", vm, node, out,
		what);
	return false;
}

/*
 * wire_inject.py as node 1, the owner at EPOCH, sending an ok-write to vm2
 * with the options @fmt makes; its one-line answer in @out, newline cut.
 */
static int __attribute__((format(printf, 4, 5)))
inject(const char *injector, char *out, size_t len, const char *fmt, ...)
{
	char opts[256];
	va_list ap;
	size_t n;
	int rc;

	va_start(ap, fmt);
	vsnprintf(opts, sizeof(opts), fmt, ap);
	va_end(ap);
	rc = run_quiet(out, len, "%s 10.99.0.2 ok-write --uuid " UUID " --node 1 --peer 2 "
		       "--sectors %d --epoch %d %s", injector, RL_SIZE_MB * 2048, EPOCH, opts);
	n = strlen(out);
	while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
	return rc;
}

/* Both nodes up (volume, listener, peer declared), roles set, not connected. */
static void __pair_up(struct __test_metadata *_metadata, const FIXTURE_VARIANT(auth) *variant)
{
	static const int other[3] = { 0, 2, 1 };
	int vm;

	rl_transports[1] = variant->dialler;
	rl_transports[2] = variant->acceptor;
	for (vm = 2; vm >= 1; vm--) {
		ASSERT_EQ(0, rl_node_up(vm, true, "none", &other[vm], 1))
			TH_LOG("vm%d setup failed", vm);
		ASSERT_EQ(0, write_keys(vm));
	}
	ASSERT_EQ(0, rl_on(PEER, "%s volume role " VOL " replica >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(1, "%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(),
			   EPOCH));
}
#define pair_up() __pair_up(_metadata, variant)

/* Both nodes connect to each other (vm1 dials). */
static int connect_pair(void)
{
	return rl_on(PEER, "%s peer connect " VOL " 1 >/dev/null", rl_ctl()) ||
	       rl_on(1, "%s peer connect " VOL " 2 >/dev/null", rl_ctl());
}

/* vm1 ends its session with vm2 and dials again. */
static int redial(void)
{
	return rl_on(1, "%s peer disconnect " VOL " 2 >/dev/null && %s peer connect " VOL
		     " 2 >/dev/null", rl_ctl(), rl_ctl());
}

/* The first @mb MiB of both backing devices are identical (cheaper than all 64). */
static void __identical(struct __test_metadata *_metadata, int mb)
{
	char a[64], b[64];

	ASSERT_EQ(0, rl_on_out(1, a, sizeof(a), RL_MD5_CMD, mb));
	ASSERT_EQ(0, rl_on_out(PEER, b, sizeof(b), RL_MD5_CMD, mb));
	EXPECT_STREQ(a, b) TH_LOG("the replicas differ");
}
#define identical(mb) __identical(_metadata, mb)

static void __connected(struct __test_metadata *_metadata, int timeout_s)
{
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", timeout_s));
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "connected", timeout_s));
}
#define connected(t) __connected(_metadata, t)

FIXTURE_SETUP(auth)
{
	const char *count = getenv("CHORUS_VM_COUNT");

	CHORUS_CHECK_LANE(variant->check_cases);
	env_setup(_metadata, &self->env, false);
	snprintf(self->inject, sizeof(self->inject),
		 "%s/tests/selftests/wire_inject.py " RL_INJECT_AS_VM1, chorus_src());
	ASSERT_TRUE(count && atoi(count) >= 2 && this_vm() == 1)
		TH_LOG("needs a lab of 2 VMs and to run on vm1");
	ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[0], PEER, _metadata->name));
	self->env.nremote = 1;
	rl_insmod_args = "";
	rl_node_down(PEER);
	rl_node_down(1);
	if (strcmp(variant->dialler, "tcp")) {
		ASSERT_EQ(0, rl_on(1, RXE_ADD));
		ASSERT_EQ(0, rl_on(PEER, RXE_ADD));
	}
	mark_tag = self->env.remote_mark[0].tag;
}

FIXTURE_TEARDOWN(auth)
{
	int rc;

	if (self->teardown_entered)
		return;
	self->teardown_entered = true;
	/* Unload with the secrets set: they go with the module. */
	rc = rl_on(PEER, "if [ -d /sys/module/chorus ]; then %s volume destroy " VOL
		   " && rmmod chorus; fi", rl_ctl());
	rl_on(1, "%s volume destroy " VOL " >/dev/null 2>&1; true", rl_ctl());
	rl_on(PEER, "pkill -f 'chorusctl --json events' ; rm -rf " KEYS " " EVENTS "; true");
	rl_on(1, "rm -rf " KEYS "; true");
	env_teardown(_metadata, &self->env);
	rl_node_down(PEER);
	ASSERT_EQ(0, rc) TH_LOG("destroy or rmmod on vm2 failed");
}

/*
 * One secret on both nodes: the session comes up and carries fio verify;
 * neither node shows the secret, only its id, the same on both. Then vm1
 * takes another secret and dials again: vm2 refuses (no secret in common),
 * says so in its log with vm1's address and counts it; vm1 says why.
 */
TEST_F_TIMEOUT(auth, shared_secret_connects_another_is_refused, 120)
{
	char id1[64], id2[64], out[512];
	uint64_t failures;

	pair_up();
	ASSERT_EQ(0, auth_set(1, "a", ""));
	ASSERT_EQ(0, auth_set(PEER, "a", ""));
	auth_field(1, "key_id", id1, sizeof(id1));
	auth_field(PEER, "key_id", id2, sizeof(id2));
	EXPECT_EQ(16, strlen(id1)) TH_LOG("key id \"%s\"", id1);
	EXPECT_STREQ(id1, id2);
	ASSERT_EQ(0, rl_on_out(PEER, out, sizeof(out), "%s --json auth show; %s auth show",
			       rl_ctl(), rl_ctl()));
	EXPECT_EQ(NULL, strstr(out, "secret-A")) TH_LOG("the secret is shown: %s", out);
	ASSERT_EQ(0, connect_pair());
	connected(30);
	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-64k --iodepth=8 --size=8M "
			 "--io_size=2M --verify=crc32c --verify_fatal=1 >/dev/null"));
	identical(8);

	failures = auth_failures(PEER);
	ASSERT_EQ(0, auth_set(1, "b", ""));
	ASSERT_EQ(0, redial());
	EXPECT_TRUE(wait_error(1, PEER, "peer refused authentication", 20));
	EXPECT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connecting", 1));
	EXPECT_LT(failures, auth_failures(PEER));
	EXPECT_LE(1, log_lines("peer 1 at 10.99.0.1: connection refused: no peer secret"));
	EXPECT_EQ(0, rl_on_out(PEER, out, sizeof(out), "dmesg | grep -c 'secret-[AB]' || true"));
	EXPECT_STREQ("0", out) TH_LOG("a secret in the kernel log");
}

/*
 * An impostor on node 1's address that knows the volume's uuid, node 1's
 * id and the secret's id (it is public) but not the secret: it offers
 * that id and answers the challenge with random bytes, then with vm2's own
 * proof echoed, then with another secret, then with none. Each time vm2
 * refuses before the connection carries anything, closes it (the WRITE
 * sent after the refusal never lands), logs, counts, announces; its disk
 * is unchanged and the real session stays up. With the right secret the
 * injector, which computes the HMAC from the wire-protocol page, gets in.
 */
TEST_F_TIMEOUT(auth, impostor_without_the_secret_gets_nothing, 300)
{
	char id[64], out[256], before[64], after[64];
	uint64_t failures, reconnects;

	pair_up();
	ASSERT_EQ(0, auth_set(1, "a", ""));
	ASSERT_EQ(0, auth_set(PEER, "a", ""));
	ASSERT_EQ(0, connect_pair());
	connected(30);
	ASSERT_EQ(0, run(FIO "--rw=write --bs=64k --size=4M >/dev/null"));
	auth_field(PEER, "key_id", id, sizeof(id));
	reconnects = rl_peer_u64(1, PEER, "reconnects");
	failures = auth_failures(PEER);
	ASSERT_EQ(0, listen_events(60));
	ASSERT_EQ(0, rl_md5(PEER, before, sizeof(before)));

#define INJECT(...) inject(self->inject, out, sizeof(out), __VA_ARGS__)
	ASSERT_EQ(0, INJECT("--auth-key-id %s --auth-proof random", id));
	EXPECT_STREQ("auth-refused=8 closed", out);
	ASSERT_EQ(0, INJECT("--auth-key-id %s --auth-proof echo", id));
	EXPECT_STREQ("auth-refused=8 closed", out);
	ASSERT_EQ(0, INJECT("--auth-secret-file " KEYS "/b.key"));
	EXPECT_STREQ("refused=8", out);
	ASSERT_EQ(0, INJECT("%s", ""));
	EXPECT_STREQ("refused=8", out);

	ASSERT_EQ(0, rl_md5(PEER, after, sizeof(after)));
	EXPECT_STREQ(before, after) TH_LOG("the impostor changed vm2's disk");
	EXPECT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", 1));
	EXPECT_EQ(reconnects, rl_peer_u64(1, PEER, "reconnects"))
		TH_LOG("the impostor disturbed the real session");
	EXPECT_EQ(failures + 4, auth_failures(PEER));
	EXPECT_LE(1, log_lines("connection refused: wrong proof of the peer secret"));
	EXPECT_LE(1, log_lines("connection refused: peer echoed this node"));
	EXPECT_LE(1, log_lines("connection refused: peer sent no proof"));
	EXPECT_LE(4, events_seen("auth-failed"));
	rl_pair_identical();

	/* The real peer knows the secret, as does the injector given it. */
	ASSERT_EQ(0, rl_on(1, "%s peer disconnect " VOL " 2 >/dev/null", rl_ctl()));
	ASSERT_EQ(0, INJECT("--auth-secret-file " KEYS "/a.key"));
	EXPECT_STREQ("status=0", out) TH_LOG("the documented HMAC input did not authenticate");
#undef INJECT
}

/*
 * A node with a secret refuses a peer without one, and a node without a
 * secret refuses a peer that authenticates; each side says why.
 */
TEST_F_TIMEOUT(auth, secret_on_one_side_only_is_refused, 300)
{
	uint64_t failures;

	pair_up();
	ASSERT_EQ(0, auth_set(PEER, "a", ""));
	failures = auth_failures(PEER);
	ASSERT_EQ(0, connect_pair());
	EXPECT_TRUE(wait_error(1, PEER, "peer requires authentication: this node has no peer secret",
			       20));
	EXPECT_LT(failures, auth_failures(PEER));
	EXPECT_LE(1, log_lines("connection refused: peer sent no proof: it has no peer secret"));

	ASSERT_EQ(0, rl_on(PEER, "%s auth clear >/dev/null", rl_ctl()));
	ASSERT_EQ(0, auth_set(1, "a", ""));
	ASSERT_EQ(0, redial());
	EXPECT_TRUE(wait_error(1, PEER, "peer refused authentication", 20));
	EXPECT_LE(1, log_lines("peer wants authentication, this node has no peer secret"));
	EXPECT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connecting", 1));

	ASSERT_EQ(0, auth_set(PEER, "a", ""));
	connected(30);
}

/*
 * A rotation under fio verify, one node at a time: vm2 takes secret b and
 * keeps accepting a for a window, so vm1, still on a, dials again and gets
 * in; vm1 takes b too and gets in on it. Once vm2's window is over, a node
 * on a alone is refused. fio sees no error and the replicas end identical.
 */
TEST_F_TIMEOUT(auth, rotation_under_fio_window_then_old_refused, 300)
{
	char id_a[64], id_b[64], out[64];
	int status, keep;
	pid_t fio;

	keep = 20 * rl_scale();
	pair_up();
	ASSERT_EQ(0, auth_set(1, "a", ""));
	ASSERT_EQ(0, auth_set(PEER, "a", ""));
	auth_field(1, "key_id", id_a, sizeof(id_a));
	ASSERT_EQ(0, connect_pair());
	connected(30);
	fio = rl_fio_background(&self->env, 1, "--rw=randwrite --bsrange=4k-64k --iodepth=8 "
				"--size=16M --time_based --runtime=20 --verify=crc32c "
				"--verify_fatal=1 --rate_iops=200");
	ASSERT_LE(0, fio);
	sleep(2);

	ASSERT_EQ(0, rl_on(PEER, "%s auth set --secret-file " KEYS "/b.key --keep-previous %d "
			   ">/dev/null", rl_ctl(), keep));
	auth_field(PEER, "key_id", id_b, sizeof(id_b));
	auth_field(PEER, "previous_key_id", out, sizeof(out));
	EXPECT_STREQ(id_a, out) TH_LOG("vm2 does not keep the old secret");
	ASSERT_EQ(0, redial());
	connected(30);
	ASSERT_EQ(0, auth_set(1, "b", "--keep-previous 5"));
	ASSERT_EQ(0, redial());
	connected(30);

	ASSERT_EQ(fio, waitpid(fio, &status, 0));
	self->env.npids = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("fio saw an error");
	rl_pair_identical();

	/* vm2's window ends; vm1 goes back to a alone: refused. */
	sleep(keep);
	auth_field(PEER, "previous_key_id", out, sizeof(out));
	EXPECT_STREQ("", out) TH_LOG("vm2 still accepts the old secret");
	EXPECT_LE(1, log_lines("window ended"));
	ASSERT_EQ(0, auth_set(1, "a", ""));
	ASSERT_EQ(0, redial());
	EXPECT_TRUE(wait_error(1, PEER, "peer refused authentication", 20));
	EXPECT_LE(1, log_lines("no peer secret in common"));
	ASSERT_EQ(0, auth_set(1, "b", ""));
	connected(30);
}

/*
 * vm2 knows node 1 at another address: vm1's connections, from its own
 * address, are refused (no secret needed for that), logged with the
 * address they came from, counted and announced.
 */
TEST_F_TIMEOUT(auth, connection_from_another_address_is_refused, 300)
{
	uint64_t failures;

	pair_up();
	ASSERT_EQ(0, rl_on(PEER, "%s peer del " VOL " 1 >/dev/null && %s peer add " VOL
			   " 1 10.99.0.11 --initial-sync none --transport %s >/dev/null",
			   rl_ctl(), rl_ctl(), variant->acceptor));
	failures = auth_failures(PEER);
	ASSERT_EQ(0, listen_events(40));
	ASSERT_EQ(0, connect_pair());
	EXPECT_TRUE(wait_error(1, PEER, "peer refused: it does not know this volume or node", 20));
	EXPECT_LT(failures, auth_failures(PEER));
	EXPECT_LE(1, log_lines("peer 1 at 10.99.0.1: connection refused: not the peer.s "
			       "configured address"));
	EXPECT_LE(1, events_seen("auth-failed"));
	EXPECT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "connecting", 1));
}

CHORUS_HARNESS_MAIN
