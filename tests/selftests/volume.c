// SPDX-License-Identifier: GPL-2.0
/*
 * volume: the life of a volume through generic netlink.
 *
 * create / get / dump / destroy and the attributes of the replies; the block
 * device /dev/chorusN (size, logical block size, one minor); the sysfs
 * attributes under /sys/block/chorusN/chorus/; events on the "events"
 * multicast group; destroy while open (EBUSY, the volume keeps working);
 * reusing a name; two volumes at once; --size smaller than the backing
 * device; a 4096 byte block size on a 512 byte backing device.
 */
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>

#include "common.h"

FIXTURE(volume) {
	struct chorus_env env;
};

FIXTURE_SETUP(volume)
{
	env_setup(_metadata, &self->env, true);
}

FIXTURE_TEARDOWN(volume)
{
	env_teardown(_metadata, &self->env);
}

static const uint8_t test_uuid[16] = {
	0x3f, 0x1c, 0x4b, 0x6e, 0x9a, 0x2d, 0x4c, 0x1e,
	0x8b, 0x7a, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
};

static uint64_t disk_bytes(struct __test_metadata *_metadata, const char *disk)
{
	uint64_t sectors = 0;

	ASSERT_EQ(0, read_u64f(&sectors, "/sys/block/%s/size", disk));
	return sectors * 512;
}

static uint32_t lbs(struct __test_metadata *_metadata, const char *disk)
{
	uint64_t v = 0;

	ASSERT_EQ(0, read_u64f(&v, "/sys/block/%s/queue/logical_block_size", disk));
	return (uint32_t)v;
}

/* All attributes of CHORUS_CMD_VOLUME_GET present and sane. */
static void check_vol_attrs(struct __test_metadata *_metadata, const struct chorus_vol *v,
			    const char *name, const char *backing, uint64_t size,
			    uint32_t bs, const char *disk)
{
	static const uint8_t zero[16];
	char sysdev[64];
	unsigned int ma, mi;
	int i;

	EXPECT_EQ(0, v->bad_len) TH_LOG("reply has attributes of the wrong length");
	for (i = CHORUS_A_VOLUME_NAME; i <= CHORUS_A_STATS; i++) {
		if (i == CHORUS_A_EVENT)
			continue;
		EXPECT_TRUE(v->has[i]) TH_LOG("attribute %d missing from the reply", i);
		if (i != CHORUS_A_STATS)
			EXPECT_GE(1, v->dup[i]) TH_LOG("attribute %d repeated", i);
	}
	EXPECT_STREQ(name, v->name);
	EXPECT_STREQ(backing, v->backing);
	EXPECT_EQ(size, v->size);
	EXPECT_EQ(bs, v->block_size);
	EXPECT_EQ(CHORUS_UUID_LEN, v->uuid_len);
	EXPECT_NE(0, memcmp(v->uuid, zero, 16)) TH_LOG("all-zero uuid");
	EXPECT_STREQ(disk, v->disk_name);
	EXPECT_EQ(CHORUS_VOLUME_STATE_ONLINE, v->state);
	for (i = CHORUS_STAT_READS; i <= CHORUS_STAT_MAX; i++)
		EXPECT_TRUE(v->has_stat[i]) TH_LOG("stat %d missing", i);
	EXPECT_EQ(0, v->stat[CHORUS_STAT_ERRORS]);
	ASSERT_EQ(0, dev_numbers(disk, &ma, &mi)) TH_LOG("no /sys/block/%s/dev", disk);
	EXPECT_EQ(mi, v->minor) TH_LOG("MINOR %u but /sys/block/%s/dev says %u:%u",
				       v->minor, disk, ma, mi);
	snprintf(sysdev, sizeof(sysdev), "/dev/%s", disk);
	EXPECT_TRUE(wait_path(sysdev, true, 5000));
}

