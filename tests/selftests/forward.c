// SPDX-License-Identifier: GPL-2.0
/*
 * forward: a node that is not the owner serves its block device by
 * forwarding every request to the owner (kernel/forward.c), 2 VMs.
 *
 * vm1, where this binary runs, is the owner (epoch 5); vm2 is the replica
 * and the access point under test: everything is written and read through
 * vm2's /dev/chorus0. Each case checks the data on both replicas' backing
 * devices, not only exit codes, and ends with vm2's module unloaded with
 * its session up. The data path runs over TCP and over RDMA (what differs:
 * the forwarded write's pages and the READ_DATA answer, whose pages the
 * owner frees when the send returns); the failure cases are decided above
 * the transport and run over TCP.
 */
#include "common.h"
#include "repl_lab.h"

#define PEER		2
#define VOL		RL_VOL
#define SIZE_MB		RL_SIZE_MB
#define EPOCH		5
#define MNT		"/mnt/chorus-fwd"
#define FWD_PARAM	"/sys/module/chorus/parameters/forward_timeout_ms"

FIXTURE(forward) {
	struct chorus_env env;
	char acked[512];	/* the file workload's acknowledgements, on the host */
};

FIXTURE_VARIANT(forward) {
	const char *transport;
	const char *check_cases;	/* see chorus_in_check_lane() */
};

FIXTURE_VARIANT_ADD(forward, tcp) {
	.transport = "tcp",
	/*
	 * All but four. ext4 on an access point with a disk: the diskless case
	 * runs ext4 through forwarding (every read and write goes to the
	 * owner, as on an access point with a disk) and fio verify covers the
	 * write coming back to the access point's own replica. The failed
	 * write never delivered later: it passes without the abort too (most
	 * likely the owner's session sees the FIN right behind the write and
	 * serves nothing from a failed session), so it guards the property,
	 * not the fix. The owner created again at its epoch: about a minute
	 * for an operator's mistake that chorusd never makes (it always gives
	 * a new owner a new epoch). The step-down by SET_ROLE past the
	 * deadline: the handshake's hand-over (fenced_owner_hands_over_…) runs
	 * the same restart.
	 */
	.check_cases = "access_point_fio_verify owner_unreachable_write_held_then_resent "
		       "owner_destroyed_while_serving_a_held_write "
		       "owner_destroyed_with_a_served_write_its_lease_holds "
		       "stale_forwarded_write_fails_never_overwrites "
		       "queued_write_times_out_from_its_arrival "
		       "fenced_owner_hands_over_to_a_higher_epoch "
		       "handed_over_write_past_its_deadline_fails_never_lands "
		       "diskless_access_point_fio_ext4 stalled_connection_fails_the_session",
};

FIXTURE_VARIANT_ADD(forward, rdma) {
	.transport = "rdma",
	.check_cases = "access_point_fio_verify",	/* the diskless case: TCP's */
};

FIXTURE_SETUP(forward)
{
	const char *count = getenv("CHORUS_VM_COUNT"), *lab = getenv("LAB_DIR");
	int vm;

	CHORUS_CHECK_LANE(variant->check_cases);
	env_setup(_metadata, &self->env, false);
	ASSERT_TRUE(count && atoi(count) >= 2 && this_vm() == 1 && lab)
		TH_LOG("needs a lab of 2 VMs and to run on vm1");
	snprintf(self->acked, sizeof(self->acked), "%s/vm1/fwd-acked-%d.log", lab, getpid());
	if (!rl_vm_alive(PEER))
		ASSERT_EQ(0, rl_vm_start(PEER, NULL, NULL));
	ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[0], PEER, _metadata->name));
	self->env.nremote = 1;
	for (vm = 1; vm <= 2; vm++) {
		rl_on(vm, "umount " MNT " 2>/dev/null; true");
		rl_node_down(vm);
	}
	rl_start_pair(variant->transport, 1, EPOCH);
}

FIXTURE_TEARDOWN(forward)
{
	int rc;

	rl_on(PEER, "ip link set eth0 up; tc qdisc del dev eth0 root 2>/dev/null; "
	      "umount " MNT " 2>/dev/null; true");
	run("pkill -f 'ack_writer[.]py' && sleep 1; true");
	run("tc qdisc del dev eth0 root 2>/dev/null; umount " MNT " 2>/dev/null; rm -f %s; true",
	    self->acked);
	/* Unload with the session up: both sides must let go. */
	rc = rl_on(PEER, "if [ -d /sys/module/chorus ]; then %s volume destroy " VOL
		   " && rmmod chorus; fi", rl_ctl());
	env_teardown(_metadata, &self->env);
	rl_node_down(PEER);
	EXPECT_EQ(0, rc) TH_LOG("destroy or rmmod on vm2 failed");
}

/* A counter of /sys/block/chorus0/chorus/ on @vm. */
#define fwd_counter(vm, name) rl_cmd_u64(vm, "cat /sys/block/chorus0/chorus/" name)
#define replicas_identical() rl_pair_identical()

/* The 4 KiB block at @off_mb MiB of @dev on @vm is filled with byte @byte. */
static bool block_is(int vm, const char *dev, int off_mb, int byte)
{
	return !rl_on(vm, "dd if=%s bs=4k count=1 skip=%d iflag=direct status=none | "
		      "python3 -c \"import sys; "
		      "sys.exit(sys.stdin.buffer.read() != bytes([%d]) * 4096)\"",
		      dev, off_mb * 256, byte);
}

/* Write 4 KiB of byte @byte at @off MiB of @vm's /dev/chorus0, O_DIRECT. */
#define WRITE_BLOCK "python3 -c \"import os; fd = os.open('/dev/chorus0', os.O_WRONLY | " \
		    "os.O_DIRECT); import mmap; m = mmap.mmap(-1, 4096); " \
		    "m.write(bytes([%d]) * 4096); os.pwrite(fd, m, %d << 20)\""

/*
 * vm2 writes 4 KiB of @byte at @mb MiB in the background, the command run
 * under @prefix (taskset, or ""): *@w is that writer, which exits 0 when its
 * write succeeded.
 */
static void __peer_write(struct __test_metadata *_metadata, FIXTURE_DATA(forward) *self,
			 const char *prefix, int byte, int mb, pid_t *w)
{
	*w = fork();
	if (*w == 0)
		_exit(rl_on(PEER, "%s" WRITE_BLOCK, prefix, byte, mb) ? 1 : 0);
	ASSERT_LT(0, *w);
	env_track_pid(&self->env, *w);
}
#define peer_write(prefix, byte, mb, w) __peer_write(_metadata, self, prefix, byte, mb, w)

