// SPDX-License-Identifier: GPL-2.0
/*
 * repl3: a volume with three replicas (3 VMs).
 *
 * Runs on vm1, the owner (node 1); vm2 and vm3 are replicas. Every node
 * declares and connects to the other two, so the replicas also have a
 * session with each other (used when one of them becomes owner). Ends by
 * comparing the data areas of all three backing devices; unloads chorus
 * everywhere with sessions up and fails on kernel warnings on any VM.
 */
#include "common.h"
#include "repl_lab.h"

#define EPOCH	5
#define FIO	RL_FIO

FIXTURE(repl3) {
	struct chorus_env env;
};

/* Every node may only use the variant's transport. */
FIXTURE_VARIANT(repl3) {
	const char *transport;
	/*
	 * The cases make check runs in this variant (NULL: all; see
	 * chorus_in_check_lane()). None over RDMA: each peer has its own
	 * session, so the three-way data path over RDMA is two of repl.rdma's
	 * (the owner waits for both acks in the replication layer, whatever
	 * carried them); the link-cut cases skip on soft-RoCE anyway, and
	 * forwarding over RDMA is forward.rdma's. make check-all-variants runs
	 * them.
	 */
	const char *check_cases;
};

FIXTURE_VARIANT_ADD(repl3, tcp) {
	.transport = "tcp",
	/*
	 * All but plain fio verify: every other case writes through the
	 * three-way data path too and ends comparing the three disks, and
	 * the overlapping writes case runs fio on two access points at once.
	 */
	.check_cases = "owner_lost_new_owner_resyncs_both "
		       "new_extent_waits_for_an_unreachable_member "
		       "access_point_follows_the_owner_change "
		       "two_access_points_overlapping_writes_identical",
};

FIXTURE_VARIANT_ADD(repl3, rdma) {
	.transport = "rdma",
	.check_cases = "",
};

static void __identical(struct __test_metadata *_metadata)
{
	char sum[4][64];
	int vm;

	for (vm = 1; vm <= 3; vm++)
		ASSERT_EQ(0, rl_md5(vm, sum[vm], sizeof(sum[vm])));
	EXPECT_STREQ(sum[1], sum[2]) TH_LOG("vm1 and vm2 differ");
	EXPECT_STREQ(sum[1], sum[3]) TH_LOG("vm1 and vm3 differ");
}
#define replicas_identical() __identical(_metadata)

static void __start3(struct __test_metadata *_metadata,
		     const FIXTURE_VARIANT(repl3) *variant)
{
	static const int others[4][2] = { {}, { 2, 3 }, { 1, 3 }, { 1, 2 } };
	int vm, i;

	for (vm = 3; vm >= 1; vm--)
		ASSERT_EQ(0, rl_node_up(vm, true, "none", others[vm], 2))
			TH_LOG("vm%d setup failed", vm);
	ASSERT_EQ(0, rl_on(2, "%s volume role " RL_VOL " replica >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(3, "%s volume role " RL_VOL " replica >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(1, "%s volume role " RL_VOL " owner --epoch %d >/dev/null",
			   rl_ctl(), EPOCH));
	for (vm = 1; vm <= 3; vm++)
		for (i = 0; i < 2; i++)
			ASSERT_EQ(0, rl_on(vm, "%s peer connect " RL_VOL " %d >/dev/null",
					   rl_ctl(), others[vm][i]));
	ASSERT_TRUE(rl_wait_peer(1, 2, "conn_state", "connected", 60));
	ASSERT_TRUE(rl_wait_peer(1, 3, "conn_state", "connected", 60));
	ASSERT_TRUE(rl_wait_peer(2, 3, "conn_state", "connected", 60));
	ASSERT_TRUE(rl_wait_peer(1, 2, "active_transport", variant->transport, 5));
	ASSERT_TRUE(rl_wait_peer(1, 3, "active_transport", variant->transport, 5));
}
#define start3() __start3(_metadata, variant)

FIXTURE_SETUP(repl3)
{
	const char *count = getenv("CHORUS_VM_COUNT");
	int vm;

	CHORUS_CHECK_LANE(variant->check_cases);
	env_setup(_metadata, &self->env, false);
	ASSERT_TRUE(count && atoi(count) >= 3 && this_vm() == 1)
		TH_LOG("needs a lab of 3 VMs and to run on vm1");
	for (vm = 1; vm <= 3; vm++)
		rl_transports[vm] = variant->transport;
	for (vm = 2; vm <= 3; vm++)
		ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[vm - 2], vm, _metadata->name));
	self->env.nremote = 2;
	for (vm = 3; vm >= 1; vm--)
		rl_node_down(vm);
}

