// SPDX-License-Identifier: GPL-2.0
/*
 * disk: a replica's disk that fails, stalls or flakes under writes is
 * detached, and no error reaches the application; an owner's disk that
 * fails under writes fails none of them, and the owner hands over (issue
 * 19).
 *
 * Runs on vm1, the owner (node 1), and drives vm2, the replica (node 2).
 * On both VMs the volume's backing device is a device-mapper target,
 * chorus-bk, over the first 128 MiB of /dev/vdb: linear until a case swaps
 * vm2's table for error, delay or flakey under fio. The replication is
 * TCP: what happens to a failed disk is decided above the transport.
 *
 * The write-set change that chorusd records in etcd before it tells the
 * kernel (cluster.replica_disk_fails_…) is done here by hand, or by
 * auto_degrade: what is tested here is the kernel's part, that a failed
 * replica's writes are held, not failed, until it leaves the write set,
 * that its session stays up without flapping, and that the stall check
 * fails a disk that completes nothing for the disk timeout but not one
 * that is merely slow.
 */
#define RL_BACKING	"/dev/mapper/chorus-bk"
#include "common.h"
#include "repl_lab.h"

#define PEER		2
#define VOL		RL_VOL
#define EPOCH		5
/* The dm device: 128 MiB (data, then the metadata behind it). */
#define DM_SECTORS	"262144"
#define DM_LINEAR	"0 " DM_SECTORS " linear /dev/vdb 0"
/* vm2's new disk: the next 128 MiB of /dev/vdb, filled with other data. */
#define DM_NEW_DISK	"0 " DM_SECTORS " linear /dev/vdb " DM_SECTORS

FIXTURE(disk) {
	struct chorus_env env;
};

/*
 * Disk failures are decided above the transport, except where data moves
 * differently: over RDMA a replica read of an owner whose disk failed and
 * the full copy to a new disk. make check runs the TCP lane's three cases;
 * make check-all-variants every case over both.
 */
FIXTURE_VARIANT(disk) {
	const char *transport;
	const char *check_cases;
};

FIXTURE_VARIANT_ADD(disk, tcp) {
	.transport = "tcp",
	/*
	 * The owner's failed disk under chorusd is the cluster suite's
	 * (cluster.chorusd_on_owner_restarted_then_stopped_… and
	 * cluster.owner_disk_fails_then_…, make check-cluster); the flakey
	 * disk takes the error case's path.
	 */
	.check_cases = "replica_disk_error_held_out_of_writeset_replaced "
		       "replica_disk_stall_detached_short_stall_not "
		       "owner_log_write_error_write_stands_on_the_write_set "
		       "replica_metadata_error_then_no_disk_left "
		       "owner_disk_fails_while_member_syncs_no_copy",
};

FIXTURE_VARIANT_ADD(disk, rdma) {
	.transport = "rdma",
	.check_cases = "",
};

/* Put @table under chorus-bk on @vm (the swap waits for I/O in flight). */
static int dm_swap(int vm, const char *table)
{
	return rl_on(vm, "dmsetup load --noudevsync chorus-bk --table '%s' && "
		     "dmsetup resume --noudevsync chorus-bk", table);
}

static uint64_t volume_writes(void)
{
	uint64_t v = 0;

	read_u64f(&v, "/sys/block/chorus0/chorus/writes");
	return v;
}

/*
 * Lines matching the awk regex @pattern in @vm's kernel log since this
 * case's marker: the last one, as each variant of a case marks the log
 * with the same name.
 */
static uint64_t log_count(int vm, const char *mark, const char *pattern)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "dmesg | awk '/%s begin/ {n = 0} /%s/ {n++} END {print n + 0}'",
		 mark, pattern);
	return rl_cmd_u64(vm, cmd);
}

/* A field of `volume status --json` on @vm, "" if none. */
static void volume_field(int vm, const char *field, char *out, size_t len)
{
	if (rl_on_out(vm, out, len, "%s volume status " VOL " --json | "
		      "jq -r '.%s | if . == null then \"\" else tostring end'", rl_ctl(), field))
		out[0] = '\0';
}

/* Writes @vm holds because their local part failed. */
static uint64_t disk_held(int vm)
{
	char out[64];

	volume_field(vm, "disk_held", out, sizeof(out));
	return strtoull(out, NULL, 10);
}

/* Wait until @field of `volume status --json` on @vm reads @want. */
static bool wait_volume_field(int vm, const char *field, const char *want, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();
	char out[256];

	do {
		volume_field(vm, field, out, sizeof(out));
		if (!strcmp(out, want))
			return true;
		usleep(200 * 1000);
	} while (now_ms() < end);
	fprintf(stderr, "# vm%d: %s is \"%s\", not \"%s\"\n", vm, field, out, want);
	return false;
}

