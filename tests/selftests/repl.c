// SPDX-License-Identifier: GPL-2.0
/*
 * repl: synchronous replication between two VMs, over TCP and over RDMA
 * (soft-RoCE): every case runs once per fixture variant.
 *
 * Runs on vm1, the owner (node 1), and drives vm2, the replica (node 2),
 * with lab_run(). Each side formats the first 64 MiB of /dev/vdb as the
 * volume, attaches it with its node id, listens on its lab address and
 * declares the other as peer; vm2 becomes replica and vm1 owner at epoch 5
 * (the other way round for the owner crash case). Cases that crash vm2 do
 * it with lab-ctl kill (SIGKILL to its qemu) and boot it again with
 * lab-ctl start, disks kept. In the rdma variant vm1, which dials (lower
 * node id), may only use RDMA; vm2 also accepts TCP so that wire_inject.py
 * can reach it (the injector speaks TCP; the message checks it probes are
 * shared by both transports). Every case ends by comparing the data area of
 * both backing devices, unloads the module on both VMs with sessions up
 * (teardown fails if rmmod does) and fails on kernel warnings on either VM.
 */
#include "common.h"
#include "repl_lab.h"

#define PEER		2
#define VOL		RL_VOL
#define UUID		RL_UUID
#define SIZE_MB		RL_SIZE_MB
#define BACKING		RL_BACKING
#define EPOCH		5

FIXTURE(repl) {
	struct chorus_env env;
	char ctl[4096];
	char inject[4096];
	char rdma_inject[4096];
};

FIXTURE_VARIANT(repl) {
	const char *dialler;	/* node 1's --transport */
	const char *acceptor;	/* node 2's */
	const char *active;	/* transport the session must use */
	/*
	 * How vm2's link is cut and healed. Over RDMA by dropping every packet
	 * (netem), not by taking eth0 down: soft-RoCE's port then goes down,
	 * and a MAD rdma_cm sends meanwhile (the DREQ of a session torn down
	 * during the cut) never completes on rxe's QP1 (6.1); rdma_destroy_id()
	 * waits for it, and so does the device removal that alone would flush
	 * it (rdma_cm's client is removed before ib_cm's): a relink then hangs
	 * for good. A RoCE NIC completes the MAD. Device removal under I/O is
	 * rdma.device_removed_and_readded_under_fio's case.
	 */
	const char *cut;
	const char *heal;
	/*
	 * The cases make check runs in this variant (NULL: all; see
	 * chorus_in_check_lane()). Over RDMA, those whose path through the
	 * transport differs: a lost link (CM and QP timeouts) and its redial,
	 * RDMA framing. The data path under fio verify is the flap's, rdma's
	 * and workload's over RDMA; a resync over RDMA is
	 * rdma.read_path_fio_verify_and_resync's; a killed peer is, from the
	 * owner's side, the flap's lost link held longer.
	 * Overlapping writes are ordered above the transport (the interval
	 * tree); a full sync and verify travel like the killed peer's resync;
	 * a held-then-resynced link loss is the flap's loss held longer;
	 * fencing and the activity log are decided in the replication layer
	 * whatever carried the message.
	 */
	const char *check_cases;
};

FIXTURE_VARIANT_ADD(repl, tcp) {
	.dialler = "tcp",
	.acceptor = "tcp",
	.active = "tcp",
	.cut = "ip link set eth0 down",
	.heal = "ip link set eth0 up",
	/*
	 * All but five whose path another make-check case takes: a peer's
	 * VM killed, held and resynced after it attaches again is the killed
	 * node's in cluster.owner_killed_… (its replica of vol1) and
	 * workload_crash's reattach, the hold and dirty-region resync are the
	 * link loss's here; the owner's VM killed, the replica promoted, the
	 * old owner back as a replica and resynced from the activity log is
	 * workload_crash's case under ext4 and PostgreSQL, and the owner cut
	 * off with the new owner resyncing from the log it shipped is
	 * repl3.owner_lost_new_owner_resyncs_both with a third node (stale
	 * epochs are stale_epoch_refused's); overlapping writes ordered by
	 * the owner are repl3's from two access points at once, and a new
	 * replica's full copy is disk's replaced disk. Plain fio verify with
	 * identical replicas is payload_crc_on_every_data_message's first half.
	 */
	.check_cases = "peer_lost_holds_then_resyncs_dirty_regions "
		       "link_flap_and_netem_under_fio stale_epoch_refused "
		       "malformed_messages_close_the_connection "
		       "verify_reports_mismatch metrics_under_fio "
		       "ping_interval_shortened_applies_at_once "
		       "payload_crc_on_every_data_message",
};

FIXTURE_VARIANT_ADD(repl, rdma) {
	.dialler = "rdma",
	.acceptor = "rdma+tcp",
	.active = "rdma",
	.cut = "tc qdisc replace dev eth0 root netem loss 100%",
	.heal = "tc qdisc del dev eth0 root",
	.check_cases = "link_flap_and_netem_under_fio malformed_messages_close_the_connection",
};

#define peer_run(...) lab_run(PEER, __VA_ARGS__)

#define node_down(self, vm) rl_node_down(vm)

static int node_up(FIXTURE_DATA(repl) *self, int node, bool zero, const char *initial)
{
	int other = 3 - node;

	return rl_node_up(node, zero, initial, &other, 1);
}

/* Attach the volume on @node's disk again after a crash (no format). */
static int node_reattach(int node)
{
	int other = 3 - node;

	return rl_node_reattach(node, &other, 1);
}

static uint64_t volume_writes(void)
{
	uint64_t v = 0;

	read_u64f(&v, "/sys/block/chorus0/chorus/writes");
	return v;
}

#define MD5_CMD RL_MD5_CMD

static void __replicas_identical(struct __test_metadata *_metadata)
{
	char a[64], b[64];

	ASSERT_EQ(0, run_quiet(a, sizeof(a), MD5_CMD, SIZE_MB));
	ASSERT_EQ(0, lab_run_out(PEER, b, sizeof(b), MD5_CMD, SIZE_MB));
	EXPECT_STREQ(a, b) TH_LOG("the replicas differ");
}
#define replicas_identical() __replicas_identical(_metadata)

