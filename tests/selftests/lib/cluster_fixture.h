/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster suite's fixture (cluster.c): its volumes' names, the three
 * nodes brought up (tests/selftests/cluster_node) and kept from one case to
 * the next when a case cleaned up, the teardown that stops what a case
 * started, and the helpers every case uses (a volume's state from the
 * cluster, writers that log acknowledged writes, replica comparison).
 * Include after common.h, repl_lab.h, ack_log.h and cluster_host.h.
 */
#ifndef CHORUS_SELFTEST_CLUSTER_FIXTURE_H
#define CHORUS_SELFTEST_CLUSTER_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VOL	"vol0"
#define VOL2	"vol1"	/* owned by node 3, beside VOL (owner_killed_…) */
#define XVOL	"xvol"	/* on every node, exported (export_…) */
#define XVOL2	"xvol2"	/* beside XVOL (export_strategies_…) */
#define SIZE	"16M"
/* A node's replica of VOL: its logical volume's device-mapper name. */
#define LV_DM	"chorus_pool-chorus--" VOL
/*
 * The session lease's TTL. Under TCG on 2 cores a VM is sometimes not
 * scheduled for seconds; with 5 s such a stall alone can cost a node its
 * lease (correctly: it then holds I/O and may lose ownership), which is
 * not what a case means to test.
 */
#define TTL	"10"
#define ETCD	"http://10.99.0.1:2379,http://10.99.0.2:2379,http://10.99.0.3:2379"
#define ETCDCTL	"ETCDCTL_API=3 etcdctl --endpoints " ETCD

FIXTURE(cluster) {
	struct chorus_env env;
	char ctl[4200];		/* chorusctl; CHORUS_ETCD names the store */
	char node[4200];	/* tests/selftests/cluster_node */
	char writer[4200];	/* tests/selftests/ack_writer.py */
	char acked[512];	/* the writer's log, in the lab dir */
	char acked2[512];	/* the log of a writer to VOL2 */
	char acked3[512];	/* the log of a writer to VOL on a replica (forwarded) */
	char acked4[512];	/* the log of the host's writer (NVMe-oF, multipath) */
};

/* The volumes' transport: tcp unless CHORUS_CLUSTER_TRANSPORT says otherwise. */

/* The cluster's view of @vol through chorusctl on this VM: a jq filter's output. */
static inline int __attribute__((format(printf, 5, 6)))
cl_query(FIXTURE_DATA(cluster) *self, const char *vol, char *out, size_t len,
	 const char *fmt, ...)
{
	char filter[512];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(filter, sizeof(filter), fmt, ap);
	va_end(ap);
	r = run_quiet(out, len, "%s --json cluster volume status %s | jq -r '%s'",
		      self->ctl, vol, filter);
	out[strcspn(out, "\n")] = '\0';
	return r;
}

/* Waits up to @timeout_s for the jq filter on @vol to print @want; false on timeout. */
static inline bool cl_wait(FIXTURE_DATA(cluster) *self, const char *vol, const char *filter,
		    const char *want, int timeout_s)
{
	uint64_t end = now_ms() + scaled(timeout_s) * 1000ULL;
	char out[256];

	do {
		if (!cl_query(self, vol, out, sizeof(out), "%s", filter) && !strcmp(out, want))
			return true;
		usleep(250 * 1000);
	} while (now_ms() < end);
	return false;
}

static inline int cl_node_up(FIXTURE_DATA(cluster) *self, int vm)
{
	return rl_on(vm, "%s up %d 3 " TTL " %s", self->node, vm, transport());
}

/* The block device of @vol on @vm, from its kernel (dies with the test if none). */
static inline void __dev_of(struct __test_metadata *_metadata, int vm, const char *vol, char *dev,
		     size_t len)
{
	ASSERT_EQ(0, rl_on_out(vm, dev, len, "%s --json volume status %s | jq -r .device",
			       rl_ctl(), vol));
	ASSERT_EQ(0, strncmp(dev, "/dev/chorus", 11)) TH_LOG("vm%d: %s has no device", vm, vol);
}

/*
 * Starts a writer to @vol on @vm logging to @log, to the blocks @blocks
 * says (ack_writer.py's --blocks and --first); it runs until killed or its
 * VM dies.
 */