FIXTURE_SETUP(disk)
{
	const char *count = getenv("CHORUS_VM_COUNT");
	int vm;

	CHORUS_CHECK_LANE(variant->check_cases);
	env_setup(_metadata, &self->env, false);
	ASSERT_TRUE(count && atoi(count) >= 2 && this_vm() == 1)
		TH_LOG("needs a lab of 2 VMs and to run on vm1");
	ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[0], PEER, _metadata->name));
	self->env.nremote = 1;
	for (vm = 2; vm >= 1; vm--) {
		rl_node_down(vm);
		ASSERT_EQ(0, rl_on(vm, "modprobe -a dm-mod dm-delay dm-flakey && "
				   "{ dmsetup remove --noudevsync chorus-bk 2>/dev/null; true; } && "
				   "dmsetup create --noudevsync chorus-bk --table '" DM_LINEAR "' && "
				   /* No udev in the lab: make /dev/mapper/chorus-bk. */
				   "dmsetup mknodes chorus-bk"))
			TH_LOG("vm%d: cannot make chorus-bk", vm);
	}
	rl_start_pair(variant->transport, 1, EPOCH);
}

FIXTURE_TEARDOWN(disk)
{
	int vm;

	rl_on(PEER, "pkill -f 'sleep 60[0]'; true");
	rl_on(1, "pkill -x fio; pkill -f 'sleep 600[1]'; umount /mnt/chorus-disk 2>/dev/null; true");
	for (vm = 2; vm >= 1; vm--) {
		dm_swap(vm, DM_LINEAR);
		rl_node_down(vm);
		rl_on(vm, "for d in chorus-bk chorus-old chorus-new; do "
		      "dmsetup remove --noudevsync $d 2>/dev/null; done; true");
	}
	env_teardown(_metadata, &self->env);
}

/* Paced 4 KiB writes to the first 8 MiB on vm1, in the background. */
static pid_t start_writer(struct chorus_env *env, const char *extra)
{
	return rl_fio_background(env, 1, extra);
}

static void __writer_ok(struct __test_metadata *_metadata, struct chorus_env *env, pid_t fio)
{
	int status;

	ASSERT_EQ(fio, waitpid(fio, &status, 0));
	env->npids = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("fio saw an error (or failed its verify)");
}
#define writer_ok(fio) __writer_ok(_metadata, &self->env, fio)

/* Writes vm1 holds for vm2, waited for up to 10 s (longer on the debug kernel). */
static uint64_t held_for_peer(void)
{
	uint64_t held = 0;
	int i;

	for (i = 0; i < 10 * (int)rl_scale() && !held; i++) {
		held = rl_peer_u64(1, PEER, "held");
		if (!held)
			sleep(1);
	}
	return held;
}

/* Format chorus-new on vm2 for the volume, or with another uuid. */
static int format_new_disk(const char *uuid)
{
	return rl_on(PEER, "%s volume format --backing /dev/mapper/chorus-new --size %dM "
		     "--uuid %s --force >/dev/null", rl_ctl(), RL_SIZE_MB, uuid);
}

/*
 * vm2's failed disk, out of the write set, is replaced while vm2 keeps the
 * volume attached and its /dev/chorus0 open: a new disk (the next 128 MiB
 * of /dev/vdb, full of other data) is formatted for the volume and
 * attached in place of the failed one. Refused by name first: on vm1,
 * whose disk works; a disk formatted for another volume. vm1 finds the new
 * disk (its generation id differs from the one its slot knew), sets every
 * region for it and resyncs it in full; vm2 is then up to date and in the
 * write set again, and the data areas are identical.
 */
static void replaced_disk_gets_a_full_copy(struct __test_metadata *_metadata)
{
	uint64_t copied;
	char out[256];

	ASSERT_EQ(0, rl_on(PEER, "dd if=/dev/urandom of=/dev/vdb bs=1M seek=128 count=%d "
			   "oflag=direct status=none && dmsetup create --noudevsync chorus-new "
			   "--table '" DM_NEW_DISK "' && dmsetup mknodes chorus-new", RL_SIZE_MB));
	ASSERT_EQ(0, rl_on(PEER, "setsid sleep 600 </dev/chorus0 >/dev/null 2>&1 &"));
	volume_field(PEER, "open_count", out, sizeof(out));
	EXPECT_STREQ("1", out) TH_LOG("vm2's volume is not held open");

	ASSERT_NE(0, rl_on_out(1, out, sizeof(out), "%s volume attach-disk " VOL
			       " --backing " RL_BACKING " 2>&1", rl_ctl()));
	EXPECT_NE(NULL, strstr(out, "disk works")) TH_LOG("vm1 said: %s", out);
	ASSERT_EQ(0, format_new_disk("0b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"));
	ASSERT_NE(0, rl_on_out(PEER, out, sizeof(out), "%s volume attach-disk " VOL
			       " --backing /dev/mapper/chorus-new 2>&1", rl_ctl()));
	EXPECT_NE(NULL, strstr(out, "uuid does not match")) TH_LOG("vm2 said: %s", out);

	ASSERT_EQ(0, format_new_disk(RL_UUID));
	ASSERT_EQ(0, rl_on(PEER, "%s volume attach-disk " VOL " --backing "
			   "/dev/mapper/chorus-new >/dev/null", rl_ctl()));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "up-to-date", 60));
	EXPECT_EQ(1, log_count(1, "replica_disk_error_held_out_of_writeset_replaced",
			       "peer 2 has a new disk"))
		TH_LOG("vm1 did not log the new disk once");
	/* Every region of the volume was copied, not only those written. */
	copied = rl_peer_u64(1, PEER, "resynced_bytes");
	EXPECT_LE((uint64_t)RL_SIZE_MB << 20, copied) TH_LOG("resynced %llu bytes",
							     (unsigned long long)copied);
	rl_peer_field(1, PEER, "in_writeset", out, sizeof(out));
	EXPECT_STREQ("true", out);
	volume_field(PEER, "disk_error", out, sizeof(out));
	EXPECT_STREQ("", out) TH_LOG("vm2 still reports a disk error");
	volume_field(PEER, "open_count", out, sizeof(out));
	EXPECT_STREQ("1", out) TH_LOG("vm2's volume was closed under its opener");

	/* rl_pair_identical() reads chorus-bk: give the new disk that name. */
	ASSERT_EQ(0, rl_on(PEER, "dmsetup rename --noudevsync chorus-bk chorus-old && "
			   "dmsetup rename --noudevsync chorus-new chorus-bk && "
			   "dmsetup mknodes"));
	rl_pair_identical();
}