static void __start(struct __test_metadata *_metadata, FIXTURE_DATA(repl) *self,
		    const FIXTURE_VARIANT(repl) *variant, const char *initial, bool zero,
		    int owner)
{
	char out[64];

	ASSERT_EQ(0, node_up(self, 2, zero, initial)) TH_LOG("vm2 setup failed");
	ASSERT_EQ(0, node_up(self, 1, zero, initial)) TH_LOG("vm1 setup failed");
	ASSERT_EQ(0, rl_on(3 - owner, "%s volume role " VOL " replica >/dev/null", self->ctl));
	ASSERT_EQ(0, rl_on(owner, "%s volume role " VOL " owner --epoch %d >/dev/null",
			   self->ctl, EPOCH));
	ASSERT_EQ(0, peer_run("%s peer connect " VOL " 1 >/dev/null", self->ctl));
	ASSERT_EQ(0, run("%s peer connect " VOL " 2 >/dev/null", self->ctl));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", 30));
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "connected", 30));
	rl_peer_field(1, PEER, "active_transport", out, sizeof(out));
	ASSERT_STREQ(variant->active, out) TH_LOG("the session is not over %s", variant->active);
}
/* vm1 owner, vm2 replica. */
#define start(initial, zero) __start(_metadata, self, variant, initial, zero, 1)
/* vm2 owner, vm1 replica, zeroed, no initial sync. */
#define start_vm2_owner() __start(_metadata, self, variant, "none", true, 2)

/* vm2 down after a case that failed between a kill and a restart: boot it. */
static int peer_vm_ensure_up(void)
{
	if (rl_vm_alive(PEER))
		return 0;
	fprintf(stderr, "# vm%d is down (left killed?), booting it again\n", PEER);
	return rl_vm_start(PEER, NULL, NULL);
}

FIXTURE_SETUP(repl)
{
	const char *count = getenv("CHORUS_VM_COUNT");

	CHORUS_CHECK_LANE(variant->check_cases);
	env_setup(_metadata, &self->env, false);
	snprintf(self->ctl, sizeof(self->ctl), "%s/build/bin/chorusctl", chorus_src());
	snprintf(self->inject, sizeof(self->inject),
		 "%s/tests/selftests/wire_inject.py " RL_INJECT_AS_VM1, chorus_src());
	snprintf(self->rdma_inject, sizeof(self->rdma_inject),
		 "%s/tests/selftests/rdma_inject.py", chorus_src());
	ASSERT_TRUE(count && atoi(count) >= 2 && this_vm() == 1)
		TH_LOG("needs a lab of 2 VMs and to run on vm1");
	rl_transports[1] = variant->dialler;
	rl_transports[2] = variant->acceptor;
	ASSERT_EQ(0, peer_vm_ensure_up());
	ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[0], PEER, _metadata->name));
	self->env.nremote = 1;
	node_down(self, 2);
	node_down(self, 1);
}

FIXTURE_TEARDOWN(repl)
{
	int rc;

	/* A case that failed with vm2 killed: boot it (a fresh log, mark it). */
	if (!rl_vm_alive(PEER))
		rl_vm_start(PEER, &self->env.remote_mark[0], _metadata->name);
	/* rmmod with the sessions up: both sides must unload. */
	run("ip link set eth0 up; tc qdisc del dev eth0 root 2>/dev/null; "
	    "umount /mnt/crc 2>/dev/null; true");
	peer_run("ip link set eth0 up; tc qdisc del dev eth0 root 2>/dev/null; true");
	rc = peer_run("if [ -d /sys/module/chorus ]; then %s volume destroy " VOL
		      " && rmmod chorus; fi", self->ctl);
	run("%s volume destroy " VOL " >/dev/null 2>&1; true", self->ctl);
	env_teardown(_metadata, &self->env);
	node_down(self, 2);
	ASSERT_EQ(0, rc) TH_LOG("destroy or rmmod on vm2 failed");
}

#define FIO	RL_FIO

/* 25 s of paced 4 KiB writes to the first 8 MiB, in the background. */
static pid_t start_paced_fio(struct __test_metadata *_metadata, FIXTURE_DATA(repl) *self)
{
	pid_t fio = rl_fio_background(&self->env, 1, "--rw=randwrite --bs=4k --iodepth=4 "
				      "--offset=0 --size=8M --time_based --runtime=25 "
				      "--rate_iops=200");

	sleep(3);
	return fio;
}

/*
 * The peer is gone: no write completes while it is unreachable and writes
 * are held; `writeset remove` releases them, I/O goes on, the peer is out
 * of date.
 */
static void held_until_writeset_remove(struct __test_metadata *_metadata,
				       FIXTURE_DATA(repl) *self)
{
	uint64_t w0, w1;

	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "unreachable", 15));
	sleep(1);
	w0 = volume_writes();
	sleep(2);
	w1 = volume_writes();
	EXPECT_EQ(w0, w1) TH_LOG("writes completed while the peer was unreachable");
	EXPECT_LT(0, rl_peer_u64(1, PEER, "held"));

	ASSERT_EQ(0, run("%s writeset remove " VOL " 2 >/dev/null", self->ctl));
	sleep(2);
	EXPECT_LT(w1, volume_writes()) TH_LOG("I/O did not resume");
	EXPECT_EQ(0, rl_peer_u64(1, PEER, "held"));
	EXPECT_TRUE(rl_wait_peer(1, PEER, "repl_state", "out-of-date", 5));
}

/* fio with verify: every write acked by both, replicas byte-identical. */
TEST_F_TIMEOUT(repl, fio_verify_identical, 300)
{
	start("none", true);
	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-128k --iodepth=16 --size=%dM "
			 "--io_size=24M --verify=crc32c --verify_fatal=1 >/dev/null", SIZE_MB));
	EXPECT_LT(0, rl_peer_u64(1, PEER, "writes_sent"));
	EXPECT_EQ(0, rl_peer_u64(1, PEER, "held"));
	replicas_identical();
}

/* Overlapping writes from 8 threads to one 64 KiB range stay in order. */
TEST_F_TIMEOUT(repl, overlapping_writes_identical, 300)
{
	start("none", true);
	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-64k --iodepth=8 --numjobs=8 "
			 "--offset=1M --size=64k --io_size=4M --randrepeat=0 >/dev/null"));
	replicas_identical();
}

