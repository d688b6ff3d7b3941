// SPDX-License-Identifier: GPL-2.0
/*
 * workload_crash: the owner of a 2-replica volume dies under a file system
 * that a file workload and a database use at once (2 VMs, TCP).
 *
 * vm2 is the owner (epoch 5) and runs the workload; vm1, where this binary
 * runs, is the replica. What the workload was told is durable is logged
 * where it outlives vm2: the file workload writes its acknowledgements into
 * the lab dir (9p with cache=none, on the host), and pgbench runs on vm1 as
 * a network client of PostgreSQL on vm2. Then vm2's qemu is killed and vm1
 * is promoted as Documentation/admin-guide.md says: owner at epoch 6, the
 * dead owner taken out of the write set. Everything acknowledged must be on
 * vm1. The transport does not change what is tested here, so this runs over
 * TCP only; repl covers crashes on both transports. The volume is 256 MiB.
 */
#include "common.h"
/* PostgreSQL with pgbench's tables needs more than the usual 64 MiB. */
#define RL_SIZE_MB	256
#include "repl_lab.h"

#define PEER		2
#define VOL		RL_VOL
#define SIZE_MB		RL_SIZE_MB
#define EPOCH		5
#define MNT		"/mnt/chorus-wl"
#define PGBIN		"/usr/lib/postgresql/15/bin"
#define PGDATA		MNT "/pg"
#define FILES		MNT "/files"	/* the file workload's */
#define AS_PG		"runuser -u postgres -- "
/* Keep the WAL small on a 256 MiB volume: checkpoints come often. */
#define PG_OPTS		"-c max_wal_size=48MB -c min_wal_size=16MB "
/*
 * pgbench's connection: give up on a dead server within seconds. Not for
 * pgbench -i, before any crash: its COPY may wait longer than that for the
 * server on a busy lab (a fresh-clone run, stop 44: "could not receive
 * data from server: Connection timed out" after 100,000 rows).
 */
#define PGCONN_INIT	"host=10.99.0.2 user=postgres dbname=postgres connect_timeout=10"
#define PGCONN		PGCONN_INIT " keepalives_idle=2 keepalives_interval=1 " \
			"keepalives_count=3 tcp_user_timeout=5000"

FIXTURE(workload_crash) {
	struct chorus_env env;
	char acked[512];	/* the file workload's acknowledgements, on the host */
};

FIXTURE_SETUP(workload_crash)
{
	const char *count = getenv("CHORUS_VM_COUNT"), *lab = getenv("LAB_DIR");
	int vm;

	env_setup(_metadata, &self->env, false);
	ASSERT_TRUE(count && atoi(count) >= 2 && this_vm() == 1 && lab)
		TH_LOG("needs a lab of 2 VMs and to run on vm1");
	snprintf(self->acked, sizeof(self->acked), "%s/vm1/wl-acked-%d.log", lab, getpid());
	if (!rl_vm_alive(PEER))
		ASSERT_EQ(0, rl_vm_start(PEER, NULL, NULL));
	ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[0], PEER, _metadata->name));
	self->env.nremote = 1;
	for (vm = 1; vm <= 2; vm++) {
		rl_on(vm, "pkill -x postgres; pkill -x pgbench; umount " MNT " 2>/dev/null; true");
		rl_node_down(vm);
	}
	rl_start_pair("tcp", PEER, EPOCH);
}

/* An ASSERT failing in a 6.1 harness teardown enters it again: once is enough. */
static bool wlc_teardown_entered;

FIXTURE_TEARDOWN(workload_crash)
{
	int rc;

	if (wlc_teardown_entered)
		return;
	wlc_teardown_entered = true;

	/* A case that failed with vm2 killed: boot it (a fresh log, mark it). */
	if (!rl_vm_alive(PEER))
		rl_vm_start(PEER, &self->env.remote_mark[0], _metadata->name);
	run("pkill -x pgbench; " AS_PG PGBIN "/pg_ctl -D " PGDATA " -m immediate stop "
	    ">/dev/null 2>&1; umount " MNT " 2>/dev/null; rm -f %s; true", self->acked);
	rl_on(PEER, "pkill -KILL -x postgres; sleep 1; umount " MNT " 2>/dev/null; true");
	rc = rl_on(PEER, "if [ -d /sys/module/chorus ]; then %s volume destroy " VOL
		   " && rmmod chorus; fi", rl_ctl());
	env_teardown(_metadata, &self->env);
	rl_node_down(PEER);
	EXPECT_EQ(0, rc) TH_LOG("destroy or rmmod on vm2 failed");
}

