// SPDX-License-Identifier: GPL-2.0
/*
 * lease: the node's lease deadline (kernel/lease.c) on a volume this node
 * owns.
 *
 * Disarmed at load, so volumes without chorusd never hold. Past a deadline
 * the owner neither starts nor completes reads and writes, whether the
 * deadline passed while the volume was idle or was set in the past; a later
 * deadline (or disarming) lets them go on with their data intact; stepping
 * down to replica fails them with EIO without marking the volume failed;
 * the expiry is logged and announced; a deadline too far ahead, or none, is
 * refused with a message and changes nothing. Every teardown unloads the
 * module with the expiry work still armed.
 */
#include <sys/wait.h>
#include <time.h>

#include "common.h"

#define VOL_SIZE	(64 * MiB)
#define REGION		(1 * MiB)

FIXTURE(lease) {
	struct chorus_env env;
	char ctl[4200];
};

FIXTURE_SETUP(lease)
{
	struct chorus_vol v;

	env_setup(_metadata, &self->env, true);
	snprintf(self->ctl, sizeof(self->ctl), "%s/build/bin/chorusctl", chorus_src());
	ASSERT_TRUE(path_exists(self->ctl)) TH_LOG("%s missing: run make userspace", self->ctl);
	create_ok(&self->env, "lv", "/dev/vda", VOL_SIZE, 0, NULL, &v);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
}

FIXTURE_TEARDOWN(lease)
{
	env_teardown(_metadata, &self->env);
}

/* A child that writes REGION bytes of seed at off (O_DIRECT) and exits 0 or 1. */
static pid_t start_writer(struct chorus_env *env, uint64_t off, uint32_t seed)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(dev_fill("/dev/chorus0", off, REGION, seed, 0) ? 1 : 0);
	env_track_pid(env, pid);
	return pid;
}

/* A child that reads REGION bytes at off (O_DIRECT) and exits 0 or 1. */
static pid_t start_reader(struct chorus_env *env, uint64_t off)
{
	pid_t pid = fork();
	uint64_t sum;

	if (pid == 0)
		_exit(dev_checksum("/dev/chorus0", off, REGION, &sum) ? 1 : 0);
	env_track_pid(env, pid);
	return pid;
}

/* A field of `chorusctl ... --json`, through jq; -1 when it cannot be read. */
static long long json_field(const char *ctl, const char *args, const char *field)
{
	char out[256];

	if (run_out(out, sizeof(out), "%s %s --json | jq -r '.%s'", ctl, args, field))
		return -1;
	return strtoll(out, NULL, 10);
}

static uint64_t held_io(const char *ctl)
{
	return json_field(ctl, "volume status lv", "held_io");
}

/* The same bytes at the same place of /dev/vdb: what a region should hold. */
static void expect_region(struct __test_metadata *_metadata, uint64_t off, uint32_t seed)
{
	uint64_t want, got;

	ASSERT_EQ(0, dev_fill("/dev/vdb", off, REGION, seed, 0));
	ASSERT_EQ(0, dev_checksum("/dev/vdb", off, REGION, &want));
	ASSERT_EQ(0, dev_checksum("/dev/chorus0", off, REGION, &got));
	EXPECT_EQ(want, got) TH_LOG("region at %llu does not hold seed %u",
				    (unsigned long long)off, seed);
}

TEST_F_TIMEOUT(lease, disarmed_at_load_and_io_flows, 120)
{
	char out[256];

	ASSERT_EQ(0, run_out(out, sizeof(out), "%s lease show --json | jq -r .state", self->ctl));
	EXPECT_STREQ("disarmed\n", out);
	ASSERT_EQ(0, dev_fill("/dev/chorus0", 0, REGION, 1, 0));
	expect_region(_metadata, 0, 1);
	EXPECT_EQ(0, held_io(self->ctl));
}

TEST_F_TIMEOUT(lease, past_deadline_holds_reads_and_writes_until_a_new_one, 180)
{
	uint64_t writes0, reads0, w, r, before, held;
	pid_t writer, reader;

	ASSERT_EQ(0, dev_fill("/dev/chorus0", 0, REGION, 1, 0));
	ASSERT_EQ(0, dev_fill("/dev/chorus0", REGION, REGION, 7, 0));
	ASSERT_EQ(0, dev_checksum("/dev/vda", REGION, REGION, &before));
	ASSERT_EQ(0, run("%s lease set --valid-for 0", self->ctl));
	writes0 = counter("chorus0", "writes");
	reads0 = counter("chorus0", "reads");

	writer = start_writer(&self->env, REGION, 2);
	reader = start_reader(&self->env, 0);
	EXPECT_EQ(-1, wait_child(writer, 3000)) TH_LOG("a write completed past the deadline");
	EXPECT_EQ(-1, wait_child(reader, 100)) TH_LOG("a read completed past the deadline");
	EXPECT_LE(2, held_io(self->ctl));
	EXPECT_EQ(writes0, counter("chorus0", "writes"));
	EXPECT_EQ(reads0, counter("chorus0", "reads"));
	/* nothing reached the disk either: the region holds what it held */
	ASSERT_EQ(0, dev_checksum("/dev/vda", REGION, REGION, &held));
	EXPECT_EQ(before, held) TH_LOG("a held write reached the backing device");

	ASSERT_EQ(0, run("%s lease set --valid-for 30000", self->ctl));
	EXPECT_EQ(0, wait_child(writer, 60000));
	EXPECT_EQ(0, wait_child(reader, 60000));
	EXPECT_EQ(0, held_io(self->ctl));
	w = counter("chorus0", "writes");
	r = counter("chorus0", "reads");
	EXPECT_LT(writes0, w);
	EXPECT_LT(reads0, r);
	EXPECT_EQ(0, counter("chorus0", "errors"));
	expect_region(_metadata, 0, 1);
	expect_region(_metadata, REGION, 2);
	EXPECT_EQ(1, json_field(self->ctl, "lease show", "expiries"));
}