FIXTURE_TEARDOWN(repl3)
{
	int vm, rc = 0;

	for (vm = 1; vm <= 3; vm++)
		rl_on(vm, "pkill -f ack_writer.py; ip link set eth0 up; "
		      "tc qdisc del dev eth0 root 2>/dev/null; true");
	/* rmmod with the sessions up: every node must unload. */
	for (vm = 3; vm >= 2; vm--)
		rc |= rl_on(vm, "if [ -d /sys/module/chorus ]; then %s volume destroy " RL_VOL
			    " && rmmod chorus; fi", rl_ctl());
	rl_on(1, "%s volume destroy " RL_VOL " >/dev/null 2>&1; true", rl_ctl());
	env_teardown(_metadata, &self->env);
	for (vm = 3; vm >= 2; vm--)
		rl_node_down(vm);
	ASSERT_EQ(0, rc) TH_LOG("destroy or rmmod on vm2/vm3 failed");
}

/* fio verify: every write on all three replicas, byte-identical. */
TEST_F_TIMEOUT(repl3, fio_verify_three_replicas_identical, 400)
{
	start3();
	ASSERT_EQ(0, rl_on(1, FIO "--rw=randwrite --bsrange=4k-64k --iodepth=16 --size=%dM "
			   "--io_size=12M --verify=crc32c --verify_fatal=1 >/dev/null",
			   RL_SIZE_MB));
	EXPECT_LT(0, rl_peer_u64(1, 2, "writes_sent"));
	EXPECT_LT(0, rl_peer_u64(1, 3, "writes_sent"));
	replicas_identical();
}

/*
 * The owner is cut off under fio. vm2 becomes owner at a higher epoch and
 * folds the activity log vm1 shipped: it resyncs those extents to vm3 at
 * once and to vm1 when it comes back as a replica. All three end equal.
 */