/*
 * Kill vm2, the owner, and make vm1 the owner as the admin guide says:
 * owner at a higher epoch, the dead owner out of the write set (its
 * regions stay marked for when it returns).
 */
static void __kill_owner_promote_replica(struct __test_metadata *_metadata,
					 FIXTURE_DATA(workload_crash) *self)
{
	EXPECT_EQ(0, kmsg_check(&self->env.remote_mark[0])) TH_LOG("vm2's log before the crash");
	ASSERT_EQ(0, rl_vm_kill(PEER));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "unreachable", 30));
	ASSERT_EQ(0, run("%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(),
			 EPOCH + 1));
	ASSERT_EQ(0, run("%s writeset remove " VOL " %d >/dev/null", rl_ctl(), PEER));
}
#define kill_owner_promote_replica() __kill_owner_promote_replica(_metadata, self)

/* One number from psql on vm1's PostgreSQL (unix socket in /tmp). */
static long long pg_value(const char *sql)
{
	char out[128];

	if (run_quiet(out, sizeof(out), AS_PG PGBIN "/psql -h /tmp -X -A -t -c \"%s\" postgres",
		      sql))
		return -1;
	return atoll(out);
}

/* On vm2: ext4 on the volume, PostgreSQL's cluster in PGDATA started, FILES made. */
static int start_workloads_on_owner(void)
{
	return rl_on(PEER, "mkfs.ext4 -q -F /dev/chorus0 && mkdir -p " MNT " && "
		     "mount /dev/chorus0 " MNT " && mkdir " FILES " && chown postgres " MNT " && "
		     AS_PG PGBIN "/initdb -D " PGDATA " -A trust --wal-segsize=4 >/dev/null && "
		     "echo \"host all all 10.99.0.0/24 trust\" >> " PGDATA "/pg_hba.conf && "
		     AS_PG PGBIN "/pg_ctl -D " PGDATA " -w -t 120 -l /tmp/pg.log -o "
		     "\"" PG_OPTS "-c listen_addresses=10.99.0.2 "
		     "-c unix_socket_directories=/tmp\" start >/dev/null");
}

/* How many transactions pgbench (ended) reported committed; -1 if it said nothing. */
static long long pgbench_committed(void)
{
	const char *key = "number of transactions actually processed: ";
	char out[4096], *p;

	if (run_quiet(out, sizeof(out), "cat /tmp/pgbench.out"))
		return -1;
	p = strstr(out, key);
	if (!p)
		fprintf(stderr, "# pgbench said: %s\n", out);
	return p ? atoll(p + strlen(key)) : -1;
}

/*
 * PostgreSQL's crash recovery on the promoted replica: it starts, says it
 * recovered, pgbench's invariants hold (account, teller and branch
 * balances each sum to the history's deltas) and every transaction
 * pgbench reported committed is in the history, with at most one more per
 * client (a commit whose answer was lost with vm2).
 */
static void __postgres_recovered(struct __test_metadata *_metadata, long long committed,
				 int clients)
{
	long long history, accounts, tellers, branches, deltas;

	ASSERT_EQ(0, run(AS_PG PGBIN "/pg_ctl -D " PGDATA " -w -t 300 -l /tmp/pg-vm1.log -o "
			 "\"" PG_OPTS "-c listen_addresses='' -c unix_socket_directories=/tmp\" "
			 "start >/dev/null")) TH_LOG("PostgreSQL did not start on the promoted replica");
	EXPECT_EQ(0, run("grep -E 'database system was (interrupted|not properly shut down)' "
			 "/tmp/pg-vm1.log && grep -q 'redo done' /tmp/pg-vm1.log"))
		TH_LOG("no crash recovery in PostgreSQL's log");
	history = pg_value("select count(*) from pgbench_history");
	deltas = pg_value("select coalesce(sum(delta), 0) from pgbench_history");
	accounts = pg_value("select sum(abalance) from pgbench_accounts");
	tellers = pg_value("select sum(tbalance) from pgbench_tellers");
	branches = pg_value("select sum(bbalance) from pgbench_branches");
	TH_LOG("after recovery: %lld transactions in the history, deltas %lld, balances "
	       "%lld / %lld / %lld", history, deltas, accounts, tellers, branches);
	EXPECT_LE(committed, history) TH_LOG("committed transactions are missing");
	EXPECT_GE(committed + clients, history) TH_LOG("more transactions than were sent");
	EXPECT_EQ(deltas, accounts);
	EXPECT_EQ(deltas, tellers);
	EXPECT_EQ(deltas, branches);
	ASSERT_EQ(0, run(AS_PG PGBIN "/pg_ctl -D " PGDATA " -w -m fast stop >/dev/null"));
}
#define postgres_recovered(committed, clients) \
	__postgres_recovered(_metadata, committed, clients)

