/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the replication suites (repl: 2 VMs, repl3: 3 VMs). Each
 * lab node N is chorus node N at 10.99.0.N; the volume is the first
 * RL_SIZE_MB of /dev/vdb, formatted with one uuid on every node. Commands
 * for the VM the test runs on run locally, others through lab_run().
 * Include after common.h.
 */
#ifndef CHORUS_SELFTEST_REPL_LAB_H
#define CHORUS_SELFTEST_REPL_LAB_H

#include <stdarg.h>

#define RL_VOL		"repl0"
#define RL_UUID		"5b1e2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
#define __RL_STR(x)	#x
#define RL_STR(x)	__RL_STR(x)
#ifndef RL_SIZE_MB		/* a suite may ask for a larger volume */
#define RL_SIZE_MB	64
#endif
#define RL_SIZE_STR	RL_STR(RL_SIZE_MB)
#ifndef RL_BACKING		/* a suite may put a device-mapper target over it */
#define RL_BACKING	"/dev/vdb"
#endif

/*
 * The options of tests/selftests/wire_inject.py, run on vm1, that speaks
 * for node 1: the incarnation of vm1's volume (chorus0), which a replica
 * that follows node 1 pinned and checks in every owner's HELLO.
 */
#define RL_INJECT_AS_VM1 "--incarnation \"$(cat /sys/block/chorus0/chorus/incarnation)\""

/*
 * The transport node N declares its peers with (chorusctl peer add
 * --transport): set by the suites' fixture variants, "tcp" when unset.
 */
static const char *rl_transports[5];

/* Module parameters every node loads chorus with ("" when unset). */
static const char *rl_insmod_args = "";

static inline const char *rl_transport(int node)
{
	return node > 0 && node < 5 && rl_transports[node] ? rl_transports[node] : "tcp";
}

static inline const char *rl_ctl(void)
{
	static char ctl[4096];

	if (!ctl[0])
		snprintf(ctl, sizeof(ctl), "%s/build/bin/chorusctl", chorus_src());
	return ctl;
}

/* Run a command line on lab VM @vm (printf-style); its exit status. */
static inline int __attribute__((format(printf, 2, 3))) rl_on(int vm, const char *fmt, ...)
{
	static char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return vm == this_vm() ? run("%s", cmd) : lab_run(vm, "%s", cmd);
}

/*
 * Run @cmd on each of the @n lab VMs in @vms at once (a child each: under
 * TCG a command costs a second or more, mostly waiting); how many failed.
 */
static inline int rl_on_each(const int *vms, int n, const char *cmd)
{
	pid_t pids[8];
	int i, status, failed = 0;

	for (i = 0; i < n && i < 8; i++) {
		fflush(stderr);
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(rl_on(vms[i], "%s", cmd) ? 1 : 0);
	}
	for (i = 0; i < n && i < 8; i++)
		failed += pids[i] < 0 || waitpid(pids[i], &status, 0) < 0 ||
			  !WIFEXITED(status) || WEXITSTATUS(status);
	return failed;
}

#define RL_FIO	"fio --name=t --filename=/dev/chorus0 --direct=1 --ioengine=libaio " \
		"--output-format=terse --terse-version=3 --minimal "

/*
 * Start fio with RL_FIO and @args on lab VM @vm in the background (output
 * discarded), tracked by @env so that teardown kills it. Returns its pid;
 * it exits 0 when fio succeeded.
 */
static inline pid_t rl_fio_background(struct chorus_env *env, int vm, const char *args)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(rl_on(vm, RL_FIO "%s >/dev/null", args) ? 1 : 0);
	if (pid > 0)
		env_track_pid(env, pid);
	return pid;
}

/* Same, with its standard output in @out, trailing newlines removed. */
static inline int __attribute__((format(printf, 4, 5)))
rl_on_out(int vm, char *out, size_t len, const char *fmt, ...)
{
	static char cmd[8192];
	size_t l;
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = vm == this_vm() ? run_quiet(out, len, "%s", cmd) :
			      lab_run_out(vm, out, len, "%s", cmd);
	if (r < 0) {
		out[0] = '\0';
		return r;
	}
	l = strlen(out);
	while (l && out[l - 1] == '\n')
		out[--l] = '\0';
	return r;
}

/*
 * Leave @vm with its link up, no qdisc and chorus unloaded. On another VM,
 * whoever still has a chorus device open is killed first: a case that ran
 * out of its time may have left a holder there (a reader, a writer), and
 * every later case's set-up would fail on that VM too (insmod: "File
 * exists"). This VM's leftovers are env_setup()'s (chorus_reset()), and a
 * holder here may be the test itself.
 */
static inline void rl_node_down(int vm)
{
	const char *kill = vm == this_vm() ? "" :
			   "fuser -s -k -9 /dev/chorus[0-9]* 2>/dev/null && sleep 1; ";

	rl_on(vm, "ip link set eth0 up; tc qdisc del dev eth0 root 2>/dev/null; "
	      "if [ -d /sys/module/chorus ]; then %s%s unlisten; %s volume destroy " RL_VOL
	      " >/dev/null 2>&1; rmmod chorus; fi; true", kill, rl_ctl(), rl_ctl());
}