/*
 * vm2's disk starts failing every I/O under fio with verify. vm2 detaches
 * it (state failed, the error named) and answers that its disk failed;
 * vm1 marks the peer, keeps its session and holds its part of each write
 * (no write completes, none fails) until the peer is taken out of the
 * write set; then fio goes on and verifies everything it wrote. vm2
 * refuses to become the owner with the reason. Then vm2's disk is
 * replaced (replaced_disk_gets_a_full_copy()).
 */
TEST_F_TIMEOUT(disk, replica_disk_error_held_out_of_writeset_replaced, 300)
{
	uint64_t reconnects, w0, w1, held;
	char out[512];
	pid_t fio;

	reconnects = rl_peer_u64(1, PEER, "reconnects");
	/* Still writing when the disk fails, on the slower debug kernel too. */
	snprintf(out, sizeof(out), "--rw=randwrite --bs=4k --iodepth=4 --offset=0 --size=8M "
		 "--io_size=%uM --rate_iops=150 --verify=crc32c --verify_fatal=1",
		 3 * rl_scale());
	fio = start_writer(&self->env, out);
	ASSERT_LE(0, fio);
	sleep(3);
	ASSERT_EQ(0, dm_swap(PEER, "0 " DM_SECTORS " error"));

	ASSERT_TRUE(rl_wait_peer(1, PEER, "disk_failed", "true", 15));
	volume_field(PEER, "state", out, sizeof(out));
	EXPECT_STREQ("failed", out);
	volume_field(PEER, "disk_error", out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "failed")) TH_LOG("vm2's disk_error: \"%s\"", out);
	volume_field(PEER, "disk_failed_at", out, sizeof(out));
	EXPECT_NE('\0', out[0]) TH_LOG("no time of the failure");

	/* Held, not failed: nothing completes while the peer is a member. */
	sleep(1);
	w0 = volume_writes();
	sleep(2);
	w1 = volume_writes();
	EXPECT_EQ(w0, w1) TH_LOG("writes completed while a member's disk had failed");
	/* The debug kernel may take a while to answer them all. */
	held = held_for_peer();
	EXPECT_LT(0, held) TH_LOG("no write held for vm2");

	ASSERT_NE(0, rl_on_out(PEER, out, sizeof(out), "%s volume role " VOL
			       " owner --epoch 9 2>&1", rl_ctl()));
	EXPECT_NE(NULL, strstr(out, "local disk failed")) TH_LOG("vm2 said: %s", out);

	ASSERT_EQ(0, rl_on(1, "%s writeset remove " VOL " 2 >/dev/null", rl_ctl()));
	sleep(2);
	EXPECT_LT(w1, volume_writes()) TH_LOG("I/O did not resume");
	EXPECT_EQ(0, rl_peer_u64(1, PEER, "held"));
	writer_ok(fio);

	/* The session stayed up all along: no flapping. */
	rl_peer_field(1, PEER, "conn_state", out, sizeof(out));
	EXPECT_STREQ("connected", out);
	EXPECT_EQ(reconnects, rl_peer_u64(1, PEER, "reconnects"));
	rl_peer_field(1, PEER, "repl_state", out, sizeof(out));
	EXPECT_STREQ("out-of-date", out);
	replaced_disk_gets_a_full_copy(_metadata);
}

/*
 * A disk timeout under a second is refused by name. vm2's disk timeout is
 * T (3 s, longer on the debug kernel); vm1 has
 * auto_degrade. Under fio, vm2's disk first delays each I/O by 0.5 s: slow
 * but completing, it is not failed. Then by 3 T: vm2 fails it for having
 * completed nothing within T, vm1 learns it (from a reply or a heartbeat)
 * and drops the peer from the write set, and fio finishes without an
 * error. The I/Os the stalled disk held come back later and change
 * nothing.
 */