/* A new replica gets a full sync before it is up to date. */
TEST_F_TIMEOUT(repl, full_sync_of_new_replica, 300)
{
	ASSERT_EQ(0, node_up(self, 1, false, "full"));
	ASSERT_EQ(0, run("%s volume role " VOL " owner --epoch %d >/dev/null", self->ctl,
			 EPOCH));
	/* The peer is out of date, so writes go on without it. */
	ASSERT_EQ(0, run(FIO "--rw=write --bs=1M --size=16M --verify=crc32c >/dev/null"));
	ASSERT_EQ(0, node_up(self, 2, false, "full"));
	ASSERT_EQ(0, peer_run("%s volume role " VOL " replica >/dev/null", self->ctl));
	ASSERT_EQ(0, peer_run("%s peer connect " VOL " 1 >/dev/null", self->ctl));
	ASSERT_EQ(0, run("%s peer connect " VOL " 2 >/dev/null", self->ctl));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 180));
	EXPECT_EQ(SIZE_MB * MiB, rl_peer_u64(1, PEER, "resynced_bytes"));
	EXPECT_EQ(0, rl_peer_u64(1, PEER, "dirty_bytes"));
	replicas_identical();
}

/*
 * The replica's link goes down under fio: I/O holds (no write completes)
 * until the peer leaves the write set, then goes on; the peer comes back
 * and only the regions written meanwhile are resynced.
 */
TEST_F_TIMEOUT(repl, peer_lost_holds_then_resyncs_dirty_regions, 300)
{
	uint64_t resynced;
	int status;
	pid_t fio;

	start("none", true);
	fio = start_paced_fio(_metadata, self);
	ASSERT_LE(0, fio);
	ASSERT_EQ(0, peer_run("%s", variant->cut));
	held_until_writeset_remove(_metadata, self);

	ASSERT_EQ(0, peer_run("%s", variant->heal));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 60));
	resynced = rl_peer_u64(1, PEER, "resynced_bytes");
	TH_LOG("resynced %llu bytes", (unsigned long long)resynced);
	EXPECT_LT(0, resynced);
	EXPECT_GE(8 * MiB, resynced) TH_LOG("resynced more than the region written");

	ASSERT_EQ(fio, waitpid(fio, &status, 0));
	self->env.npids = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("fio failed");
	replicas_identical();
}

/*
 * The same with a crash instead of a link cut: vm2's VM is killed under
 * fio (SIGKILL to its qemu). I/O holds until vm2 leaves the write set,
 * then goes on without an error. vm2 boots again and attaches the volume
 * on its disk (not formatted again). Once fio is done, the regions the
 * owner's bitmap recorded meanwhile are resynced, and no more than the
 * 8 MiB written; the replicas end identical.
 */
TEST_F_TIMEOUT(repl, peer_vm_killed_holds_then_resyncs_dirty_regions, 300)
{
	uint64_t dirty, resynced;
	int status;
	pid_t fio;

	start("none", true);
	fio = start_paced_fio(_metadata, self);
	ASSERT_LE(0, fio);
	EXPECT_EQ(0, kmsg_check(&self->env.remote_mark[0])) TH_LOG("vm2's log before the crash");
	ASSERT_EQ(0, rl_vm_kill(PEER));
	held_until_writeset_remove(_metadata, self);

	/* vm2 boots while fio goes on; it attaches its volume once fio is done. */
	ASSERT_EQ(0, rl_vm_start(PEER, &self->env.remote_mark[0], _metadata->name));
	ASSERT_EQ(fio, waitpid(fio, &status, 0));
	self->env.npids = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("fio failed");
	dirty = rl_peer_u64(1, PEER, "dirty_bytes");
	ASSERT_EQ(0, node_reattach(PEER)) TH_LOG("vm2 could not attach its volume again");
	ASSERT_EQ(0, peer_run("%s peer connect " VOL " 1 >/dev/null", self->ctl));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 60));
	resynced = rl_peer_u64(1, PEER, "resynced_bytes");
	TH_LOG("%llu bytes dirty while vm2 was away, %llu resynced",
	       (unsigned long long)dirty, (unsigned long long)resynced);
	/* (A region being copied when a session ends is copied again: not EQ.) */
	EXPECT_LT(0, dirty);
	EXPECT_LE(dirty, resynced) TH_LOG("resynced less than the bitmap recorded");
	EXPECT_GE(8 * MiB, resynced) TH_LOG("resynced more than the region written");
	replicas_identical();
}

/*
 * Link flaps, loss and delay under fio verify: no error reaches fio and
 * the replicas end identical. One flap outlasts the heartbeat timeout, so
 * the session is torn down and the held writes are sent again.
 */
TEST_F_TIMEOUT(repl, link_flap_and_netem_under_fio, 300)
{
	int status, i;
	pid_t fio;

	start("none", true);
	fio = rl_fio_background(&self->env, 1, "--rw=randwrite --bsrange=4k-64k --iodepth=8 "
				"--size=32M --time_based --runtime=30 --verify=crc32c "
				"--verify_fatal=1");
	ASSERT_LE(0, fio);
	sleep(2);
	ASSERT_EQ(0, peer_run("tc qdisc add dev eth0 root netem loss 5%% delay 20ms"));
	sleep(4);
	ASSERT_EQ(0, peer_run("tc qdisc del dev eth0 root"));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, peer_run("%s; sleep 1; %s", variant->cut, variant->heal));
		sleep(2);
	}
	/* Outlasts the ping timeout (3 s times rl_scale(), __rl_node_setup()). */
	ASSERT_EQ(0, peer_run("%s; sleep %u; %s", variant->cut, 3 * rl_scale() + 2,
			      variant->heal));
	ASSERT_EQ(fio, waitpid(fio, &status, 0));
	self->env.npids = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("fio saw an error");
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "connected", 30));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "held", "0", 30));
	EXPECT_LE(2, rl_peer_u64(1, PEER, "reconnects"))
		TH_LOG("the long flap did not end the session");
	replicas_identical();
}

/*
 * Fencing: the replica refuses an owner epoch older than the highest it
 * accepted (netlink) and a WRITE stamped with one (wire), and counts it;
 * a stale owner cannot complete writes once a newer owner exists.
 */