/*
 * vm2's forward timeout set to @timeout_ms, its egress cut (every packet
 * dropped), then vm2 writes 4 KiB of @byte at @mb MiB in the background
 * (peer_write()).
 */
static void __cut_then_write(struct __test_metadata *_metadata, FIXTURE_DATA(forward) *self,
			     int timeout_ms, int byte, int mb, pid_t *w)
{
	ASSERT_EQ(0, rl_on(PEER, "echo %d > " FWD_PARAM, timeout_ms));
	ASSERT_EQ(0, rl_on(PEER, "tc qdisc replace dev eth0 root netem loss 100%%"));
	peer_write("", byte, mb, w);
}
#define cut_then_write(ms, byte, mb, w) __cut_then_write(_metadata, self, ms, byte, mb, w)

/*
 * The session is back and vm2's write of @byte at @mb MiB is on both
 * replicas, which are identical.
 */
static void __write_on_both(struct __test_metadata *_metadata, int byte, int mb)
{
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", 30));
	EXPECT_TRUE(block_is(1, RL_BACKING, mb, byte)) TH_LOG("the owner's disk lacks the write");
	EXPECT_TRUE(block_is(PEER, RL_BACKING, mb, byte)) TH_LOG("the replica lacks it");
	replicas_identical();
}
#define write_on_both(byte, mb) __write_on_both(_metadata, byte, mb)

/*
 * ext4 made and used on the access point (vm2): @files changes of
 * fs_workload.py (fsync, rename, directory fsync) from @seed, logged in the
 * lab dir, then unmounted. The owner must find a clean file system with
 * every acknowledged change in it.
 */
static void __ext4_on_access_point(struct __test_metadata *_metadata,
				   FIXTURE_DATA(forward) *self, int files, int seed)
{
	ASSERT_EQ(0, rl_on(PEER, "mkfs.ext4 -q -F /dev/chorus0 && mkdir -p " MNT
			   " && mount /dev/chorus0 " MNT));
	ASSERT_EQ(0, rl_on(PEER, "python3 %s/tests/selftests/fs_workload.py write " MNT
			   " --files %d --seed %d > %s", chorus_src(), files, seed, self->acked))
		TH_LOG("the file workload on the access point failed");
	ASSERT_EQ(0, rl_on(PEER, "umount " MNT));

	EXPECT_EQ(0, run("e2fsck -fn /dev/chorus0 >/dev/null 2>&1"))
		TH_LOG("fsck on the owner is not clean");
	ASSERT_EQ(0, run("mkdir -p " MNT " && mount -o ro /dev/chorus0 " MNT));
	EXPECT_EQ(0, run("python3 %s/tests/selftests/fs_workload.py verify " MNT " %s",
			 chorus_src(), self->acked)) TH_LOG("acknowledged changes are missing");
	ASSERT_EQ(0, run("umount " MNT));
}
#define ext4_on_access_point(files, seed) __ext4_on_access_point(_metadata, self, files, seed)

/*
 * fio with verify on the access point: every write goes to the owner and
 * back to this replica through the write set, every verify read comes from
 * the owner. Both replicas end byte-identical.
 */
TEST_F_TIMEOUT(forward, access_point_fio_verify, 300)
{
	ASSERT_EQ(0, rl_on(PEER, RL_FIO "--rw=randwrite --bsrange=4k-128k --iodepth=16 "
			   "--size=%dM --io_size=16M --verify=crc32c --verify_fatal=1 "
			   ">/dev/null", SIZE_MB))
		TH_LOG("fio on the access point failed");
	EXPECT_LT(100, fwd_counter(PEER, "forwarded")) TH_LOG("vm2 did not forward");
	EXPECT_LT(100, fwd_counter(1, "forward_served")) TH_LOG("vm1 served nothing");
	EXPECT_EQ(0, fwd_counter(PEER, "forward_expired"));
	EXPECT_EQ(0, fwd_counter(1, "forwarded")) TH_LOG("the owner forwarded");
	replicas_identical();
}

/*
 * ext4 made and used on the access point: buffered writes, fsync of files
 * and directories, renames, unmount (flushes, FUA). The owner then finds
 * a clean file system with every acknowledged change in it.
 */
TEST_F_TIMEOUT(forward, access_point_ext4_fsync_rename, 400)
{
	ext4_on_access_point(60, 7);
	EXPECT_LT(0, fwd_counter(PEER, "forwarded"));
	replicas_identical();
}

/*
 * The owner is out of reach for longer than the heartbeat: the access
 * point's session ends, the write it forwarded is held (the application
 * sees no error) and sent again on the next session, once the link is
 * back. It lands on both replicas.
 */
TEST_F_TIMEOUT(forward, owner_unreachable_write_held_then_resent, 300)
{
	pid_t w;
	int st;

	/* Far beyond the cut and the redial: the write must wait, not fail. */
	cut_then_write(120000, 0xa5, 3, &w);
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "unreachable", 20));
	sleep(1);
	EXPECT_EQ(0, waitpid(w, &st, WNOHANG)) TH_LOG("the write completed without an owner");
	ASSERT_EQ(0, rl_on(PEER, "tc qdisc del dev eth0 root"));
	ASSERT_EQ(w, waitpid(w, &st, 0));
	self->env.npids = 0;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("the held write failed");
	EXPECT_LE(1, fwd_counter(PEER, "forward_resent")) TH_LOG("nothing was sent again");
	EXPECT_EQ(0, fwd_counter(PEER, "forward_expired"));
	write_on_both(0xa5, 3);
}

/*
 * One connection of the session stops while the other carries on (how a
 * soft-RoCE queue pair whose sends stopped without an error looked: an
 * RDMA READ behind them never completed, and the writes forwarded behind
 * it waited for good): everything vm2 sends on the connection its CPU 1
 * forwards on is dropped. vm2's write, forwarded on it, waits; vm1's
 * heartbeat, which pings every connection of the session, hears nothing
 * back on that one and fails the session; the next session carries the
 * write again, and it lands on both replicas. (The heartbeat used to ping
 * only the first connection: the session stayed up, the write waited.)
 */