static inline void __start_writer(struct __test_metadata *_metadata, FIXTURE_DATA(cluster) *self,
			   int vm, const char *vol, const char *log, int min_acked,
			   const char *blocks)
{
	uint64_t end = now_ms() + scaled(60) * 1000ULL;
	char dev[64];

	__dev_of(_metadata, vm, vol, dev, sizeof(dev));
	ASSERT_EQ(0, rl_on(vm, "setsid python3 %s write %s %s %s >/dev/null 2>&1 </dev/null &",
			   self->writer, dev, log, blocks));
	while (lines_of(log) < min_acked && now_ms() < end)
		usleep(250 * 1000);
	ASSERT_LE(min_acked, lines_of(log)) TH_LOG("the writer on vm%d is stuck", vm);
}
#define start_writer(vm, n) __start_writer(_metadata, self, vm, VOL, self->acked, n, \
					   "--blocks 2048")

static inline void __verify_on(struct __test_metadata *_metadata, FIXTURE_DATA(cluster) *self,
				int vm, const char *vol, const char *log)
{
	char out[256], dev[64];

	__dev_of(_metadata, vm, vol, dev, sizeof(dev));
	EXPECT_EQ(0, rl_on_out(vm, out, sizeof(out), "python3 %s verify %s %s 2>&1",
			       self->writer, dev, log)) TH_LOG("vm%d: %s", vm, out);
	TH_LOG("vm%d %s: %s", vm, vol, out);
}
#define verify_on(vm) __verify_on(_metadata, self, vm, VOL, self->acked)

/*
 * The data area of @vol's backing device (its LV) on @vm: md5 of SIZE bytes
 * read past the page cache. Not the volume's device: a replica's forwards
 * its reads to the owner.
 */
static inline int backing_md5(int vm, const char *vol, char *out, size_t len)
{
	return rl_on_out(vm, out, len, "b=$(%s --json volume status %s | jq -r .backing) && "
			 "dd if=\"$b\" bs=1M count=%d iflag=direct status=none | md5sum | cut -c1-32",
			 rl_ctl(), vol, atoi(SIZE));
}

/* The replicas of @vol on @vm_a and @vm_b hold the same data. */
static inline void __replicas_identical(struct __test_metadata *_metadata, const char *vol,
					int vm_a, int vm_b)
{
	char a[64], b[64];

	ASSERT_EQ(0, backing_md5(vm_a, vol, a, sizeof(a)));
	ASSERT_EQ(0, backing_md5(vm_b, vol, b, sizeof(b)));
	EXPECT_STREQ(a, b) TH_LOG("the replicas of %s differ", vol);
}
#define replicas_identical() __replicas_identical(_metadata, VOL, 1, 2)

/* fio on @vm's device of @vol, the rest of the command line in @args. */
static inline void __fio_on(struct __test_metadata *_metadata, int vm, const char *vol,
		     const char *args)
{
	char dev[64];

	__dev_of(_metadata, vm, vol, dev, sizeof(dev));
	EXPECT_EQ(0, rl_on(vm, "fio --name=t --filename=%s --direct=1 --ioengine=libaio "
			   "--output-format=terse %s >/dev/null", dev, args))
		TH_LOG("vm%d: fio on %s failed", vm, vol);
}
#define fio_on(vm, args) __fio_on(_metadata, vm, VOL, args)

/*
 * Creates the volume on nodes 1 and 2 and waits until both are in the write
 * set, over the transport asked for.
 */
static inline void __create_healthy(struct __test_metadata *_metadata, FIXTURE_DATA(cluster) *self)
{
	char out[64];

	ASSERT_EQ(0, run("%s cluster volume create " VOL " --size " SIZE " --nodes 1,2 "
			 "--transport %s >/dev/null", self->ctl, transport()));
	ASSERT_TRUE(cl_wait(self, VOL, ".owner.node_id", "1", 30));
	ASSERT_TRUE(cl_wait(self, VOL, ".health", "healthy", 120))
		TH_LOG("node 2 did not finish its initial sync");
	ASSERT_EQ(0, rl_on_out(1, out, sizeof(out), "%s --json volume status " VOL " | jq -r "
			       "'.peers[] | select(.node_id == 2) | .active_transport'", rl_ctl()));
	ASSERT_STREQ(transport(), out) TH_LOG("the session is not over %s", transport());
}
#define create_healthy() __create_healthy(_metadata, self)