/*
 * One ext4 on the volume, two workloads on it at once, the owner's VM
 * killed mid-run: a file workload that fsyncs and renames (its
 * acknowledgements logged on the host), and PostgreSQL with pgbench on
 * vm1 as a network client. On the promoted replica the mount replays the
 * journal and every acknowledged file is there with its content;
 * PostgreSQL recovers with every committed transaction; fsck is clean.
 * Then the old owner boots, comes back as a replica, resyncs, and both
 * replicas are byte-identical. (One crash for both: each crash, promotion
 * and resync costs a minute and a half under TCG.)
 */
TEST_F_TIMEOUT(workload_crash, ext4_files_and_postgres_owner_killed, 900)
{
	const int clients = 4;
	uint64_t start;
	long long committed;
	char a[64], b[64];
	int acked, one = 1;
	pid_t wl, bench;

	ASSERT_EQ(0, start_workloads_on_owner()) TH_LOG("ext4 or PostgreSQL did not start on vm2");
	ASSERT_EQ(0, run(PGBIN "/pgbench -i -s 1 -q \"" PGCONN_INIT "\""))
		TH_LOG("pgbench -i failed");
	start = now_ms();
	wl = fork();
	if (wl == 0)
		_exit(rl_on(PEER, "python3 %s/tests/selftests/fs_workload.py write " FILES
			    " --files 0 --seconds 600 --seed 5 > %s", chorus_src(),
			    self->acked) ? 1 : 0);
	ASSERT_LT(0, wl);
	env_track_pid(&self->env, wl);
	bench = fork();
	if (bench == 0)
		_exit(run(PGBIN "/pgbench -c %d -j 2 -T 600 -n \"" PGCONN "\" "
			  "> /tmp/pgbench.out 2>&1", clients) ? 1 : 0);
	ASSERT_LT(0, bench);
	env_track_pid(&self->env, bench);
	/* Crash it once the files have some 60 changes and pgbench ran 20 s. */
	for (acked = 0; acked < 60 || now_ms() < start + 20000; acked = lines_of(self->acked)) {
		ASSERT_EQ(0, waitpid(wl, NULL, WNOHANG)) TH_LOG("the file workload ended early");
		ASSERT_EQ(0, waitpid(bench, NULL, WNOHANG)) TH_LOG("pgbench ended early");
		ASSERT_LT(now_ms(), start + 300000) TH_LOG("60 changes took over 300 s");
		sleep(1);
	}
	kill_owner_promote_replica();
	waitpid(wl, NULL, 0);	/* lab_run(): vm2 is gone */
	/* pgbench notices the dead server (tcp_user_timeout, keepalives). */
	waitpid(bench, NULL, 0);
	self->env.npids = 0;
	committed = pgbench_committed();
	TH_LOG("%d file changes and %lld transactions acknowledged before the crash",
	       lines_of(self->acked), committed);
	ASSERT_LT(0, committed);

	ASSERT_EQ(0, run("mkdir -p " MNT " && mount /dev/chorus0 " MNT))
		TH_LOG("the promoted replica's ext4 does not mount");
	EXPECT_EQ(0, run("python3 %s/tests/selftests/fs_workload.py verify " FILES " %s --crashed",
			 chorus_src(), self->acked)) TH_LOG("acknowledged changes were lost");
	postgres_recovered(committed, clients);
	ASSERT_EQ(0, run("umount " MNT));
	EXPECT_EQ(0, run("e2fsck -fn /dev/chorus0")) TH_LOG("fsck is not clean after the replay");

	/* The old owner comes back as a replica and is resynced. */
	ASSERT_EQ(0, rl_vm_start(PEER, &self->env.remote_mark[0], _metadata->name));
	ASSERT_EQ(0, rl_node_reattach(PEER, &one, 1));
	EXPECT_EQ(0, rl_on(PEER, "%s volume status " VOL " --json | "
			   "jq -e '.role == \"replica\"' >/dev/null", rl_ctl()))
		TH_LOG("the old owner did not come back as a replica");
	ASSERT_EQ(0, rl_on(PEER, "%s peer connect " VOL " 1 >/dev/null", rl_ctl()));
	ASSERT_EQ(0, run("%s peer connect " VOL " 2 >/dev/null", rl_ctl()));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 180));
	ASSERT_EQ(0, rl_md5(1, a, sizeof(a)));
	ASSERT_EQ(0, rl_md5(PEER, b, sizeof(b)));
	EXPECT_STREQ(a, b) TH_LOG("the replicas differ after the resync");
}

CHORUS_HARNESS_MAIN
