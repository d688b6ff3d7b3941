// SPDX-License-Identifier: GPL-2.0
/*
 * chorusctl: the admin tool against the real module, end to end.
 *
 * Exit codes (Documentation/chorusctl.rst: 0 ok, 1 refused, 2 usage,
 * 3 module not loaded, 4 not found, 5 permission denied) with the kernel's
 * extack text in the message; --json output; `events` receiving the
 * multicast announcements; counters after I/O; and the udev rule giving
 * /dev/chorus/<name>.
 */
#include <linux/netlink.h>

#include "common.h"

FIXTURE(chorusctl) {
	struct chorus_env env;
	char ctl[4200];
};

FIXTURE_SETUP(chorusctl)
{
	env_setup(_metadata, &self->env, true);
	snprintf(self->ctl, sizeof(self->ctl), "%s/build/bin/chorusctl", chorus_src());
	ASSERT_TRUE(path_exists(self->ctl)) TH_LOG("%s missing: run make userspace", self->ctl);
}

FIXTURE_TEARDOWN(chorusctl)
{
	env_teardown(_metadata, &self->env);
}

TEST_F(chorusctl, exit_codes_and_messages)
{
	char out[8192];

	ASSERT_EQ(0, chorus_format("/dev/vda", 64 * MiB, 0, NULL));
	ASSERT_EQ(0, run("%s volume create vol0 --backing /dev/vda --size 64M", self->ctl));

	/* refused by the kernel: 1, with the extack text */
	EXPECT_EQ(1, run_out(out, sizeof(out), "%s volume create vol1 --backing /dev/vda",
			     self->ctl));
	EXPECT_NE(NULL, strstr(out, "in use")) TH_LOG("message: %s", out);
	EXPECT_NE(NULL, strstr(out, "EBUSY")) TH_LOG("message: %s", out);

	EXPECT_EQ(1, run_out(out, sizeof(out), "%s volume create vol0 --backing /dev/vdb",
			     self->ctl));
	EXPECT_NE(NULL, strstr(out, "exists")) TH_LOG("message: %s", out);

	/* usage errors are caught before anything is sent: 2 */
	EXPECT_EQ(2, run("%s volume create vol1 --backing /dev/vdb --size 12Q", self->ctl));
	EXPECT_EQ(2, run("%s volume create 'a/b' --backing /dev/vdb", self->ctl));
	EXPECT_EQ(2, run("%s volume create vol1", self->ctl));
	EXPECT_EQ(2, run("%s volume frobnicate", self->ctl));

	/* not found: 4 */
	EXPECT_EQ(4, run_out(out, sizeof(out), "%s volume status nosuch", self->ctl));
	EXPECT_NE(NULL, strstr(out, "nosuch")) TH_LOG("message: %s", out);
	EXPECT_EQ(4, run("%s volume destroy nosuch", self->ctl));

	/* permission denied: 5, and listing stays open to everyone */
	EXPECT_EQ(5, run("setpriv --reuid=65534 --regid=65534 --clear-groups "
			 "%s volume create vol1 --backing /dev/vdb", self->ctl));
	EXPECT_EQ(5, run("setpriv --reuid=65534 --regid=65534 --clear-groups "
			 "%s volume destroy vol0", self->ctl));
	EXPECT_EQ(0, run_out(out, sizeof(out),
			     "setpriv --reuid=65534 --regid=65534 --clear-groups %s volume list",
			     self->ctl));
	EXPECT_NE(NULL, strstr(out, "vol0")) TH_LOG("list: %s", out);

	/* nothing above changed vol0 */
	EXPECT_EQ(0, run_out(out, sizeof(out), "%s volume status vol0", self->ctl));
	EXPECT_NE(NULL, strstr(out, "/dev/vda")) TH_LOG("status: %s", out);

	ASSERT_EQ(0, run("%s volume destroy vol0", self->ctl));

	/* module not loaded: 3 */
	ASSERT_EQ(0, chorus_unload());
	EXPECT_EQ(3, run_out(out, sizeof(out), "%s volume list", self->ctl));
	EXPECT_NE(NULL, strstr(out, "not loaded")) TH_LOG("message: %s", out);
	ASSERT_EQ(0, chorus_load());
}

