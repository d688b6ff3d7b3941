// SPDX-License-Identifier: GPL-2.0
/*
 * module: loading and unloading chorus.ko.
 *
 * - the generic netlink family "chorus" and its "events" group exist after
 *   insmod and are gone after rmmod;
 * - rmmod with an idle volume works, removes /dev/chorus0 and releases the
 *   backing device;
 * - rmmod is refused while /dev/chorus0 is open and works after close;
 * - 20 load/unload cycles (every other one with a volume left behind).
 */
#include "common.h"

FIXTURE(module) {
	struct chorus_env env;
};

FIXTURE_SETUP(module)
{
	env_setup(_metadata, &self->env, true);
}

FIXTURE_TEARDOWN(module)
{
	env_teardown(_metadata, &self->env);
}

static int family_state(uint16_t *id, uint32_t *grp)
{
	struct genl_sock s;
	int err;

	err = genl_open(&s);
	if (err)
		return err;
	*id = 0;
	*grp = 0;
	err = genl_resolve(&s, CHORUS_GENL_NAME, id, CHORUS_GENL_MCGRP_EVENTS, grp);
	genl_close(&s);
	return err;
}

TEST_F_TIMEOUT(module, family_registered, 120)
{
	uint16_t id;
	uint32_t grp;

	ASSERT_EQ(0, family_state(&id, &grp));
	ASSERT_NE(0, id);
	ASSERT_NE(0, grp);
	ASSERT_TRUE(path_exists("/sys/module/chorus"));

	ASSERT_EQ(0, chorus_unload());
	ASSERT_FALSE(chorus_module_loaded());
	ASSERT_EQ(-ENOENT, family_state(&id, &grp)) TH_LOG("family still registered after rmmod");

	/* and back */
	ASSERT_EQ(0, chorus_load());
	ASSERT_EQ(0, family_state(&id, &grp));
	ASSERT_NE(0, id);
}

TEST_F_TIMEOUT(module, unload_with_idle_volume, 120)
{
	struct chorus_vol v, vols[4];
	struct genl_err e;
	int fd;

	create_ok(&self->env, "idle", "/dev/vda", 0, 0, NULL, &v);
	ASSERT_STREQ("chorus0", v.disk_name);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_TRUE(path_exists("/sys/block/chorus0"));

	/* the backing device is held exclusively by the volume */
	fd = open("/dev/vda", O_RDONLY | O_EXCL | O_CLOEXEC);
	EXPECT_EQ(-1, fd) TH_LOG("/dev/vda could be opened O_EXCL while a volume uses it");
	if (fd >= 0)
		close(fd);
	else
		EXPECT_EQ(EBUSY, errno);

	ASSERT_EQ(0, chorus_unload()) TH_LOG("rmmod with an idle volume failed");
	ASSERT_FALSE(chorus_module_loaded());
	ASSERT_TRUE(wait_path("/dev/chorus0", false, 5000)) TH_LOG("/dev/chorus0 still there");
	ASSERT_FALSE(path_exists("/sys/block/chorus0"));

	/* module exit released the backing device */
	fd = open("/dev/vda", O_RDONLY | O_EXCL | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("/dev/vda still claimed after rmmod: %s", strerror(errno));
	close(fd);

	/* a new instance starts empty and can use vda again */
	ASSERT_EQ(0, chorus_load());
	genl_close(&self->env.nl);
	ASSERT_EQ(0, genl_open(&self->env.nl));
	ASSERT_EQ(0, chorus_dump(&self->env.nl, vols, 4, &e)) TH_LOG("%s", NLERR(&e));
	create_ok(&self->env, "idle", "/dev/vda", 0, 0, NULL, &v);
	ASSERT_STREQ("chorus0", v.disk_name);
}

TEST_F_TIMEOUT(module, unload_refused_while_open, 120)
{
	char buf[4096] __attribute__((aligned(4096)));
	struct chorus_vol v;
	struct genl_err e;
	char out[1024];
	int fd, rc;

	create_ok(&self->env, "busy", "/dev/vda", 64 * MiB, 0, NULL, &v);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR | O_DIRECT);

	rc = run_out(out, sizeof(out), "rmmod chorus");
	ASSERT_NE(0, rc) TH_LOG("rmmod succeeded while /dev/chorus0 is open");
	EXPECT_NE(NULL, strstr(out, "in use")) TH_LOG("rmmod said: %s", out);
	ASSERT_TRUE(chorus_module_loaded());

	/* still fully working */
	ASSERT_EQ(0, chorus_get(&self->env.nl, "busy", &v, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_EQ(1, v.open_count);
	memset(buf, 0x5a, sizeof(buf));
	ASSERT_EQ((ssize_t)sizeof(buf), pwrite(fd, buf, sizeof(buf), 8192));
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ((ssize_t)sizeof(buf), pread(fd, buf, sizeof(buf), 8192));
	ASSERT_EQ(0x5a, (unsigned char)buf[100]);

	env_close_fd(&self->env, fd);
	ASSERT_EQ(0, chorus_unload()) TH_LOG("rmmod failed after close");
	ASSERT_FALSE(chorus_module_loaded());
	ASSERT_TRUE(wait_path("/dev/chorus0", false, 5000));
}

TEST_F_TIMEOUT(module, load_unload_cycles, 600)
{
	int i;

	/* setup loaded it: start the cycles from unloaded */
	genl_close(&self->env.nl);
	ASSERT_EQ(0, chorus_unload());
	for (i = 0; i < 20; i++) {
		uint16_t id;
		uint32_t grp;

		ASSERT_EQ(0, chorus_load()) TH_LOG("insmod failed in cycle %d", i);
		ASSERT_EQ(0, family_state(&id, &grp)) TH_LOG("no family in cycle %d", i);
		if (i % 2) {
			ASSERT_EQ(0, genl_open(&self->env.nl));
			create_ok(&self->env, "cycle", i % 4 == 1 ? "/dev/vda" : "/dev/vdb",
				  16 * MiB, 0, NULL, NULL);
			ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
			genl_close(&self->env.nl);
		}
		ASSERT_EQ(0, chorus_unload()) TH_LOG("rmmod failed in cycle %d", i);
		ASSERT_FALSE(chorus_module_loaded());
		ASSERT_EQ(-ENOENT, family_state(&id, &grp))
			TH_LOG("family still registered after rmmod in cycle %d", i);
		ASSERT_FALSE(path_exists("/sys/block/chorus0"));
	}
}

CHORUS_HARNESS_MAIN
