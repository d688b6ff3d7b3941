// SPDX-License-Identifier: GPL-2.0
/*
 * cluster_iscsi: the cluster's exports over iSCSI (Documentation/iscsi.md),
 * in the cluster suite's lab (cluster.c: three nodes, vm4 a host, this
 * binary on vm3). Every node's chorusd serves the export through its LIO
 * with the same target name and LUN identity and an ALUA state that follows
 * the owner; the host logs in to every node with open-iscsi and reaches the
 * volume through dm-multipath (lib/iscsi_host.h), as a stock Linux host
 * does. The same volume is exported over NVMe/TCP at the same time. The
 * owner moves under the host's writes (planned), then the replica's node
 * dies under them and fio verify, and comes back as a path.
 */
#include "common.h"
#include "repl_lab.h"
#include "ack_log.h"
#include "cluster_host.h"
#include "cluster_fixture.h"
#include "iscsi_host.h"

/* Touched to end the host's rounds of fio verify across the replica's death. */
#define FIO_STOP	"/tmp/chorus-fio-stop"

/* The volume's first 8 MiB through the host's device @dev, read around any cache. */
static int host_md5(const char *dev, char *out, size_t len)
{
	int r = rl_on_out(HOST, out, len, "dd if=%s bs=1M count=8 iflag=direct status=none | "
			  "md5sum | cut -c1-32", dev);

	out[strcspn(out, "\n")] = '\0';
	return r;
}