/*
 * Written by a teardown that left every node up with no volume (nodes_kept()),
 * taken by the next set-up. Without it (the first case, or one that failed,
 * timed out or killed a VM and could not clean up), every node is stopped
 * first: a case starts from nodes with no volume, however the last one ended.
 */
static inline void kept_path(char *out, size_t len)
{
	snprintf(out, len, "%s/cluster/nodes-kept", getenv("LAB_DIR"));
}

/*
 * Stop every writer and opener a case starts (fio and the shell that runs
 * it in rounds, the ack writers, the holders of /dev/chorus0, the host's
 * NVMe-oF connections) and undo its
 * faults (a stopped etcd or chorusd, a link down, a cut): nothing may hold a
 * volume when the nodes stop. Run by the teardown, and by the set-up too:
 * a case that ran out of time was killed before its teardown, and its fio
 * goes on in the VMs.
 */
/*
 * vm1's replication traffic to vm2 refused (port 7788 either way; etcd and
 * the rest go on): "ip rule add" each, or "ip rule del" each.
 */
#define CUT_1_FROM_2(op)	"ip rule " op " to 10.99.0.2 ipproto tcp dport 7788 prohibit && " \
				"ip rule " op " to 10.99.0.2 ipproto tcp sport 7788 prohibit"

/*
 * vm1 cut off from etcd (client and peer ports, 2379 and 2380, either way,
 * to vm2 and vm3; replication and NVMe-oF go on): "add" each rule, or "del"
 * each until none is left. Its own member then has no quorum.
 */
#define CUT_1_FROM_ETCD(op)	"for ip in 10.99.0.2 10.99.0.3; do for p in 2379 2380; do " \
				"for d in dport sport; do " CUT_1_FROM_ETCD_##op " done; done; done"
#define CUT_1_FROM_ETCD_add	"ip rule add to $ip ipproto tcp $d $p prohibit || exit 1;"
#define CUT_1_FROM_ETCD_del	"while ip rule del to $ip ipproto tcp $d $p prohibit 2>/dev/null; " \
				"do :; done;"

static inline void stop_workloads(void)
{
	rl_on(HOST, "pkill -f 'chorus-fio-sto[p]'; pkill -x fio; pkill -f 'ack_writer[.]py'; sleep 1; "
	      "nvme disconnect-all >/dev/null 2>&1; multipath -F >/dev/null 2>&1; "
	      "iscsiadm -m node -u >/dev/null 2>&1; true");
	rl_on_each((const int[]){ 1, 2, 3 }, 3,
		   "pkill -f 'chorus-fio-sto[p]'; pkill -x fio; pkill -f 'ack_writer[.]py'; "
		   "pkill -f 'sleep 60[0]'; "
		   "pkill -CONT -x etcd; pkill -CONT -x chorusd; ip link set eth0 up; "
		   "while " CUT_1_FROM_2("del") " 2>/dev/null; do :; done; "
		   CUT_1_FROM_ETCD(del) "; true");
}

/* The kernel lease state on @vm: "valid", "expired" or "disarmed". */
static inline void lease_state(int vm, char *out, size_t len)
{
	if (rl_on_out(vm, out, len, "%s --json lease show | jq -r .state", rl_ctl()))
		out[0] = '\0';
}

/* The owners of XVOL and XVOL2, sorted: "1,2". */
static inline bool owners_are(FIXTURE_DATA(cluster) *self, const char *want, int timeout_s)
{
	uint64_t end = now_ms() + scaled(timeout_s) * 1000ULL;
	char out[64];

	do {
		if (!run_quiet(out, sizeof(out), "%s --json cluster volume list | jq -r '[.[] | "
			       "select(.name | startswith(\"" XVOL "\")) | .owner.node_id // 0] | "
			       "sort | map(tostring) | join(\",\")'", self->ctl) &&
		    !strncmp(out, want, strlen(want)) && out[strlen(want)] == '\n')
			return true;
		usleep(500 * 1000);
	} while (now_ms() < end);
	return false;
}