TEST_F_TIMEOUT(repl, stale_epoch_refused, 300)
{
	uint64_t stale = 0;
	char out[256];
	int rc, status;
	pid_t dd;

	start("none", true);
	/* vm2 accepted epoch 5 in the handshake: 4 is refused, persistently. */
	rc = peer_run("%s volume role " VOL " owner --epoch 4 2>&1 | grep -q 'older'", self->ctl);
	EXPECT_EQ(0, rc) TH_LOG("an older epoch was not refused with a clear message");

	/* A crafted WRITE with epoch 4 on a session claiming epoch 5. */
	ASSERT_EQ(0, run("%s peer disconnect " VOL " 2 >/dev/null", self->ctl));
	ASSERT_EQ(0, run_quiet(out, sizeof(out), "%s 10.99.0.2 stale-write --uuid " UUID
			       " --node 1 --peer 2 --sectors %d --epoch %d", self->inject,
			       SIZE_MB * 2048, EPOCH));
	EXPECT_EQ(0, strncmp(out, "status=2", 8)) TH_LOG("answer: %s", out);
	ASSERT_EQ(0, lab_run_out(PEER, out, sizeof(out),
				 "cat /sys/block/chorus0/chorus/stale_epoch"));
	stale = strtoull(out, NULL, 10);
	EXPECT_EQ(1, stale);
	/* The same session with the current epoch is served. */
	ASSERT_EQ(0, run_quiet(out, sizeof(out), "%s 10.99.0.2 ok-write --uuid " UUID
			       " --node 1 --peer 2 --sectors %d --epoch %d", self->inject,
			       SIZE_MB * 2048, EPOCH));
	EXPECT_EQ(0, strncmp(out, "status=0", 8)) TH_LOG("answer: %s", out);

	/* vm2 becomes owner at epoch 6: vm1, still owner at 5, is fenced. */
	ASSERT_EQ(0, peer_run("%s volume role " VOL " owner --epoch 6 >/dev/null", self->ctl));
	ASSERT_EQ(0, run("%s peer connect " VOL " 2 >/dev/null", self->ctl));
	dd = fork();
	ASSERT_LE(0, dd);
	if (dd == 0)
		_exit(run("dd if=/dev/zero of=/dev/chorus0 bs=4k count=1 oflag=direct "
			  "status=none") ? 1 : 0);
	env_track_pid(&self->env, dd);
	sleep(6);
	EXPECT_EQ(0, waitpid(dd, &status, WNOHANG)) TH_LOG("a stale owner completed a write");
	rl_peer_field(1, PEER, "last_error", out, sizeof(out));
	TH_LOG("vm1's view of vm2: %s", out);
	EXPECT_NE(NULL, strstr(out, "refused")) TH_LOG("vm1 was not refused by vm2");
	/* The held write is released by taking vm2 out of vm1's write set. */
	ASSERT_EQ(0, run("%s writeset remove " VOL " 2 >/dev/null", self->ctl));
	ASSERT_EQ(dd, waitpid(dd, &status, 0));
	self->env.npids = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * The owner is cut off mid-write (its link goes down under fio, so writes
 * reach its disk and not the replica's): the replica becomes owner at a
 * higher epoch, folds the activity log the old owner shipped into its
 * bitmap, and when the old owner comes back as a replica, exactly those
 * extents are resynced: the replicas end identical. Without the log the
 * old owner would keep writes the new owner never had.
 */
TEST_F_TIMEOUT(repl, owner_lost_activity_log_resynced, 300)
{
	uint64_t resynced;
	pid_t fio;

	/*
	 * Not on soft-RoCE: the owner's link is down while its sessions are
	 * torn down, so rdma_cm sends the DREQ into a down link; rxe's QP1
	 * then never completes that MAD and rdma_destroy_id() waits for it
	 * forever (ib_cm: "cm_destroy_id_wait_timeout ... state 11"), holding
	 * the peer's session mutex. A RoCE NIC completes the MAD. The RDMA
	 * owner crash is covered by owner_crash_new_owner_resyncs_activity_log
	 * (the VM is killed, no link cut; make check-all-variants runs it over
	 * RDMA). Documentation/rdma.rst.
	 */
	if (!strcmp(variant->active, "rdma"))
		SKIP(return, "soft-RoCE: a DREQ sent on a down link never completes");

	start("none", true);
	fio = rl_fio_background(&self->env, 1, "--rw=randwrite --bsrange=4k-64k --iodepth=16 "
				"--offset=0 --size=16M --time_based --runtime=120");
	ASSERT_LE(0, fio);
	/* All 4 extents of the 16 MiB in the log vm2 stored (repl3's case). */
	ASSERT_TRUE(rl_wait_peer_u64(1, PEER, "writes_sent", 256, 60));
	ASSERT_EQ(0, run("ip link set eth0 down"));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "unreachable", 15));
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "conn_state", "unreachable", 15));
	EXPECT_LT(0, rl_peer_u64(1, PEER, "held"));
	/* The application on the old owner dies with its writes held. */
	run("pkill -KILL -x fio; true");

	ASSERT_EQ(0, peer_run("%s volume role " VOL " owner --epoch %d >/dev/null",
			      self->ctl, EPOCH + 1));
	EXPECT_TRUE(rl_wait_peer(PEER, 1, "repl_state", "syncing", 5))
		TH_LOG("the new owner did not mark the old owner's extents");
	EXPECT_LT(0, rl_peer_u64(PEER, 1, "dirty_bytes"));

	/* The old owner lets its held writes go and steps down. */
	ASSERT_EQ(0, run("%s writeset remove " VOL " 2 >/dev/null", self->ctl));
	waitpid(fio, NULL, 0);
	self->env.npids = 0;
	ASSERT_EQ(0, run("%s volume role " VOL " replica >/dev/null", self->ctl));
	ASSERT_EQ(0, run("ip link set eth0 up"));

	ASSERT_TRUE(rl_wait_peer(PEER, 1, "repl_state", "up-to-date", 120));
	resynced = rl_peer_u64(PEER, 1, "resynced_bytes");
	TH_LOG("activity log resync: %llu bytes", (unsigned long long)resynced);
	EXPECT_LT(0, resynced);
	EXPECT_GE(16 * MiB, resynced) TH_LOG("resynced more than the extents written");
	replicas_identical();
	/* The old owner accepted the new epoch and persisted it. */
	EXPECT_EQ(0, run("%s volume role " VOL " owner --epoch %d 2>/dev/null; test $? -ne 0",
			 self->ctl, EPOCH));
}

/*
 * A real owner crash: vm2 owns the volume and its VM is killed under fio
 * (writes may be on its disk and not on vm1's). vm1, the replica, becomes
 * owner at a higher epoch and folds the activity log vm2 shipped to it.
 * vm2 boots again and attaches its disk: its metadata names a peer, so it
 * comes back as a replica (an access point: its writes would go to the
 * owner, forward.c). The new owner resyncs the logged
 * extents to it, and the replicas end identical. vm2 accepted the new
 * epoch: its old one is refused through netlink, and a WRITE stamped with
 * it is answered STALE_EPOCH and counted.
 */