TEST_F_TIMEOUT(lease, deadline_passing_while_idle_is_logged_announced_and_holds, 180)
{
	struct chorus_vol ev;
	pid_t writer;
	int rc;

	ASSERT_EQ(0, genl_subscribe(&self->env.nl, self->env.nl.mcgrp_events));
	ASSERT_EQ(0, run("%s lease set --valid-for 2000", self->ctl));
	/* before the deadline, I/O flows */
	writer = start_writer(&self->env, 0, 3);
	ASSERT_EQ(0, wait_child(writer, 1500)) TH_LOG("a write did not complete before the deadline");

	do {
		memset(&ev, 0, sizeof(ev));
		rc = genl_recv_event(&self->env.nl, 10000, &ev);
	} while (rc == 0 && ev.event != CHORUS_EVENT_LEASE_EXPIRED);
	ASSERT_EQ(0, rc) TH_LOG("no lease-expired event within 10 s of the deadline");
	EXPECT_STREQ("lv", ev.name);
	EXPECT_EQ(0, run("dmesg | grep -q 'chorus: lease deadline passed'"));
	EXPECT_EQ(1, json_field(self->ctl, "lease show", "expiries"));

	writer = start_writer(&self->env, REGION, 4);
	EXPECT_EQ(-1, wait_child(writer, 2000)) TH_LOG("a write completed past the deadline");
	ASSERT_EQ(0, run("%s lease set --disarm", self->ctl));
	EXPECT_EQ(0, wait_child(writer, 60000));
	expect_region(_metadata, 0, 3);
	expect_region(_metadata, REGION, 4);
}

TEST_F_TIMEOUT(lease, stepping_down_fails_held_io_and_keeps_the_volume_online, 180)
{
	char out[256];
	pid_t writer;

	ASSERT_EQ(0, dev_fill("/dev/chorus0", 0, REGION, 5, 0));
	ASSERT_EQ(0, run("%s lease set --valid-for 0", self->ctl));
	writer = start_writer(&self->env, 0, 6);
	ASSERT_EQ(-1, wait_child(writer, 2000));

	/* the node gives the volume up: what was held fails, at once */
	ASSERT_EQ(0, run("%s volume role lv replica", self->ctl));
	EXPECT_EQ(1, wait_child(writer, 30000)) TH_LOG("the held write did not fail");
	ASSERT_EQ(0, run_out(out, sizeof(out), "%s volume status lv --json | jq -r .state",
			     self->ctl));
	EXPECT_STREQ("online\n", out) TH_LOG("a lease failure marked the volume failed");
	expect_region(_metadata, 0, 5);

	/* owner again, lease still past: held again, not failed */
	ASSERT_EQ(0, run("%s volume role lv owner --epoch 7", self->ctl));
	writer = start_writer(&self->env, 0, 8);
	EXPECT_EQ(-1, wait_child(writer, 2000)) TH_LOG("a write completed past the deadline");
	ASSERT_EQ(0, run("%s lease set --valid-for 30000", self->ctl));
	EXPECT_EQ(0, wait_child(writer, 60000));
	expect_region(_metadata, 0, 8);
}

static int lease_set_raw(struct genl_sock *nl, const uint64_t *deadline, struct genl_err *e)
{
	struct genl_msg m;

	msg_init(&m, nl->family, CHORUS_CMD_LEASE_SET, 0);
	if (deadline)
		msg_put_u64(&m, CHORUS_A_LEASE_DEADLINE_NS, *deadline);
	return genl_xfer(nl, &m, e, NULL, 0, NULL);
}

TEST_F_TIMEOUT(lease, bad_deadlines_are_refused_and_change_nothing, 120)
{
	struct genl_err e = {};
	struct timespec ts;
	uint64_t deadline;
	char out[256];

	ASSERT_EQ(0, clock_gettime(CLOCK_BOOTTIME, &ts));
	deadline = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec + 120ULL * 1000000000ULL;
	EXPECT_EQ(-ERANGE, lease_set_raw(&self->env.nl, &deadline, &e));
	EXPECT_NE(NULL, strstr(e.msg, "more than 60 s ahead")) TH_LOG("extack: %s", e.msg);

	/* CLOCK_REALTIME by mistake is refused the same way */
	ASSERT_EQ(0, clock_gettime(CLOCK_REALTIME, &ts));
	deadline = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	EXPECT_EQ(-ERANGE, lease_set_raw(&self->env.nl, &deadline, &e));

	memset(&e, 0, sizeof(e));
	EXPECT_EQ(-EINVAL, lease_set_raw(&self->env.nl, NULL, &e));
	EXPECT_NE(NULL, strstr(e.msg, "missing lease deadline")) TH_LOG("extack: %s", e.msg);

	ASSERT_EQ(0, run_out(out, sizeof(out), "%s lease show --json | jq -r .state", self->ctl));
	EXPECT_STREQ("disarmed\n", out);
	ASSERT_EQ(0, dev_fill("/dev/chorus0", 0, REGION, 9, 0));
	expect_region(_metadata, 0, 9);
}

CHORUS_HARNESS_MAIN
