// SPDX-License-Identifier: GPL-2.0
/*
 * session: chorusd's session in etcd drives the kernel's lease deadline.
 *
 * One VM runs a one-member etcd on loopback and chorusd with a [cluster]
 * section (TTL 6 s, margin 1 s, keepalive 500 ms: a restarted chorusd has
 * 4.5 s to adopt the session before the kernel's deadline passes; the TTL
 * and the waits scale with CHORUS_SELFTEST_TIMEOUT_SCALE on the debug
 * kernel, where starting chorusd alone takes seconds). chorusd registers the
 * node bound to its lease and renews the kernel deadline; SIGSTOPped, the
 * owner's I/O is held by the kernel on its own, and after SIGCONT chorusd
 * finds its session lost and never arms the kernel again; SIGKILLed and
 * restarted under writes, it adopts its session and no write is held; a
 * deadline it cannot have given (an earlier session's) is left alone; an
 * unreachable etcd at start is retried, naming the endpoint.
 *
 * etcd serves its client port over TLS and wants client certificates
 * (Documentation/etcd.md, "TLS"), made by tools/etcd-tls/make-lab-ca
 * once and kept out of each case's scratch directory (every case uses the
 * same ones, and making them costs seconds under TCG): chorusd's whole
 * session, keepalives included, goes over https with the certificate
 * files of its config.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "common.h"

#define REGION		(1 * MiB)
#define ETCD_URL	"https://127.0.0.1:23790"
#define WORK		"/tmp/chorus-session"
#define TLS		"/tmp/chorus-session-tls"
#define ETCDCTL		"ETCDCTL_API=3 etcdctl --endpoints " ETCD_URL " --cacert " TLS "/ca.crt " \
			"--cert " TLS "/client-chorusd.crt --key " TLS "/client-chorusd.key"

FIXTURE(session) {
	struct chorus_env env;
	char ctl[4200];
	char chorusd[4200];
	pid_t chorusd_pid;
	unsigned int scale;	/* CHORUS_SELFTEST_TIMEOUT_SCALE: the debug kernel is slower */
	unsigned int ttl;	/* the session's TTL in s: 6 s, scaled */
};

static unsigned int timeout_scale(void)
{
	const char *s = getenv("CHORUS_SELFTEST_TIMEOUT_SCALE");
	unsigned long v = s ? strtoul(s, NULL, 10) : 1;

	return v ? v : 1;
}

static int start_etcd(void)
{
	return run("mkdir -p " WORK " && rm -rf " WORK "/etcd && "
		   "setsid etcd --name s1 --data-dir " WORK "/etcd "
		   "--listen-client-urls " ETCD_URL " --advertise-client-urls " ETCD_URL " "
		   "--listen-peer-urls http://127.0.0.1:23800 "
		   "--initial-advertise-peer-urls http://127.0.0.1:23800 "
		   "--initial-cluster s1=http://127.0.0.1:23800 "
		   "--cert-file " TLS "/member-s1.crt --key-file " TLS "/member-s1.key "
		   "--client-cert-auth --trusted-ca-file " TLS "/ca.crt "
		   "--heartbeat-interval 100 --election-timeout 1000 "
		   "> " WORK "/etcd.log 2>&1 < /dev/null & "
		   "for i in $(seq 100); do "
		   "  " ETCDCTL " endpoint health "
		   "    >/dev/null 2>&1 && exit 0; sleep 0.2; done; "
		   "tail " WORK "/etcd.log; exit 1");
}

static pid_t start_chorusd(struct __test_metadata *_metadata, FIXTURE_DATA(session) *self)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(WORK "/chorusd.log", O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(self->chorusd, "chorusd", "--config", WORK "/chorusd.conf",
		      "--state-file", WORK "/nvmet.json", (char *)NULL);
		_exit(127);
	}
	EXPECT_LT(0, pid);
	env_track_pid(&self->env, pid);
	self->chorusd_pid = pid;
	return pid;
}

FIXTURE_SETUP(session)
{
	struct chorus_vol v;
	FILE *conf;

	self->scale = timeout_scale();
	self->ttl = 6 * self->scale;

	env_setup(_metadata, &self->env, true);
	snprintf(self->ctl, sizeof(self->ctl), "%s/build/bin/chorusctl", chorus_src());
	snprintf(self->chorusd, sizeof(self->chorusd), "%s/build/bin/chorusd", chorus_src());
	ASSERT_TRUE(path_exists(self->chorusd)) TH_LOG("%s missing: run make userspace",
						      self->chorusd);
	ASSERT_EQ(0, run("rm -rf " WORK " && mkdir -p " WORK));
	ASSERT_EQ(0, run("test -e " TLS "/client-chorusd.crt || %s/tools/etcd-tls/make-lab-ca "
			 TLS " --member s1=127.0.0.1 --client chorusd >/dev/null", chorus_src()));
	conf = fopen(WORK "/chorusd.conf", "w");
	ASSERT_NE(NULL, conf);
	fprintf(conf,
		"[node]\nid = 1\n[cluster]\netcd = [\"" ETCD_URL "\"]\nlease_ttl = %u\n"
		"lease_margin_ms = 1000\nkeepalive_ms = 500\nstate_file = \"" WORK "/session.json\"\n"
		"etcd_ca_file = \"" TLS "/ca.crt\"\netcd_cert_file = \"" TLS "/client-chorusd.crt\"\n"
		"etcd_key_file = \"" TLS "/client-chorusd.key\"\n",
		self->ttl);
	ASSERT_EQ(0, fclose(conf));
	env_on_cleanup(&self->env, true, "pkill -x chorusd; pkill -x etcd; sleep 0.5");
	create_ok(&self->env, "sv", "/dev/vda", 64 * MiB, 0, NULL, &v);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
}

