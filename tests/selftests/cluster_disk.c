// SPDX-License-Identifier: GPL-2.0
/*
 * cluster_disk: the owner's disk fails while its chorusd cannot record it,
 * or every disk of a volume fails
 * (Documentation/cluster.md, "What chorusd does"; issue 19), in the cluster
 * suite's lab (cluster.c: three nodes, vm4 a host, this binary on vm3).
 * Until the failure is recorded in etcd, the owner's writes wait: none may
 * stand on the other member alone while etcd still names the failed disk
 * a member (invariant 4). chorusd is stopped for seconds, within the
 * lease, with the other member then cut off; or for longer than the lease,
 * so that the other member takes the volume over. In both, every
 * acknowledged write is on every disk etcd named a member when it was
 * acknowledged. And every disk of the volume fails, the last to fail
 * comes back and is attached again, as the admin guide says, while the
 * volume stays open. Not in make check's lane (make check-cluster runs them).
 */
#include <time.h>

#include "common.h"
#include "repl_lab.h"
#include "ack_log.h"
#include "cluster_host.h"
#include "cluster_fixture.h"

/* On a node: its LV's table saved, and a table of the same size that fails every I/O. */
#define SAVE_TABLES	"dmsetup table " LV_DM " > /tmp/chorus-lv.table && " \
			"echo \"0 $(blockdev --getsz /dev/mapper/" LV_DM ") error\" " \
			"> /tmp/chorus-err.table"
#define DISK_FAILS	"dmsetup load " LV_DM " < /tmp/chorus-err.table && dmsetup resume " LV_DM
#define DISK_WORKS	"dmsetup load " LV_DM " < /tmp/chorus-lv.table && dmsetup resume " LV_DM

/*
 * Node 1, whose disk failed, gets a new one from its pool (replace-disk),
 * copied in full from node 2; after new writes the replicas are identical.
 */
static void node_1_gets_a_new_disk(struct __test_metadata *_metadata,
				   FIXTURE_DATA(cluster) *self)
{
	char out[128];

	ASSERT_EQ(0, run_out(out, sizeof(out), "%s cluster volume replace-disk " VOL
			     " --node 1 --wait %d 2>/dev/null | tail -c 60", self->ctl,
			     scaled(120))) TH_LOG("%s", out);
	EXPECT_TRUE(cl_wait(self, VOL, ".health", "healthy", 60));
	fio_on(2, "--rw=randwrite --bs=4k --size=1M --verify=crc32c");
	replicas_identical();
}

/*
 * The owner's disk fails under the writer, and the other member, alone in
 * acknowledging the writes from then on, is cut off from it before the
 * owner's chorusd has handed over: chorusd is stopped for those seconds (a
 * pass that comes late; within the lease), the cut is vm1's replication
 * traffic to vm2 refused (etcd goes on). Until chorusd records the failed
 * disk, its writes wait (none stands on node 2 alone). etcd must name node
 * 2, not node 1, as the write set's member: node 1 records itself out of
 * date first,
 * lets the writes held for node 2 fail (nothing is acknowledged that no
 * disk has) and gives its owner key up; node 2 takes the volume with every
 * acknowledged write. With the cut undone node 1 serves it by forwarding,
 * then gets a new disk, copied in full.
 */