/* CHORUS_SELFTEST_TIMEOUT_SCALE: the debug lab kernel is several times slower. */
static inline unsigned int rl_scale(void)
{
	const char *s = getenv("CHORUS_SELFTEST_TIMEOUT_SCALE");
	unsigned long scale = s ? strtoul(s, NULL, 10) : 1;

	return scale ? scale : 1;
}

/*
 * Set node @node up: load chorus; when @format, zero the data area if
 * @zero and format; attach, listen, declare each of @peers with @initial
 * sync (a peer that already has a metadata slot keeps its bitmap and flags),
 * short timeouts (not persisted: set at every attach), longer by
 * rl_scale() on the debug kernel: its slowness is no failure to detect.
 */
static inline int __rl_node_setup(int node, bool format, bool zero, const char *initial,
				  const int *peers, int npeers)
{
	char adds[1024] = "", fmt[256] = "";
	size_t off = 0;
	int i;

	for (i = 0; i < npeers; i++)
		off += snprintf(adds + off, sizeof(adds) - off,
				"$C peer add " RL_VOL " %d 10.99.0.%d --initial-sync %s "
				"--transport %s >/dev/null; ", peers[i], peers[i], initial,
				rl_transport(node));
	if (format)
		snprintf(fmt, sizeof(fmt), "%s$C volume format --backing " RL_BACKING
			 " --size %dM --uuid " RL_UUID " --force >/dev/null; ",
			 zero ? "blkdiscard -z -o 0 -l " RL_SIZE_STR "M " RL_BACKING "; " : "",
			 RL_SIZE_MB);
	return rl_on(node,
		     "set -e; C=%s; %s/tools/insmod-chorus %s; %s"
		     "$C volume create " RL_VOL " --backing " RL_BACKING " --node-id %d "
		     ">/dev/null; $C listen 10.99.0.%d >/dev/null; %s"
		     "$C volume set " RL_VOL " --ping-interval-ms 500 --ping-timeout-ms %u "
		     "--request-timeout-ms %u >/dev/null",
		     rl_ctl(), chorus_src(), rl_insmod_args, fmt, node, node, adds,
		     3000 * rl_scale(), 5000 * rl_scale());
}

/*
 * Bring node @node up: zero the data area when @zero, format, attach,
 * listen, declare each of @peers with @initial sync, short timeouts.
 */
static inline int rl_node_up(int node, bool zero, const char *initial, const int *peers,
			     int npeers)
{
	return __rl_node_setup(node, true, zero, initial, peers, npeers);
}

/*
 * Bring node @node up again on the volume already on its disk (after a
 * crash and a new boot): attach without formatting, listen, declare @peers
 * again. The kernel decides the role from the metadata: a volume whose
 * superblock names peers comes back as a replica. The initial
 * sync given is "full", so a peer whose slot was lost would be copied in
 * full, which a resync bound in the test then catches.
 */
static inline int rl_node_reattach(int node, const int *peers, int npeers)
{
	return __rl_node_setup(node, false, false, "full", peers, npeers);
}

/* Is lab VM @vm up (its agent ready, its qemu not gone)? */
static inline bool rl_vm_alive(int vm)
{
	const char *lab = getenv("LAB_DIR");
	char p[512];

	if (!lab)
		return false;
	snprintf(p, sizeof(p), "%s/vm%d/ready", lab, vm);
	if (!path_exists(p))
		return false;
	snprintf(p, sizeof(p), "%s/vm%d/exited", lab, vm);
	return !path_exists(p);
}

/*
 * Crash lab VM @vm: the host SIGKILLs its qemu (lab-ctl kill), disks kept.
 * Its kernel log is lost to dmesg: check the VM's mark before. 0 or the
 * command's status.
 */
static inline int rl_vm_kill(int vm)
{
	return run("lab-ctl kill %d", vm);
}

/*
 * Boot lab VM @vm again on its disks (lab-ctl start, waits until ready)
 * and mark its new kernel log for @test in @mark (when given). 0 or -1.
 */
static inline int rl_vm_start(int vm, struct kmsg_mark *mark, const char *test)
{
	if (run("lab-ctl start %d", vm))
		return -1;
	return mark && kmsg_mark(mark, vm, test) ? -1 : 0;
}

/* A field of peer @node in `volume status --json` on @vm, "" if none. */
static inline void rl_peer_field(int vm, int node, const char *field, char *out, size_t len)
{
	if (rl_on_out(vm, out, len, "%s volume status " RL_VOL " --json | jq -r "
		      "'.peers[] | select(.node_id == %d) | .%s'", rl_ctl(), node, field))
		out[0] = '\0';
}

static inline uint64_t rl_peer_u64(int vm, int node, const char *field)
{
	char out[64];

	rl_peer_field(vm, node, field, out, sizeof(out));
	return strtoull(out, NULL, 10);
}