TEST_F_TIMEOUT(cluster, iscsi_through_every_node_alua_multipath_fio_verify, 900)
{
	char out[512], wwid[64], mpath[128], nvme[64], a[64], b[64];
	double t;
	pid_t fio;
	int vm;

	/* Two replicas, node 3 a diskless access point, as the NVMe-oF case. */
	ASSERT_EQ(0, run("%s cluster volume create " XVOL " --size " SIZE " --nodes 2,1 "
			 "--transport %s >/dev/null", self->ctl, transport()));
	EXPECT_NE(0, run_out(out, sizeof(out), "%s cluster export create " XNQN " --volume "
			     XVOL " --protocol fc 2>&1", self->ctl));
	EXPECT_NE(NULL, strstr(out, "--protocol")) TH_LOG("%s", out);
	EXPECT_NE(0, run_out(out, sizeof(out), "%s cluster export create " XNQN " --volume "
			     XVOL " --protocol iscsi --initiator iqn.2026-11.org.Chorus:host4 2>&1",
			     self->ctl));
	EXPECT_NE(NULL, strstr(out, "holds a character an iSCSI name may not")) TH_LOG("%s", out);
	ASSERT_EQ(0, run("%s cluster export create " XNQN " --volume " XVOL " --protocol iscsi "
			 "--protocol nvme-tcp --initiator " HOSTIQN " --host " HOSTNQN " >/dev/null",
			 self->ctl));
	for (vm = 0; vm < scaled(60) * 2; vm++) {
		if (!run_quiet(out, sizeof(out), "%s --json cluster export list | jq -r '.[0]"
			       ".namespaces[0].iscsi_paths | [.\"1\", .\"2\", .\"3\"] | "
			       "map(.alua_state // \"-\") | join(\",\")'", self->ctl) &&
		    !strcmp(out, "active/non-optimized,active/optimized,active/non-optimized\n"))
			break;
		usleep(500 * 1000);
	}
	ASSERT_STREQ("active/non-optimized,active/optimized,active/non-optimized\n", out)
		TH_LOG("the nodes' ALUA states");

	/*
	 * The host logs in to every node with CHAP (a wrong secret refused):
	 * one multipath device, node 2's path group active.
	 */
	ASSERT_EQ(0, iscsi_host_start()) TH_LOG("iscsid, udevd or multipathd did not start");
	/* 24: iscsiadm's "login failed due to authorization failure" */
	EXPECT_EQ(24, iscsi_login(1, "not-the-lab-secret"))
		TH_LOG("a wrong CHAP secret logged in, or failed otherwise");
	for (vm = 1; vm <= 3; vm++)
		ASSERT_EQ(0, iscsi_login(vm, CHAP_SECRET))
			TH_LOG("the host cannot log in through node %d", vm);
	EXPECT_TRUE(iscsi_paths_are("active/non-optimized,active/optimized,active/non-optimized",
				    30, out, sizeof(out))) TH_LOG("the host's paths: %s", out);
	ASSERT_EQ(0, rl_on(HOST, "for i in $(seq 60); do multipath -r >/dev/null 2>&1; "
			   "[ $(multipath -ll | grep -c ' sd[a-z]* ') = 3 ] && exit 0; sleep 1; "
			   "done; multipath -ll; exit 1")) TH_LOG("multipath has not all three paths");
	ASSERT_EQ(0, rl_on_out(HOST, wwid, sizeof(wwid), "multipath -l -v1"));
	if (wwid[0] && wwid[strlen(wwid) - 1] == '\n')
		wwid[strlen(wwid) - 1] = '\0';
	ASSERT_EQ(NULL, strchr(wwid, '\n')) TH_LOG("not one multipath device: %s", wwid);
	ASSERT_EQ(0, strncmp(wwid, "36001405", 8)) TH_LOG("not an NAA identifier of LIO: %s", wwid);
	EXPECT_TRUE(iscsi_active_path_is(wwid, 2, 30, out, sizeof(out)))
		TH_LOG("the active path group is %s, not node 2's path", out);
	snprintf(mpath, sizeof(mpath), "/dev/mapper/%s", wwid);

	/* An initiator that is not on the list cannot log in, even with the secret. */
	ASSERT_EQ(0, rl_on(HOST, "iscsiadm -m iface -I intruder -o delete >/dev/null 2>&1; "
			   "iscsiadm -m iface -I intruder -o new >/dev/null && "
			   "iscsiadm -m iface -I intruder -o update -n iface.initiatorname "
			   "-v iqn.2026-11.org.chorus:intruder >/dev/null && "
			   "iscsiadm -m discovery -t st -p 10.99.0.1 -I intruder >/dev/null"));
	EXPECT_EQ(24, rl_on(HOST, "for kv in authmethod=CHAP username=" CHAP_USER " password=" CHAP_SECRET
			   "; do iscsiadm -m node -T " XIQN " -p 10.99.0.1 -I intruder -o update "
			   "-n node.session.auth.${kv%%%%=*} -v ${kv#*=} || exit 1; done && "
			   "iscsiadm -m node -T " XIQN " -p 10.99.0.1 -I intruder --login "
			   ">/dev/null 2>&1"))
		TH_LOG("an initiator not on the list logged in, or failed otherwise");

	ASSERT_EQ(0, rl_on(HOST, "fio --name=t --filename=%s --direct=1 --ioengine=libaio "
			   "--rw=randwrite --bs=4k --iodepth=8 --size=8M --verify=crc32c "
			   "--output-format=terse >/dev/null", mpath))
		TH_LOG("fio verify through the host's multipath device failed");

	/* The same volume over NVMe/TCP reads what iSCSI wrote, and the other way round. */
	ASSERT_EQ(0, rl_on(HOST, "modprobe nvme-tcp && nvme connect -t tcp -a 10.99.0.1 -s 4420 "
			   "-n " XNQN " --hostnqn " HOSTNQN " >/dev/null"));
	ASSERT_EQ(0, rl_on_out(HOST, nvme, sizeof(nvme), "for i in $(seq 20); do "
			       "d=$(ls /sys/block | grep -E '^nvme[0-9]+n1$') && echo /dev/$d && "
			       "exit 0; sleep 0.5; done; exit 1"));
	nvme[strcspn(nvme, "\n")] = '\0';
	ASSERT_EQ(0, host_md5(mpath, a, sizeof(a)));
	ASSERT_EQ(0, host_md5(nvme, b, sizeof(b)));
	EXPECT_STREQ(a, b) TH_LOG("NVMe-oF reads otherwise than iSCSI wrote");
	ASSERT_EQ(0, rl_on(HOST, "dd if=/dev/urandom of=%s bs=1M count=8 oflag=direct "
			   "status=none", nvme));
	ASSERT_EQ(0, host_md5(nvme, a, sizeof(a)));
	ASSERT_EQ(0, host_md5(mpath, b, sizeof(b)));
	EXPECT_STREQ(a, b) TH_LOG("iSCSI reads otherwise than NVMe-oF wrote");
	EXPECT_EQ(0, rl_on(HOST, "nvme disconnect -n " XNQN " >/dev/null"));

	/* A planned move under the host's writes: no error, node 1's path active. */
	host_writer_start(self->writer, mpath + 5, self->acked4, "--first 2048 --blocks 1024");
	t = host_time();
	EXPECT_EQ(0, run_out(out, sizeof(out), "%s cluster volume move " XVOL " --to 1 2>&1",
			     self->ctl)) TH_LOG("%s", out);
	EXPECT_TRUE(iscsi_paths_are("active/optimized,active/non-optimized,active/non-optimized",
				    30, out, sizeof(out))) TH_LOG("after the move the host sees %s", out);
	EXPECT_TRUE(iscsi_active_path_is(wwid, 1, 30, out, sizeof(out)))
		TH_LOG("after the move the active path group is %s, not node 1's path", out);
	EXPECT_TRUE(writer_goes_on(self->acked4, 5)) TH_LOG("the host's writer stalled");
	EXPECT_EQ(0, rl_on(HOST, "pgrep -f 'ack_writer[.]py' >/dev/null"))
		TH_LOG("the host's writer died: an I/O error reached it");
	TH_LOG("host: longest pause between acknowledged writes across the move %.3f s",
	       max_ack_gap(self->acked4, t, host_time()));

	/*
	 * The replica's node (2, a non-optimized path) is killed under the
	 * host's writer and fio verify: node 1 writes on alone, multipath
	 * drops the dead path, no error reaches either. Node 2 boots, rejoins,
	 * resyncs, and the host uses it again as a non-optimized path.
	 */
	fflush(stderr);
	fio = fork();
	if (fio == 0)
		_exit(rl_on(HOST, "rm -f " FIO_STOP "; while ! test -e " FIO_STOP "; do "
			    "fio --name=v --filename=%s --direct=1 --ioengine=libaio "
			    "--rw=randwrite --bs=4k --iodepth=4 --offset=12M --size=4M "
			    "--time_based --runtime=5 --verify=crc32c --output-format=terse "
			    ">/dev/null || exit 1; done", mpath) ? 1 : 0);
	ASSERT_LE(0, fio);
	env_track_pid(&self->env, fio);
	t = host_time();
	ASSERT_EQ(0, rl_vm_kill(2));
	EXPECT_TRUE(cl_wait(self, XVOL, ".write_set.out_of_date | join(\",\")", "2", 60))
		TH_LOG("node 1 did not record node 2 out of the write set");
	EXPECT_TRUE(writer_goes_on(self->acked4, 5)) TH_LOG("the host's writer stalled");
	TH_LOG("host: longest pause between acknowledged writes after the replica died %.3f s",
	       max_ack_gap(self->acked4, t, host_time()));
	ASSERT_EQ(0, rl_vm_start(2, &self->env.remote_mark[1], _metadata->name));
	ASSERT_EQ(0, cl_node_up(self, 2));
	EXPECT_TRUE(cl_wait(self, XVOL, ".health", "healthy", 180)) TH_LOG("node 2 did not rejoin");
	EXPECT_TRUE(iscsi_path_ready(2, 10, 120, out, sizeof(out)))
		TH_LOG("node 2 is not the host's active/non-optimized path again: %s", out);
	EXPECT_TRUE(iscsi_active_path_is(wwid, 1, 10, out, sizeof(out)))
		TH_LOG("the active path group is %s, not node 1's path", out);
	EXPECT_EQ(0, rl_on(HOST, "touch " FIO_STOP));
	EXPECT_EQ(0, wait_child(fio, scaled(60) * 1000))
		TH_LOG("fio verify saw an error across the replica's death and return");
	self->env.npids = 0;
	EXPECT_EQ(0, rl_on(HOST, "pgrep -f 'ack_writer[.]py' >/dev/null"))
		TH_LOG("the host's writer died: an I/O error reached it");
	host_writer_verify(self->writer, mpath + 5, self->acked4);

	/* Deleting the export takes it out of every node's LIO. */
	iscsi_logout_all();
	ASSERT_EQ(0, run("%s cluster export delete " XNQN " >/dev/null", self->ctl));
	for (vm = 1; vm <= 3; vm++)
		EXPECT_EQ(0, rl_on(vm, "for i in $(seq %u); do test -e /sys/kernel/config/target/"
				   "iscsi/" XIQN " || test -e /sys/kernel/config/target/core/"
				   "iblock_7788/" XVOL " || exit 0; sleep 0.5; done; exit 1",
				   scaled(60)))
			TH_LOG("node %d still serves " XIQN, vm);

	/* What the host wrote is on both replicas. */
	EXPECT_TRUE(cl_wait(self, XVOL, ".health", "healthy", 120));
	ASSERT_EQ(0, backing_md5(1, XVOL, a, sizeof(a)));
	ASSERT_EQ(0, backing_md5(2, XVOL, b, sizeof(b)));
	EXPECT_STREQ(a, b) TH_LOG("node 2's replica differs from the owner's");
}