TEST_F_TIMEOUT(forward, stalled_connection_fails_the_session, 300)
{
	uint64_t port;
	char cmd[512];
	pid_t w;
	int st;

	/* vm1's port of the connection a write from vm2's CPU 1 goes on. */
	snprintf(cmd, sizeof(cmd), "%s/tests/selftests/busiest_conn taskset -c 1 dd "
		 "if=/dev/zero of=/dev/chorus0 bs=64k count=32 oflag=direct status=none",
		 chorus_src());
	port = rl_cmd_u64(PEER, cmd);
	ASSERT_TRUE(port > 0 && port < 65536) TH_LOG("no connection to vm1 found on vm2");
	ASSERT_EQ(0, rl_on(PEER, "tc qdisc replace dev eth0 root handle 1: prio bands 3 && "
			   "tc qdisc add dev eth0 parent 1:3 handle 30: netem loss 100%% && "
			   "tc filter add dev eth0 parent 1: protocol ip prio 1 u32 "
			   "match ip dst 10.99.0.1/32 match ip dport %llu 0xffff flowid 1:3",
			   (unsigned long long)port))
		TH_LOG("cannot filter vm2's egress (sch_prio, cls_u32, sch_netem)");
	peer_write("taskset -c 1 ", 0x3c, 5, &w);
	ASSERT_TRUE(rl_wait_pid(w, &st, 30)) TH_LOG("the write on the stalled connection waits");
	self->env.npids = 0;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("the write failed");
	EXPECT_LE(1, fwd_counter(PEER, "forward_resent")) TH_LOG("nothing was sent again");
	ASSERT_EQ(0, rl_on(PEER, "tc qdisc del dev eth0 root"));
	write_on_both(0x3c, 5);
}

/*
 * vm1's IPv4 packets to vm2 that carry data dropped, its bare ACKs (an IP
 * length under 64 bytes; every chorus message is longer) and ARP let
 * through: vm2's segments are still acknowledged, so its TCP never backs
 * off behind a segment vm1 did not acknowledge (netem on all of vm1's
 * egress did that, and vm2's write then never reached vm1), while nothing
 * vm1 sends to vm2 arrives. Band 1 takes the ACKs, band 3 (netem) the
 * rest, ARP goes by the priomap to band 2.
 */
#define CUT_VM1_DATA_TO_VM2 \
	"tc qdisc replace dev eth0 root handle 1: prio bands 3 && " \
	"tc qdisc add dev eth0 parent 1:3 handle 30: netem loss 100%% && " \
	"tc filter add dev eth0 parent 1: protocol ip prio 1 u32 " \
	"match ip dst 10.99.0.2/32 match u16 0 0xffc0 at 2 flowid 1:1 && " \
	"tc filter add dev eth0 parent 1: protocol ip prio 2 u32 " \
	"match ip dst 10.99.0.2/32 flowid 1:3"

/*
 * The owner's volume is destroyed while it serves a write for the access
 * point that it cannot replicate. What vm1 sends to vm2 is dropped
 * (CUT_VM1_DATA_TO_VM2), with ping and request timeouts of a minute on
 * both sides so that neither ends the session first: vm2's write arrives
 * and vm1 serves it, but its copy to vm2 and the answer cannot leave. Then
 * vm1's ping timeout is shortened: vm2 is unreachable, the write held for
 * it. The destroy fails it and returns (it used to wait for it for good, a
 * hung task). vm2, whose owner is gone, fails its write after the forward
 * timeout, and the block is on neither disk.
 */
TEST_F_TIMEOUT(forward, owner_destroyed_while_serving_a_held_write, 300)
{
	uint64_t t0, end;
	pid_t w;
	int st, vm;

	if (!strcmp(variant->transport, "rdma"))
		SKIP(return, "soft-RoCE: vm2's write never reached the cut-off vm1 (its reliable "
		     "connection waits for the ACKs netem drops); the destroy path is the same");
	ASSERT_EQ(0, rl_on(PEER, "echo 15000 > " FWD_PARAM));
	/*
	 * vm2 pings rarely: each of its pings vm1 receives keeps vm2 reachable
	 * for vm1's ping timeout, which is to be shortened below.
	 */
	for (vm = 1; vm <= 2; vm++)
		ASSERT_EQ(0, rl_on(vm, "%s volume set " VOL " --ping-interval-ms %d "
				   "--ping-timeout-ms 60000 --request-timeout-ms 60000 >/dev/null",
				   rl_ctl(), vm == PEER ? 30000 : 500));
	ASSERT_EQ(0, run(CUT_VM1_DATA_TO_VM2)) TH_LOG("cannot filter vm1's egress (sch_prio, "
						     "cls_u32, sch_netem)");
	w = fork();
	if (w == 0)
		_exit(rl_on(PEER, WRITE_BLOCK, 0x5a, 7) ? 1 : 0);
	ASSERT_LT(0, w);
	env_track_pid(&self->env, w);
	end = now_ms() + 30000ULL * rl_scale();
	while (fwd_counter(1, "forward_served") < 1 && now_ms() < end)
		usleep(200 * 1000);
	ASSERT_LE(1, fwd_counter(1, "forward_served")) TH_LOG("vm2's write never reached vm1");
	/* Now vm1 gives vm2 up: the write is held for an unreachable peer. */
	ASSERT_EQ(0, run("%s volume set " VOL " --ping-timeout-ms 1000 >/dev/null", rl_ctl()));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "unreachable", 20));
	t0 = now_ms();
	EXPECT_EQ(0, run("timeout 60 %s volume destroy " VOL " >/dev/null", rl_ctl()))
		TH_LOG("the destroy failed or hung");
	TH_LOG("destroy with a served write held: %llu ms", (unsigned long long)(now_ms() - t0));
	ASSERT_EQ(0, run("tc qdisc del dev eth0 root"));
	ASSERT_EQ(w, waitpid(w, &st, 0));
	self->env.npids = 0;
	EXPECT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("vm2's write succeeded with its owner gone");
	EXPECT_LE(1, fwd_counter(PEER, "forward_expired"));
	/* vm1 wrote it (served, never acknowledged); vm2 got no copy. */
	EXPECT_TRUE(block_is(PEER, RL_BACKING, 7, 0)) TH_LOG("vm2 has the failed write");
}

/*
 * The owner's lease has expired (its control plane lost etcd): it holds
 * what it serves for vm2 as it holds its own I/O. Destroying the volume
 * then fails the held write and returns (it used to wait for it for good,
 * a hung task); vm2's write fails, and the block is on neither disk.
 */
