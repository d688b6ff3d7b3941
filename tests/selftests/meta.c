// SPDX-License-Identifier: GPL-2.0
/*
 * meta: the on-disk metadata of a replica (include/uapi/linux/chorus_meta.h).
 *
 * `chorusctl volume format` writes it, and every attach
 * (CHORUS_CMD_VOLUME_CREATE) checks it. An unformatted device, a corrupt
 * superblock, a wrong uuid, size or block size, and a device smaller than
 * the one the metadata was made on are all refused with their own errno
 * and message. A refused attach changes nothing on the device. One damaged
 * superblock copy is survived by using the other. format itself refuses a
 * device in use, and a formatted one without --force.
 */
#include "common.h"

#define DEV		"/dev/vdb"
#define DEV_BYTES	(1024 * MiB)	/* the lab's disks */
#define SUPER_A		(DEV_BYTES - 8192)
#define SUPER_B		(DEV_BYTES - 4096)

FIXTURE(meta) {
	struct chorus_env env;
	char ctl[4200];
};

FIXTURE_SETUP(meta)
{
	env_setup(_metadata, &self->env, true);
	snprintf(self->ctl, sizeof(self->ctl), "%s/build/bin/chorusctl", chorus_src());
}

FIXTURE_TEARDOWN(meta)
{
	env_teardown(_metadata, &self->env);
}

static const uint8_t uuid_a[16] = {
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47, 0x88,
	0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01,
};

static const uint8_t uuid_b[16] = {
	0x21, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47, 0x88,
	0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x02,
};

/* Checksum of what an attach could touch: the first MiB and the last 2 MiB. */
static uint64_t device_sum(struct __test_metadata *_metadata, const char *dev,
			   uint64_t dev_bytes)
{
	uint64_t head = 0, tail = 0;

	EXPECT_EQ(0, dev_checksum(dev, 0, MiB, &head));
	EXPECT_EQ(0, dev_checksum(dev, dev_bytes - 2 * MiB, 2 * MiB, &tail));
	return head ^ (tail * 31);
}

