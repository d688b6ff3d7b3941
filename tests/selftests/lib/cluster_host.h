/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster suite's NVMe-oF host (vm4, not a node): its paths to the
 * cluster's export through every node, as its sysfs shows them, and a
 * writer that logs each acknowledged write (ack_writer.py) through its
 * multipath device. Include after common.h, repl_lab.h and ack_log.h.
 */
#ifndef CHORUS_SELFTEST_CLUSTER_HOST_H
#define CHORUS_SELFTEST_CLUSTER_HOST_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HOST	4	/* the NVMe-oF host VM: not a node */
#define XNQN	"nqn.2026-11.org.chorus:cluster-export"
#define HOSTNQN	"nqn.2026-11.org.chorus:host4"

/*
 * The volumes' transport, and the host's: tcp, or what
 * CHORUS_CLUSTER_TRANSPORT says (make check-cluster-rdma: rdma).
 */
static inline const char *transport(void)
{
	const char *t = getenv("CHORUS_CLUSTER_TRANSPORT");

	return t && *t ? t : "tcp";
}

/* @seconds, longer on the debug kernel (CHORUS_SELFTEST_TIMEOUT_SCALE). */
static inline unsigned int scaled(unsigned int seconds)
{
	const char *s = getenv("CHORUS_SELFTEST_TIMEOUT_SCALE");
	unsigned long scale = s ? strtoul(s, NULL, 10) : 1;

	return seconds * (scale ? scale : 1);
}

/* The ANA state of the host's path through node @node ("" if it has none). */
static inline void host_path_state(int node, char *out, size_t len)
{
	if (rl_on_out(HOST, out, len, "for c in /sys/class/nvme/nvme*; do "
		      "grep -qx " XNQN " $c/subsysnqn 2>/dev/null || continue; "
		      "grep -q 'traddr=10.99.0.%d,' $c/address || continue; "
		      "cat $c/nvme*c*n1/ana_state; done 2>/dev/null", node))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/*
 * Waits up to @timeout_s for the states @state_of gives of the host's paths
 * through nodes 1, 2, 3 to be @want ("a,b,c"); @seen gets the last ones.
 */
static inline bool paths_are(void (*state_of)(int node, char *out, size_t len), const char *want,
			     int timeout_s, char *seen, size_t len)
{
	uint64_t end = now_ms() + scaled(timeout_s) * 1000ULL;
	char s[3][64];
	int node;

	do {
		for (node = 1; node <= 3; node++)
			state_of(node, s[node - 1], sizeof(s[0]));
		snprintf(seen, len, "%s,%s,%s", s[0], s[1], s[2]);
		if (!strcmp(seen, want))
			return true;
		usleep(500 * 1000);
	} while (now_ms() < end);
	return false;
}

/* Waits up to @timeout_s for the host's ANA paths through nodes 1, 2, 3 to be @want. */
static inline bool host_paths_are(const char *want, int timeout_s, char *seen, size_t len)
{
	return paths_are(host_path_state, want, timeout_s, seen, len);
}

/*
 * Exports @vol as namespace 1 of XNQN, allowed to the host only; waits until
 * the nodes report @want (their ANA states for nodes 1, 2, 3: "-" for one
 * that reports nothing, "none" for one that does not export it); connects
 * the host through nodes 1..@nodes over transport() and names its multipath device
 * in @dev.
 */
static inline void __host_attach(struct __test_metadata *_metadata, const char *ctl,
				 const char *vol, const char *want, int nodes, char *dev,
				 size_t len)
{
	char out[256];
	int i;

	ASSERT_EQ(0, run("%s cluster export create " XNQN " --volume %s --host " HOSTNQN
			 " >/dev/null", ctl, vol));
	for (i = 0; i < scaled(60) * 2; i++) {
		if (!run_quiet(out, sizeof(out), "%s --json cluster export list | jq -r '.[0]"
			       ".namespaces[0].paths | [.\"1\", .\"2\", .\"3\"] | map(if . == null "
			       "then \"-\" elif .ana_state then .ana_state else \"none\" end) | "
			       "join(\",\")'", ctl) &&
		    !strncmp(out, want, strlen(want)) && out[strlen(want)] == '\n')
			break;
		usleep(500 * 1000);
	}
	out[strcspn(out, "\n")] = '\0';
	ASSERT_STREQ(want, out) TH_LOG("the nodes' ANA states for %s", vol);
	ASSERT_EQ(0, rl_on(HOST, "modprobe nvme-%s", transport()));
	/*
	 * The host gives a lost path up after ctrl-loss-tmo (600 s by default):
	 * on the debug kernel a killed node can be down longer than that
	 * before the case brings it back (stop 60), so the wait is scaled.
	 */
	for (i = 1; i <= nodes; i++)
		ASSERT_EQ(0, rl_on(HOST, "nvme connect -t %s -a 10.99.0.%d -s 4420 -n " XNQN
				   " --hostnqn " HOSTNQN " --ctrl-loss-tmo=%d >/dev/null",
				   transport(), i, scaled(600)))
			TH_LOG("the host cannot connect through node %d", i);
	ASSERT_EQ(0, rl_on_out(HOST, dev, len, "ls /sys/block | grep -E '^nvme[0-9]+n1$'"));
	dev[strcspn(dev, "\n")] = '\0';
	ASSERT_EQ(NULL, strchr(dev, '\n')) TH_LOG("more than one device: %s", dev);
	ASSERT_NE('\0', dev[0]) TH_LOG("the host has no multipath device");
}
#define host_attach(vol, want, nodes, dev) \
	__host_attach(_metadata, self->ctl, vol, want, nodes, dev, sizeof(dev))

/* The host's clock, as its writer's log has it. */
static inline double host_time(void)
{
	char out[64];

	return rl_on_out(HOST, out, sizeof(out), "date +%%s.%%N") ? 0 : atof(out);
}

/*
 * Starts ack_writer.py on the host, writing the blocks @args names of @dev
 * and logging to @log, and waits for its first 50 acknowledged writes.
 */
static inline void __host_writer_start(struct __test_metadata *_metadata, const char *writer,
				const char *dev, const char *log, const char *args)
{
	int i;

	ASSERT_EQ(0, rl_on(HOST, "setsid python3 %s write /dev/%s %s %s >/dev/null 2>&1 "
			   "</dev/null &", writer, dev, log, args));
	for (i = 0; i < scaled(60) * 4 && lines_of(log) < 50; i++)
		usleep(250 * 1000);
	ASSERT_LE(50, lines_of(log)) TH_LOG("the host's writer is stuck");
}
#define host_writer_start(writer, dev, log, args) \
	__host_writer_start(_metadata, writer, dev, log, args)

/* Stops the host's writer and reads back every write it logged. */
static inline void __host_writer_verify(struct __test_metadata *_metadata, const char *writer,
				 const char *dev, const char *log)
{
	char out[256];

	rl_on(HOST, "pkill -f 'ack_writer[.]py'; sleep 1; true");
	EXPECT_EQ(0, rl_on_out(HOST, out, sizeof(out), "python3 %s verify /dev/%s %s 2>&1",
			       writer, dev, log)) TH_LOG("host: %s", out);
	TH_LOG("host: %s", out);
}
#define host_writer_verify(writer, dev, log) __host_writer_verify(_metadata, writer, dev, log)

#endif /* CHORUS_SELFTEST_CLUSTER_HOST_H */