TEST_F_TIMEOUT(forward, owner_destroyed_with_a_served_write_its_lease_holds, 300)
{
	uint64_t t0, end;
	char held[4352];	/* rl_ctl() is a path */
	pid_t w;
	int st;

	ASSERT_EQ(0, run("%s lease set --valid-for 0 >/dev/null", rl_ctl()));
	w = fork();
	if (w == 0)
		_exit(rl_on(PEER, WRITE_BLOCK, 0x3c, 6) ? 1 : 0);
	ASSERT_LT(0, w);
	env_track_pid(&self->env, w);
	snprintf(held, sizeof(held), "%s volume status " VOL " --json | jq -r .held_io", rl_ctl());
	end = now_ms() + 30000ULL * rl_scale();
	while (rl_cmd_u64(1, held) != 1 && now_ms() < end)
		usleep(200 * 1000);
	ASSERT_EQ(1, rl_cmd_u64(1, held)) TH_LOG("the owner does not hold vm2's write");
	t0 = now_ms();
	EXPECT_EQ(0, run("timeout 60 %s volume destroy " VOL " >/dev/null", rl_ctl()))
		TH_LOG("the destroy failed or hung");
	TH_LOG("destroy with a served write held by the lease: %llu ms",
	       (unsigned long long)(now_ms() - t0));
	ASSERT_EQ(w, waitpid(w, &st, 0));
	self->env.npids = 0;
	EXPECT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("vm2's write succeeded with its owner gone");
	EXPECT_TRUE(block_is(1, RL_BACKING, 6, 0)) TH_LOG("vm1's disk has the failed write");
	EXPECT_TRUE(block_is(PEER, RL_BACKING, 6, 0)) TH_LOG("vm2's disk has the failed write");
}

/*
 * The stale write a multipath host leaves behind (spdk/spdk#3593): a write
 * forwarded by vm2 while the owner is out of reach, and a newer write to
 * the same block that reaches the owner another way (as a host resends on
 * another path once this one timed out). The forwarded one fails after the
 * forward timeout instead of going to the owner when the link returns, so
 * it never overwrites the newer one: both replicas end with the newer data.
 */
TEST_F_TIMEOUT(forward, stale_forwarded_write_fails_never_overwrites, 300)
{
	pid_t w;
	int st;

	cut_then_write(3000, 0x11, 5, &w);
	/* The control plane takes the unreachable replica out; the new write. */
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "unreachable", 20));
	ASSERT_EQ(0, run("%s writeset remove " VOL " %d >/dev/null", rl_ctl(), PEER));
	ASSERT_EQ(0, run(WRITE_BLOCK, 0x22, 5));

	ASSERT_EQ(w, waitpid(w, &st, 0));
	self->env.npids = 0;
	EXPECT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("the forwarded write succeeded with no owner in reach");
	EXPECT_LE(1, fwd_counter(PEER, "forward_expired"));
	ASSERT_EQ(0, rl_on(PEER, "tc qdisc del dev eth0 root"));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 60));
	sleep(2);	/* a resend, if there were one, would have landed by now */
	EXPECT_TRUE(block_is(1, RL_BACKING, 5, 0x22)) TH_LOG("the newer write was overwritten");
	EXPECT_TRUE(block_is(PEER, RL_BACKING, 5, 0x22)) TH_LOG("the replica lacks the newer write");
	replicas_identical();
}

/* Wait up to @timeout_s (scaled) until vm1 holds at least @n requests. */
static bool vm_holds(int vm, unsigned int n, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();
	char held[4352];	/* rl_ctl() is a path */

	snprintf(held, sizeof(held), "%s volume status " VOL " --json | jq -r .held_io", rl_ctl());
	while (rl_cmd_u64(vm, held) < n && now_ms() < end)
		usleep(200 * 1000);
	return rl_cmd_u64(vm, held) >= n;
}
#define vm1_holds(n, timeout_s) vm_holds(1, n, timeout_s)

/* Wait up to @timeout_s (scaled) until @log has at least @n lines. */
static bool acks_reach(const char *log, int n, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();

	while (lines_of(log) < n && now_ms() < end)
		usleep(250 * 1000);
	return lines_of(log) >= n;
}

/* Wait up to @timeout_s (scaled) until @log has not grown for @quiet_s. */
static bool acks_stall(const char *log, int quiet_s, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();
	int before;

	do {
		before = lines_of(log);
		sleep(quiet_s);
		if (lines_of(log) == before)
			return true;
	} while (now_ms() < end);
	return false;
}

#define ACK_WRITER "setsid python3 %s/tests/selftests/ack_writer.py write /dev/chorus0 %s " \
		   "--blocks 1024 --first %d >/dev/null 2>&1 </dev/null &"
#define ACK_VERIFY "python3 %s/tests/selftests/ack_writer.py verify %s %s 2>&1"

/*
 * An owner past its lease deadline that steps down, as chorusd does once
 * it finds another node owns the volume, hands over what it holds. vm1,
 * the owner, writes with two ack_writer.py (O_DSYNC, one write in flight
 * each); its deadline passes and the writes stall, held; vm1 becomes a
 * replica, then vm2 the owner at a higher epoch (the other order is the
 * handshake's hand-over, fenced_owner_hands_over_…). Until stop 45 the held
 * writes failed at the step-down, and the writers died of the I/O error; now
 * they start again, forwarded to vm2, and the writers go on through vm1
 * as an access point. vm1 acknowledged nothing while it was held, every
 * acknowledged write is on both disks once vm1 is resynced, and the disks
 * match.
 */