TEST_F_TIMEOUT(cluster, owner_disk_fails_then_the_last_member_is_cut_off, 900)
{
	char out[128], epoch1[32], epoch2[32], state[32];
	unsigned long long stopped_ms;
	int at_failure, at_cut, i;

	/* Soft-RoCE's traffic is UDP, not the TCP port cut here; the logic is chorusd's. */
	if (!strcmp(transport(), "rdma"))
		SKIP(return, "the cut is of the TCP replication port");
	create_healthy();
	ASSERT_EQ(0, cl_query(self, VOL, epoch1, sizeof(epoch1), ".owner.epoch"));
	ASSERT_EQ(0, rl_on(1, "%s volume set " VOL " --ping-interval-ms 250 "
			   "--ping-timeout-ms 1000 >/dev/null && " SAVE_TABLES, rl_ctl()));
	start_writer(1, 100);
	/*
	 * One command in vm1, so that chorusd stays stopped for seconds, not
	 * for the round trips of several (the lease TTL is 10 s): the disk
	 * fails, for a second the writes wait, none standing on node 2 alone
	 * before the failure is recorded (invariant 4; counted from the
	 * writer's log), the cut, and chorusd resumes once the kernel sees
	 * node 2 lost (ping timeout 1 s), 3 s at most.
	 */
	ASSERT_EQ(0, rl_on_out(1, out, sizeof(out),
			       "pkill -STOP -x chorusd; t0=$(date +%%s%%N); "
			       DISK_FAILS " || { pkill -CONT -x chorusd; exit 1; }; "
			       "a=$(wc -l < %s); sleep 1; b=$(wc -l < %s); "
			       CUT_1_FROM_2("add") "; "
			       "for i in $(seq 12); do s=$(%s --json volume status " VOL " | jq -r "
			       "'.peers[] | select(.node_id == 2) | .conn_state'); "
			       "[ \"$s\" != connected ] && break; sleep 0.25; done; "
			       "pkill -CONT -x chorusd; "
			       "echo $a $b $s $((($(date +%%s%%N) - t0) / 1000000))",
			       self->acked, self->acked, rl_ctl()));
	ASSERT_EQ(4, sscanf(out, "%d %d %31s %llu", &at_failure, &at_cut, state, &stopped_ms))
		TH_LOG("%s", out);
	TH_LOG("%d writes acknowledged in the second after the failure; node 1 saw node 2 %s; "
	       "chorusd stopped for %llu ms", at_cut - at_failure, state, stopped_ms);
	/* At 100 writes/s; one may have completed before the swap and been logged after. */
	EXPECT_GE(1, at_cut - at_failure)
		TH_LOG("writes stood on node 2 alone before the failed disk was recorded");
	EXPECT_TRUE(cl_wait(self, VOL, ".write_set.members | map(tostring) | join(\",\")", "2",
			    60)) TH_LOG("etcd names node 1's failed disk as the write set");
	EXPECT_TRUE(cl_wait(self, VOL, ".write_set.out_of_date | map(tostring) | join(\",\")",
			    "1", 10));
	ASSERT_TRUE(cl_wait(self, VOL, ".owner.node_id", "2", 90)) TH_LOG("node 2 did not take it");
	ASSERT_EQ(0, cl_query(self, VOL, epoch2, sizeof(epoch2), ".owner.epoch"));
	EXPECT_LT(atoll(epoch1), atoll(epoch2));
	/* "no member of the write set can take its writes now" before it, if node 1 saw the cut. */
	EXPECT_EQ(0, run("grep -q 'the local disk failed: this node is out of date' "
			 "%s/cluster/vm1/chorusd.log && grep -q 'stepped down and released the owner "
			 "key' %s/cluster/vm1/chorusd.log", getenv("LAB_DIR"), getenv("LAB_DIR")));
	for (i = 0; i < 20 && !rl_on(1, "pgrep -f 'ack_writer[.]py' >/dev/null"); i++)
		usleep(500 * 1000);
	EXPECT_GT(20, i) TH_LOG("the writer still runs: its writes neither stood nor failed");

	verify_on(2);
	ASSERT_EQ(0, rl_on(1, CUT_1_FROM_2("del")));
	verify_on(1);
	EXPECT_EQ(0, rl_on(1, DISK_WORKS));
	node_1_gets_a_new_disk(_metadata, self);
}

/*
 * The owner's disk fails while its chorusd is stopped, and stays stopped
 * past the lease: nothing records the failure, so the owner's writes wait
 * (disk_held), none standing on node 2 alone. Node 1's session expires;
 * node 2 takes the volume at a higher epoch and node 1's kernel, past its
 * deadline, hands what it held over to it (forwarded, acknowledged by node
 * 2 as the owner once it recorded node 1 out of date). Every write
 * acknowledged before the take-over is on node 1's failed disk (its table
 * put back and read raw) and on node 2; the writer goes on through node 1.
 * chorusd resumes; node 1 gets a new disk, copied in full.
 */