TEST_F(chorusctl, json_and_counters)
{
	char out[8192];

	ASSERT_EQ(0, chorus_format("/dev/vda", 32 * MiB, 4096, NULL));
	ASSERT_EQ(0, run("%s volume create vol0 --backing /dev/vda --size 32M --block-size 4096",
			 self->ctl));
	ASSERT_EQ(0, run("dd if=/dev/zero of=/dev/chorus0 bs=64k count=16 oflag=direct "
			 "status=none"));

	ASSERT_EQ(0, run_quiet(out, sizeof(out), "%s --json volume status vol0", self->ctl));
	EXPECT_EQ(0, run("printf '%%s' '%s' | python3 -c 'import json,sys; v=json.load(sys.stdin); "
			 "assert v[\"name\"]==\"vol0\" and v[\"size_bytes\"]==32<<20 "
			 "and v[\"block_size\"]==4096 and v[\"state\"]==\"online\" "
			 "and v[\"stats\"][\"write_bytes\"]>=1<<20 "
			 "and v[\"stats\"][\"writes\"]>=1, v'", out));

	ASSERT_EQ(0, run_quiet(out, sizeof(out), "%s --json volume list", self->ctl));
	EXPECT_EQ(0, run("printf '%%s' '%s' | python3 -c 'import json,sys; l=json.load(sys.stdin); "
			 "assert [v[\"name\"] for v in l]==[\"vol0\"], l'", out));
}

/* Exit status of pid within timeout_ms, or -1 (the pid is left running). */
static int wait_exit(pid_t pid, int timeout_ms)
{
	int status = 0, waited;

	for (waited = 0; waited < timeout_ms; waited += 100) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		usleep(100 * 1000);
	}
	return -1;
}

/*
 * Has pid a generic netlink socket in multicast group? /proc/net/netlink
 * shows the first 32 groups as a hex mask; libnl's ports are the process
 * id in the low 22 bits plus a socket index above them.
 */
static bool wait_joined(pid_t pid, uint32_t group, int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	char line[256];

	if (group == 0 || group > 32) {
		usleep(2000 * 1000);	/* the mask cannot show it: give it time */
		return true;
	}
	do {
		FILE *f = fopen("/proc/net/netlink", "r");
		unsigned int eth, port, groups;

		while (f && fgets(line, sizeof(line), f)) {
			if (sscanf(line, "%*s %u %u %x", &eth, &port, &groups) == 3 &&
			    eth == NETLINK_GENERIC && (port & 0x3fffff) == (unsigned int)pid &&
			    (groups & (1U << (group - 1)))) {
				fclose(f);
				return true;
			}
		}
		if (f)
			fclose(f);
		usleep(50 * 1000);
	} while (now_ms() < end);
	return false;
}

TEST_F(chorusctl, events_stream)
{
	char out[8192];
	int status;
	pid_t pid;

	/* start the listener, then act; --count ends it after both events */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c",
		      "exec \"$0\" --json events --count 2 --timeout 60 > /tmp/chorusctl-events 2>&1",
		      self->ctl, (char *)NULL);
		_exit(127);
	}
	env_track_pid(&self->env, pid);
	ASSERT_TRUE(wait_joined(pid, self->env.nl.mcgrp_events, 20000))
		TH_LOG("chorusctl events did not join the events group");

	ASSERT_EQ(0, chorus_format("/dev/vda", 16 * MiB, 0, NULL));
	ASSERT_EQ(0, run("%s volume create vol0 --backing /dev/vda --size 16M", self->ctl));
	ASSERT_EQ(0, run("%s volume destroy vol0", self->ctl));

	status = wait_exit(pid, 30000);
	ASSERT_TRUE(status >= 0) TH_LOG("events did not end after two events");
	EXPECT_EQ(0, status);
	self->env.npids = 0;
	ASSERT_EQ(0, read_file("/tmp/chorusctl-events", out, sizeof(out)));
	EXPECT_EQ(0, run("python3 -c 'import json; l=[json.loads(x) for x in open(\"/tmp/chorusctl-events\")]; "
			 "assert [(e[\"event\"], e[\"name\"]) for e in l]=="
			 "[(\"created\",\"vol0\"),(\"destroyed\",\"vol0\")], l'"))
		TH_LOG("events: %s", out);
}

TEST_F(chorusctl, udev_rule_names_the_volume)
{
	char out[16384];

	ASSERT_EQ(0, chorus_format("/dev/vdb", 16 * MiB, 0, NULL));
	ASSERT_EQ(0, run("%s volume create data-1 --backing /dev/vdb --size 16M", self->ctl));
	ASSERT_EQ(0, run("mkdir -p /run/udev/rules.d && cp %s/tools/udev/60-chorus.rules "
			 "/run/udev/rules.d/", chorus_src()));
	env_on_cleanup(&self->env, false, "rm -f /run/udev/rules.d/60-chorus.rules; rm -rf /dev/chorus");

	/* udevadm test runs the rules in-process; no udev daemon in the lab */
	ASSERT_EQ(0, run_quiet(out, sizeof(out),
			       "udevadm test --action=add /sys/block/chorus0 2>&1"));
	EXPECT_NE(NULL, strstr(out, "/dev/chorus/data-1"))
		TH_LOG("udevadm test did not name the volume:\n%s", out);
}

CHORUS_HARNESS_MAIN