TEST_F_TIMEOUT(forward, expired_owner_steps_down_and_hands_its_writes_over, 300)
{
	char out[512], acked2[600];
	int held;

	snprintf(acked2, sizeof(acked2), "%s.2", self->acked);
	/* The default, scaled: the debug kernel took 37 s from the deadline to the step-down. */
	ASSERT_EQ(0, run("echo %u > " FWD_PARAM, 20000 * rl_scale()));
	ASSERT_EQ(0, run(ACK_WRITER, chorus_src(), self->acked, 0));
	ASSERT_EQ(0, run(ACK_WRITER, chorus_src(), acked2, 1024));
	ASSERT_TRUE(acks_reach(self->acked, 50, 60)) TH_LOG("the writer is stuck");
	ASSERT_TRUE(acks_reach(acked2, 50, 60)) TH_LOG("the second writer is stuck");
	ASSERT_EQ(0, run("%s lease set --valid-for 1000 >/dev/null", rl_ctl()));
	ASSERT_TRUE(acks_stall(self->acked, 3, 30)) TH_LOG("vm1 went on writing past its deadline");
	ASSERT_TRUE(acks_stall(acked2, 1, 30));
	held = lines_of(self->acked) + lines_of(acked2);
	EXPECT_TRUE(vm1_holds(1, 5)) TH_LOG("vm1 holds none of its writes");

	/* Before any owner: once there is one, the handshake hands over. */
	ASSERT_EQ(0, run("%s volume role " VOL " replica >/dev/null", rl_ctl()));
	sleep(2);
	EXPECT_EQ(held, lines_of(self->acked) + lines_of(acked2))
		TH_LOG("vm1 acknowledged writes with no owner anywhere");
	ASSERT_EQ(0, rl_on(PEER, "%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(),
			   EPOCH + 1));
	EXPECT_TRUE(acks_reach(self->acked, lines_of(self->acked) + 50, 60))
		TH_LOG("the writer did not go on through vm2");
	EXPECT_TRUE(acks_reach(acked2, lines_of(acked2) + 50, 60))
		TH_LOG("the second writer did not go on through vm2");
	EXPECT_EQ(0, run("test $(pgrep -fc 'ack_writer[.]py') = 2"))
		TH_LOG("a writer died: an I/O error reached it");
	run("pkill -f 'ack_writer[.]py'; sleep 1");
	EXPECT_EQ(0, run_out(out, sizeof(out), "dmesg | grep -o '" VOL ": role replica, epoch %d: "
			     "handed over past the lease deadline.*'", EPOCH))
		TH_LOG("no hand-over in vm1's log");
	TH_LOG("%d writes acknowledged before the deadline, %d in all; vm1: %s", held,
	       lines_of(self->acked) + lines_of(acked2), out);
	EXPECT_LT(0, fwd_counter(1, "forwarded")) TH_LOG("vm1 forwarded nothing");

	ASSERT_TRUE(rl_wait_peer(PEER, 1, "repl_state", "up-to-date", 120));
	EXPECT_EQ(0, run_out(out, sizeof(out), ACK_VERIFY, chorus_src(), RL_BACKING,
			     self->acked)) TH_LOG("vm1's disk: %s", out);
	EXPECT_EQ(0, run_out(out, sizeof(out), ACK_VERIFY, chorus_src(), RL_BACKING, acked2))
		TH_LOG("vm1's disk, second writer: %s", out);
	EXPECT_EQ(0, rl_on_out(PEER, out, sizeof(out), ACK_VERIFY, chorus_src(), RL_BACKING,
			       self->acked)) TH_LOG("vm2's disk: %s", out);
	EXPECT_EQ(0, rl_on_out(PEER, out, sizeof(out), ACK_VERIFY, chorus_src(), RL_BACKING,
			       acked2)) TH_LOG("vm2's disk, second writer: %s", out);
	replicas_identical();
	run("rm -f %s; %s lease set --disarm >/dev/null", acked2, rl_ctl());
}

/* Wait up to @timeout_s (scaled) until @vm is a replica at @epoch. */
static bool becomes_replica(int vm, int epoch, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();
	char cmd[4352], want[64], out[64] = "";

	snprintf(cmd, sizeof(cmd), "%s volume status " VOL " --json | jq -r '\"\\(.role) \\(.epoch)\"'",
		 rl_ctl());
	snprintf(want, sizeof(want), "replica %d", epoch);
	do {
		if (!rl_on_out(vm, out, sizeof(out), "%s", cmd) && !strcmp(out, want))
			return true;
		usleep(250 * 1000);
	} while (now_ms() < end);
	fprintf(stderr, "# vm%d is \"%s\", not \"%s\"\n", vm, out, want);
	return false;
}

#define FWD_KEYS	"/run/chorus-fwd-auth"

/* `auth set` on @vm with a secret made of @word. */
static int fwd_auth_set(int vm, const char *word)
{
	return rl_on(vm, "mkdir -p " FWD_KEYS " && umask 077 && "
		     "printf %%s 'chorus-forward-selftest-%s-0123456789' > " FWD_KEYS "/%s.key && "
		     "%s auth set --secret-file " FWD_KEYS "/%s.key >/dev/null",
		     word, word, rl_ctl(), word);
}

/*
 * An owner past its lease deadline hands over, with no command, as soon
 * as a handshake proves another node owns the volume at a higher epoch
 * (Documentation/proposals/fenced-owner-handover.md; the trigger chorusd
 * cannot give while it is stopped). First without a peer secret: vm1
 * holds its writer's writes, vm2 becomes the owner at EPOCH + 1 and ends
 * its sessions; vm1, which dials, is refused as a stale owner, and the
 * refusal's hello is the evidence. Then with a secret, the other way: vm2
 * holds, vm1 becomes the owner at EPOCH + 2 and dials; vm2 checks vm1's
 * proof first, so while vm1 has another secret vm2 stays the owner and
 * holds. Each time the writer goes on through the node that was the
 * owner, which acknowledged nothing while it held, and every acknowledged
 * write is on both disks, which match.
 */