TEST_F_TIMEOUT(repl, owner_crash_new_owner_resyncs_activity_log, 300)
{
	uint64_t dirty, resynced;
	char out[256];
	pid_t fio;

	start_vm2_owner();
	fio = rl_fio_background(&self->env, PEER, "--rw=randwrite --bsrange=4k-64k "
				"--iodepth=16 --offset=0 --size=16M --time_based --runtime=120");
	ASSERT_LE(0, fio);
	EXPECT_TRUE(rl_wait_peer_u64(PEER, 1, "writes_sent", 256, 60))
		TH_LOG("no write reached vm1");
	EXPECT_EQ(0, kmsg_check(&self->env.remote_mark[0])) TH_LOG("vm2's log before the crash");
	ASSERT_EQ(0, rl_vm_kill(PEER));
	waitpid(fio, NULL, 0);	/* lab_run(): vm2 is gone */
	self->env.npids = 0;
	ASSERT_TRUE(rl_wait_peer(1, PEER, "conn_state", "unreachable", 15));

	ASSERT_EQ(0, run("%s volume role " VOL " owner --epoch %d >/dev/null", self->ctl,
			 EPOCH + 1));
	EXPECT_TRUE(rl_wait_peer(1, PEER, "repl_state", "syncing", 5))
		TH_LOG("the new owner did not mark the old owner's extents");
	dirty = rl_peer_u64(1, PEER, "dirty_bytes");
	TH_LOG("activity log fold: %llu dirty bytes", (unsigned long long)dirty);
	EXPECT_LT(0, dirty);

	ASSERT_EQ(0, rl_vm_start(PEER, &self->env.remote_mark[0], _metadata->name));
	ASSERT_EQ(0, node_reattach(PEER)) TH_LOG("vm2 could not attach its volume again");
	EXPECT_EQ(0, peer_run("%s volume status " VOL " --json | jq -e '.role == \"replica\"' "
			      ">/dev/null", self->ctl))
		TH_LOG("the old owner did not come back as a replica");
	ASSERT_EQ(0, peer_run("%s peer connect " VOL " 1 >/dev/null", self->ctl));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 120));
	resynced = rl_peer_u64(1, PEER, "resynced_bytes");
	TH_LOG("activity log resync: %llu bytes", (unsigned long long)resynced);
	EXPECT_LE(dirty, resynced) TH_LOG("resynced less than the folded extents");
	EXPECT_GE(16 * MiB, resynced) TH_LOG("resynced more than the extents written");
	replicas_identical();

	/* Fencing: vm2 keeps the epoch it accepted from the new owner. */
	EXPECT_EQ(0, peer_run("%s volume role " VOL " owner --epoch %d 2>&1 | grep -q 'older'",
			      self->ctl, EPOCH)) TH_LOG("vm2 took its old epoch back");
	ASSERT_EQ(0, run("%s peer disconnect " VOL " 2 >/dev/null", self->ctl));
	ASSERT_EQ(0, run_quiet(out, sizeof(out), "%s 10.99.0.2 stale-write --uuid " UUID
			       " --node 1 --peer 2 --sectors %d --epoch %d", self->inject,
			       SIZE_MB * 2048, EPOCH + 1));
	EXPECT_EQ(0, strncmp(out, "status=2", 8)) TH_LOG("answer: %s", out);
	ASSERT_EQ(0, lab_run_out(PEER, out, sizeof(out),
				 "cat /sys/block/chorus0/chorus/stale_epoch"));
	EXPECT_EQ(1, strtoull(out, NULL, 10));
}

/*
 * A shorter ping interval applies at once, not after the one it replaces
 * (a heartbeat already queued waited out the old interval, and the ping
 * timeout is checked when one runs): vm1's interval of two minutes is cut
 * to 500 ms with a 2 s timeout, vm2 goes silent, and vm1 must see it
 * unreachable within seconds.
 */
TEST_F_TIMEOUT(repl, ping_interval_shortened_applies_at_once, 120)
{
	uint64_t t0;

	start("none", true);
	ASSERT_EQ(0, run("%s volume set " VOL " --ping-interval-ms 120000 --ping-timeout-ms 240000 "
			 ">/dev/null", self->ctl));
	sleep(2);	/* the ping queued at the old 1 s interval is now two minutes off */
	ASSERT_EQ(0, run("%s volume set " VOL " --ping-interval-ms 500 --ping-timeout-ms 2000 "
			 ">/dev/null", self->ctl));
	ASSERT_EQ(0, peer_run("%s", variant->cut));
	t0 = now_ms();
	EXPECT_TRUE(rl_wait_peer(1, PEER, "conn_state", "unreachable", 15));
	TH_LOG("vm1 found vm2 silent after %llu ms", (unsigned long long)(now_ms() - t0));
	ASSERT_EQ(0, peer_run("%s", variant->heal));
}

#define CRC_CHECKED "cat /sys/block/chorus0/chorus/payload_crc_checked"
#define CRC_ERRORS "cat /sys/block/chorus0/chorus/payload_crc_errors"

/*
 * payload_crc on both nodes: the full sync (RESYNC_DATA), the owner's
 * writes (WRITE), the replica's forwarded writes (FWD_WRITE) and the
 * answers to its forwarded reads (READ_DATA) carry a CRC-32C that the
 * receiver checks; none mismatches, and both queues ask for stable pages
 * (a page changed under writeback would fail its crc). Over TCP, ext4 on
 * the owner takes buffered writes with fsync and writes through mmap
 * while writeback runs: the pages those change are the ones stable pages
 * protect (the filesystem's path is the same over RDMA).
 */