/*
 * The cases make check runs: creation, placement and a replica's disk
 * replaced; the owner's VM killed under writes (acknowledged writes, host
 * multipath, a second volume); the export through every node. The owner's
 * chorusd restarted then stopped until its kernel fences it, the owner cut
 * off from the network, the owner cut off from etcd only (its paths
 * inaccessible), the owner's disk failed and then the other member
 * cut off, an etcd member and then quorum lost, and the
 * export strategies run in make check-all-variants and make check-cluster
 * (Documentation/testing.rst, "What make check runs in each variant": on
 * the slow machine of stop 37 the suite took 44 minutes).
 */
#define CLUSTER_CHECK_CASES \
	"create_from_any_node_fio_verify_delete " \
	"owner_killed_only_its_volume_moves_with_acknowledged_writes " \
	"export_through_every_node_host_multipath_fio_verify " \
	"iscsi_through_every_node_alua_multipath_fio_verify"

FIXTURE_SETUP(cluster)
{
	const char *count = getenv("CHORUS_VM_COUNT"), *lab = getenv("LAB_DIR");
	const int nodes[] = { 1, 2, 3 };
	char out[64], kept[512], cmd[4400];
	int vm;

	/* First: a skipped case must leave the marker to the next one. */
	CHORUS_CHECK_LANE(CLUSTER_CHECK_CASES);
	ASSERT_TRUE(count && atoi(count) >= HOST && this_vm() == 3 && lab)
		TH_LOG("needs a lab of %d VMs and to run on vm3", HOST);
	kept_path(kept, sizeof(kept));
	/* vm3 is a node too: its chorus stays loaded between cases. */
	self->env.keep_loaded = !unlink(kept) && !run("ps -C chorusd -o stat= | grep -qv '^Z'");
	env_setup(_metadata, &self->env, false);
	snprintf(self->ctl, sizeof(self->ctl), "%s", rl_ctl());
	/* chorusctl's cluster commands find the store here. */
	setenv("CHORUS_ETCD", ETCD, 1);
	/*
	 * The debug kernel's etcd answers slower: chorusctl's attempts, etcd's
	 * timing and chorusd's attempts (cluster_node) scale with the waits.
	 */
	snprintf(out, sizeof(out), "%u", scaled(2000) < 30000 ? scaled(2000) : 30000);
	setenv("CHORUS_ETCD_TIMEOUT_MS", out, 1);
	run("mkdir -p %s/cluster && echo %u > %s/cluster/timeout-scale", lab, scaled(1), lab);
	snprintf(self->node, sizeof(self->node), "%s/tests/selftests/cluster_node", chorus_src());
	snprintf(self->writer, sizeof(self->writer), "%s/tests/selftests/ack_writer.py",
		 chorus_src());
	snprintf(self->acked, sizeof(self->acked), "%s/cluster/acked-%d.log", lab, getpid());
	snprintf(self->acked2, sizeof(self->acked2), "%s/cluster/acked2-%d.log", lab, getpid());
	snprintf(self->acked3, sizeof(self->acked3), "%s/cluster/acked3-%d.log", lab, getpid());
	snprintf(self->acked4, sizeof(self->acked4), "%s/cluster/acked4-%d.log", lab, getpid());
	for (vm = 1; vm <= 2; vm++) {
		if (!rl_vm_alive(vm))
			ASSERT_EQ(0, rl_vm_start(vm, NULL, NULL));
		ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[vm - 1], vm, _metadata->name));
	}
	/* the host's kernel log is checked too */
	ASSERT_EQ(0, kmsg_mark(&self->env.remote_mark[2], HOST, _metadata->name));
	self->env.nremote = 3;
	/*
	 * etcd and the pools stay up from one case to the next, and chorusd
	 * and chorus.ko too when the case before cleaned up (the node list
	 * below still checks them); otherwise every node is stopped, what
	 * that case left in the store goes, and the nodes start again.
	 */
	if (!self->env.keep_loaded) {
		stop_workloads();
		snprintf(cmd, sizeof(cmd), "%s stop", self->node);
		ASSERT_EQ(0, rl_on_each(nodes, 3, cmd))
			TH_LOG("a node left by an earlier case did not stop (see above)");
		/* Before the first case no etcd runs: give up on it at once. */
		run("for p in exports volumes writeset owner; do " ETCDCTL " --dial-timeout=2s "
		    "del --prefix /chorus/$p/ >/dev/null 2>&1 || break; done");
		/* All three at once: each waits for the others' etcd members. */
		snprintf(cmd, sizeof(cmd), "%s up \"$CHORUS_VM_ID\" 3 " TTL " %s", self->node,
			 transport());
		ASSERT_EQ(0, rl_on_each(nodes, 3, cmd)) TH_LOG("a VM did not become a node");
	}
	/*
	 * The cases grep chorusd's logs: each starts with empty ones (chorusd
	 * appends), the earlier cases' lines kept in chorusd.log.old.
	 */
	run("cd %s/cluster && for d in vm1 vm2 vm3; do [ ! -e $d/chorusd.log ] || "
	    "{ cat $d/chorusd.log >> $d/chorusd.log.old && : > $d/chorusd.log; }; done",
	    getenv("LAB_DIR"));
	/* Every node a member, each with its pool. */
	for (vm = 0; vm < scaled(60) * 4; vm++) {
		if (!run_quiet(out, sizeof(out), "%s --json cluster node list | "
			       "jq '[.[] | select(.pool)] | length'", self->ctl) && atoi(out) == 3)
			break;
		usleep(250 * 1000);
	}
	ASSERT_EQ(3, atoi(out)) TH_LOG("not every node joined with its pool");
}