TEST_F_TIMEOUT(forward, fenced_owner_hands_over_to_a_higher_epoch, 300)
{
	char out[512], acked2[600];
	int held;

	snprintf(acked2, sizeof(acked2), "%s.2", self->acked);
	/* Held writes wait out vm1's back-off with the wrong secret, up to 5 s. */
	ASSERT_EQ(0, run("echo %u > " FWD_PARAM, 40000 * rl_scale()));
	ASSERT_EQ(0, rl_on(PEER, "echo %u > " FWD_PARAM, 40000 * rl_scale()));
	ASSERT_EQ(0, run(ACK_WRITER, chorus_src(), self->acked, 0));
	ASSERT_TRUE(acks_reach(self->acked, 50, 60)) TH_LOG("the writer is stuck");
	ASSERT_EQ(0, run("%s lease set --valid-for 1000 >/dev/null", rl_ctl()));
	ASSERT_TRUE(acks_stall(self->acked, 3, 30)) TH_LOG("vm1 went on writing past its deadline");
	held = lines_of(self->acked);
	EXPECT_TRUE(vm1_holds(1, 5)) TH_LOG("vm1 holds none of its writes");
	ASSERT_EQ(0, rl_on(PEER, "%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(),
			   EPOCH + 1));
	EXPECT_TRUE(becomes_replica(1, EPOCH + 1, 20)) TH_LOG("vm1 did not hand over");
	EXPECT_TRUE(acks_reach(self->acked, held + 50, 60))
		TH_LOG("vm1's writer did not go on through vm2");
	EXPECT_EQ(0, run_out(out, sizeof(out), "dmesg | grep -o '" VOL ": role replica: "
			     "superseded by peer 2 at epoch %d: handed over.*'", EPOCH + 1))
		TH_LOG("no hand-over in vm1's log");
	TH_LOG("vm1: %d acknowledged before its deadline, %d in all; %s", held,
	       lines_of(self->acked), out);
	run("pkill -f 'ack_writer[.]py'; sleep 1");
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "repl_state", "up-to-date", 120));

	/* The other way, with a secret, and first with another one on vm1. */
	ASSERT_EQ(0, run("%s lease set --disarm >/dev/null", rl_ctl()));	/* it will own */
	ASSERT_EQ(0, fwd_auth_set(PEER, "a"));
	ASSERT_EQ(0, fwd_auth_set(1, "b"));
	ASSERT_EQ(0, rl_on(PEER, ACK_WRITER, chorus_src(), acked2, 1024));
	ASSERT_TRUE(acks_reach(acked2, 50, 60)) TH_LOG("vm2's writer is stuck");
	ASSERT_EQ(0, rl_on(PEER, "%s lease set --valid-for 1000 >/dev/null", rl_ctl()));
	ASSERT_TRUE(acks_stall(acked2, 3, 30)) TH_LOG("vm2 went on writing past its deadline");
	held = lines_of(acked2);
	EXPECT_TRUE(vm_holds(PEER, 1, 5)) TH_LOG("vm2 holds none of its writes");
	ASSERT_EQ(0, run("%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(),
			 EPOCH + 2));
	sleep(4);
	EXPECT_EQ(0, rl_on(PEER, "%s volume status " VOL " --json | jq -e '.role == \"owner\"' "
			   ">/dev/null", rl_ctl())) TH_LOG("vm2 believed an unproven owner");
	EXPECT_EQ(held, lines_of(acked2)) TH_LOG("vm2 acknowledged writes past its deadline");
	ASSERT_EQ(0, fwd_auth_set(1, "a"));
	EXPECT_TRUE(becomes_replica(PEER, EPOCH + 2, 30)) TH_LOG("vm2 did not hand over");
	EXPECT_TRUE(acks_reach(acked2, held + 50, 60))
		TH_LOG("vm2's writer did not go on through vm1");
	EXPECT_EQ(0, rl_on_out(PEER, out, sizeof(out), "dmesg | grep -o '" VOL ": role replica: "
			       "superseded by peer 1 at epoch %d: handed over.*'", EPOCH + 2))
		TH_LOG("no hand-over in vm2's log");
	TH_LOG("vm2: %d acknowledged before its deadline, %d in all; %s", held,
	       lines_of(acked2), out);
	rl_on(PEER, "pkill -f 'ack_writer[.]py'; sleep 1; true");

	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 120));
	EXPECT_EQ(0, run_out(out, sizeof(out), ACK_VERIFY, chorus_src(), RL_BACKING,
			     self->acked)) TH_LOG("vm1's disk: %s", out);
	EXPECT_EQ(0, run_out(out, sizeof(out), ACK_VERIFY, chorus_src(), RL_BACKING, acked2))
		TH_LOG("vm1's disk, vm2's writer: %s", out);
	EXPECT_EQ(0, rl_on_out(PEER, out, sizeof(out), ACK_VERIFY, chorus_src(), RL_BACKING,
			       self->acked)) TH_LOG("vm2's disk: %s", out);
	EXPECT_EQ(0, rl_on_out(PEER, out, sizeof(out), ACK_VERIFY, chorus_src(), RL_BACKING,
			       acked2)) TH_LOG("vm2's disk, vm2's writer: %s", out);
	replicas_identical();
	run("rm -f %s; %s lease set --disarm >/dev/null", acked2, rl_ctl());
	rl_on(PEER, "%s lease set --disarm >/dev/null", rl_ctl());
}

/*
 * A held write handed over past its forward deadline, counted from its
 * arrival, fails and lands nowhere, not even once there is an owner again
 * (rule 2 of forwarding.md's "Stale writes": a multipath host has resent
 * it elsewhere by then). vm1's deadline has passed; it holds a write for
 * 4 s, longer than its forward timeout (3 s), then steps down with no
 * owner anywhere; then vm2 becomes the owner. Until stop 45 the step-down
 * failed the write outright; now it is forwarded and expires
 * (forward_expired), so this also shows it took the forwarding path.
 */
TEST_F_TIMEOUT(forward, handed_over_write_past_its_deadline_fails_never_lands, 300)
{
	pid_t w;
	int st;

	ASSERT_EQ(0, run("echo 3000 > " FWD_PARAM));
	ASSERT_EQ(0, run("%s lease set --valid-for 0 >/dev/null", rl_ctl()));
	w = fork();
	if (w == 0)
		_exit(run(WRITE_BLOCK, 0x6b, 10) ? 1 : 0);
	ASSERT_LT(0, w);
	env_track_pid(&self->env, w);
	ASSERT_TRUE(vm1_holds(1, 20)) TH_LOG("vm1 does not hold its write");
	sleep(4);
	ASSERT_EQ(0, run("%s volume role " VOL " replica >/dev/null", rl_ctl()));
	ASSERT_EQ(w, waitpid(w, &st, 0));
	self->env.npids = 0;
	EXPECT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("the aged write succeeded with no owner anywhere");
	EXPECT_LE(1, fwd_counter(1, "forward_expired")) TH_LOG("it did not expire as a forward");

	ASSERT_EQ(0, rl_on(PEER, "%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(),
			   EPOCH + 1));
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "connected", 60));
	sleep(2);	/* a late send, if there were one, would have landed by now */
	EXPECT_TRUE(block_is(1, RL_BACKING, 10, 0)) TH_LOG("vm1's disk has the failed write");
	EXPECT_TRUE(block_is(PEER, RL_BACKING, 10, 0)) TH_LOG("vm2's disk has the failed write");
	replicas_identical();
	run("%s lease set --disarm >/dev/null", rl_ctl());
}

/*
 * On vm2: dd of 4 KiB of /tmp/fwd-XX (byte 0xXX) at 4 KiB block @seek of
 * /dev/chorus0, in the background; /tmp/fwd-XX.res gets its exit status
 * and when it started and ended (ms since the epoch).
 */
#define TIMED_WRITE "setsid sh -c 's=$(date +%%s%%N); dd if=/tmp/fwd-%02x of=/dev/chorus0 " \
		    "bs=4k seek=%d oflag=direct conv=notrunc status=none 2>/dev/null; " \
		    "echo $? $((s / 1000000)) $(($(date +%%s%%N) / 1000000)) > /tmp/fwd-%02x.res' " \
		    "</dev/null >/dev/null 2>&1 &"

struct timed_write {
	int rc;
	long long start_ms, end_ms;
};

/* The exit status and times of TIMED_WRITE for @byte. */
static struct timed_write timed_write_result(int byte)
{
	struct timed_write w = { .rc = -1 };
	char out[128];

	if (!rl_on_out(PEER, out, sizeof(out), "cat /tmp/fwd-%02x.res", byte))
		sscanf(out, "%d %lld %lld", &w.rc, &w.start_ms, &w.end_ms);
	return w;
}