TEST_F_TIMEOUT(disk, replica_disk_stall_detached_short_stall_not, 300)
{
	unsigned int t_ms = 3000 * rl_scale();
	char table[192], out[512];
	pid_t fio;

	/* Below a second is refused by name, and changes nothing. */
	ASSERT_NE(0, rl_on_out(PEER, out, sizeof(out), "%s volume set " VOL
			       " --disk-timeout-ms 500 2>&1", rl_ctl()));
	EXPECT_NE(NULL, strstr(out, "0 (off) or 1000..600000")) TH_LOG("vm2 said: %s", out);
	volume_field(PEER, "disk_timeout_ms", out, sizeof(out));
	EXPECT_STREQ("5000", out);
	ASSERT_EQ(0, rl_on(PEER, "%s volume set " VOL " --disk-timeout-ms %u >/dev/null",
			   rl_ctl(), t_ms));
	ASSERT_EQ(0, rl_on(1, "%s volume set " VOL " --auto-degrade on >/dev/null", rl_ctl()));
	/*
	 * Long enough to write on after the stall is seen: 2 s + 2 T + T + 6 s,
	 * times the scale as well: on the debug kernel each status query and
	 * table swap between those sleeps takes 10 to 40 s, and a fio that
	 * ended before the stall began left nothing to stall (stop 64).
	 */
	snprintf(table, sizeof(table), "--rw=randwrite --bs=4k --iodepth=4 --offset=0 "
		 "--size=8M --time_based --runtime=%u --rate_iops=100",
		 (8 + 3 * t_ms / 1000) * rl_scale());
	fio = start_writer(&self->env, table);
	ASSERT_LE(0, fio);
	sleep(2);

	ASSERT_EQ(0, dm_swap(PEER, "0 " DM_SECTORS " delay /dev/vdb 0 500"));
	sleep(t_ms / 1000 * 2);
	volume_field(PEER, "state", out, sizeof(out));
	EXPECT_STREQ("online", out) TH_LOG("a slow disk was failed");
	rl_peer_field(1, PEER, "in_writeset", out, sizeof(out));
	EXPECT_STREQ("true", out);

	snprintf(table, sizeof(table), "0 " DM_SECTORS " delay /dev/vdb 0 %u", 3 * t_ms);
	ASSERT_EQ(0, dm_swap(PEER, table));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "disk_failed", "true", 3 * t_ms / 1000 + 5));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "in_writeset", "false", 10));
	volume_field(PEER, "disk_error", out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "completed nothing")) TH_LOG("vm2's disk_error: \"%s\"", out);
	writer_ok(fio);
	EXPECT_EQ(0, rl_peer_u64(1, PEER, "held"));
}

/*
 * The writes of the owner's disk case, verified later with --do_verify=1
 * --verify_only: with --do_verify=0, fio's --verify_only reads nothing back
 * and passes.
 */
#define OWNER_WRITES	"--rw=randwrite --bs=4k --iodepth=4 --offset=0 --size=8M " \
			"--io_size=3M --rate_iops=150 --verify=crc32c --do_verify=0"

/*
 * vm1's own disk, the owner's, fails every I/O under fio writes. vm1
 * detaches it and no write fails: its writes wait (disk_held) until the
 * failed disk leaves the write set (`writeset remove` of vm1's own id, which
 * chorusd sends once etcd has the failure; refused while the disk works,
 * and again once done), then each is acknowledged once vm2, the write set,
 * has it (the one whose local part failed as well); no read fails either: a reader runs through the failure, and while vm1 still owns the
 * volume every fio write reads back (--verify_only) from vm2's disk, the
 * degraded reads counted. Then the hand-over
 * chorusd makes (cluster.md): vm1 steps down, refusing to own again, and
 * vm2 becomes the owner at a higher epoch. Every write fio made is there on
 * vm2's disk (fio --verify_only). vm2 finds vm1's disk failed and vm1 leaves
 * its write set; then vm1, without a disk, serves the volume by forwarding:
 * fio with verify through it passes.
 */