TEST_F_TIMEOUT(repl, payload_crc_on_every_data_message, 300)
{
	uint64_t synced, written, fwd0, read0, off0;
	char out[64];
	int vm;

	ASSERT_EQ(0, node_up(self, 2, false, "full"));
	ASSERT_EQ(0, node_up(self, 1, false, "full"));
	for (vm = 1; vm <= 2; vm++) {
		ASSERT_EQ(0, rl_on(vm, "%s volume set " VOL " --payload-crc on >/dev/null",
				   self->ctl));
		EXPECT_EQ(0, rl_on(vm, "%s --json volume status " VOL " | jq -e '.payload_crc == true'"
				   " >/dev/null", self->ctl)) TH_LOG("vm%d: payload_crc not on", vm);
		EXPECT_EQ(1, rl_cmd_u64(vm, "cat /sys/block/chorus0/queue/stable_writes"))
			TH_LOG("vm%d: the queue does not ask for stable pages", vm);
	}
	ASSERT_EQ(0, peer_run("%s volume role " VOL " replica >/dev/null", self->ctl));
	ASSERT_EQ(0, run("%s volume role " VOL " owner --epoch %d >/dev/null", self->ctl, EPOCH));
	ASSERT_EQ(0, peer_run("%s peer connect " VOL " 1 >/dev/null", self->ctl));
	ASSERT_EQ(0, run("%s peer connect " VOL " 2 >/dev/null", self->ctl));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 180));
	rl_peer_field(1, PEER, "active_transport", out, sizeof(out));
	ASSERT_STREQ(variant->active, out) TH_LOG("the session is not over %s", variant->active);
	synced = rl_cmd_u64(PEER, CRC_CHECKED);
	ASSERT_NE(UINT64_MAX, synced) TH_LOG("no payload_crc_checked counter");
	/* 64 MiB in 64 KiB regions, each one RESYNC_DATA (more if one was sent again) */
	EXPECT_LE(1024, synced) TH_LOG("the full sync carried too few checked crcs");

	ASSERT_EQ(0, run(FIO "--rw=randwrite --bsrange=4k-128k --iodepth=8 --size=16M "
			 "--io_size=8M --verify=crc32c --verify_fatal=1 >/dev/null"));
	written = rl_cmd_u64(PEER, CRC_CHECKED);
	EXPECT_LE(synced + 64, written) TH_LOG("the owner's writes carried few checked crcs");

	/* Through the replica's device: forwarded to the owner, and read back. */
	fwd0 = rl_cmd_u64(1, CRC_CHECKED);
	ASSERT_EQ(0, peer_run("head -c 1048576 /dev/urandom > /tmp/crc.blk && "
			      "dd if=/tmp/crc.blk of=/dev/chorus0 bs=64k seek=640 oflag=direct "
			      "status=none"));
	read0 = rl_cmd_u64(PEER, CRC_CHECKED);
	EXPECT_EQ(0, peer_run("dd if=/dev/chorus0 bs=64k skip=640 count=16 iflag=direct "
			      "status=none | cmp - /tmp/crc.blk"));
	EXPECT_LE(fwd0 + 16, rl_cmd_u64(1, CRC_CHECKED)) TH_LOG("forwarded writes: no crc");
	EXPECT_LE(read0 + 16, rl_cmd_u64(PEER, CRC_CHECKED)) TH_LOG("forwarded reads: no crc");

	/* Off on the owner: what it sends carries none, what it gets still does. */
	ASSERT_EQ(0, run("%s volume set " VOL " --payload-crc off >/dev/null", self->ctl));
	off0 = rl_cmd_u64(PEER, CRC_CHECKED);
	fwd0 = rl_cmd_u64(1, CRC_CHECKED);
	ASSERT_EQ(0, run(FIO "--rw=write --bs=64k --offset=32M --size=1M >/dev/null"));
	EXPECT_EQ(off0, rl_cmd_u64(PEER, CRC_CHECKED)) TH_LOG("a crc with payload_crc off");
	ASSERT_EQ(0, peer_run("dd if=/tmp/crc.blk of=/dev/chorus0 bs=64k seek=640 oflag=direct "
			      "status=none"));
	EXPECT_LE(fwd0 + 16, rl_cmd_u64(1, CRC_CHECKED)) TH_LOG("vm2's crcs not checked");
	ASSERT_EQ(0, run("%s volume set " VOL " --payload-crc on >/dev/null", self->ctl));
	TH_LOG("checked crcs: vm2 %llu after the sync, %llu after fio, %llu after the reads; "
	       "vm1 %llu", (unsigned long long)synced, (unsigned long long)written,
	       (unsigned long long)rl_cmd_u64(PEER, CRC_CHECKED),
	       (unsigned long long)rl_cmd_u64(1, CRC_CHECKED));
	if (!strcmp(variant->active, "tcp")) {
		ASSERT_EQ(0, run("mkfs.ext4 -q -F /dev/chorus0 && mkdir -p /mnt/crc && "
				 "mount /dev/chorus0 /mnt/crc"));
		EXPECT_EQ(0, run("fio --directory=/mnt/crc --size=4M --bs=4k --time_based "
				 "--runtime=8 --output-format=terse --minimal "
				 "--name=b --rw=randwrite --fsync=4 --numjobs=4 "
				 "--name=m --ioengine=mmap --rw=randwrite >/dev/null"));
		EXPECT_EQ(0, run("umount /mnt/crc"));
		TH_LOG("vm2 checked %llu crcs after ext4",
		       (unsigned long long)rl_cmd_u64(PEER, CRC_CHECKED));
	}

	for (vm = 1; vm <= 2; vm++) {
		EXPECT_EQ(0, rl_cmd_u64(vm, CRC_ERRORS)) TH_LOG("vm%d: a payload crc failed", vm);
	}
	EXPECT_EQ(1, rl_peer_u64(1, PEER, "reconnects")) TH_LOG("the session was closed");
	replicas_identical();
}

/*
 * Every malformed field closes the connection; nothing is written. The
 * rdma variant runs only the RDMA framing checks below: wire_inject.py
 * speaks TCP, so its messages would repeat the tcp variant's.
 */
/*
 * The RDMA receiver's own framing checks (rdma_inject.py): each crafted SEND
 * on a fresh queue pair makes the replica close that connection and log
 * why. The message-level checks above are the same on both transports.
 */
static void rdma_framing_refused(struct __test_metadata *_metadata,
				 FIXTURE_DATA(repl) *self)
{
	static const struct {
		const char *name, *log;
	} cases[] = {
		{ "short", "malformed RDMA message, bad length" },
		{ "bad-magic", "malformed RDMA message, bad magic" },
		{ "credit-data", "malformed RDMA message, bad credit return with data" },
		{ "credit-overflow", "returned more credits than it has buffers" },
		{ "chunk-header", "malformed RDMA message, bad chunk header" },
		{ "chunk-length", "malformed RDMA message, bad chunk length" },
		{ "oversized", "RDMA receive failed" },
		{ "imm-flags", "malformed RDMA message, bad immediate data flags" },
		{ "read-credit", "malformed RDMA message, bad immediate data flags" },
		{ "read-desc-size", "malformed RDMA message, bad READ descriptor length" },
		{ "read-len", "malformed RDMA message, bad READ length" },
		{ "read-rkey", "malformed RDMA message, bad READ rkey" },
		{ "read-fault", "RDMA READ failed" },
	};
	char out[256], n[32];
	long seen;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, lab_run_out(PEER, n, sizeof(n), "dmesg | grep -c '%s'; true",
					 cases[i].log));
		seen = strtol(n, NULL, 10);
		EXPECT_EQ(0, run_quiet(out, sizeof(out), "%s 10.99.0.2 %s 2>&1",
				       self->rdma_inject, cases[i].name));
		EXPECT_EQ(0, strncmp(out, "closed", 6))
			TH_LOG("rdma %s: %s", cases[i].name, out);
		ASSERT_EQ(0, lab_run_out(PEER, n, sizeof(n), "dmesg | grep -c '%s'; true",
					 cases[i].log));
		EXPECT_LT(seen, strtol(n, NULL, 10))
			TH_LOG("rdma %s: no new \"%s\" in vm2's log", cases[i].name,
			       cases[i].log);
	}
}