/*
 * The forward timeout counts from a request's arrival. vm2's link to the
 * owner is cut; vm2 writes 0x11 to a block (held for an owner) and, a
 * second later, 0x33 to the same block, which waits in vm2's range tree
 * behind the first. The first fails after the forward timeout (10 s).
 * The second must fail at its own arrival plus the timeout, not a whole
 * timeout after the first ended: until stop 44 it could be sent
 * up to about twice the timeout after the host submitted it, later than
 * the host's own I/O timeout, after which a multipath host resends it on
 * another path (rule 2 of forwarding.md's "Stale writes"). The bound
 * compares the two writes' durations, so that a slow kernel (the debug
 * one: the first ended 15 s after its start with a timeout of 8 s)
 * moves both alike.
 * Neither write reaches a disk once the link is back.
 */
TEST_F_TIMEOUT(forward, queued_write_times_out_from_its_arrival, 300)
{
	const int timeout_ms = 10000, block = 7 * 256;
	struct timed_write first, queued;

	ASSERT_EQ(0, rl_on(PEER, "rm -f /tmp/fwd-*.res && python3 -c \"for b in (0x11, 0x33): "
			   "open('/tmp/fwd-%%02x' %% b, 'wb').write(bytes([b]) * 4096)\""));
	ASSERT_EQ(0, rl_on(PEER, "echo %d > " FWD_PARAM, timeout_ms));
	ASSERT_EQ(0, rl_on(PEER, "tc qdisc replace dev eth0 root netem loss 100%%"));
	ASSERT_EQ(0, rl_on(PEER, TIMED_WRITE, 0x11, block, 0x11));
	sleep(1);
	ASSERT_EQ(0, rl_on(PEER, TIMED_WRITE, 0x33, block, 0x33));
	ASSERT_EQ(0, rl_on(PEER, "for i in $(seq %u); do test -s /tmp/fwd-33.res && "
			   "test -s /tmp/fwd-11.res && exit 0; sleep 0.5; done; exit 1",
			   100 * rl_scale()))
		TH_LOG("the writes did not end");
	first = timed_write_result(0x11);
	queued = timed_write_result(0x33);
	TH_LOG("first write: status %d after %lld ms; queued write: status %d after %lld ms",
	       first.rc, first.end_ms - first.start_ms, queued.rc, queued.end_ms - queued.start_ms);
	EXPECT_NE(0, first.rc) TH_LOG("the held write succeeded with no owner in reach");
	EXPECT_NE(0, queued.rc) TH_LOG("the queued write succeeded with no owner in reach");
	EXPECT_LE(timeout_ms - 1500, queued.end_ms - queued.start_ms)
		TH_LOG("the queued write failed before the timeout");
	/* Its own wait is not much longer than the first's (a new timeout: about 9 s). */
	EXPECT_GT(timeout_ms / 2, (queued.end_ms - queued.start_ms) -
				  (first.end_ms - first.start_ms))
		TH_LOG("the queued write's forward timeout started after its arrival");
	EXPECT_LE(2, fwd_counter(PEER, "forward_expired"));

	ASSERT_EQ(0, rl_on(PEER, "tc qdisc del dev eth0 root"));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", 60));
	sleep(2);	/* a late send, if there were one, would have landed by now */
	EXPECT_TRUE(block_is(1, RL_BACKING, 7, 0)) TH_LOG("vm1's disk has a failed write");
	EXPECT_TRUE(block_is(PEER, RL_BACKING, 7, 0)) TH_LOG("vm2's disk has a failed write");
	replicas_identical();
}

/*
 * A forwarded write that failed is never delivered later. vm2's egress is
 * cut under a write it forwards; vm2 gives the owner up (ping timeout 2 s),
 * ends its session, fails the write after its forward timeout (3 s) and is
 * told not to dial again, while vm1 keeps the session (timeouts of two
 * minutes) and sends vm2 nothing (a ping a minute: data left unread on
 * vm2's socket would make even a graceful close a reset). Once the link is
 * back, the write still queued on vm2's old connection must not reach vm1:
 * the abort drops it. vm1 never serves it, and neither disk has it. (With
 * a graceful close the orphaned socket retransmits it followed by its FIN,
 * and vm1's session most likely fails on the FIN before the write is
 * served: this passes on a module without the abort as well.)
 */