TEST_F_TIMEOUT(disk, owner_disk_error_writes_stand_on_the_write_set, 300)
{
	uint64_t degraded;
	char out[512];
	pid_t fio, reader;

	/* The own id is refused while the disk works. */
	EXPECT_NE(0, rl_on_out(1, out, sizeof(out), "%s writeset remove " VOL " 1 2>&1",
			       rl_ctl()));
	EXPECT_NE(NULL, strstr(out, "the local disk works")) TH_LOG("vm1 said: %s", out);
	reader = rl_fio_background(&self->env, 1, "--rw=randread --bs=4k --iodepth=4 "
				   "--offset=16M --size=8M --time_based --runtime=10 "
				   "--rate_iops=100");
	ASSERT_LE(0, reader);
	fio = start_writer(&self->env, OWNER_WRITES);
	ASSERT_LE(0, fio);
	sleep(2);
	ASSERT_EQ(0, dm_swap(1, "0 " DM_SECTORS " error"));
	/*
	 * Invariant 4: until the failure is recorded (chorusd records it in
	 * etcd first; here by hand) no write stands on vm2 alone: they are
	 * held, none failed, while reads go on from vm2.
	 */
	ASSERT_TRUE(wait_volume_field(1, "disk_in_writeset", "true", 5));
	sleep(2);
	EXPECT_LT(0, disk_held(1))
		TH_LOG("no write is held for the failed disk");
	EXPECT_EQ(0, waitpid(fio, NULL, WNOHANG)) TH_LOG("fio ended with its writes held");
	ASSERT_EQ(0, rl_on(1, "%s writeset remove " VOL " 1 >/dev/null", rl_ctl()));
	EXPECT_TRUE(wait_volume_field(1, "disk_in_writeset", "false", 5));
	EXPECT_NE(0, rl_on_out(1, out, sizeof(out), "%s writeset remove " VOL " 1 2>&1",
			       rl_ctl()));
	EXPECT_NE(NULL, strstr(out, "not in the write set")) TH_LOG("vm1 said: %s", out);
	writer_ok(fio);
	writer_ok(reader);
	EXPECT_EQ(0, disk_held(1));
	volume_field(1, "state", out, sizeof(out));
	EXPECT_STREQ("failed", out);
	EXPECT_EQ(0, rl_peer_u64(1, PEER, "held"));
	EXPECT_EQ(0, rl_on(1, RL_FIO OWNER_WRITES " --do_verify=1 --verify_only >/dev/null"))
		TH_LOG("vm1, its disk failed, does not read what it acknowledged from vm2");
	degraded = rl_cmd_u64(1, "cat /sys/block/chorus0/chorus/degraded_reads");
	EXPECT_LT(768, degraded) TH_LOG("vm1 read from vm2 only %llu times",
					(unsigned long long)degraded);

	ASSERT_EQ(0, rl_on(1, "%s volume role " VOL " replica >/dev/null", rl_ctl()));
	ASSERT_NE(0, rl_on_out(1, out, sizeof(out), "%s volume role " VOL
			       " owner --epoch %d 2>&1", rl_ctl(), EPOCH + 2));
	EXPECT_NE(NULL, strstr(out, "local disk failed")) TH_LOG("vm1 said: %s", out);
	ASSERT_EQ(0, rl_on(PEER, "%s volume role " VOL " owner --epoch %d >/dev/null",
			   rl_ctl(), EPOCH + 1));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "role", "owner", 30));
	EXPECT_EQ(0, rl_on(PEER, RL_FIO OWNER_WRITES " --do_verify=1 --verify_only >/dev/null"))
		TH_LOG("a write acknowledged on vm1 is not on vm2");
	/*
	 * vm2 learns vm1's disk failed (vm1 stores no log) and holds vm1's
	 * part of each write until vm1 leaves its write set: chorusd records
	 * that first (node 1 is out of date in etcd already); here by hand.
	 */
	ASSERT_TRUE(rl_wait_peer(PEER, 1, "disk_failed", "true", 30));
	rl_on(PEER, "%s writeset remove " VOL " 1 >/dev/null", rl_ctl());
	EXPECT_EQ(0, rl_on(1, RL_FIO "--rw=randwrite --bs=4k --iodepth=4 --offset=16M "
			   "--size=2M --verify=crc32c --verify_fatal=1 >/dev/null"))
		TH_LOG("vm1 does not serve the volume through vm2");
}

/*
 * Intermittent errors: vm2's disk fails its I/O for 2 s of every 4. It is
 * detached at the first error and stays so: vm2 logs the failure once, and
 * vm1's session with it never restarts. (make check-all-variants)
 */
TEST_F_TIMEOUT(disk, replica_disk_flakey_detached_once, 300)
{
	uint64_t reconnects = rl_peer_u64(1, PEER, "reconnects");
	pid_t fio;

	ASSERT_EQ(0, rl_on(1, "%s volume set " VOL " --auto-degrade on >/dev/null", rl_ctl()));
	fio = start_writer(&self->env, "--rw=randwrite --bs=4k --iodepth=4 --offset=0 "
			   "--size=8M --time_based --runtime=20 --rate_iops=100");
	ASSERT_LE(0, fio);
	sleep(2);
	ASSERT_EQ(0, dm_swap(PEER, "0 " DM_SECTORS " flakey /dev/vdb 0 2 2"));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "disk_failed", "true", 15));
	writer_ok(fio);
	EXPECT_EQ(1, log_count(PEER, "replica_disk_flakey_detached_once", "repl0: disk .* failed"));
	EXPECT_EQ(reconnects, rl_peer_u64(1, PEER, "reconnects"));
	EXPECT_EQ(0, rl_peer_u64(1, PEER, "held"));
}

/* Writes acknowledged by vm1 alone once vm2's disk failed (read back as above). */
#define ALONE_WRITES	"--rw=randwrite --bs=4k --iodepth=4 --offset=24M --size=4M " \
			"--io_size=2M --verify=crc32c --do_verify=0"

/*
 * vm2's metadata fails while its data area works (the device's second
 * half, where the metadata sits behind the 64 MiB volume, swapped for
 * error): vm1 restates its ownership at epoch 6, and vm2's superblock
 * write of that epoch detaches its disk, as a failed data write does, with
 * the reason. vm2 leaves the write set and vm1 acknowledges writes alone.
 * Then vm1's disk fails too: no copy is left to take a write or serve a
 * read, and both fail with an I/O error (nothing is acknowledged that no
 * disk has). vm1's disk comes back and is attached again in place, as the
 * admin guide says, while the volume stays open (an opener holds it):
 * `volume role VOL replica`, `volume attach-disk` of the same device (the
 * holder that claimed it claims it again; its data is kept, every peer's
 * slot marked for a full resync: vm2 stays out of date), vm1 owns it at
 * epoch 7, and every write it acknowledged alone reads back.
 */