TEST_F_TIMEOUT(repl, malformed_messages_close_the_connection, 300)
{
	static const char *const cases[] = {
		"bad-magic", "bad-hdr-crc", "bad-version", "bad-type", "reserved-type",
		"bad-flags", "bad-payload-len", "too-long", "bad-range", "unaligned",
		"bad-reserved", "bad-volume-id", "bad-payload-crc",
	};
	char before[64], after[64], out[256];
	size_t i;

	start("none", true);
	ASSERT_EQ(0, run("%s peer disconnect " VOL " 2 >/dev/null", self->ctl));
	ASSERT_EQ(0, lab_run_out(PEER, before, sizeof(before), MD5_CMD, SIZE_MB));
	if (!strcmp(variant->active, "rdma")) {
		/* wire_inject.py speaks TCP: its messages are the tcp variant's. */
		rdma_framing_refused(_metadata, self);
		ASSERT_EQ(0, lab_run_out(PEER, after, sizeof(after), MD5_CMD, SIZE_MB));
		EXPECT_STREQ(before, after) TH_LOG("a malformed message changed the replica");
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, run_quiet(out, sizeof(out), "%s 10.99.0.2 %s --uuid " UUID
				       " --node 1 --peer 2 --sectors %d --epoch %d",
				       self->inject, cases[i], SIZE_MB * 2048, EPOCH));
		EXPECT_EQ(0, strncmp(out, "closed", 6))
			TH_LOG("%s: the replica answered %s", cases[i], out);
	}
	ASSERT_EQ(0, run_quiet(out, sizeof(out), "%s 10.99.0.2 wrong-uuid --uuid " UUID
			       " --node 1 --peer 2 --sectors %d --epoch %d", self->inject,
			       SIZE_MB * 2048, EPOCH));
	EXPECT_EQ(0, strncmp(out, "refused=3", 9)) TH_LOG("wrong uuid: %s", out);
	ASSERT_EQ(0, lab_run_out(PEER, after, sizeof(after), MD5_CMD, SIZE_MB));
	EXPECT_STREQ(before, after) TH_LOG("a malformed message changed the replica");
	EXPECT_EQ(0, peer_run("dmesg | grep -q 'malformed message, bad magic'"));
	EXPECT_EQ(0, peer_run("dmesg | grep -q 'message out of range, bad sector'"));
	EXPECT_EQ(1, rl_cmd_u64(PEER, "cat /sys/block/chorus0/chorus/payload_crc_errors"))
		TH_LOG("bad-payload-crc not counted");
}

/* Online verify reports a region that differs, and only that one. */
TEST_F_TIMEOUT(repl, verify_reports_mismatch, 300)
{
	start("none", true);
	ASSERT_EQ(0, run(FIO "--rw=write --bs=1M --size=8M >/dev/null"));
	ASSERT_EQ(0, run("%s volume verify " VOL " 2 >/dev/null", self->ctl));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "verify_running", "false", 120));
	EXPECT_EQ(0, rl_peer_u64(1, PEER, "verify_mismatches"));
	EXPECT_EQ(SIZE_MB * MiB, rl_peer_u64(1, PEER, "verify_done_bytes"));

	/* Change 4 KiB behind chorus's back on the replica. */
	ASSERT_EQ(0, peer_run("dd if=/dev/urandom of=" BACKING " bs=4k count=1 seek=300 "
			      "oflag=direct conv=notrunc status=none"));
	ASSERT_EQ(0, run("%s volume verify " VOL " 2 >/dev/null", self->ctl));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "verify_running", "false", 120));
	EXPECT_EQ(1, rl_peer_u64(1, PEER, "verify_mismatches"));
	EXPECT_EQ(0, run("dmesg | grep -q 'verify mismatch at sector 2304,'"));
}

#define METRICS_DIR	"/tmp/chorus-metrics"
#define METRICS_URL	"http://127.0.0.1:9653/metrics"

/* chorusd on vm1 with only [node] and [metrics]: it serves metrics, nothing else. */
static pid_t start_metrics_chorusd(struct chorus_env *env)
{
	char chorusd[4200];
	pid_t pid;

	snprintf(chorusd, sizeof(chorusd), "%s/build/bin/chorusd", chorus_src());
	if (run("rm -rf " METRICS_DIR " && mkdir -p " METRICS_DIR " && printf '[node]\\nid = 1\\n"
		"[metrics]\\naddress = \"127.0.0.1:9653\"\\n' > " METRICS_DIR "/chorusd.conf"))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open(METRICS_DIR "/chorusd.log", O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(chorusd, "chorusd", "--config", METRICS_DIR "/chorusd.conf", "--state-file",
		      METRICS_DIR "/nvmet.json", (char *)NULL);
		_exit(127);
	}
	env_track_pid(env, pid);
	return pid;
}

/* Scrape into METRICS_DIR/@name with curl; 0 on success. */
static int scrape(const char *name)
{
	return run("curl -sSf -o " METRICS_DIR "/%s " METRICS_URL, name);
}

/* The value of @series (name and labels as written) in scrape @name; -1 if absent. */
static double metric(const char *name, const char *series)
{
	char out[64];

	if (run_quiet(out, sizeof(out), "awk -v s='%s' 'index($0, s \" \") == 1 { print $2 }' "
		      METRICS_DIR "/%s", series, name) || !out[0])
		return -1;
	return strtod(out, NULL);
}

/*
 * A resync's progress in the metrics: vm2 leaves the write set and the
 * session, 8 MiB are written without it, and it comes back at a resync
 * rate of 1 MiB/s. A scrape during the resync shows its size (the 8 MiB)
 * and part of it done; one after it, nothing running and the counter of
 * resynced bytes up by that size.
 */
