// SPDX-License-Identifier: GPL-2.0
/*
 * rdma: what only the RDMA transport has (2 VMs, soft-RoCE rxe0 on eth0).
 *
 * Runs on vm1 (node 1, owner, the dialler) and drives vm2 (node 2). The
 * replication suites themselves run over RDMA as the rdma variants of repl
 * and repl3; these cases cover the device going away and coming back under
 * load with the TCP fallback, unreachable and wrong peers, leaks of verbs
 * objects over connect/disconnect cycles and module unload, and the READ
 * data path (module parameter rdma_data=read on both nodes, or auto: READ
 * for writes larger than one receive buffer).
 */
#include "common.h"
#include "repl_lab.h"

#define PEER	2
#define VOL	RL_VOL
#define EPOCH	5
#define FIO	RL_FIO
/* The verbs objects of rxe0 (pd, cq, qp, cm_id, mr, ...), one line. */
#define RES_CMD	"rdma res show | grep rxe0"
#define RXE_ADD	"rdma link show | grep -q '^link rxe0/' || rdma link add rxe0 type rxe netdev eth0"
/* The RDMA data path and READ counters of the module (debugfs). */
#define STATS	"mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; " \
		"cat /sys/kernel/debug/chorus_rdma"

/*
 * make check's cases (see chorus_in_check_lane()): every one but the
 * leak check of the SEND data path, which READ's leak check repeats with
 * its MR pools on top (the same connections, queues and unload).
 */
#define CHECK_CASES	"device_removed_and_readded_under_fio unreachable_peer_clear_error " \
			"read_path_fio_verify_and_resync auto_path_sends_small_reads_large " \
			"read_path_no_leak_over_connect_cycles_and_unload"

FIXTURE(rdma) {
	struct chorus_env env;
	bool teardown_entered;	/* a failed ASSERT in the teardown re-enters it */
};

#define replicas_identical() rl_pair_identical()

/* Both nodes up with @transport, vm1 owner, connected. */
#define start(transport) rl_start_pair(transport, 1, EPOCH)

/* Field @field of path @transport of peer @node on @vm. */
static uint64_t path_u64(int vm, int node, const char *transport, const char *field)
{
	char out[64];

	if (rl_on_out(vm, out, sizeof(out), "%s volume status " VOL " --json | jq -r "
		      "'.peers[] | select(.node_id == %d) | .paths[] | "
		      "select(.transport == \"%s\") | .%s'", rl_ctl(), node, transport,
		      field))
		return 0;
	return strtoull(out, NULL, 10);
}

/* The mr count of rxe0 in `rdma res show` on @vm. */
static uint64_t res_mr(int vm)
{
	char out[64];

	if (rl_on_out(vm, out, sizeof(out), RES_CMD " | sed -n 's/.* mr \\([0-9]*\\).*/\\1/p'"))
		return 0;
	return strtoull(out, NULL, 10);
}

/* Counter @name of debugfs chorus_rdma on @vm (0 if absent). */
static uint64_t rdma_stat(int vm, const char *name)
{
	char out[64];

	if (rl_on_out(vm, out, sizeof(out), STATS " | awk '$1 == \"%s\" { print $2 }'", name))
		return 0;
	return strtoull(out, NULL, 10);
}

/* The data path @vm's chorus was loaded with. */
static bool data_path_is(int vm, const char *path)
{
	char out[64];

	return !rl_on_out(vm, out, sizeof(out), STATS " | awk '$1 == \"data_path\" { print $2 }'") &&
	       !strcmp(out, path);
}

/* Wait until peer @node on @vm has a last error; false after @timeout_s. */
static bool wait_error(int vm, int node, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL;
	char out[256];

	do {
		rl_peer_field(vm, node, "last_error", out, sizeof(out));
		if (out[0] && strcmp(out, "null"))
			return true;
		usleep(500 * 1000);
	} while (now_ms() < end);
	return false;
}