TEST_F_TIMEOUT(disk, replica_metadata_error_then_no_disk_left, 300)
{
	char out[512];

	ASSERT_EQ(0, rl_on(PEER, "printf '0 131072 linear /dev/vdb 0\\n131072 131072 error\\n' | "
			   "dmsetup load --noudevsync chorus-bk && "
			   "dmsetup resume --noudevsync chorus-bk"));
	ASSERT_EQ(0, rl_on(1, "%s volume role " VOL " owner --epoch %d >/dev/null", rl_ctl(),
			   EPOCH + 1));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "disk_failed", "true", 20));
	volume_field(PEER, "disk_error", out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "superblock write failed")) TH_LOG("vm2's disk_error: \"%s\"",
								      out);
	volume_field(PEER, "state", out, sizeof(out));
	EXPECT_STREQ("failed", out);
	ASSERT_EQ(0, rl_on(1, "%s writeset remove " VOL " 2 >/dev/null", rl_ctl()));
	ASSERT_EQ(0, rl_on(1, RL_FIO ALONE_WRITES " >/dev/null"));

	ASSERT_EQ(0, dm_swap(1, "0 " DM_SECTORS " error"));
	EXPECT_NE(0, rl_on_out(1, out, sizeof(out), "dd if=/dev/zero of=/dev/chorus0 bs=4k "
			       "count=1 seek=100 oflag=direct 2>&1"))
		TH_LOG("a write succeeded with both disks failed");
	EXPECT_NE(NULL, strstr(out, "Input/output error")) TH_LOG("dd said: %s", out);
	EXPECT_NE(0, rl_on_out(1, out, sizeof(out), "dd if=/dev/chorus0 of=/dev/null bs=4k "
			       "count=1 skip=6200 iflag=direct 2>&1"))
		TH_LOG("a read succeeded with both disks failed");
	EXPECT_NE(NULL, strstr(out, "Input/output error")) TH_LOG("dd said: %s", out);
	volume_field(1, "state", out, sizeof(out));
	EXPECT_STREQ("failed", out);
	EXPECT_NE(0, rl_on_out(1, out, sizeof(out), "%s writeset remove " VOL " 1 2>&1",
			       rl_ctl()));
	EXPECT_NE(NULL, strstr(out, "no other up-to-date member")) TH_LOG("vm1 said: %s", out);

	/* vm1's disk is back: attached again in place, it owns with what it acked. */
	ASSERT_EQ(0, dm_swap(1, DM_LINEAR));
	ASSERT_EQ(0, rl_on(1, "setsid sleep 6001 </dev/chorus0 >/dev/null 2>&1 &"));
	EXPECT_EQ(0, rl_on_out(1, out, sizeof(out), "%s volume role " VOL " replica 2>&1 && "
			       "%s volume attach-disk " VOL " --backing /dev/mapper/chorus-bk 2>&1",
			       rl_ctl(), rl_ctl())) TH_LOG("vm1 said: %s", out);
	ASSERT_EQ(0, rl_on_out(1, out, sizeof(out), "%s volume role " VOL " owner --epoch %d 2>&1",
			       rl_ctl(), EPOCH + 2)) TH_LOG("vm1 said: %s", out);
	volume_field(1, "state", out, sizeof(out));
	EXPECT_STREQ("online", out);
	EXPECT_EQ(0, rl_on(1, RL_FIO ALONE_WRITES " --do_verify=1 --verify_only >/dev/null"))
		TH_LOG("a write vm1 acknowledged alone is lost");
	rl_peer_field(1, PEER, "repl_state", out, sizeof(out));
	EXPECT_STREQ("out-of-date", out);
	EXPECT_EQ(0, rl_on(1, "pkill -f 'sleep 600[1]'")) TH_LOG("the opener did not hold on");
}

/* vm1's disk with its data area working and its metadata area failing. */
#define DM_META_ERROR	"0 " RL_STR(RL_DATA_SECTORS) " linear /dev/vdb 0\\n" \
			RL_STR(RL_DATA_SECTORS) " " RL_STR(RL_DATA_SECTORS) " error\\n"
#define RL_DATA_SECTORS	131072	/* RL_SIZE_MB */
/* 4 KiB of 'k' (0x6b) in /tmp/blk on @vm, and the command comparing block @blk. */
#define BLK_MAKE	"head -c 4096 /dev/zero | tr '\\0' k > /tmp/blk"
#define BLK_CMP		"dd if=%s bs=4k count=1 skip=%d iflag=direct status=none | cmp -s - /tmp/blk"
/* /tmp/blk written to block 2304 in the background, its exit status in /tmp/ddrc. */
#define HELD_DD_START	"rm -f /tmp/ddrc; (dd if=/tmp/blk of=/dev/chorus0 bs=4k seek=2304 " \
			"oflag=direct conv=notrunc status=none; echo $? > /tmp/ddrc) " \
			"</dev/null >/dev/null 2>&1 &"
/* Waits up to 10 s for that dd to end; its status is then compared ("= 0"). */
#define HELD_DD_ENDED	"for i in $(seq 100); do test -s /tmp/ddrc && break; sleep 0.1; done; " \
			"test \"$(cat /tmp/ddrc)\" "

/*
 * Only the owner's metadata area fails, its data area works: the first
 * write after the set-up needs an activity-log extent, and the log write
 * is the first I/O to fail. vm1 detaches its disk ("activity log write
 * failed") and the write is acknowledged once vm2 has it (it failed with
 * EIO before: make check-cluster-rdma at stop 35); vm1 reads it back from
 * vm2.
 */