FIXTURE_TEARDOWN(session)
{
	/*
	 * chorusd first, so that nothing arms the kernel again; then what a
	 * test left held is let go, or its writer could not be killed.
	 */
	char log[4096];

	if (self->chorusd_pid > 0) {
		kill(self->chorusd_pid, SIGKILL);
		waitpid(self->chorusd_pid, NULL, 0);
	}
	if (!_metadata->passed &&
	    run_quiet(log, sizeof(log), "tail -n 25 " WORK "/chorusd.log") == 0)
		TH_LOG("chorusd.log:\n%s", log);
	run("%s lease set --disarm >/dev/null 2>&1", self->ctl);
	env_teardown(_metadata, &self->env);
}

static uint64_t boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static pid_t start_writer(struct chorus_env *env, uint64_t off, uint32_t seed, int rounds)
{
	pid_t pid = fork();
	int i;

	if (pid == 0) {
		for (i = 0; i < rounds; i++)
			if (dev_fill("/dev/chorus0", off, REGION, seed + i, 0))
				_exit(1);
		_exit(0);
	}
	env_track_pid(env, pid);
	return pid;
}

/* `chorusctl lease show --json` field; "" when it cannot be read. */
static void lease_field(const char *ctl, const char *field, char *out, size_t len)
{
	out[0] = '\0';
	if (run_quiet(out, len, "%s lease show --json | jq -r .%s", ctl, field))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

static bool wait_lease_state(const char *ctl, const char *state, int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	char out[64];

	do {
		lease_field(ctl, "state", out, sizeof(out));
		if (!strcmp(out, state))
			return true;
		usleep(100000);
	} while (now_ms() < end);
	return false;
}

/* Waits until chorusd's log has text at least times times. */
static bool chorusd_logged_n(const char *text, int times, int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "[ $(grep -cF '%s' " WORK "/chorusd.log) -ge %d ]", text,
		 times);
	do {
		if (run_quiet(NULL, 0, "%s", cmd) == 0)
			return true;
		usleep(100000);
	} while (now_ms() < end);
	return false;
}

static bool chorusd_logged(const char *text, int timeout_ms)
{
	return chorusd_logged_n(text, 1, timeout_ms);
}

static long long node_key_lease(void)
{
	char out[256];

	if (run_quiet(out, sizeof(out),
		      ETCDCTL " get /chorus/nodes/1 -w json"
		      " | jq -r '.kvs[0].lease // 0'"))
		return -1;
	return strtoll(out, NULL, 10);
}

TEST_F_TIMEOUT(session, chorusd_registers_the_node_and_renews_the_kernel_deadline, 240)
{
	char d1[64], d2[64];
	pid_t writer;

	ASSERT_EQ(0, start_etcd());
	start_chorusd(_metadata, self);
	ASSERT_TRUE(wait_lease_state(self->ctl, "valid", 20000 * self->scale))
		TH_LOG("chorusd did not arm the kernel's lease");
	ASSERT_TRUE(chorusd_logged("session started", 1000));
	EXPECT_LT(0, node_key_lease()) TH_LOG("/chorus/nodes/1 is not bound to a lease");

	lease_field(self->ctl, "deadline_ns", d1, sizeof(d1));
	sleep(2);
	lease_field(self->ctl, "deadline_ns", d2, sizeof(d2));
	EXPECT_LT(strtoull(d1, NULL, 10), strtoull(d2, NULL, 10)) TH_LOG("the deadline is not renewed");

	writer = start_writer(&self->env, 0, 1, 4);
	EXPECT_EQ(0, wait_child(writer, 60000));

	/* SIGTERM leaves the session for a restart to adopt; the deadline then passes */
	ASSERT_EQ(0, kill(self->chorusd_pid, SIGTERM));
	EXPECT_EQ(0, wait_child(self->chorusd_pid, 20000));
	EXPECT_LT(0, node_key_lease()) TH_LOG("a clean stop revoked the session");
	EXPECT_TRUE(wait_lease_state(self->ctl, "expired", self->ttl * 1000 + 5000));
}