FIXTURE_SETUP(rdma)
{
	const char *count = getenv("CHORUS_VM_COUNT");

	CHORUS_CHECK_LANE(CHECK_CASES);
	env_setup(_metadata, &self->env, false);
	ASSERT_TRUE(count && atoi(count) >= 2 && this_vm() == 1)
		TH_LOG("needs a lab of 2 VMs and to run on vm1");
	ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[0], PEER, _metadata->name));
	self->env.nremote = 1;
	rl_insmod_args = "";
	rl_node_down(PEER);
	rl_node_down(1);
	ASSERT_EQ(0, rl_on(1, RXE_ADD));
	ASSERT_EQ(0, rl_on(PEER, RXE_ADD));
}

FIXTURE_TEARDOWN(rdma)
{
	int rc;

	if (self->teardown_entered)
		return;
	self->teardown_entered = true;
	rl_on(1, RXE_ADD);
	rl_on(PEER, RXE_ADD);
	rc = rl_on(PEER, "if [ -d /sys/module/chorus ]; then %s volume destroy " VOL
		   " && rmmod chorus; fi", rl_ctl());
	rl_on(1, "%s volume destroy " VOL " >/dev/null 2>&1; true", rl_ctl());
	env_teardown(_metadata, &self->env);
	rl_node_down(PEER);
	ASSERT_EQ(0, rc) TH_LOG("destroy or rmmod on vm2 failed");
}

/*
 * rxe0 is deleted under fio, first on the dialler, then on the acceptor:
 * replication goes on over TCP without an error reaching fio, and returns
 * to RDMA once the device is back. The replicas end identical.
 */
TEST_F_TIMEOUT(rdma, device_removed_and_readded_under_fio, 400)
{
	int status, vm;
	pid_t fio;

	start("rdma+tcp");
	ASSERT_TRUE(rl_wait_peer(1, PEER, "active_transport", "rdma", 5));
	fio = rl_fio_background(&self->env, 1, "--rw=randwrite --bsrange=4k-64k --iodepth=8 "
				"--size=32M --time_based --runtime=45 --verify=crc32c "
				"--verify_backlog=64 --verify_fatal=1");
	ASSERT_LE(0, fio);
	for (vm = 1; vm <= 2; vm++) {
		sleep(3);
		ASSERT_EQ(0, rl_on(vm, "rdma link delete rxe0"));
		EXPECT_TRUE(rl_wait_peer(1, PEER, "active_transport", "tcp", 30))
			TH_LOG("no TCP fallback after rxe0 left vm%d", vm);
		sleep(3);
		ASSERT_EQ(0, rl_on(vm, RXE_ADD));
		EXPECT_TRUE(rl_wait_peer(1, PEER, "active_transport", "rdma", 60))
			TH_LOG("not back on RDMA after rxe0 returned to vm%d", vm);
	}
	ASSERT_EQ(fio, waitpid(fio, &status, 0));
	self->env.npids = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("fio saw an error");
	ASSERT_TRUE(rl_wait_peer(1, PEER, "held", "0", 30));
	EXPECT_LE(2, path_u64(1, PEER, "tcp", "sessions"));
	EXPECT_LE(3, path_u64(1, PEER, "rdma", "sessions"));
	EXPECT_LT(0, path_u64(1, PEER, "tcp", "bytes_sent"));
	replicas_identical();
}

/*
 * Peers that cannot be reached over RDMA: no host at the address, and a
 * host without a listener. Each gives a clear error in the peer's status;
 * disconnect, destroy and unload return promptly.
 */