TEST_F_TIMEOUT(forward, failed_forwarded_write_never_reaches_the_owner_later, 300)
{
	uint64_t served;
	pid_t w;
	int st;

	if (!strcmp(variant->transport, "rdma"))
		SKIP(return, "TCP's: a QP that is destroyed sends nothing more");
	ASSERT_EQ(0, run("%s volume set " VOL " --ping-interval-ms 60000 --ping-timeout-ms 120000 "
			 "--request-timeout-ms 120000 >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(PEER, "%s volume set " VOL " --ping-interval-ms 500 --ping-timeout-ms 2000 "
			   ">/dev/null", rl_ctl()));
	sleep(2);	/* vm1's ping queued at the old interval has gone */
	served = fwd_counter(1, "forward_served");
	cut_then_write(3000, 0x77, 9, &w);
	ASSERT_EQ(w, waitpid(w, &st, 0));
	self->env.npids = 0;
	EXPECT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("the forwarded write succeeded with no owner in reach");
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "unreachable", 20));
	ASSERT_EQ(0, rl_on(PEER, "%s peer disconnect " VOL " 1 >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(PEER, "tc qdisc del dev eth0 root"));
	/* TCP retransmits within its backoff (about 13 s of loss so far). */
	sleep(20);
	EXPECT_EQ(served, fwd_counter(1, "forward_served")) TH_LOG("vm1 served the failed write");
	EXPECT_TRUE(block_is(1, RL_BACKING, 9, 0)) TH_LOG("vm1's disk has the failed write");
	EXPECT_TRUE(block_is(PEER, RL_BACKING, 9, 0)) TH_LOG("vm2's disk has the failed write");
}

/*
 * vm2 gives its replica up and attaches the volume diskless at EPOCH,
 * declaring vm1 and connecting to it; vm1 forgets vm2, whose metadata slot
 * it frees: vm1's superblock then names no peer. @md5, when not NULL, gets
 * the md5 of vm2's disk as chorus left it.
 */
static void __diskless_peer_up(struct __test_metadata *_metadata, const char *transport,
			       char *md5, size_t len)
{
	rl_node_down(PEER);
	ASSERT_EQ(0, run("%s peer del " VOL " %d >/dev/null", rl_ctl(), PEER));
	if (md5) {
		ASSERT_EQ(0, rl_md5(PEER, md5, len));
	}
	ASSERT_EQ(0, rl_on(PEER, "set -e; C=%s; %s/tools/insmod-chorus %s; $C volume create "
			   VOL " --diskless --size %dM --uuid " RL_UUID " --node-id %d --epoch %d "
			   ">/dev/null; $C listen 10.99.0.%d >/dev/null; $C peer add " VOL
			   " 1 10.99.0.1 --transport %s >/dev/null; $C peer connect " VOL " 1",
			   rl_ctl(), chorus_src(), rl_insmod_args, SIZE_MB, PEER, EPOCH, PEER,
			   transport));
}
#define diskless_peer_up(md5, len) __diskless_peer_up(_metadata, variant->transport, md5, len)

/* vm1 declares vm2 a diskless access point and dials it. */
static int diskless_peer_connect(const char *transport)
{
	return run("%s peer add " VOL " %d 10.99.0.%d --transport %s --diskless >/dev/null && "
		   "%s peer connect " VOL " %d", rl_ctl(), PEER, PEER, transport, rl_ctl(), PEER);
}

/*
 * A diskless access point (DESIGN.md: a node without a replica): vm2 gives
 * its replica up and attaches the volume with --diskless. The owner first
 * declares it as a replica, and the handshake is refused with the reason;
 * declared diskless, it connects, is never in the write set, and fio
 * verify and ext4 with fsync run through vm2's device. All of it lands on
 * the owner's disk (its fsck and the acknowledged files), and vm2's own
 * disk is never touched.
 */
TEST_F_TIMEOUT(forward, diskless_access_point_fio_ext4, 400)
{
	char before[64], after[64];

	diskless_peer_up(before, sizeof(before));
	ASSERT_EQ(0, run("%s peer add " VOL " %d 10.99.0.%d --transport %s --initial-sync none "
			 ">/dev/null && %s peer connect " VOL " %d", rl_ctl(), PEER, PEER,
			 variant->transport, rl_ctl(), PEER));
	EXPECT_TRUE(rl_wait_peer(1, PEER, "last_error",
				 "peer is diskless, but was added with a replica", 30));
	ASSERT_EQ(0, run("%s peer del " VOL " %d >/dev/null", rl_ctl(), PEER));
	ASSERT_EQ(0, diskless_peer_connect(variant->transport));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", 30));
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "connected", 30));
	EXPECT_TRUE(rl_wait_peer(1, PEER, "repl_state", "diskless", 1));

	ASSERT_EQ(0, rl_on(PEER, RL_FIO "--rw=randwrite --bsrange=4k-128k --iodepth=16 "
			   "--size=%dM --io_size=8M --verify=crc32c --verify_fatal=1 "
			   ">/dev/null", SIZE_MB)) TH_LOG("fio on the diskless access point failed");
	ext4_on_access_point(30, 11);
	EXPECT_LT(100, fwd_counter(PEER, "forwarded"));
	EXPECT_EQ(0, fwd_counter(PEER, "forward_expired"));
	EXPECT_TRUE(rl_wait_peer(1, PEER, "in_writeset", "false", 1));
	ASSERT_EQ(0, rl_md5(PEER, after, sizeof(after)));
	EXPECT_STREQ(before, after) TH_LOG("the diskless node's own disk was written");
}

/*
 * One owner incarnation per epoch (Documentation/forwarding.md, "The owner
 * created again"). vm2, a diskless access point, holds a write for vm1
 * when vm1's volume is destroyed and created again at the same epoch over
 * a disk with other data behind the same uuid (0x22 written under it here,
 * as a restored image or a disk formatted again would have). vm2 refuses
 * the new incarnation in the handshake, so the write it holds fails at its
 * forward timeout and never reaches the new volume. Given a new epoch, the
 * new incarnation is followed and serves vm2. Without the check, vm2 sent
 * the old write to the new volume and its writer saw a success.
 */
TEST_F_TIMEOUT(forward, owner_created_again_at_its_epoch_is_refused, 300)
{
	pid_t w;
	int st;

	if (!strcmp(variant->transport, "rdma"))
		SKIP(return, "decided in the handshake, above the transport: TCP's");
	diskless_peer_up(NULL, 0);
	ASSERT_EQ(0, diskless_peer_connect(variant->transport));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", 30));
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "connected", 30));

	/* vm2 holds a write for the owner it no longer reaches. */
	cut_then_write(40000 * rl_scale(), 0x6e, 4, &w);
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "unreachable", 20));

	/* vm1's volume again, at the same epoch, over other data. */
	ASSERT_EQ(0, run("%s volume destroy " VOL " >/dev/null", rl_ctl()));
	ASSERT_EQ(0, run("head -c 4096 /dev/zero | tr '\\0' '\\042' | dd of=" RL_BACKING
			 " bs=4k count=1 seek=%d iflag=fullblock oflag=direct conv=notrunc "
			 "status=none", 4 * 256));
	ASSERT_EQ(0, run("%s volume create " VOL " --backing " RL_BACKING " --node-id 1 "
			 ">/dev/null && %s volume set " VOL " --ping-interval-ms 500 "
			 "--ping-timeout-ms %u --request-timeout-ms %u >/dev/null", rl_ctl(),
			 rl_ctl(), 3000 * rl_scale(), 5000 * rl_scale()));
	ASSERT_EQ(0, run("%s volume status " VOL " --json | jq -e '.role == \"owner\" and "
			 ".epoch == %d' >/dev/null", rl_ctl(), EPOCH))
		TH_LOG("the volume created again is not the owner at its old epoch");
	ASSERT_EQ(0, rl_on(PEER, "tc qdisc del dev eth0 root"));
	ASSERT_EQ(0, diskless_peer_connect(variant->transport));

	/* vm2 refuses it; its held write fails and never lands. */
	EXPECT_TRUE(rl_wait_peer(PEER, 1, "last_error",
				 "peer is another incarnation of the owner at the same epoch", 30));
	EXPECT_TRUE(rl_wait_peer(1, PEER, "last_error", "peer refused: stale epoch", 30));
	ASSERT_EQ(w, waitpid(w, &st, 0));
	self->env.npids = 0;
	EXPECT_FALSE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("the old owner's write succeeded on the new one");
	EXPECT_EQ(0, fwd_counter(PEER, "forward_resent")) TH_LOG("the held write was sent");
	EXPECT_LE(1, fwd_counter(PEER, "forward_expired"));
	EXPECT_TRUE(block_is(1, RL_BACKING, 4, 0x22)) TH_LOG("the old write reached the new volume");

	/* A new epoch is a new decision: vm2 follows it. */
	ASSERT_EQ(0, run("%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(),
			 EPOCH + 1));
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "connected", 30));
	EXPECT_EQ(0, rl_on(PEER, WRITE_BLOCK, 0x33, 4)) TH_LOG("vm2's write at the new epoch failed");
	EXPECT_TRUE(block_is(1, RL_BACKING, 4, 0x33)) TH_LOG("vm2's write is not on vm1's disk");
}

CHORUS_HARNESS_MAIN