TEST_F_TIMEOUT(volume, create_reply_attributes, 120)
{
	uint64_t vda = disk_bytes(_metadata, "vda");
	struct chorus_vol v;

	uint64_t data = 0;

	create_ok(&self->env, "vol0", "/dev/vda", 0, 0, NULL, &v);
	/* the metadata at the end of vda leaves the rest to the volume */
	ASSERT_EQ(0, chorus_formatted_bytes("/dev/vda", &data));
	EXPECT_LT(data, vda);
	/* "replies with the volume as GET does": the attributes; the genl
	 * command of the reply may be CREATE (like most families) or GET */
	EXPECT_TRUE(v.cmd == CHORUS_CMD_VOLUME_GET || v.cmd == CHORUS_CMD_VOLUME_CREATE)
		TH_LOG("create reply has cmd %u", v.cmd);
	check_vol_attrs(_metadata, &v, "vol0", "/dev/vda", data, lbs(_metadata, "vda"), "chorus0");
	EXPECT_EQ(0, v.open_count);
	EXPECT_EQ(0, v.minor) TH_LOG("first volume, first minor expected 0");
}

TEST_F_TIMEOUT(volume, get_and_dump, 120)
{
	struct chorus_vol a, b, g, vols[8];
	struct genl_err e;
	int n, i, seen = 0;

	n = chorus_dump(&self->env.nl, vols, 8, &e);
	ASSERT_EQ(0, n) TH_LOG("dump with no volumes: %d %s", n, NLERR(&e));

	create_ok(&self->env, "alpha", "/dev/vda", 32 * MiB, 0, NULL, &a);
	create_ok(&self->env, "beta", "/dev/vdb", 16 * MiB, 4096, test_uuid, &b);

	ASSERT_EQ(0, chorus_get(&self->env.nl, "alpha", &g, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_EQ(CHORUS_CMD_VOLUME_GET, g.cmd);
	check_vol_attrs(_metadata, &g, "alpha", "/dev/vda", 32 * MiB, 512, "chorus0");
	EXPECT_EQ(0, memcmp(a.uuid, g.uuid, 16));

	ASSERT_EQ(0, chorus_get(&self->env.nl, "beta", &g, &e)) TH_LOG("%s", NLERR(&e));
	check_vol_attrs(_metadata, &g, "beta", "/dev/vdb", 16 * MiB, 4096, "chorus1");
	EXPECT_EQ(0, memcmp(test_uuid, g.uuid, 16)) TH_LOG("explicit UUID not kept");
	EXPECT_EQ(0, memcmp(test_uuid, b.uuid, 16));

	n = chorus_dump(&self->env.nl, vols, 8, &e);
	ASSERT_EQ(2, n) TH_LOG("dump: %d %s", n, NLERR(&e));
	for (i = 0; i < n; i++) {
		if (!strcmp(vols[i].name, "alpha")) {
			seen |= 1;
			check_vol_attrs(_metadata, &vols[i], "alpha", "/dev/vda", 32 * MiB, 512,
					"chorus0");
		} else if (!strcmp(vols[i].name, "beta")) {
			seen |= 2;
			check_vol_attrs(_metadata, &vols[i], "beta", "/dev/vdb", 16 * MiB, 4096,
					"chorus1");
		}
	}
	EXPECT_EQ(3, seen);

	destroy_ok(&self->env, "alpha");
	ASSERT_EQ(-ENOENT, chorus_get(&self->env.nl, "alpha", &g, &e));
	EXPECT_NE(0, e.msg[0]) TH_LOG("no extack message for GET of an unknown volume");
	n = chorus_dump(&self->env.nl, vols, 8, &e);
	ASSERT_EQ(1, n);
	EXPECT_STREQ("beta", vols[0].name);
	destroy_ok(&self->env, "beta");
	ASSERT_EQ(0, chorus_dump(&self->env.nl, vols, 8, &e));
	ASSERT_TRUE(wait_path("/dev/chorus0", false, 5000));
	ASSERT_TRUE(wait_path("/dev/chorus1", false, 5000));
}

TEST_F_TIMEOUT(volume, block_device, 120)
{
	uint64_t vda = disk_bytes(_metadata, "vda"), size = 0, v64 = 0, data = 0;
	struct chorus_vol v;
	struct stat st;
	int ssz = 0, fd;
	char buf[64];

	create_ok(&self->env, "bdev", "/dev/vda", 0, 0, NULL, &v);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_EQ(0, stat("/dev/chorus0", &st));
	ASSERT_TRUE(S_ISBLK(st.st_mode));
	EXPECT_EQ(v.minor, minor(st.st_rdev));

	ASSERT_EQ(0, bdev_size("/dev/chorus0", &size));
	ASSERT_EQ(0, chorus_formatted_bytes("/dev/vda", &data));
	EXPECT_LT(data, vda);
	EXPECT_EQ(data, size);
	EXPECT_EQ(v.size, size);
	ASSERT_EQ(0, bdev_ssz("/dev/chorus0", &ssz));
	EXPECT_EQ((int)v.block_size, ssz);

	/* one minor, no partitions */
	ASSERT_EQ(0, read_u64f(&v64, "/sys/block/chorus0/range"));
	EXPECT_EQ(1, v64);
	ASSERT_EQ(0, read_u64f(&v64, "/sys/block/chorus0/ext_range"));
	EXPECT_EQ(1, v64);
	ASSERT_EQ(0, read_filef(buf, sizeof(buf), "/sys/block/chorus0/dev"));
	fd = open_dev(&self->env, "/dev/chorus0", O_RDONLY);
	EXPECT_NE(0, ioctl(fd, BLKRRPART)) TH_LOG("BLKRRPART succeeded on a no-partition disk");
	env_close_fd(&self->env, fd);
}

static void expect_sysfs(struct __test_metadata *_metadata, const char *disk,
			 const char *attr, const char *want)
{
	char buf[512];

	ASSERT_EQ(0, read_filef(buf, sizeof(buf), "/sys/block/%s/chorus/%s", disk, attr))
		TH_LOG("/sys/block/%s/chorus/%s missing", disk, attr);
	if (want)
		EXPECT_STREQ(want, buf) TH_LOG("sysfs %s", attr);
}

TEST_F_TIMEOUT(volume, sysfs_attributes, 120)
{
	static const char *const counters[] = {
		"reads", "read_bytes", "writes", "write_bytes", "flushes", "fua_writes",
		"discards", "write_zeroes", "errors",
	};
	char uuid[40], inc[40], *buf;
	struct chorus_vol v, g;
	struct genl_err e;
	uint64_t r0, rb0, w0, wb0;
	size_t i;
	int fd;

	create_ok(&self->env, "sysfs-vol_1", "/dev/vda", 64 * MiB, 0, test_uuid, &v);
	ASSERT_TRUE(wait_path("/sys/block/chorus0/chorus", true, 5000));
	uuid_fmt(test_uuid, uuid);
	expect_sysfs(_metadata, "chorus0", "name", "sysfs-vol_1");
	expect_sysfs(_metadata, "chorus0", "uuid", uuid);
	expect_sysfs(_metadata, "chorus0", "backing", "/dev/vda");
	expect_sysfs(_metadata, "chorus0", "state", "online");
	/* random, never 0 (its low bit is set), 16 hex digits */
	ASSERT_EQ(0, read_filef(inc, sizeof(inc), "/sys/block/chorus0/chorus/incarnation"));
	EXPECT_EQ(16, strlen(inc)) TH_LOG("incarnation \"%s\"", inc);
	EXPECT_EQ(1, strtoull(inc, NULL, 16) & 1) TH_LOG("incarnation \"%s\"", inc);
	for (i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		uint64_t c;

		ASSERT_EQ(0, chorus_counter("chorus0", counters[i], &c))
			TH_LOG("counter %s missing or not a number", counters[i]);
	}
	EXPECT_EQ(0, counter("chorus0", "errors"));

	/* the counters move with I/O, and match the netlink STATS */
	r0 = counter("chorus0", "reads");
	rb0 = counter("chorus0", "read_bytes");
	w0 = counter("chorus0", "writes");
	wb0 = counter("chorus0", "write_bytes");
	buf = abuf(65536);
	ASSERT_NE(NULL, buf);
	memset(buf, 0xa5, 65536);
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR | O_DIRECT);
	ASSERT_EQ(65536, pwrite(fd, buf, 65536, 1 * MiB));
	ASSERT_EQ(4096, pread(fd, buf, 4096, 1 * MiB));
	env_close_fd(&self->env, fd);
	free(buf);
	EXPECT_LE(w0 + 1, counter("chorus0", "writes"));
	EXPECT_EQ(wb0 + 65536, counter("chorus0", "write_bytes"));
	EXPECT_LE(r0 + 1, counter("chorus0", "reads"));
	EXPECT_EQ(rb0 + 4096, counter("chorus0", "read_bytes"));

	ASSERT_EQ(0, chorus_get(&self->env.nl, "sysfs-vol_1", &g, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_EQ(counter("chorus0", "writes"), g.stat[CHORUS_STAT_WRITES]);
	EXPECT_EQ(counter("chorus0", "write_bytes"), g.stat[CHORUS_STAT_WRITE_BYTES]);
	EXPECT_EQ(counter("chorus0", "reads"), g.stat[CHORUS_STAT_READS]);
	EXPECT_EQ(counter("chorus0", "read_bytes"), g.stat[CHORUS_STAT_READ_BYTES]);
	EXPECT_EQ(counter("chorus0", "errors"), g.stat[CHORUS_STAT_ERRORS]);
}

TEST_F_TIMEOUT(volume, events, 120)
{
	struct genl_sock ev;
	struct chorus_vol v, got;
	int err;

	ASSERT_EQ(0, genl_open(&ev));
	ASSERT_NE(0, ev.mcgrp_events);
	ASSERT_EQ(0, genl_subscribe(&ev, ev.mcgrp_events));
	env_track_fd(&self->env, ev.fd);

	create_ok(&self->env, "evvol", "/dev/vda", 16 * MiB, 0, NULL, &v);
	err = genl_recv_event(&ev, 10000, &got);
	ASSERT_EQ(0, err) TH_LOG("no event after create: %s", strerror(-err));
	EXPECT_EQ(CHORUS_CMD_EVENT, got.cmd);
	EXPECT_TRUE(got.has[CHORUS_A_EVENT]);
	EXPECT_EQ(CHORUS_EVENT_VOLUME_CREATED, got.event);
	EXPECT_STREQ("evvol", got.name);
	EXPECT_STREQ("chorus0", got.disk_name);
	EXPECT_STREQ("/dev/vda", got.backing);
	EXPECT_EQ(16 * MiB, got.size);
	EXPECT_EQ(0, memcmp(v.uuid, got.uuid, 16));
	EXPECT_TRUE(got.has[CHORUS_A_STATE]);

	destroy_ok(&self->env, "evvol");
	err = genl_recv_event(&ev, 10000, &got);
	ASSERT_EQ(0, err) TH_LOG("no event after destroy: %s", strerror(-err));
	EXPECT_EQ(CHORUS_CMD_EVENT, got.cmd);
	EXPECT_EQ(CHORUS_EVENT_VOLUME_DESTROYED, got.event);
	EXPECT_STREQ("evvol", got.name);
	EXPECT_EQ(0, memcmp(v.uuid, got.uuid, 16));

	/* nothing else pending */
	err = genl_recv_event(&ev, 500, &got);
	EXPECT_EQ(-ETIMEDOUT, err) TH_LOG("unexpected extra event %u", got.event);
}

TEST_F_TIMEOUT(volume, destroy_while_open, 120)
{
	char *buf;
	struct chorus_vol v;
	struct genl_err e;
	int fd, err;

	create_ok(&self->env, "openvol", "/dev/vda", 16 * MiB, 0, NULL, &v);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR | O_DIRECT);

	err = chorus_destroy(&self->env.nl, "openvol", &e);
	ASSERT_EQ(-EBUSY, err) TH_LOG("destroy while open: %s", NLERR(&e));
	EXPECT_NE(0, e.msg[0]) TH_LOG("no extack message");

	ASSERT_EQ(0, chorus_get(&self->env.nl, "openvol", &v, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_EQ(1, v.open_count);
	EXPECT_EQ(CHORUS_VOLUME_STATE_ONLINE, v.state);
	ASSERT_TRUE(path_exists("/dev/chorus0"));

	buf = abuf(8192);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x3c, 8192);
	ASSERT_EQ(8192, pwrite(fd, buf, 8192, 4096)) TH_LOG("write after refused destroy");
	memset(buf, 0, 8192);
	ASSERT_EQ(8192, pread(fd, buf, 8192, 4096));
	EXPECT_EQ(0x3c, (unsigned char)buf[8191]);
	free(buf);

	env_close_fd(&self->env, fd);
	ASSERT_EQ(0, chorus_get(&self->env.nl, "openvol", &v, &e));
	EXPECT_EQ(0, v.open_count);
	destroy_ok(&self->env, "openvol");
	ASSERT_EQ(-ENOENT, chorus_get(&self->env.nl, "openvol", &v, &e));
	ASSERT_TRUE(wait_path("/dev/chorus0", false, 5000));
	ASSERT_FALSE(path_exists("/sys/block/chorus0"));
}

TEST_F_TIMEOUT(volume, name_reuse, 120)
{
	struct chorus_vol a, b;

	create_ok(&self->env, "again", "/dev/vda", 16 * MiB, 0, NULL, &a);
	destroy_ok(&self->env, "again");
	ASSERT_TRUE(wait_path("/dev/chorus0", false, 5000));
	create_ok(&self->env, "again", "/dev/vda", 16 * MiB, 0, NULL, &b);
	EXPECT_STREQ("chorus0", b.disk_name);
	EXPECT_NE(0, memcmp(a.uuid, b.uuid, 16)) TH_LOG("random UUID repeated");
	destroy_ok(&self->env, "again");
	/* and on another backing device, with an explicit uuid */
	create_ok(&self->env, "again", "/dev/vdb", 16 * MiB, 0, test_uuid, &b);
	EXPECT_EQ(0, memcmp(test_uuid, b.uuid, 16));
	EXPECT_STREQ("/dev/vdb", b.backing);
}

TEST_F_TIMEOUT(volume, two_volumes, 180)
{
	struct chorus_vol a, b, c;
	uint64_t sa, sb;

	create_ok(&self->env, "one", "/dev/vda", 32 * MiB, 0, NULL, &a);
	create_ok(&self->env, "two", "/dev/vdb", 16 * MiB, 0, NULL, &b);
	EXPECT_STREQ("chorus0", a.disk_name);
	EXPECT_STREQ("chorus1", b.disk_name);
	EXPECT_NE(a.minor, b.minor);
	EXPECT_NE(0, memcmp(a.uuid, b.uuid, 16));
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_TRUE(wait_path("/dev/chorus1", true, 5000));

	/* independent data */
	ASSERT_EQ(0, dev_fill("/dev/chorus0", 0, 1 * MiB, 11, 0));
	ASSERT_EQ(0, dev_fill("/dev/chorus1", 0, 1 * MiB, 22, 0));
	sa = checksum("/dev/chorus0", 0, 1 * MiB);
	sb = checksum("/dev/chorus1", 0, 1 * MiB);
	EXPECT_NE(sa, sb);
	EXPECT_EQ(sa, checksum("/dev/vda", 0, 1 * MiB));
	EXPECT_EQ(sb, checksum("/dev/vdb", 0, 1 * MiB));
	EXPECT_EQ(0, read_u64f(&sa, "/sys/block/chorus0/size"));
	EXPECT_EQ(32 * MiB / 512, sa);
	EXPECT_EQ(0, read_u64f(&sb, "/sys/block/chorus1/size"));
	EXPECT_EQ(16 * MiB / 512, sb);

	/* the lowest free index is reused */
	destroy_ok(&self->env, "one");
	ASSERT_TRUE(wait_path("/dev/chorus0", false, 5000));
	create_ok(&self->env, "three", "/dev/vda", 16 * MiB, 0, NULL, &c);
	EXPECT_STREQ("chorus0", c.disk_name);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_TRUE(path_exists("/dev/chorus1"));
}

TEST_F_TIMEOUT(volume, size_smaller_than_backing, 120)
{
	uint64_t size = 0;
	struct chorus_vol v;
	char *buf;
	int fd;

	create_ok(&self->env, "small", "/dev/vda", 48 * MiB, 0, NULL, &v);
	EXPECT_EQ(48 * MiB, v.size);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_EQ(0, bdev_size("/dev/chorus0", &size));
	EXPECT_EQ(48 * MiB, size);
	ASSERT_EQ(0, read_u64f(&size, "/sys/block/chorus0/size"));
	EXPECT_EQ(48 * MiB / 512, size);

	buf = abuf(4096);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x77, 4096);
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR | O_DIRECT);
	EXPECT_EQ(4096, pwrite(fd, buf, 4096, 48 * MiB - 4096)) TH_LOG("last block not writable");
	EXPECT_GE(0, pwrite(fd, buf, 4096, 48 * MiB)) TH_LOG("wrote past the end of the volume");
	EXPECT_EQ(0, pread(fd, buf, 4096, 48 * MiB)) TH_LOG("read past the end returned data");
	env_close_fd(&self->env, fd);
	free(buf);
	EXPECT_EQ(checksum("/dev/chorus0", 48 * MiB - 4096, 4096),
		  checksum("/dev/vda", 48 * MiB - 4096, 4096));
}

TEST_F_TIMEOUT(volume, block_size_4096_on_512, 120)
{
	uint64_t v64 = 0;
	struct chorus_vol v;
	char *buf;
	int ssz = 0, fd;

	ASSERT_EQ(512, lbs(_metadata, "vda")) TH_LOG("the lab's vda is expected to be 512");
	create_ok(&self->env, "big-blocks", "/dev/vda", 32 * MiB, 4096, NULL, &v);
	EXPECT_EQ(4096, v.block_size);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_EQ(0, bdev_ssz("/dev/chorus0", &ssz));
	EXPECT_EQ(4096, ssz);
	ASSERT_EQ(0, read_u64f(&v64, "/sys/block/chorus0/queue/logical_block_size"));
	EXPECT_EQ(4096, v64);
	ASSERT_EQ(0, read_u64f(&v64, "/sys/block/chorus0/queue/physical_block_size"));
	EXPECT_LE(4096, v64);

	buf = abuf(8192);
	ASSERT_NE(NULL, buf);
	memset(buf, 0x42, 8192);
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR | O_DIRECT);
	/* 512-byte aligned direct I/O must be refused by a 4K device */
	EXPECT_GT(0, pwrite(fd, buf, 512, 512)) TH_LOG("512 byte direct write accepted");
	EXPECT_GT(0, pwrite(fd, buf, 4096, 512)) TH_LOG("misaligned direct write accepted");
	ASSERT_EQ(8192, pwrite(fd, buf, 8192, 4096));
	memset(buf, 0, 8192);
	ASSERT_EQ(8192, pread(fd, buf, 8192, 4096));
	EXPECT_EQ(0x42, (unsigned char)buf[4095]);
	env_close_fd(&self->env, fd);
	free(buf);
	EXPECT_EQ(checksum("/dev/chorus0", 0, 1 * MiB), checksum("/dev/vda", 0, 1 * MiB));
}