TEST_F_TIMEOUT(rdma, unreachable_peer_clear_error, 300)
{
	char out[256];
	uint64_t t0;

	ASSERT_EQ(0, rl_node_up(1, true, "none", (const int[]){ 3 }, 0));
	ASSERT_EQ(0, run("%s peer add " VOL " 3 10.99.0.77 --transport rdma >/dev/null &&"
			 " %s peer add " VOL " 2 10.99.0.2 --transport rdma >/dev/null",
			 rl_ctl(), rl_ctl()));
	ASSERT_EQ(0, run("%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(), EPOCH));
	ASSERT_EQ(0, run("%s peer connect " VOL " 3 >/dev/null && %s peer connect " VOL
			 " 2 >/dev/null", rl_ctl(), rl_ctl()));
	/* Never connected: the state stays "connecting", the error says why. */
	ASSERT_TRUE(wait_error(1, 3, 30));
	ASSERT_TRUE(wait_error(1, 2, 30));
	EXPECT_TRUE(rl_wait_peer(1, 3, "conn_state", "connecting", 1));
	rl_peer_field(1, 3, "last_error", out, sizeof(out));
	TH_LOG("no host: %s", out);
	EXPECT_NE(NULL, strstr(out, "RDMA")) TH_LOG("the error does not name RDMA");
	rl_peer_field(1, 2, "last_error", out, sizeof(out));
	TH_LOG("no listener: %s", out);
	EXPECT_NE(NULL, strstr(out, "RDMA connection refused"));
	EXPECT_LE(1, path_u64(1, 3, "rdma", "failures"));
	EXPECT_LE(1, path_u64(1, 2, "rdma", "failures"));
	EXPECT_EQ(0, path_u64(1, 2, "rdma", "sessions"));

	t0 = now_ms();
	ASSERT_EQ(0, run("%s peer disconnect " VOL " 3 >/dev/null && %s peer disconnect " VOL
			 " 2 >/dev/null", rl_ctl(), rl_ctl()));
	ASSERT_EQ(0, run("%s volume destroy " VOL " >/dev/null && rmmod chorus", rl_ctl()));
	/*
	 * 15 s, twice that on the debug kernel (16.1 s seen there on
	 * 2026-12-06): what this catches is a teardown that waits for a dial
	 * or a QP's destruction, which takes a minute.
	 */
	EXPECT_GT(15000 * (rl_scale() > 1 ? 2 : 1), now_ms() - t0)
		TH_LOG("disconnect and unload took %llu ms",
		       (unsigned long long)(now_ms() - t0));
}

/*
 * @cycles connect/disconnect cycles under writes leave no verbs object
 * behind: the counters of `rdma res show` (pd, cq, qp, cm_id, mr) return to
 * where they started, with the module loaded and sessions down, and again
 * after unloading it with the sessions up.
 */
static void __no_leak(struct __test_metadata *_metadata, int cycles, bool mrs)
{
	char base1[256], base2[256], idle1[256], now1[256], now2[256];
	uint64_t mr0;
	int i;

	ASSERT_EQ(0, rl_on_out(1, base1, sizeof(base1), RES_CMD));
	ASSERT_EQ(0, rl_on_out(PEER, base2, sizeof(base2), RES_CMD));
	mr0 = res_mr(1);
	start("rdma");
	/* The READ path's MR pools exist while the sessions are up. */
	if (mrs)
		EXPECT_LT(mr0, res_mr(1)) TH_LOG("vm1 has no more MRs with sessions up");
	for (i = 0; i < cycles; i++) {
		ASSERT_EQ(0, run(FIO "--rw=randwrite --bs=64k --iodepth=4 --size=8M "
				 ">/dev/null"));
		ASSERT_EQ(0, run("%s peer disconnect " VOL " 2 >/dev/null", rl_ctl()));
		ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "disconnected", 30));
		ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "unreachable", 30));
		ASSERT_EQ(0, rl_on_out(1, now1, sizeof(now1), RES_CMD));
		if (i == 0)
			strcpy(idle1, now1);
		EXPECT_STREQ(idle1, now1) TH_LOG("cycle %d left verbs objects on vm1", i);
		ASSERT_EQ(0, run("%s peer connect " VOL " 2 >/dev/null", rl_ctl()));
		ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", 30));
		ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 60));
	}
	EXPECT_LE(cycles + 1, path_u64(1, PEER, "rdma", "sessions"));
	replicas_identical();

	/* Unload with the sessions up. */
	ASSERT_EQ(0, rl_on(PEER, "%s volume destroy " VOL " >/dev/null && rmmod chorus",
			   rl_ctl()));
	ASSERT_EQ(0, run("%s volume destroy " VOL " >/dev/null && rmmod chorus", rl_ctl()));
	ASSERT_EQ(0, rl_on_out(1, now1, sizeof(now1), RES_CMD));
	ASSERT_EQ(0, rl_on_out(PEER, now2, sizeof(now2), RES_CMD));
	EXPECT_STREQ(base1, now1) TH_LOG("vm1 kept verbs objects after rmmod");
	EXPECT_STREQ(base2, now2) TH_LOG("vm2 kept verbs objects after rmmod");
}
#define no_leak(cycles, mrs) __no_leak(_metadata, cycles, mrs)