/*
 * After a case that passed, and not the last one: delete every volume
 * through the cluster and wait until no node has one in its kernel or
 * pool. True when that worked: the nodes stay up for the next case
 * (bringing three up and down again costs about half a minute under TCG).
 */
static inline bool nodes_kept(struct __test_metadata *_metadata, FIXTURE_DATA(cluster) *self)
{
	uint64_t end = now_ms() + scaled(60) * 1000ULL;
	char kept[512];
	int vm, clean;

	if (!_metadata->passed || !_metadata->next)
		return false;
	if (run(ETCDCTL " del --prefix /chorus/exports/ >/dev/null"))
		return false;
	if (run("for v in $(%s --json cluster volume list | jq -r '.[].name'); do "
		"%s cluster volume delete \"$v\" >/dev/null || exit 1; done", self->ctl, self->ctl))
		return false;
	do {
		for (clean = 0, vm = 1; vm <= 3; vm++)
			clean += !rl_on(vm, "%s --json volume list | jq -e 'length == 0' >/dev/null && "
					"! lvs --noheadings chorus_pool 2>/dev/null | grep -q chorus-",
					rl_ctl());
		if (clean == 3)
			break;
		usleep(500 * 1000);
	} while (now_ms() < end);
	kept_path(kept, sizeof(kept));
	return clean == 3 && !run("touch %s", kept);
}

static bool cluster_teardown_entered;

FIXTURE_TEARDOWN(cluster)
{
	int vm;

	if (cluster_teardown_entered)
		return;
	cluster_teardown_entered = true;
	for (vm = 1; vm <= 2; vm++)
		if (!rl_vm_alive(vm))
			rl_vm_start(vm, &self->env.remote_mark[vm - 1], _metadata->name);
	stop_workloads();
	self->env.keep_loaded = nodes_kept(_metadata, self);
	for (vm = 1; vm <= 3 && !self->env.keep_loaded; vm++) {
		if (!rl_on(vm, "%s stop", self->node))
			continue;
		EXPECT_TRUE(false) TH_LOG("vm%d: node stop failed (chorus not unloaded?)", vm);
		/* The next case must not find this one's volumes: boot vm1/vm2 afresh. */
		if (vm < 3 && !rl_vm_kill(vm))
			rl_vm_start(vm, &self->env.remote_mark[vm - 1], _metadata->name);
	}
	run("rm -f %s %s %s %s %s.spec", self->acked, self->acked2, self->acked3, self->acked4,
	    self->acked);
	env_teardown(_metadata, &self->env);
}

#endif /* CHORUS_SELFTEST_CLUSTER_FIXTURE_H */