TEST_F_TIMEOUT(session, stopped_chorusd_lets_the_kernel_fence_and_never_rearms, 240)
{
	uint64_t stopped;
	char deadline[64];
	pid_t writer;

	ASSERT_EQ(0, start_etcd());
	start_chorusd(_metadata, self);
	ASSERT_TRUE(wait_lease_state(self->ctl, "valid", 20000 * self->scale));

	ASSERT_EQ(0, kill(self->chorusd_pid, SIGSTOP));
	stopped = boottime_ns();
	ASSERT_TRUE(wait_lease_state(self->ctl, "expired", self->ttl * 1000 + 5000))
		TH_LOG("the kernel did not fence on its own deadline");
	/*
	 * The last deadline came from a keepalive sent before the stop: at most
	 * TTL - margin later, a second before etcd can expire the lease.
	 */
	lease_field(self->ctl, "deadline_ns", deadline, sizeof(deadline));
	EXPECT_GE(stopped + (self->ttl - 1) * 1000000000ULL, strtoull(deadline, NULL, 10))
		TH_LOG("deadline %s is more than TTL - margin after the stop at %llu", deadline,
		       (unsigned long long)stopped);
	writer = start_writer(&self->env, 0, 2, 1);
	EXPECT_EQ(-1, wait_child(writer, 2000)) TH_LOG("a write completed past the deadline");

	/* give etcd the rest of the TTL: chorusd then finds its session lost */
	sleep(3 * self->scale);
	ASSERT_EQ(0, kill(self->chorusd_pid, SIGCONT));
	ASSERT_TRUE(chorusd_logged("session lost", 10000 * self->scale));
	ASSERT_TRUE(chorusd_logged_n("session started", 2, 10000 * self->scale))
		TH_LOG("no new session for membership after the loss");
	EXPECT_LT(0, node_key_lease()) TH_LOG("membership was not restored");
	sleep(3);
	EXPECT_TRUE(wait_lease_state(self->ctl, "expired", 100)) TH_LOG("a lost session re-armed");
	EXPECT_EQ(-1, wait_child(writer, 100)) TH_LOG("the held write completed");

	/* a restart adopts the new session and still does not arm */
	ASSERT_EQ(0, kill(self->chorusd_pid, SIGKILL));
	wait_child(self->chorusd_pid, 5000);
	start_chorusd(_metadata, self);
	ASSERT_TRUE(chorusd_logged("session adopted", 20000 * self->scale));
	sleep(2);
	EXPECT_TRUE(wait_lease_state(self->ctl, "expired", 100)) TH_LOG("a restart re-armed");

	/* only the operator (or, later, the control plane) lets it go */
	ASSERT_EQ(0, run("%s lease set --disarm", self->ctl));
	EXPECT_EQ(0, wait_child(writer, 60000));
}

TEST_F_TIMEOUT(session, killed_and_restarted_chorusd_adopts_its_session_under_writes, 240)
{
	char exp[64];
	pid_t writer;

	ASSERT_EQ(0, start_etcd());
	start_chorusd(_metadata, self);
	ASSERT_TRUE(wait_lease_state(self->ctl, "valid", 20000 * self->scale));

	writer = start_writer(&self->env, 0, 10, 40);
	usleep(500000);
	ASSERT_EQ(0, kill(self->chorusd_pid, SIGKILL));
	wait_child(self->chorusd_pid, 5000);
	start_chorusd(_metadata, self);
	EXPECT_TRUE(chorusd_logged("session adopted", 20000 * self->scale));
	EXPECT_EQ(0, wait_child(writer, 120000)) TH_LOG("a write failed or hung");
	lease_field(self->ctl, "expiries", exp, sizeof(exp));
	EXPECT_STREQ("0", exp) TH_LOG("the deadline passed during the restart");
	EXPECT_TRUE(wait_lease_state(self->ctl, "valid", 100));
}

TEST_F_TIMEOUT(session, a_deadline_from_an_unknown_session_is_left_alone, 180)
{
	ASSERT_EQ(0, run("%s lease set --valid-for 0 >/dev/null", self->ctl));
	ASSERT_EQ(0, start_etcd());
	start_chorusd(_metadata, self);
	ASSERT_TRUE(chorusd_logged("comes from an earlier session", 20000 * self->scale));
	ASSERT_TRUE(chorusd_logged("it gives the kernel no lease deadline", 5000 * self->scale));
	sleep(2);
	EXPECT_TRUE(wait_lease_state(self->ctl, "expired", 100));
}

TEST_F_TIMEOUT(session, an_unreachable_etcd_is_retried_and_named, 180)
{
	start_chorusd(_metadata, self);
	ASSERT_TRUE(chorusd_logged("cannot start the cluster session", 20000 * self->scale));
	EXPECT_TRUE(chorusd_logged("127.0.0.1:23790", 100)) TH_LOG("the endpoint is not named");
	ASSERT_EQ(0, start_etcd());
	EXPECT_TRUE(wait_lease_state(self->ctl, "valid", 20000 * self->scale));
}

CHORUS_HARNESS_MAIN