TEST_F_TIMEOUT(rdma, no_leak_over_connect_cycles_and_unload, 400)
{
	no_leak(3, false);	/* two compared with the first: a leak per cycle shows */
}

/*
 * The READ data path end to end: both nodes load chorus with
 * rdma_data=read. fio writes 4 KiB to 1 MiB blocks with verify (the
 * larger ones are more than one SEND chunk), then blocks whose buffers
 * start inside a page (the registration's first and last pieces partial);
 * the data really went by READ (the counters of both nodes), and the
 * replicas are identical. Then the regions written while the peer was
 * disconnected and out of the write set are resynced, by READ too.
 */
TEST_F_TIMEOUT(rdma, read_path_fio_verify_and_resync, 400)
{
	uint64_t msgs, reads, bytes, fallbacks, resynced;

	rl_insmod_args = "rdma_data=read";
	start("rdma");
	ASSERT_TRUE(data_path_is(1, "read"));
	ASSERT_TRUE(data_path_is(PEER, "read"));
	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-1m --iodepth=8 --size=32M "
			 "--verify=crc32c --verify_fatal=1 >/dev/null"));
	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-64k --iodepth=4 --size=8M "
			 "--iomem_align=512 --verify=crc32c --verify_fatal=1 >/dev/null"));
	msgs = rdma_stat(1, "read_msgs");
	fallbacks = rdma_stat(1, "read_fallbacks");
	reads = rdma_stat(PEER, "reads");
	bytes = rdma_stat(PEER, "read_bytes");
	TH_LOG("vm1 sent %llu messages to READ (%llu by SEND instead); vm2 READ %llu, %llu bytes",
	       (unsigned long long)msgs, (unsigned long long)fallbacks,
	       (unsigned long long)reads, (unsigned long long)bytes);
	EXPECT_LE(reads, msgs);
	EXPECT_LT(msgs / 2, reads) TH_LOG("vm2 READ too few of the messages");
	EXPECT_LE(32ULL << 20, bytes) TH_LOG("less than fio's first run went by READ");
	EXPECT_GT(msgs / 4, fallbacks) TH_LOG("most messages went by SEND");
	EXPECT_EQ(0, rdma_stat(PEER, "read_msgs")) TH_LOG("the replica sent data");
	replicas_identical();

	/*
	 * Deep queues: more writes in flight than a connection has MRs, so
	 * some may go by SEND among the READ ones (in the runs so far about
	 * 3%); releases must still match. Logged, not required.
	 */
	ASSERT_EQ(0, run(FIO "--rw=randwrite --bs=4k --iodepth=128 --size=16M "
			 "--verify=crc32c --verify_fatal=1 >/dev/null"));
	TH_LOG("at QD128: %llu more by READ, %llu by SEND (no free MR)",
	       (unsigned long long)(rdma_stat(1, "read_msgs") - msgs),
	       (unsigned long long)(rdma_stat(1, "read_fallbacks") - fallbacks));
	replicas_identical();

	/* Dirty regions while the peer is away, resynced over READ. */
	ASSERT_EQ(0, run("%s peer disconnect " VOL " 2 >/dev/null", rl_ctl()));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "disconnected", 30));
	ASSERT_EQ(0, run("%s writeset remove " VOL " 2 >/dev/null", rl_ctl()));
	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-256k --iodepth=8 --size=16M "
			 "--offset=8M >/dev/null"));
	reads = rdma_stat(PEER, "reads");
	ASSERT_EQ(0, run("%s peer connect " VOL " 2 >/dev/null", rl_ctl()));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 120));
	resynced = rl_peer_u64(1, PEER, "resynced_bytes");
	TH_LOG("resynced %llu bytes; vm2 READ %llu messages meanwhile",
	       (unsigned long long)resynced,
	       (unsigned long long)(rdma_stat(PEER, "reads") - reads));
	EXPECT_LT(0, resynced);
	EXPECT_LT(reads, rdma_stat(PEER, "reads")) TH_LOG("the resync did not go by READ");
	replicas_identical();
}