TEST_F_TIMEOUT(cluster, owner_disk_fails_chorusd_stopped_past_the_lease_nothing_stands, 900)
{
	char out[256], epoch1[32], epoch2[32], state[32], acked_before[600];
	int at_failure, later;
	unsigned long long held;

	create_healthy();
	ASSERT_EQ(0, cl_query(self, VOL, epoch1, sizeof(epoch1), ".owner.epoch"));
	ASSERT_EQ(0, rl_on(1, SAVE_TABLES));
	start_writer(1, 100);
	/*
	 * One command in vm1: chorusd stops, the disk fails; a second later
	 * and 4 s after that (the lease TTL is 10 s: node 1 still owns) the
	 * acknowledged writes are counted, and the writes held for the disk.
	 */
	ASSERT_EQ(0, rl_on_out(1, out, sizeof(out),
			       "pkill -STOP -x chorusd; "
			       DISK_FAILS " || { pkill -CONT -x chorusd; exit 1; }; "
			       "sleep 1; a=$(wc -l < %s); sleep 4; b=$(wc -l < %s); "
			       "h=$(%s --json volume status " VOL " | jq -r .disk_held); "
			       "echo $a $b $h", self->acked, self->acked, rl_ctl()));
	ASSERT_EQ(3, sscanf(out, "%d %d %llu", &at_failure, &later, &held)) TH_LOG("%s", out);
	TH_LOG("acknowledged: %d a second after the failure, %d 4 s later; %llu held for the disk",
	       at_failure, later, held);
	EXPECT_EQ(at_failure, later)
		TH_LOG("writes stood on node 2 alone before the failed disk was recorded");
	EXPECT_LT(0, held) TH_LOG("no write held for the failed disk");
	/* Every write acknowledged so far must be on node 1's disk too. */
	snprintf(acked_before, sizeof(acked_before), "%s.before", self->acked);
	ASSERT_EQ(0, run("head -n %d %s > %s", later, self->acked, acked_before));

	ASSERT_TRUE(cl_wait(self, VOL, ".owner.node_id", "2", 90)) TH_LOG("node 2 did not take it");
	ASSERT_EQ(0, cl_query(self, VOL, epoch2, sizeof(epoch2), ".owner.epoch"));
	EXPECT_LT(atoll(epoch1), atoll(epoch2));
	EXPECT_TRUE(cl_wait(self, VOL, ".write_set.out_of_date | map(tostring) | join(\",\")",
			    "1", 60)) TH_LOG("node 2 did not record node 1 out of date");
	lease_state(1, state, sizeof(state));
	EXPECT_STREQ("expired", state) TH_LOG("node 1's kernel lease, its chorusd stopped");
	EXPECT_EQ(0, rl_on(1, "dmesg | grep -Eq '" VOL ": role replica(: superseded by peer 2 at "
			   "epoch [0-9]+|, epoch [0-9]+): handed over'"))
		TH_LOG("no hand-over in node 1's kernel log");
	EXPECT_TRUE(writer_goes_on(self->acked, 5))
		TH_LOG("node 1's writer did not go on through node 2");
	TH_LOG("acknowledged: %d by the take-over's check, %d now", later, lines_of(self->acked));

	/* Node 1's failed disk, read raw, holds every write acknowledged before. */
	EXPECT_EQ(0, rl_on(1, DISK_WORKS));
	EXPECT_EQ(0, rl_on_out(1, out, sizeof(out), "python3 %s verify /dev/mapper/" LV_DM
			       " %s 2>&1", self->writer, acked_before))
		TH_LOG("a write acknowledged while node 1 was a member is not on its disk: %s",
		       out);
	TH_LOG("node 1's failed disk: %s", out);

	ASSERT_EQ(0, rl_on(1, "pkill -CONT -x chorusd"));
	rl_on(1, "pkill -f 'ack_writer[.]py'; sleep 1; true");
	verify_on(2);
	verify_on(1);
	run("rm -f %s", acked_before);
	node_1_gets_a_new_disk(_metadata, self);
}

/*
 * Every disk of the volume fails: node 2's (recorded out of date, the
 * writer goes on), then node 1's, the owner's and the last copy. No write
 * stands (the writer stops on an error), etcd keeps node 1 the write set's
 * only member and the owner. Node 1's disk then works again and a person
 * does what the admin guide says ("Every disk of the volume failed"): on
 * node 1, while the volume stays open and attached, `volume role VOL
 * replica` and `volume attach-disk VOL --backing` the same device. chorusd
 * does the rest: the key of the old epoch given up, taken again at a new
 * one, node 1 the owner with every acknowledged write. Node 2 gets a new
 * disk, copied in full.
 */