TEST_F_TIMEOUT(repl3, owner_lost_new_owner_resyncs_both, 400)
{
	pid_t fio;

	/*
	 * Not on soft-RoCE: the owner's link is down while its sessions are
	 * torn down, so rdma_cm sends the DREQ into a down link; rxe's QP1
	 * then never completes that MAD and rdma_destroy_id() waits for it
	 * forever (ib_cm: "cm_destroy_id_wait_timeout ... state 11"), holding
	 * the peer's session mutex. A RoCE NIC completes the MAD. The RDMA
	 * owner crash is covered by repl.rdma.owner_crash_new_owner_resyncs_
	 * activity_log (the VM is killed, no link cut). Documentation/rdma.rst.
	 */
	if (!strcmp(variant->transport, "rdma"))
		SKIP(return, "soft-RoCE: a DREQ sent on a down link never completes");

	start3();
	fio = rl_fio_background(&self->env, 1, "--rw=randwrite --bsrange=4k-64k --iodepth=16 "
				"--offset=0 --size=16M --time_based --runtime=120");
	ASSERT_LE(0, fio);
	/*
	 * 256 writes over 16 MiB: the log vm1 shipped names all 4 extents, so
	 * every write it completes after the cut lies in one of them.
	 */
	ASSERT_TRUE(rl_wait_peer_u64(1, 2, "writes_sent", 256, 60));
	ASSERT_TRUE(rl_wait_peer_u64(1, 3, "writes_sent", 256, 60));
	ASSERT_EQ(0, rl_on(1, "ip link set eth0 down"));
	ASSERT_TRUE(rl_wait_peer(2, 1, "conn_state", "unreachable", 20));
	ASSERT_TRUE(rl_wait_peer(3, 1, "conn_state", "unreachable", 20));
	rl_on(1, "pkill -KILL -x fio; true");

	ASSERT_EQ(0, rl_on(2, "%s volume role " RL_VOL " owner --epoch %d >/dev/null",
			   rl_ctl(), EPOCH + 1));
	ASSERT_TRUE(rl_wait_peer(2, 3, "conn_state", "connected", 60));
	ASSERT_TRUE(rl_wait_peer(2, 3, "repl_state", "up-to-date", 120));
	EXPECT_LT(0, rl_peer_u64(2, 3, "resynced_bytes"))
		TH_LOG("the new owner resynced nothing to the other replica");

	ASSERT_EQ(0, rl_on(1, "%s writeset remove " RL_VOL " 2 >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(1, "%s writeset remove " RL_VOL " 3 >/dev/null", rl_ctl()));
	waitpid(fio, NULL, 0);
	self->env.npids = 0;
	ASSERT_EQ(0, rl_on(1, "%s volume role " RL_VOL " replica >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(1, "ip link set eth0 up"));
	ASSERT_TRUE(rl_wait_peer(2, 1, "repl_state", "up-to-date", 120));
	TH_LOG("resynced to vm3: %llu bytes, to vm1: %llu bytes",
	       (unsigned long long)rl_peer_u64(2, 3, "resynced_bytes"),
	       (unsigned long long)rl_peer_u64(2, 1, "resynced_bytes"));
	replicas_identical();
}

/* Non-zero bytes in the 64 KiB at @mib MiB of @vm's backing device. */
static long nonzero_at(int vm, int mib)
{
	char out[64];

	if (rl_on_out(vm, out, sizeof(out), "dd if=" RL_BACKING " bs=64k count=1 skip=%d "
		      "iflag=direct status=none | tr -d '\\000' | wc -c", mib * 16))
		return -1;
	return strtol(out, NULL, 10);
}

/*
 * The activity log reaches every member that may become the next owner.
 * vm2 is cut off; vm1 writes to an extent outside its log. That write
 * must wait until vm2 has the log (or leaves the write set): were it
 * sent to vm3 and written on vm1 while vm2's log lacked the extent, vm2
 * as next owner would resync neither, and the replicas would differ in a
 * block no application was told was written. vm1 is then cut off too,
 * vm2 takes over, vm1 steps down (its waiting write fails) and rejoins.
 */
TEST_F_TIMEOUT(repl3, new_extent_waits_for_an_unreachable_member, 400)
{
	const int mib = 40;	/* an extent nothing wrote before */
	char dd_state[4096] = "";
	bool dd_ended;

	if (!strcmp(variant->transport, "rdma"))
		SKIP(return, "soft-RoCE: a DREQ sent on a down link never completes");
	start3();
	ASSERT_EQ(0, rl_on(1, FIO "--rw=write --bs=64k --size=1M >/dev/null"));
	ASSERT_EQ(0, rl_on(2, "ip link set eth0 down"));
	ASSERT_TRUE(rl_wait_peer(1, 2, "conn_state", "unreachable", 20));

	ASSERT_EQ(0, rl_on(1, "setsid dd if=/dev/urandom of=/dev/chorus0 bs=64k count=1 "
			   "seek=%d oflag=direct </dev/null >/dev/null 2>&1 &", mib * 16));
	sleep(3);
	EXPECT_EQ(0, nonzero_at(3, mib))
		TH_LOG("the write to a new extent reached vm3 while vm2 lacked the log");
	EXPECT_EQ(0, rl_on(1, "dmesg | grep -q 'writes to a new extent wait'"));
	/* Shown as held for vm2, waiting for its log; nothing waits for vm3. */
	EXPECT_LE(1, rl_peer_u64(1, 2, "al_waiting"));
	EXPECT_LE(rl_peer_u64(1, 2, "al_waiting"), rl_peer_u64(1, 2, "held"));
	EXPECT_EQ(0, rl_peer_u64(1, 3, "al_waiting"));
	EXPECT_EQ(0, rl_peer_u64(1, 3, "held"));

	/* vm1 is lost as well; vm2 becomes owner with vm3. */
	ASSERT_EQ(0, rl_on(1, "ip link set eth0 down"));
	ASSERT_TRUE(rl_wait_peer(3, 1, "conn_state", "unreachable", 20));
	ASSERT_EQ(0, rl_on(2, "ip link set eth0 up"));
	ASSERT_EQ(0, rl_on(2, "%s volume role " RL_VOL " owner --epoch %d >/dev/null",
			   rl_ctl(), EPOCH + 1));
	ASSERT_TRUE(rl_wait_peer(2, 3, "repl_state", "up-to-date", 120));

	/* vm1 steps down: the waiting write fails, nothing of it was written. */
	ASSERT_EQ(0, rl_on(1, "%s volume role " RL_VOL " replica >/dev/null", rl_ctl()));
	/*
	 * 10 s of the guest's clock, longer on the debug kernel (it took more
	 * than 10 s there; counted in rounds of pgrep instead, at stop 58 the
	 * wait lasted 17 minutes and dd was still there: its state is logged).
	 */
	dd_ended = !rl_on(1, "end=$(($(date +%%s) + %u)); while [ $(date +%%s) -lt $end ]; do "
			  "pgrep -x dd >/dev/null || exit 0; sleep 0.2; done; exit 1",
			  10 * rl_scale());
	if (!dd_ended)
		rl_on_out(1, dd_state, sizeof(dd_state), "ps -o pid,ppid,stat,wchan:32,args -C dd; "
			  "for p in $(pgrep -x dd); do cat /proc/$p/stack; done; true");
	EXPECT_TRUE(dd_ended) TH_LOG("the waiting write did not end: %s", dd_state);
	EXPECT_EQ(0, rl_peer_u64(1, 2, "al_waiting"));
	ASSERT_EQ(0, rl_on(1, "ip link set eth0 up"));
	ASSERT_TRUE(rl_wait_peer(2, 1, "repl_state", "up-to-date", 120));
	EXPECT_EQ(0, nonzero_at(1, mib));
	replicas_identical();
}

/* Waits up to @timeout_s for @log to have at least @n lines. */
static bool lines_reach(const char *log, int n, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL;

	while (lines_of(log) < n && now_ms() < end)
		usleep(250 * 1000);
	return lines_of(log) >= n;
}

/* Starts ack_writer on @vm's device: @blocks blocks from @first, logged to @log. */
static void __start_fwd_writer(struct __test_metadata *_metadata, int vm, const char *log,
			       int first, int blocks)
{
	unlink(log);
	/* Held from the cut until the new owner takes it: longer on the debug kernel. */
	ASSERT_EQ(0, rl_on(vm, "echo %u > /sys/module/chorus/parameters/forward_timeout_ms",
			   60000 * rl_scale()));
	ASSERT_EQ(0, rl_on(vm, "setsid python3 %s/tests/selftests/ack_writer.py write /dev/chorus0 "
			   "%s --first %d --blocks %d >/dev/null 2>&1 </dev/null &", chorus_src(), log,
			   first, blocks));
	ASSERT_TRUE(lines_reach(log, 50, 60)) TH_LOG("the writer on vm%d is stuck", vm);
}

/* After the owner change: @vm's writer went on without an error, nothing expired. */
static void __fwd_writer_went_on(struct __test_metadata *_metadata, int vm, const char *log,
				 int before)
{
	EXPECT_TRUE(lines_reach(log, before + 50, 60)) TH_LOG("vm%d's writes did not go on", vm);
	EXPECT_EQ(0, rl_on(vm, "pgrep -f ack_writer.py >/dev/null"))
		TH_LOG("the writer on vm%d died: a write failed across the owner change", vm);
	EXPECT_EQ(0, rl_cmd_u64(vm, "cat /sys/block/chorus0/chorus/forward_expired"));
}

/*
 * vm2 and vm3 are access points: a writer on each device (disjoint blocks)
 * logs every acknowledged write to the lab dir (ack_writer.py), all of
 * them forwarded to vm1. vm1 is cut off; what they had forwarded to it is
 * held. vm2 becomes the owner at a higher epoch and takes vm1 out of its
 * write set: vm3's held writes go to vm2 under the new epoch, vm2's own
 * are started on vm2 as the owner's writes; both writers go on without an
 * error, and every acknowledged write reads back through vm2. vm1 returns
 * as a replica and all three disks end identical.
 */
TEST_F_TIMEOUT(repl3, access_point_follows_the_owner_change, 400)
{
	char log[512], log2[512], out[256];
	int before, before2;

	if (!strcmp(variant->transport, "rdma"))
		SKIP(return, "soft-RoCE: a DREQ sent on a down link never completes");
	snprintf(log, sizeof(log), "%s/vm1/fwd3-acked-%d.log", getenv("LAB_DIR"), getpid());
	snprintf(log2, sizeof(log2), "%s/vm1/fwd2-acked-%d.log", getenv("LAB_DIR"), getpid());
	start3();
	__start_fwd_writer(_metadata, 3, log, 0, 2048);
	__start_fwd_writer(_metadata, 2, log2, 2048, 1024);

	ASSERT_EQ(0, rl_on(1, "ip link set eth0 down"));
	ASSERT_TRUE(rl_wait_peer(3, 1, "conn_state", "unreachable", 20));
	ASSERT_TRUE(rl_wait_peer(2, 1, "conn_state", "unreachable", 20));
	before = lines_of(log);
	before2 = lines_of(log2);
	ASSERT_EQ(0, rl_on(2, "%s volume role " RL_VOL " owner --epoch %d >/dev/null",
			   rl_ctl(), EPOCH + 1));
	ASSERT_EQ(0, rl_on(2, "%s writeset remove " RL_VOL " 1 >/dev/null", rl_ctl()));
	__fwd_writer_went_on(_metadata, 3, log, before);
	__fwd_writer_went_on(_metadata, 2, log2, before2);
	EXPECT_LE(1, rl_cmd_u64(3, "cat /sys/block/chorus0/chorus/forward_resent"))
		TH_LOG("nothing vm3 held went to the new owner");
	EXPECT_EQ(0, rl_on(2, "dmesg | grep -q 'forwarded requests started here, the owner now'"))
		TH_LOG("vm2 held nothing for the old owner when it became the owner");
	rl_on(3, "pkill -f ack_writer.py; true");
	rl_on(2, "pkill -f ack_writer.py; sleep 1; true");
	EXPECT_EQ(0, rl_on_out(2, out, sizeof(out), "python3 %s/tests/selftests/ack_writer.py "
			       "verify /dev/chorus0 %s 2>&1", chorus_src(), log))
		TH_LOG("vm2: %s", out);
	TH_LOG("vm3's writes, read on vm2: %s", out);
	EXPECT_EQ(0, rl_on_out(2, out, sizeof(out), "python3 %s/tests/selftests/ack_writer.py "
			       "verify /dev/chorus0 %s 2>&1", chorus_src(), log2))
		TH_LOG("vm2: %s", out);
	TH_LOG("vm2's writes, read on vm2: %s", out);

	ASSERT_EQ(0, rl_on(1, "%s volume role " RL_VOL " replica >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(1, "ip link set eth0 up"));
	ASSERT_TRUE(rl_wait_peer(2, 1, "repl_state", "up-to-date", 120));
	ASSERT_TRUE(rl_wait_peer(2, 3, "repl_state", "up-to-date", 120));
	replicas_identical();
	unlink(log);
	unlink(log2);
}

/*
 * Two access points, vm2 and vm3, write the same 64 KiB at once (fio, four
 * jobs each): their overlapping writes are ordered by the owner, and all
 * three replicas end identical.
 */
TEST_F_TIMEOUT(repl3, two_access_points_overlapping_writes_identical, 300)
{
	pid_t a, b;
	int st;

	start3();
	a = rl_fio_background(&self->env, 2, "--rw=randwrite --bsrange=4k-64k --iodepth=8 "
			      "--numjobs=4 --offset=1M --size=64k --io_size=2M --randrepeat=0");
	b = rl_fio_background(&self->env, 3, "--rw=randwrite --bsrange=4k-64k --iodepth=8 "
			      "--numjobs=4 --offset=1M --size=64k --io_size=2M --randrepeat=0");
	ASSERT_LT(0, a);
	ASSERT_LT(0, b);
	ASSERT_EQ(a, waitpid(a, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("fio on vm2 failed");
	ASSERT_EQ(b, waitpid(b, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("fio on vm3 failed");
	self->env.npids = 0;
	EXPECT_LT(100, rl_cmd_u64(2, "cat /sys/block/chorus0/chorus/forwarded"));
	EXPECT_LT(100, rl_cmd_u64(3, "cat /sys/block/chorus0/chorus/forwarded"));
	replicas_identical();
}

CHORUS_HARNESS_MAIN