/*
 * rdma_data=auto: a write that one receive buffer takes (64 KiB) goes by
 * SEND, a larger one by READ; sizes mixed on the same connections with
 * verify leave the replicas identical. The owner acts on the replica's acks
 * in its receive completion (no thread woken per write); the replica gets
 * no acks to act on.
 */
TEST_F_TIMEOUT(rdma, auto_path_sends_small_reads_large, 300)
{
	uint64_t msgs, fallbacks, reads, acks, peer_acks;

	rl_insmod_args = "rdma_data=auto";
	start("rdma");
	ASSERT_TRUE(data_path_is(1, "auto"));
	ASSERT_TRUE(data_path_is(PEER, "auto"));
	EXPECT_EQ(64 * 1024 + 1, rdma_stat(1, "read_min"));
	msgs = rdma_stat(1, "read_msgs");
	acks = rdma_stat(1, "acks_in_completion");
	peer_acks = rdma_stat(PEER, "acks_in_completion");
	/* 8 MiB in 4-64 KiB writes: at least 128 writes, each acked. */
	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-64k --iodepth=8 --size=8M >/dev/null"));
	EXPECT_EQ(msgs, rdma_stat(1, "read_msgs")) TH_LOG("a write of 64 KiB or less went by READ");
	acks = rdma_stat(1, "acks_in_completion") - acks;
	TH_LOG("owner acted on %llu acks in its receive completion",
	       (unsigned long long)acks);
	EXPECT_LE(128, acks) TH_LOG("the owner's acks went to its receive thread");
	EXPECT_EQ(peer_acks, rdma_stat(PEER, "acks_in_completion"));

	fallbacks = rdma_stat(1, "read_fallbacks");
	reads = rdma_stat(PEER, "reads");
	/* 32 writes of 256 KiB, fewer in flight than a connection has MRs. */
	ASSERT_EQ(0, run(FIO "--rw=write --bs=256k --iodepth=4 --size=8M >/dev/null"));
	msgs = rdma_stat(1, "read_msgs") - msgs;
	reads = rdma_stat(PEER, "reads") - reads;
	TH_LOG("256 KiB writes: %llu messages by READ, %llu by SEND; vm2 READ %llu",
	       (unsigned long long)msgs,
	       (unsigned long long)(rdma_stat(1, "read_fallbacks") - fallbacks),
	       (unsigned long long)reads);
	EXPECT_LE(32, msgs) TH_LOG("the 256 KiB writes did not go by READ");
	EXPECT_EQ(msgs, reads);
	EXPECT_EQ(fallbacks, rdma_stat(1, "read_fallbacks"));

	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-1m --iodepth=8 --size=16M "
			 "--verify=crc32c --verify_fatal=1 >/dev/null"));
	replicas_identical();
}

/*
 * The READ path leaves no verbs object behind either: its MR pools go
 * with their queues (`rdma res show` counts mr too).
 */
TEST_F_TIMEOUT(rdma, read_path_no_leak_over_connect_cycles_and_unload, 300)
{
	rl_insmod_args = "rdma_data=read";
	no_leak(3, true);
}

CHORUS_HARNESS_MAIN