/* Wait until peer @node's @field on @vm reads @want; false on timeout. */
static inline bool rl_wait_peer(int vm, int node, const char *field, const char *want,
			 int timeout_s)
{
	/* The debug lab kernel copies and resyncs several times slower. */
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();
	char out[256];

	do {
		rl_peer_field(vm, node, field, out, sizeof(out));
		if (!strcmp(out, want))
			return true;
		usleep(200 * 1000);
	} while (now_ms() < end);
	fprintf(stderr, "# vm%d: peer %d %s is \"%s\", not \"%s\" after %u s\n", vm,
		node, field, out, want, timeout_s * rl_scale());
	return false;
}

/*
 * Wait until peer @node's counter @field on @vm is at least @min; false on
 * timeout. A case that cuts an owner off under fio waits for its writes to
 * have reached the peers first: under a loaded host fio may take seconds to
 * start, and writes issued only after the cut would need extents that no
 * peer's activity log names.
 */
static inline bool rl_wait_peer_u64(int vm, int node, const char *field, uint64_t min,
				    int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();
	uint64_t val;

	do {
		val = rl_peer_u64(vm, node, field);
		if (val >= min)
			return true;
		usleep(200 * 1000);
	} while (now_ms() < end);
	fprintf(stderr, "# vm%d: peer %d %s is %llu, not %llu or more after %u s\n", vm,
		node, field, (unsigned long long)val, (unsigned long long)min,
		timeout_s * rl_scale());
	return false;
}

/*
 * Nodes 1 and 2 up on zeroed, identical volumes (no initial sync), each
 * declaring the other with @transport; @owner becomes the owner at @epoch
 * and the other its replica; both connect and see each other connected.
 */
static inline void __rl_start_pair(struct __test_metadata *_metadata, const char *transport,
				   int owner, int epoch)
{
	static const int other[3] = { 0, 2, 1 };
	int vm;

	for (vm = 1; vm <= 2; vm++)
		rl_transports[vm] = transport;
	for (vm = 2; vm >= 1; vm--)
		ASSERT_EQ(0, rl_node_up(vm, true, "none", &other[vm], 1))
			TH_LOG("vm%d setup failed", vm);
	ASSERT_EQ(0, rl_on(3 - owner, "%s volume role " RL_VOL " replica >/dev/null",
			   rl_ctl()));
	ASSERT_EQ(0, rl_on(owner, "%s volume role " RL_VOL " owner --epoch %d >/dev/null",
			   rl_ctl(), epoch));
	for (vm = 2; vm >= 1; vm--)
		ASSERT_EQ(0, rl_on(vm, "%s peer connect " RL_VOL " %d >/dev/null", rl_ctl(),
				   other[vm]));
	ASSERT_TRUE(rl_wait_peer(1, 2, "conn_state", "connected", 30));
	ASSERT_TRUE(rl_wait_peer(2, 1, "conn_state", "connected", 30));
	/* Both dialled; a dial refused on the way is no error once connected. */
	for (vm = 1; vm <= 2; vm++) {
		char err[256];

		rl_peer_field(vm, other[vm],
			      "paths[] | select(.active) | .last_error // \"\"",
			      err, sizeof(err));
		EXPECT_STREQ("", err)
			TH_LOG("vm%d: the connected path shows \"%s\"", vm, err);
	}
}
#define rl_start_pair(transport, owner, epoch) \
	__rl_start_pair(_metadata, transport, owner, epoch)

#define RL_MD5_CMD "dd if=" RL_BACKING " bs=1M count=%d iflag=direct status=none | " \
		   "md5sum | cut -c1-32"

/* md5 of the data area of @vm's backing device. */
static inline int rl_md5(int vm, char *out, size_t len)
{
	return rl_on_out(vm, out, len, RL_MD5_CMD, RL_SIZE_MB);
}

/* The data areas of vm1's and vm2's backing devices are byte-identical. */
static inline void __rl_pair_identical(struct __test_metadata *_metadata)
{
	char a[64], b[64];

	ASSERT_EQ(0, rl_md5(1, a, sizeof(a)));
	ASSERT_EQ(0, rl_md5(2, b, sizeof(b)));
	EXPECT_STREQ(a, b) TH_LOG("the replicas differ");
}
#define rl_pair_identical() __rl_pair_identical(_metadata)

/*
 * Wait up to @timeout_s seconds (times rl_scale()) for child @pid to exit,
 * its status in *@st. False if it is still running.
 */
static inline bool rl_wait_pid(pid_t pid, int *st, int timeout_s)
{
	uint64_t end = now_ms() + timeout_s * 1000ULL * rl_scale();

	do {
		if (waitpid(pid, st, WNOHANG) == pid)
			return true;
		usleep(200 * 1000);
	} while (now_ms() < end);
	return false;
}

/* A number that command @cmd prints on @vm; UINT64_MAX if it fails. */
static inline uint64_t rl_cmd_u64(int vm, const char *cmd)
{
	char out[64];

	if (rl_on_out(vm, out, sizeof(out), "%s", cmd))
		return UINT64_MAX;
	return strtoull(out, NULL, 10);
}

#endif /* CHORUS_SELFTEST_REPL_LAB_H */