/* /dev/dm-N of the device-mapper device NAME, "" if none. */
static void dm_node(const char *name, char *dev, size_t len)
{
	char out[256];

	dev[0] = '\0';
	if (run_out(out, sizeof(out),
		    "for d in /sys/block/dm-*; do [ \"$(cat $d/dm/name)\" = %s ] && "
		    "echo /dev/${d##*/}; done; true", name) == 0) {
		out[strcspn(out, "\n")] = '\0';
		snprintf(dev, len, "%.63s", out);
	}
}

#define DM_NAME "chorus-selftest-err"
#define DM_SECTORS (64 * MiB / 512)

/* Wait for a VOLUME_STATE event of volume name; other events are skipped. */
static int wait_state_event(struct genl_sock *ev, const char *name, struct chorus_vol *got)
{
	uint64_t end = now_ms() + 15000;

	while (now_ms() < end) {
		int err = genl_recv_event(ev, (int)(end - now_ms()), got);

		if (err)
			return err;
		if (got->event == CHORUS_EVENT_VOLUME_STATE && !strcmp(got->name, name))
			return 0;
	}
	return -ETIMEDOUT;
}

TEST_F_TIMEOUT(volume, backing_error_state, 300)
{
	char dev[64], state[32];
	struct chorus_vol v, got;
	struct genl_sock ev;
	struct genl_err e;
	uint64_t err0, err1, err2, data = 0;
	char *buf;
	int fd, err;

	ASSERT_EQ(0, run("modprobe dm-mod && command -v dmsetup >/dev/null"));
	run("dmsetup remove --noudevsync " DM_NAME " 2>/dev/null; true");
	ASSERT_EQ(0, run("dmsetup create --noudevsync " DM_NAME " --table '0 %llu linear /dev/vdb 0'",
			 (unsigned long long)DM_SECTORS));
	env_on_cleanup(&self->env, false, "dmsetup remove --noudevsync " DM_NAME);
	dm_node(DM_NAME, dev, sizeof(dev));
	ASSERT_NE(0, dev[0]) TH_LOG("no /dev/dm-N for " DM_NAME);
	ASSERT_TRUE(wait_path(dev, true, 5000));

	ASSERT_EQ(0, genl_open(&ev));
	ASSERT_EQ(0, genl_subscribe(&ev, ev.mcgrp_events));
	env_track_fd(&self->env, ev.fd);

	create_ok(&self->env, "flaky", dev, 0, 0, NULL, &v);
	ASSERT_EQ(0, chorus_formatted_bytes(dev, &data));
	EXPECT_LT(data, DM_SECTORS * 512);
	EXPECT_EQ(data, v.size);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	buf = abuf(4096);
	ASSERT_NE(NULL, buf);
	memset(buf, 0xee, 4096);
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR | O_DIRECT);
	ASSERT_EQ(4096, pwrite(fd, buf, 4096, 0));
	err0 = counter("chorus0", "errors");
	EXPECT_EQ(0, err0);

	/* the backing device starts failing every request */
	ASSERT_EQ(0, run("dmsetup suspend --noudevsync " DM_NAME " && "
			 "dmsetup load " DM_NAME " --table '0 %llu error' && "
			 "dmsetup resume --noudevsync " DM_NAME, (unsigned long long)DM_SECTORS));
	errno = 0;
	EXPECT_EQ(-1, pwrite(fd, buf, 4096, 8192)) TH_LOG("write to a failing backing device succeeded");
	EXPECT_EQ(EIO, errno);
	err1 = counter("chorus0", "errors");
	EXPECT_LT(err0, err1) TH_LOG("errors counter did not move");
	ASSERT_EQ(0, read_file("/sys/block/chorus0/chorus/state", state, sizeof(state)));
	EXPECT_STREQ("failed", state);
	ASSERT_EQ(0, chorus_get(&self->env.nl, "flaky", &got, &e)) TH_LOG("%s", NLERR(&e));
	EXPECT_EQ(CHORUS_VOLUME_STATE_FAILED, got.state);
	EXPECT_EQ(err1, got.stat[CHORUS_STAT_ERRORS]);
	err = wait_state_event(&ev, "flaky", &got);
	EXPECT_EQ(0, err) TH_LOG("no VOLUME_STATE event: %s", strerror(-err));
	if (!err)
		EXPECT_EQ(CHORUS_VOLUME_STATE_FAILED, got.state);

	/* each error is reported */
	errno = 0;
	EXPECT_EQ(-1, pread(fd, buf, 4096, 0));
	EXPECT_EQ(EIO, errno);
	err2 = counter("chorus0", "errors");
	EXPECT_LT(err1, err2) TH_LOG("second error not counted");

	/* I/O keeps being passed through: once the device works, so does I/O */
	ASSERT_EQ(0, run("dmsetup suspend --noudevsync " DM_NAME " && "
			 "dmsetup load " DM_NAME " --table '0 %llu linear /dev/vdb 0' && "
			 "dmsetup resume --noudevsync " DM_NAME, (unsigned long long)DM_SECTORS));
	EXPECT_EQ(4096, pread(fd, buf, 4096, 0)) TH_LOG("read after the backing device recovered");
	EXPECT_EQ(0xee, (unsigned char)buf[0]);
	env_close_fd(&self->env, fd);
	free(buf);
	destroy_ok(&self->env, "flaky");
}

CHORUS_HARNESS_MAIN