static void resync_progress_scraped(struct __test_metadata *_metadata,
				    FIXTURE_DATA(repl) *self)
{
	const char *peer = "{volume=\"" VOL "\",peer=\"2\"}";
	double total = 0, done = -1, before;
	char series[128];
	int i;

	snprintf(series, sizeof(series), "chorus_peer_resynced_bytes_total%s", peer);
	before = metric("second", series);
	ASSERT_EQ(0, run("%s writeset remove " VOL " 2 >/dev/null && %s peer disconnect " VOL
			 " 2 >/dev/null", self->ctl, self->ctl));
	ASSERT_EQ(0, run(FIO "--rw=write --bs=1M --offset=16M --size=8M >/dev/null"));
	/*
	 * 1 MiB/s, slower by rl_scale(): on the debug kernel a scrape takes
	 * 5 to 10 s, and at 1 MiB/s the 8 MiB resync was once over before the
	 * first one (stop 61).
	 */
	ASSERT_EQ(0, run("%s volume set " VOL " --resync-rate %uK >/dev/null && %s peer connect "
			 VOL " 2 >/dev/null", self->ctl, 1024 / rl_scale(), self->ctl));
	for (i = 0; i < 40 && total <= 0; i++) {
		usleep(250 * 1000);
		if (scrape("resync"))
			continue;
		snprintf(series, sizeof(series), "chorus_peer_resync_total_bytes%s", peer);
		total = metric("resync", series);
		snprintf(series, sizeof(series), "chorus_peer_resync_done_bytes%s", peer);
		done = metric("resync", series);
	}
	/* What was written, to the bitmap's granularity. */
	EXPECT_LE(8 * MiB, total) TH_LOG("no resync of 8 MiB seen running");
	EXPECT_GE(9 * MiB, total) TH_LOG("a resync of %.0f bytes for 8 MiB written", total);
	EXPECT_LE(0, done);
	EXPECT_GT(total, done) TH_LOG("the resync was done at its first scrape");
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 60));
	ASSERT_EQ(0, scrape("resynced"));
	snprintf(series, sizeof(series), "chorus_peer_resync_total_bytes%s", peer);
	EXPECT_EQ(0, metric("resynced", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series), "chorus_peer_resynced_bytes_total%s", peer);
	EXPECT_EQ(before + total, metric("resynced", series)) TH_LOG("%s", series);
}

/*
 * chorusd's Prometheus metrics on the owner (Documentation/metrics.rst),
 * scraped twice with curl under paced fio writes: the write counters and
 * the kernel's write latency histogram rise, the peer is connected, in the
 * write set and on the variant's transport; SIGTERM stops chorusd cleanly
 * and its port with it.
 */
TEST_F_TIMEOUT(repl, metrics_under_fio, 120)
{
	const char *v = "{volume=\"" VOL "\"}";
	const char *peer = "{volume=\"" VOL "\",peer=\"2\"";
	char series[256], args[160];
	pid_t chorusd, fio;
	int i, status;

	start("none", true);
	chorusd = start_metrics_chorusd(&self->env);
	ASSERT_LT(0, chorusd);
	for (i = 0; i < 50 && scrape("first"); i++)
		usleep(100000);
	ASSERT_EQ(0, scrape("first")) TH_LOG("chorusd serves no metrics");
	/*
	 * On the debug kernel (rl_scale() > 1) fio needs more than the 2 s
	 * this once waited to start writing, and each scrape takes a second
	 * or two: fio writes for 6 s times the scale, the first scrape comes
	 * once a write is counted, the second 2 s times the scale later, both
	 * inside fio's writes (stop 57).
	 */
	snprintf(args, sizeof(args), "--rw=randwrite --bs=4k --iodepth=4 --offset=0 --size=8M "
		 "--time_based --runtime=%u --rate_iops=200", 6 * rl_scale());
	fio = rl_fio_background(&self->env, 1, args);
	ASSERT_LT(0, fio);
	snprintf(series, sizeof(series), "chorus_volume_writes_total%s", v);
	for (i = 0; i < 20 * (int)rl_scale(); i++) {
		usleep(500000);
		if (!scrape("first") && metric("first", series) > 0)
			break;
	}
	ASSERT_LT(0, metric("first", series)) TH_LOG("no write counted: %s", series);
	sleep(2 * rl_scale());
	ASSERT_EQ(0, scrape("second"));
	ASSERT_EQ(fio, waitpid(fio, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("fio failed");

	EXPECT_EQ(1, metric("second", "chorus_kernel_up"));
	snprintf(series, sizeof(series), "chorus_volume_writes_total%s", v);
	EXPECT_LT(0, metric("first", series));
	EXPECT_LT(metric("first", series), metric("second", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series), "chorus_volume_write_bytes_total%s", v);
	EXPECT_LT(metric("first", series), metric("second", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series), "chorus_volume_write_latency_seconds_count%s", v);
	EXPECT_LT(0, metric("first", series));
	EXPECT_LT(metric("first", series), metric("second", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series),
		 "chorus_volume_write_latency_seconds_bucket{volume=\"" VOL "\",le=\"+Inf\"}");
	EXPECT_LT(0, metric("second", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series), "chorus_volume_role{volume=\"" VOL "\",role=\"owner\"}");
	EXPECT_EQ(1, metric("second", series));
	snprintf(series, sizeof(series), "chorus_peer_connection_state%s,state=\"connected\"}",
		 peer);
	EXPECT_EQ(1, metric("second", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series), "chorus_peer_in_write_set%s}", peer);
	EXPECT_EQ(1, metric("second", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series), "chorus_peer_replication_state%s,state=\"up-to-date\"}",
		 peer);
	EXPECT_EQ(1, metric("second", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series), "chorus_peer_active_transport%s,transport=\"%s\"}", peer,
		 variant->active);
	EXPECT_EQ(1, metric("second", series)) TH_LOG("%s", series);
	snprintf(series, sizeof(series), "chorus_peer_writes_sent_total%s}", peer);
	EXPECT_LT(metric("first", series), metric("second", series)) TH_LOG("%s", series);

	resync_progress_scraped(_metadata, self);
	ASSERT_EQ(0, kill(chorusd, SIGTERM));
	EXPECT_EQ(0, wait_child(chorusd, 10000)) TH_LOG("chorusd did not stop cleanly");
	self->env.npids = 0;
	EXPECT_NE(0, scrape("after")) TH_LOG("the port still answers after chorusd stopped");
	if (!_metadata->passed)
		run("tail -n 20 " METRICS_DIR "/chorusd.log; head -c 3000 " METRICS_DIR "/second");
}

CHORUS_HARNESS_MAIN