/* Writes completed by the host's SCSI disk @disk (/sys/block/<disk>/stat's fifth field). */
static long host_disk_writes(const char *disk)
{
	char out[32];

	if (!disk[0] || rl_on_out(HOST, out, sizeof(out), "awk '{ print $5 }' /sys/block/%s/stat",
				  disk))
		return -1;
	return atol(out);
}

/*
 * Two volumes on nodes 1 and 2, both owned by node 1, exported over iSCSI
 * with the balance strategy: chorusd moves one to node 2. The host, logged
 * in to every node, sees two multipath devices, each with its owner's path
 * alone active: its LUNs' I/O goes to two nodes, one path per LUN and no
 * write through the standby paths (what a login redirector does by
 * sessions, Documentation/iscsi.md). fio verify on both at once.
 */
TEST_F_TIMEOUT(cluster, iscsi_balance_spreads_the_active_paths_over_nodes, 600)
{
	char out[256], owner[16], wwid[64], mpath[2][128], disk[2][4][32];
	long before[2][4];
	int lun, vm;

	for (lun = 0; lun < 2; lun++)
		ASSERT_EQ(0, run("%s cluster volume create %s --size 8M --nodes 1,2 "
				 "--transport %s >/dev/null", self->ctl, lun ? XVOL2 : XVOL,
				 transport()));
	ASSERT_TRUE(cl_wait(self, XVOL, ".health", "healthy", 120));
	ASSERT_TRUE(cl_wait(self, XVOL2, ".health", "healthy", 120));
	ASSERT_TRUE(owners_are(self, "1,1", 10));
	ASSERT_EQ(0, run("%s cluster export create " XNQN " --volume " XVOL " --volume " XVOL2
			 " --protocol iscsi --initiator " HOSTIQN " --strategy balance >/dev/null",
			 self->ctl));
	ASSERT_TRUE(owners_are(self, "1,2", 60)) TH_LOG("balance did not spread the owners");

	ASSERT_EQ(0, iscsi_host_start()) TH_LOG("iscsid, udevd or multipathd did not start");
	for (vm = 1; vm <= 3; vm++)
		ASSERT_EQ(0, iscsi_login(vm, CHAP_SECRET))
			TH_LOG("the host cannot log in through node %d", vm);
	ASSERT_EQ(0, rl_on(HOST, "for i in $(seq 60); do multipath -r >/dev/null 2>&1; "
			   "[ $(multipath -ll | grep -c ' sd[a-z]* ') = 6 ] && exit 0; sleep 1; "
			   "done; multipath -ll; exit 1")) TH_LOG("multipath has not six paths");
	for (lun = 0; lun < 2; lun++) {
		ASSERT_EQ(0, cl_query(self, lun ? XVOL2 : XVOL, owner, sizeof(owner),
				      ".owner.node_id"));
		for (vm = 1; vm <= 3; vm++)
			iscsi_lun_disk(vm, lun, disk[lun][vm], sizeof(disk[lun][vm]));
		ASSERT_NE(0, disk[lun][1][0]) TH_LOG("LUN %d has no path through node 1", lun);
		ASSERT_EQ(0, rl_on_out(HOST, wwid, sizeof(wwid), "multipathd show paths raw "
				       "format '%%d %%w' | awk '$1 == \"%s\" { print $2 }'",
				       disk[lun][1]));
		wwid[strcspn(wwid, "\n")] = '\0';
		EXPECT_TRUE(iscsi_lun_active_path_is(wwid, lun, atoi(owner), 30, out, sizeof(out)))
			TH_LOG("LUN %d: the active path group is %s, not its owner's (node %s)",
			       lun, out, owner);
		snprintf(mpath[lun], sizeof(mpath[lun]), "/dev/mapper/%s", wwid);
		for (vm = 1; vm <= 3; vm++)
			before[lun][vm] = host_disk_writes(disk[lun][vm]);
	}
	EXPECT_STRNE(mpath[0], mpath[1]) TH_LOG("the two LUNs are one multipath device");

	ASSERT_EQ(0, rl_on(HOST, "fio --direct=1 --ioengine=libaio --rw=randwrite --bs=4k "
			   "--iodepth=4 --size=8M --verify=crc32c --output-format=terse "
			   "--name=a --filename=%s --name=b --filename=%s >/dev/null",
			   mpath[0], mpath[1])) TH_LOG("fio verify on the two LUNs failed");
	for (lun = 0; lun < 2; lun++) {
		ASSERT_EQ(0, cl_query(self, lun ? XVOL2 : XVOL, owner, sizeof(owner),
				      ".owner.node_id"));
		for (vm = 1; vm <= 3; vm++) {
			long writes = host_disk_writes(disk[lun][vm]) - before[lun][vm];

			TH_LOG("LUN %d, path through node %d: %ld writes", lun, vm, writes);
			/* (braces: the harness's TH_LOG is a statement of its own) */
			if (vm == atoi(owner)) {
				EXPECT_LE(1000, writes) TH_LOG("the owner's path wrote little");
			} else {
				EXPECT_EQ(0, writes) TH_LOG("a write through a standby path");
			}
		}
	}

	iscsi_logout_all();
	ASSERT_EQ(0, run("%s cluster export delete " XNQN " >/dev/null", self->ctl));
}

CHORUS_HARNESS_MAIN