TEST_F_TIMEOUT(disk, owner_log_write_error_write_stands_on_the_write_set, 120)
{
	char out[512];
	int vm;

	for (vm = 1; vm <= 2; vm++)
		ASSERT_EQ(0, rl_on(vm, BLK_MAKE));
	ASSERT_EQ(0, run("printf '" DM_META_ERROR "' | dmsetup load --noudevsync chorus-bk && "
			 "dmsetup resume --noudevsync chorus-bk"));
	/* The write waits until the failed disk leaves the write set. */
	ASSERT_EQ(0, run(HELD_DD_START));
	ASSERT_TRUE(wait_volume_field(1, "disk_held", "1", 20));
	sleep(1);
	EXPECT_NE(0, run("test -e /tmp/ddrc")) TH_LOG("the write ended while held");
	ASSERT_EQ(0, run("%s writeset remove " VOL " 1 >/dev/null", rl_ctl()));
	EXPECT_EQ(0, run(HELD_DD_ENDED "= 0")) TH_LOG("the write failed");
	volume_field(1, "disk_error", out, sizeof(out));
	EXPECT_NE(NULL, strstr(out, "activity log write failed"))
		TH_LOG("vm1's disk_error: \"%s\"", out);
	EXPECT_EQ(0, rl_on(PEER, BLK_CMP, RL_BACKING, 2304)) TH_LOG("vm2 lacks the write");
	EXPECT_EQ(0, run(BLK_CMP, "/dev/chorus0", 2304)) TH_LOG("vm1 does not read it back");
	EXPECT_LT(0, rl_cmd_u64(1, "cat /sys/block/chorus0/chorus/degraded_reads"));
}

/*
 * A write held because the owner's disk failed, the failure not recorded,
 * when the owner steps down (make check-all-variants): it is never
 * completed as the owner's, as no application was told it stood; a lease
 * deadline that passed does not let a held write go either. Past that
 * deadline the step-down hands it over (role.c): it starts again,
 * forwarded, and with no owner anywhere fails at its forward timeout (3 s
 * here). vm2 has the write (it acked it), which no one acknowledged: an
 * unacknowledged write may be there or not.
 */
TEST_F_TIMEOUT(disk, owner_disk_held_write_fails_at_step_down, 300)
{
	ASSERT_EQ(0, run("echo 3000 > /sys/module/chorus/parameters/forward_timeout_ms"));
	ASSERT_EQ(0, run(BLK_MAKE));
	ASSERT_EQ(0, dm_swap(1, "0 " DM_SECTORS " error"));
	ASSERT_EQ(0, run(HELD_DD_START));
	ASSERT_TRUE(wait_volume_field(1, "disk_held", "1", 20));
	/* The lease: a deadline 1 s ahead passes, the write stays held. */
	ASSERT_EQ(0, run("%s lease set --valid-for 1000 >/dev/null && sleep 2", rl_ctl()));
	EXPECT_NE(0, run("test -e /tmp/ddrc")) TH_LOG("the write ended while held");
	EXPECT_EQ(1, disk_held(1));
	ASSERT_EQ(0, run("%s volume role " VOL " replica >/dev/null", rl_ctl()));
	EXPECT_EQ(0, run(HELD_DD_ENDED "!= 0")) TH_LOG("the held write succeeded");
	EXPECT_EQ(0, disk_held(1));
	run("%s lease set --disarm >/dev/null; true", rl_ctl());
}

/* vm1's disk failing every write, reading as before (dm-flakey, down for good). */
#define DM_WRITES_FAIL	"0 " DM_SECTORS " flakey /dev/vdb 0 0 3600 1 error_writes"

/*
 * vm2 is a syncing member of vm1's write set (8 MiB written while it was
 * out, resynced at 1 MiB/s) when vm1's disk starts failing every write,
 * its reads still working. A write to a region vm2 has not got yet fails:
 * a syncing member lacks what is not resynced, so its ack is no copy.
 * Reads fail too (no up-to-date member). The resync stops rather than copy
 * vm1's detached disk, which lacks what vm2 got since, over vm2: vm2
 * stays syncing. Before the fix the write stood on vm2 alone, and the
 * resync then overwrote it and made vm2 up to date.
 */
TEST_F_TIMEOUT(disk, owner_disk_fails_while_member_syncs_no_copy, 120)
{
	char out[64];

	ASSERT_EQ(0, run("%s writeset remove " VOL " 2 >/dev/null && %s peer disconnect " VOL
			 " 2 >/dev/null", rl_ctl(), rl_ctl()));
	ASSERT_EQ(0, run(RL_FIO "--rw=write --bs=1M --offset=16M --size=8M >/dev/null"));
	/*
	 * 1 MiB/s, slower by rl_scale(): the debug kernel took 9 s to swap
	 * the table, and at 1 MiB/s the resync was over by then (the write
	 * then stood on an up-to-date member and was held for chorusd).
	 */
	ASSERT_EQ(0, run("%s volume set " VOL " --resync-rate %uK >/dev/null && %s peer connect "
			 VOL " 2 >/dev/null && " BLK_MAKE, rl_ctl(), 1024 / rl_scale(), rl_ctl()));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "repl_state", "syncing", 30));
	ASSERT_EQ(0, dm_swap(1, DM_WRITES_FAIL));

	/* The last 4 KiB of the 8 MiB: the resync is far from it. */
	EXPECT_NE(0, run("dd if=/tmp/blk of=/dev/chorus0 bs=4k seek=6143 oflag=direct "
			 "conv=notrunc status=none 2>/dev/null"))
		TH_LOG("a write stood on a syncing member alone");
	volume_field(1, "state", out, sizeof(out));
	EXPECT_STREQ("failed", out);
	EXPECT_NE(0, run("dd if=/dev/chorus0 of=/dev/null bs=4k count=1 skip=6143 "
			 "iflag=direct status=none 2>/dev/null"))
		TH_LOG("a read was served with no up-to-date copy");
	/* 8 MiB at 1 MiB/s (divided by the scale), and some: done by now if it went on. */
	sleep(12 * rl_scale());
	rl_peer_field(1, PEER, "repl_state", out, sizeof(out));
	EXPECT_STREQ("syncing", out) TH_LOG("the resync went on from the failed disk");
	EXPECT_LE(1, log_count(1, "owner_disk_fails_while_member_syncs_no_copy",
			       "the local disk failed: it is no source"));
}