/* Attach DEV with these expectations and assert the refusal. */
static void __refused(struct __test_metadata *_metadata, struct chorus_env *env,
		      const char *dev, uint64_t dev_bytes, uint64_t size, uint32_t bs,
		      const uint8_t *uuid, int want_err, const char *want_msg)
{
	struct chorus_create_args a = {
		.name = "m", .backing = dev, .size = size, .block_size = bs, .uuid = uuid,
	};
	uint64_t before = device_sum(_metadata, dev, dev_bytes);
	struct chorus_vol v;
	struct genl_err e;

	EXPECT_EQ(want_err, chorus_create(&env->nl, &a, &v, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_NE(NULL, strstr(e.msg, want_msg)) TH_LOG("extack: '%s'", e.msg);
	EXPECT_FALSE(path_exists("/sys/block/chorus0"));
	EXPECT_EQ(before, device_sum(_metadata, dev, dev_bytes))
		TH_LOG("a refused attach changed %s", dev);
}
#define refused(dev, bytes, size, bs, uuid, err, msg) \
	__refused(_metadata, &self->env, dev, bytes, size, bs, uuid, err, msg)

/* Overwrite 4 bytes inside a superblock copy (its uuid field). */
static int damage(const char *dev, uint64_t copy_offset)
{
	return run("printf 'XXXX' | dd of=%s bs=1 seek=%llu conv=notrunc status=none && sync",
		   dev, (unsigned long long)copy_offset + 24);
}

TEST_F(meta, unformatted_device_refused)
{
	ASSERT_EQ(0, run("dd if=/dev/zero of=" DEV " bs=1M count=2 seek=1022 oflag=direct "
			 "status=none"));
	refused(DEV, DEV_BYTES, 0, 0, NULL, -ENODATA, "chorusctl volume format");
}

TEST_F(meta, format_then_attach_takes_the_geometry)
{
	char out[4096];
	struct chorus_vol v;

	create_ok(&self->env, "m", DEV, 96 * MiB, 4096, uuid_a, &v);
	EXPECT_EQ(96 * MiB, v.size);
	EXPECT_EQ(4096, v.block_size);
	EXPECT_EQ(0, memcmp(v.uuid, uuid_a, 16));
	destroy_ok(&self->env, "m");

	/* without expectations, the metadata alone decides */
	{
		struct chorus_create_args a = { .name = "m", .backing = DEV };
		struct genl_err e;

		ASSERT_EQ(0, chorus_create(&self->env.nl, &a, &v, &e)) TH_LOG("%s", NLERR(&e));
		EXPECT_EQ(96 * MiB, v.size);
		EXPECT_EQ(4096, v.block_size);
		EXPECT_EQ(0, memcmp(v.uuid, uuid_a, 16));
	}
	ASSERT_EQ(0, run_out(out, sizeof(out), "%s volume status m", self->ctl));
	EXPECT_NE(NULL, strstr(out, "11223344-5566-4788-99aa-bbccddeeff01")) TH_LOG("%s", out);
}

TEST_F(meta, mismatched_expectations_refused)
{
	ASSERT_EQ(0, chorus_format(DEV, 64 * MiB, 512, uuid_a));
	refused(DEV, DEV_BYTES, 0, 0, uuid_b, -EINVAL, "uuid does not match");
	refused(DEV, DEV_BYTES, 32 * MiB, 0, NULL, -EINVAL, "size differs");
	refused(DEV, DEV_BYTES, 0, 4096, NULL, -EINVAL, "block size differs");
}

TEST_F(meta, one_damaged_copy_is_survived)
{
	struct chorus_create_args a = { .name = "m", .backing = DEV, .uuid = uuid_a };
	struct chorus_vol v;
	struct genl_err e;

	ASSERT_EQ(0, chorus_format(DEV, 64 * MiB, 0, uuid_a));
	ASSERT_EQ(0, damage(DEV, SUPER_A));
	ASSERT_EQ(0, chorus_create(&self->env.nl, &a, &v, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_EQ(64 * MiB, v.size);
	EXPECT_EQ(0, run("dmesg | grep -q 'superblock copy A on " DEV " is damaged'"));
}

TEST_F(meta, both_copies_damaged_refused)
{
	ASSERT_EQ(0, chorus_format(DEV, 64 * MiB, 0, uuid_a));
	ASSERT_EQ(0, damage(DEV, SUPER_A));
	ASSERT_EQ(0, damage(DEV, SUPER_B));
	refused(DEV, DEV_BYTES, 0, 0, NULL, -EUCLEAN, "corrupt");
}

/*
 * The superblocks of a 1 GiB device copied to the end of a 512 MiB one: the
 * metadata describes a larger device than the one it sits on.
 */
TEST_F(meta, device_smaller_than_formatted_refused)
{
	const uint64_t small = 512 * MiB;
	char small_dev[64];

	ASSERT_EQ(0, chorus_format(DEV, 64 * MiB, 0, uuid_a));
	/* no udev in the lab: dmsetup makes the /dev/mapper node itself */
	ASSERT_EQ(0, run("modprobe dm-mod && dmsetup create --noudevsync chorus-meta-small "
			 "--table '0 %llu linear /dev/vda 0'", (unsigned long long)(small / 512)));
	env_on_cleanup(&self->env, true, "dmsetup remove --noudevsync chorus-meta-small");
	/* devtmpfs has /dev/dm-N; /dev/mapper would need udev */
	ASSERT_EQ(0, run_out(small_dev, sizeof(small_dev),
			     "for d in /sys/block/dm-*; do [ \"$(cat $d/dm/name)\" = "
			     "chorus-meta-small ] && echo /dev/${d##*/}; done"));
	small_dev[strcspn(small_dev, "\n")] = '\0';
	ASSERT_NE(0, small_dev[0]) TH_LOG("no /dev/dm-N for chorus-meta-small");
	ASSERT_EQ(0, run("dd if=" DEV " bs=4096 skip=%llu count=2 status=none | "
			 "dd of=%s bs=4096 seek=%llu oflag=direct status=none",
			 (unsigned long long)(DEV_BYTES / 4096 - 2), small_dev,
			 (unsigned long long)(small / 4096 - 2)));
	refused(small_dev, small, 0, 0, NULL, -EINVAL, "smaller");
}

TEST_F(meta, format_refuses_in_use_and_formatted_devices)
{
	char out[4096];
	uint64_t before;

	create_ok(&self->env, "m", DEV, 64 * MiB, 0, uuid_a, NULL);
	EXPECT_EQ(1, run_out(out, sizeof(out), "%s volume format --backing " DEV " --force",
			     self->ctl));
	EXPECT_NE(NULL, strstr(out, "in use")) TH_LOG("%s", out);
	destroy_ok(&self->env, "m");

	before = device_sum(_metadata, DEV, DEV_BYTES);
	EXPECT_EQ(1, run_out(out, sizeof(out), "%s volume format --backing " DEV, self->ctl));
	EXPECT_NE(NULL, strstr(out, "already")) TH_LOG("%s", out);
	EXPECT_EQ(before, device_sum(_metadata, DEV, DEV_BYTES));

	ASSERT_EQ(0, run_out(out, sizeof(out), "%s --json volume inspect --backing " DEV,
			     self->ctl));
	EXPECT_NE(NULL, strstr(out, "11223344-5566-4788-99aa-bbccddeeff01")) TH_LOG("%s", out);
}

/* One field of `chorusctl --json volume inspect`, as python prints it. */
static int inspect(const char *ctl, const char *dev, const char *field, char *out, size_t len)
{
	int r = run_quiet(out, len, "%s --json volume inspect --backing %s | "
			  "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"%s\"])'",
			  ctl, dev, field);

	out[strcspn(out, "\n")] = '\0';
	return r;
}

TEST_F(meta, attach_and_detach_mark_the_metadata)
{
	char out[256];

	create_ok(&self->env, "m", DEV, 64 * MiB, 0, uuid_a, NULL);
	ASSERT_EQ(0, inspect(self->ctl, DEV, "clean", out, sizeof(out)));
	EXPECT_STREQ("False", out);
	ASSERT_EQ(0, inspect(self->ctl, DEV, "seq", out, sizeof(out)));
	EXPECT_STREQ("2", out);

	destroy_ok(&self->env, "m");
	ASSERT_EQ(0, inspect(self->ctl, DEV, "clean", out, sizeof(out)));
	EXPECT_STREQ("True", out);
	ASSERT_EQ(0, inspect(self->ctl, DEV, "seq", out, sizeof(out)));
	EXPECT_STREQ("3", out);
}

/* The detach cannot write its clean mark: a dm table switched to "error". */
TEST_F(meta, failed_clean_mark_is_reported_at_next_attach)
{
	const uint64_t sectors = 64 * MiB / 512;
	struct chorus_create_args a = { .name = "m", .uuid = uuid_a };
	char dm[64], out[256];
	struct chorus_vol v;
	struct genl_err e;

	ASSERT_EQ(0, run("modprobe dm-mod && dmsetup create --noudevsync chorus-meta-flaky "
			 "--table '0 %llu linear " DEV " 0'", (unsigned long long)sectors));
	env_on_cleanup(&self->env, false, "dmsetup remove --noudevsync chorus-meta-flaky");
	ASSERT_EQ(0, run_out(dm, sizeof(dm),
			     "for d in /sys/block/dm-*; do [ \"$(cat $d/dm/name)\" = "
			     "chorus-meta-flaky ] && echo /dev/${d##*/}; done"));
	dm[strcspn(dm, "\n")] = '\0';
	ASSERT_NE(0, dm[0]);
	a.backing = dm;

	create_ok(&self->env, "m", dm, 0, 0, uuid_a, NULL);
	ASSERT_EQ(0, run("dmsetup suspend --noudevsync chorus-meta-flaky && "
			 "dmsetup load chorus-meta-flaky --table '0 %llu error' && "
			 "dmsetup resume --noudevsync chorus-meta-flaky",
			 (unsigned long long)sectors));
	destroy_ok(&self->env, "m");
	EXPECT_EQ(0, run("dmesg | grep -q 'm: cannot mark the metadata on %s clean'", dm));

	ASSERT_EQ(0, run("dmsetup suspend --noudevsync chorus-meta-flaky && "
			 "dmsetup load chorus-meta-flaky --table '0 %llu linear " DEV " 0' && "
			 "dmsetup resume --noudevsync chorus-meta-flaky",
			 (unsigned long long)sectors));
	ASSERT_EQ(0, inspect(self->ctl, dm, "clean", out, sizeof(out)));
	EXPECT_STREQ("False", out);
	ASSERT_EQ(0, chorus_create(&self->env.nl, &a, &v, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_EQ(0, run("dmesg | grep -q 'm: %s was not detached cleanly last time'", dm));
	destroy_ok(&self->env, "m");
	ASSERT_EQ(0, inspect(self->ctl, dm, "clean", out, sizeof(out)));
	EXPECT_STREQ("True", out);
}

CHORUS_HARNESS_MAIN