TEST_F_TIMEOUT(cluster, every_disk_failed_the_last_returns_after_repair, 900)
{
	char out[512], epoch1[32], filter[128], dev[64];
	int acked, i;

	create_healthy();
	ASSERT_EQ(0, cl_query(self, VOL, epoch1, sizeof(epoch1), ".owner.epoch"));
	ASSERT_EQ(0, rl_on(1, SAVE_TABLES));
	ASSERT_EQ(0, rl_on(2, SAVE_TABLES));
	__dev_of(_metadata, 1, VOL, dev, sizeof(dev));
	start_writer(1, 100);

	ASSERT_EQ(0, rl_on(2, DISK_FAILS));
	EXPECT_TRUE(cl_wait(self, VOL, ".write_set.out_of_date | map(tostring) | join(\",\")",
			    "2", 60)) TH_LOG("node 2's failed disk not recorded out of date");
	EXPECT_TRUE(writer_goes_on(self->acked, 5)) TH_LOG("node 1's writes stopped");

	ASSERT_EQ(0, rl_on(1, DISK_FAILS));
	for (i = 0; i < scaled(30) * 2 && !rl_on(1, "pgrep -f 'ack_writer[.]py' >/dev/null"); i++)
		usleep(500 * 1000);
	EXPECT_GT(scaled(30) * 2, i) TH_LOG("the writer still runs with no disk left");
	acked = lines_of(self->acked);
	EXPECT_NE(0, rl_on(1, "dd if=%s of=/dev/null bs=4k count=1 iflag=direct status=none",
			   dev)) TH_LOG("a read with no disk left succeeded");
	EXPECT_NE(0, rl_on(1, "dd if=/dev/zero of=%s bs=4k count=1 seek=4000 oflag=direct "
			   "status=none", dev)) TH_LOG("a write with no disk left succeeded");
	/* For seconds: node 1 still the member and the owner at its epoch, nothing acked. */
	sleep(5);
	EXPECT_TRUE(cl_wait(self, VOL, ".write_set.members | map(tostring) | join(\",\")", "1",
			    10)) TH_LOG("etcd lost the last disk's membership");
	EXPECT_TRUE(cl_wait(self, VOL, ".owner.node_id", "1", 10));
	EXPECT_TRUE(cl_wait(self, VOL, ".owner.epoch | tostring", epoch1, 10));
	EXPECT_EQ(acked, lines_of(self->acked)) TH_LOG("a write stood with no disk");
	TH_LOG("%d writes acknowledged before the last disk failed", acked);

	/* The repair: the disk works again; the admin guide's two commands. */
	ASSERT_EQ(0, rl_on(1, DISK_WORKS));
	ASSERT_EQ(0, rl_on_out(1, out, sizeof(out), "c=%s; $c volume role " VOL " replica 2>&1 && "
			       "$c volume attach-disk " VOL " --backing $($c --json volume status "
			       VOL " | jq -r .backing) 2>&1", rl_ctl())) TH_LOG("%s", out);
	snprintf(filter, sizeof(filter), ".owner.node_id == 1 and .owner.epoch > %s", epoch1);
	ASSERT_TRUE(cl_wait(self, VOL, filter, "true", 60))
		TH_LOG("node 1 does not own the volume again at a newer epoch");
	EXPECT_EQ(0, run("grep -q 'given up: this node stepped down at it' %s/cluster/vm1/chorusd.log",
			 getenv("LAB_DIR")));
	verify_on(1);
	verify_on(2);
	fio_on(1, "--rw=randwrite --bs=4k --size=1M --verify=crc32c");

	EXPECT_EQ(0, rl_on(2, DISK_WORKS));
	ASSERT_EQ(0, run_out(out, sizeof(out), "%s cluster volume replace-disk " VOL
			     " --node 2 --wait %d 2>/dev/null | tail -c 60", self->ctl,
			     scaled(120))) TH_LOG("%s", out);
	EXPECT_TRUE(cl_wait(self, VOL, ".health", "healthy", 60));
	replicas_identical();
}

CHORUS_HARNESS_MAIN