#define MNT		"/mnt/chorus-disk"
/* Buffered writes to a file, each followed by fsync, on vm1's ext4. */
#define FS_WRITES	"fio --name=fs --filename=" MNT "/f --ioengine=psync --rw=randwrite " \
			"--bs=4k --size=16M --io_size=4M --fsync=1 --verify=crc32c "

/*
 * ext4 made and mounted on vm1's volume, FS_WRITES started on it: the
 * writer's pid, tracked. The disk is to fail under it.
 */
static pid_t __fs_writes_start(struct __test_metadata *_metadata, struct chorus_env *env)
{
	pid_t fio;

	if (rl_on(1, "mkfs.ext4 -q -F /dev/chorus0 && mkdir -p " MNT " && mount /dev/chorus0 "
		  MNT))
		return -1;
	fio = fork();
	if (fio == 0)
		_exit(rl_on(1, FS_WRITES "--rate_iops=100 --do_verify=0 >/dev/null") ? 1 : 0);
	if (fio > 0)
		env_track_pid(env, fio);
	sleep(3);
	return fio;
}
#define fs_writes_start() __fs_writes_start(_metadata, &self->env)

/* Every write reads back with the page cache dropped; e2fsck finds it clean. */
static void __fs_writes_verify(struct __test_metadata *_metadata)
{
	EXPECT_EQ(0, rl_on(1, "echo 3 > /proc/sys/vm/drop_caches && "
			   FS_WRITES "--verify_only >/dev/null"))
		TH_LOG("a write fsynced on ext4 does not read back");
	EXPECT_EQ(0, rl_on(1, "umount " MNT " && e2fsck -fn /dev/chorus0 >/dev/null"))
		TH_LOG("e2fsck does not find the file system clean");
}
#define fs_writes_verify() __fs_writes_verify(_metadata)

/*
 * ext4 on the owner's volume, buffered writes each fsynced, and the owner's
 * disk fails under them (make check-all-variants): no write or fsync fails;
 * after the page cache is dropped every write reads back (served by vm2:
 * degraded reads), and e2fsck finds the file system clean.
 */
TEST_F_TIMEOUT(disk, owner_disk_error_under_ext4_fsync, 300)
{
	char out_buf[64];
	uint64_t degraded;
	pid_t fio;

	/* auto_degrade takes the failed disk out of the write set. */
	ASSERT_EQ(0, rl_on(1, "%s volume set " VOL " --auto-degrade on >/dev/null", rl_ctl()));
	fio = fs_writes_start();
	ASSERT_LE(0, fio);
	ASSERT_EQ(0, dm_swap(1, "0 " DM_SECTORS " error"));
	writer_ok(fio);
	EXPECT_EQ(1, log_count(1, "owner_disk_error_under_ext4_fsync",
			       "auto_degrade takes the failed local disk"));
	volume_field(1, "state", out_buf, sizeof(out_buf));
	EXPECT_STREQ("failed", out_buf);
	fs_writes_verify();
	degraded = rl_cmd_u64(1, "cat /sys/block/chorus0/chorus/degraded_reads");
	EXPECT_LT(0, degraded) TH_LOG("no read went to vm2");
}

/*
 * ext4 on the owner's volume, buffered writes each fsynced, and the
 * replica's disk fails under them (make check-all-variants): the owner
 * holds every write and flush of the journal until the replica is taken
 * out of the write set (the control plane's step, by hand here); then no
 * write or fsync has failed, every write reads back after the page cache
 * is dropped, e2fsck finds the file system clean and vm2 is out of date.
 */
TEST_F_TIMEOUT(disk, replica_disk_error_under_ext4_fsync, 300)
{
	char out_buf[64];
	uint64_t held;
	pid_t fio;

	fio = fs_writes_start();
	ASSERT_LE(0, fio);
	ASSERT_EQ(0, dm_swap(PEER, "0 " DM_SECTORS " error"));
	ASSERT_TRUE(rl_wait_peer(1, PEER, "disk_failed", "true", 15));
	held = held_for_peer();
	EXPECT_LT(0, held) TH_LOG("no write held for vm2");
	EXPECT_EQ(0, waitpid(fio, NULL, WNOHANG)) TH_LOG("fio ended while its writes were held");

	ASSERT_EQ(0, rl_on(1, "%s writeset remove " VOL " 2 >/dev/null", rl_ctl()));
	writer_ok(fio);
	fs_writes_verify();
	rl_peer_field(1, PEER, "repl_state", out_buf, sizeof(out_buf));
	EXPECT_STREQ("out-of-date", out_buf);
}

CHORUS_HARNESS_MAIN
