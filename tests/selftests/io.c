// SPDX-License-Identifier: GPL-2.0
/*
 * io: data path of a single-node volume on /dev/vda.
 *
 * fio randwrite + crc32c verify through /dev/chorus0 and the same bytes on
 * vda afterwards; flush, FUA, discard and write-zeroes reach the backing
 * device (tracefs block events, /sys/block/vda/stat, chorus's counters);
 * queue limits of /sys/block/chorus0/queue.
 */
#include <sys/param.h>

#include "common.h"

#define VOL_SIZE	(64 * MiB)

FIXTURE(io) {
	struct chorus_env env;
	unsigned int vda_major, vda_minor;
};

FIXTURE_SETUP(io)
{
	struct chorus_vol v;

	env_setup(_metadata, &self->env, true);
	create_ok(&self->env, "io", "/dev/vda", VOL_SIZE, 0, NULL, &v);
	ASSERT_STREQ("chorus0", v.disk_name);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_EQ(0, dev_numbers("vda", &self->vda_major, &self->vda_minor));
}

FIXTURE_TEARDOWN(io)
{
	env_teardown(_metadata, &self->env);
}

static bool vda_has_write_cache(void)
{
	char buf[64];

	return read_file("/sys/block/vda/queue/write_cache", buf, sizeof(buf)) == 0 &&
	       !strcmp(buf, "write back");
}

TEST_F_TIMEOUT(io, fio_verify, 1500)
{
	char cmd[1024];
	uint64_t w0, errs, sc, sv;
	int rc;

	w0 = counter("chorus0", "writes");
	snprintf(cmd, sizeof(cmd),
		 "fio --name=chorus-verify --filename=/dev/chorus0 --rw=randwrite "
		 "--bsrange=4k-64k --direct=1 --ioengine=libaio --iodepth=8 "
		 "--numjobs=4 --size=8M --offset_increment=8M --verify=crc32c "
		 "--do_verify=1 --verify_fatal=1 --verify_backlog=0 --group_reporting "
		 "--randrepeat=0");
	rc = run("%s", cmd);
	ASSERT_EQ(0, rc) TH_LOG("fio verify failed");
	EXPECT_LE(w0 + 32 * MiB / (64 * 1024), counter("chorus0", "writes"));
	errs = counter("chorus0", "errors");
	EXPECT_EQ(0, errs);

	/* what went through chorus is what is on the backing device */
	sc = checksum("/dev/chorus0", 0, VOL_SIZE);
	sv = checksum("/dev/vda", 0, VOL_SIZE);
	EXPECT_EQ(sv, sc) TH_LOG("content of /dev/chorus0 and /dev/vda differ");
	/* and reading does not change it */
	EXPECT_EQ(sc, checksum("/dev/chorus0", 0, VOL_SIZE));
}

TEST_F_TIMEOUT(io, flush_reaches_backing, 180)
{
	uint64_t st0[BSTAT_NR], st1[BSTAT_NR], f0, f1;
	int fd, n;

	/* the lab's disks are write-back; without a cache there is nothing to see */
	ASSERT_TRUE(vda_has_write_cache()) TH_LOG("vda has no volatile write cache");

	ASSERT_EQ(0, blktrace_start(&self->env.trace));
	ASSERT_EQ(0, dev_fill("/dev/chorus0", 0, 1 * MiB, 5, 0));
	f0 = counter("chorus0", "flushes");
	ASSERT_EQ(0, blk_stat("vda", st0));
	ASSERT_EQ(0, blktrace_clear(&self->env.trace));

	/* fsync() of a block device always issues a flush (blkdev_fsync);
	 * BLKFLSBUF (blockdev --flushbufs) only writes back the page cache. */
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR);
	ASSERT_EQ(0, fsync(fd)) TH_LOG("fsync: %s", strerror(errno));
	ASSERT_EQ(0, fdatasync(fd));
	env_close_fd(&self->env, fd);

	f1 = counter("chorus0", "flushes");
	ASSERT_EQ(0, blk_stat("vda", st1));
	EXPECT_LE(f0 + 2, f1) TH_LOG("chorus flushes %llu -> %llu",
				     (unsigned long long)f0, (unsigned long long)f1);
	EXPECT_LT(st0[BSTAT_FLUSH_IOS], st1[BSTAT_FLUSH_IOS])
		TH_LOG("vda flush counter did not move (%llu -> %llu)",
		       (unsigned long long)st0[BSTAT_FLUSH_IOS],
		       (unsigned long long)st1[BSTAT_FLUSH_IOS]);
	n = blktrace_count(&self->env.trace, "block_bio_queue", self->vda_major,
			   self->vda_minor, RWBS_FLUSH_ANY, -1);
	EXPECT_LE(1, n) TH_LOG("no flush bio queued on vda in the trace");
}

TEST_F_TIMEOUT(io, fua_reaches_backing, 180)
{
	uint64_t fua0, fua1, w0;
	long long sector = (12 * MiB) / 512;
	char *buf;
	int fd, n, n2;

	/* the lab's disks are write-back; without a cache there is nothing to see */
	ASSERT_TRUE(vda_has_write_cache()) TH_LOG("vda has no volatile write cache");

	ASSERT_EQ(0, blktrace_start(&self->env.trace));
	fua0 = counter("chorus0", "fua_writes");
	w0 = counter("chorus0", "writes");
	buf = abuf(4096);
	ASSERT_NE(NULL, buf);
	memset(buf, 0xfa, 4096);

	/* O_DIRECT|O_DSYNC on a block device: REQ_FUA (block/fops.c dio_bio_write_op) */
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR | O_DIRECT | O_DSYNC);
	ASSERT_EQ(0, blktrace_clear(&self->env.trace));
	ASSERT_EQ(4096, pwrite(fd, buf, 4096, 12 * MiB));
	env_close_fd(&self->env, fd);
	free(buf);

	fua1 = counter("chorus0", "fua_writes");
	EXPECT_EQ(fua0 + 1, fua1) TH_LOG("chorus fua_writes %llu -> %llu",
					 (unsigned long long)fua0, (unsigned long long)fua1);
	EXPECT_LE(w0 + 1, counter("chorus0", "writes"));
	/* the bio chorus sends to vda carries FUA ("WFS"); virtio-blk has no
	 * native FUA, so block_rq_issue shows a write plus a post-flush
	 * instead, and block_bio_queue / block_getrq are where FUA is visible. */
	n = blktrace_count(&self->env.trace, "block_bio_queue", self->vda_major,
			   self->vda_minor, RWBS_FUA_WRITE, sector);
	n2 = blktrace_count(&self->env.trace, "block_getrq", self->vda_major,
			    self->vda_minor, RWBS_FUA_WRITE, sector);
	EXPECT_LE(1, n + n2) TH_LOG("no FUA write at sector %lld of vda in the trace", sector);
	EXPECT_EQ(checksum("/dev/chorus0", 12 * MiB, 4096), checksum("/dev/vda", 12 * MiB, 4096));
}

static bool queue_supports(const char *disk, const char *attr)
{
	uint64_t v = 0;

	return read_u64f(&v, "/sys/block/%s/queue/%s", disk, attr) == 0 && v > 0;
}

TEST_F_TIMEOUT(io, discard_passes_through, 180)
{
	uint64_t st0[BSTAT_NR], st1[BSTAT_NR], d0, d1;
	const uint64_t off = 4 * MiB, len = 2 * MiB;
	int n;

	/* the lab's disks have discard (tools/vm); without it this proves nothing */
	ASSERT_TRUE(queue_supports("vda", "discard_max_bytes")) TH_LOG("vda has no discard");
	ASSERT_TRUE(queue_supports("chorus0", "discard_max_bytes"))
		TH_LOG("vda supports discard but chorus0 does not advertise it");

	ASSERT_EQ(0, dev_fill("/dev/chorus0", off, len, 7, 0));
	ASSERT_EQ(0, dev_is_zero("/dev/vda", off, len));
	ASSERT_EQ(0, blktrace_start(&self->env.trace));
	d0 = counter("chorus0", "discards");
	ASSERT_EQ(0, blk_stat("vda", st0));

	ASSERT_EQ(0, run("blkdiscard -o %llu -l %llu /dev/chorus0",
			 (unsigned long long)off, (unsigned long long)len));

	d1 = counter("chorus0", "discards");
	ASSERT_EQ(0, blk_stat("vda", st1));
	EXPECT_LT(d0, d1) TH_LOG("chorus discards did not move");
	EXPECT_LE(st0[BSTAT_DISCARD_SECTORS] + len / 512, st1[BSTAT_DISCARD_SECTORS])
		TH_LOG("vda discarded %llu sectors, expected >= %llu",
		       (unsigned long long)(st1[BSTAT_DISCARD_SECTORS] - st0[BSTAT_DISCARD_SECTORS]),
		       (unsigned long long)(len / 512));
	n = blktrace_count(&self->env.trace, "block_bio_queue", self->vda_major,
			   self->vda_minor, RWBS_DISCARD, -1);
	EXPECT_LE(1, n) TH_LOG("no discard bio on vda in the trace");
	EXPECT_EQ(1, dev_is_zero("/dev/vda", off, len))
		TH_LOG("discarded range of vda does not read as zeroes");
	EXPECT_EQ(1, dev_is_zero("/dev/chorus0", off, len))
		TH_LOG("discarded range of chorus0 does not read as zeroes");
	/* neighbours untouched */
	EXPECT_EQ(0, dev_is_zero("/dev/chorus0", off - 4096, 4096));
	EXPECT_EQ(0, counter("chorus0", "errors"));
}

TEST_F_TIMEOUT(io, write_zeroes_passes_through, 180)
{
	uint64_t z0, z1, w0, wb0;
	const uint64_t off = 20 * MiB, len = 1 * MiB;
	int n;

	ASSERT_TRUE(queue_supports("vda", "write_zeroes_max_bytes"))
		TH_LOG("vda has no write zeroes (the lab's disks do)");
	ASSERT_TRUE(queue_supports("chorus0", "write_zeroes_max_bytes"))
		TH_LOG("vda supports write zeroes but chorus0 does not advertise it");

	ASSERT_EQ(0, dev_fill("/dev/chorus0", off, len, 9, 0));
	ASSERT_EQ(0, blktrace_start(&self->env.trace));
	z0 = counter("chorus0", "write_zeroes");
	w0 = counter("chorus0", "writes");
	wb0 = counter("chorus0", "write_bytes");

	/* BLKZEROOUT; without chorus write-zeroes support the kernel would
	 * silently fall back to writing zero pages, hence the counters. */
	ASSERT_EQ(0, run("blkdiscard -z -o %llu -l %llu /dev/chorus0",
			 (unsigned long long)off, (unsigned long long)len));

	z1 = counter("chorus0", "write_zeroes");
	EXPECT_LT(z0, z1) TH_LOG("chorus write_zeroes did not move (fallback to writes?)");
	EXPECT_EQ(wb0, counter("chorus0", "write_bytes"))
		TH_LOG("write-zeroes turned into data writes (writes %llu -> %llu)",
		       (unsigned long long)w0, (unsigned long long)counter("chorus0", "writes"));
	n = blktrace_count(&self->env.trace, "block_bio_queue", self->vda_major,
			   self->vda_minor, RWBS_WRITE_ZEROES, -1);
	EXPECT_LE(1, n) TH_LOG("no write-zeroes bio on vda in the trace");
	EXPECT_EQ(1, dev_is_zero("/dev/vda", off, len));
	EXPECT_EQ(1, dev_is_zero("/dev/chorus0", off, len));
	EXPECT_EQ(0, dev_is_zero("/dev/chorus0", off + len, 4096));
	EXPECT_EQ(0, counter("chorus0", "errors"));
}

static uint64_t q(struct __test_metadata *_metadata, const char *disk, const char *attr)
{
	uint64_t v = 0;

	ASSERT_EQ(0, read_u64f(&v, "/sys/block/%s/queue/%s", disk, attr))
		TH_LOG("/sys/block/%s/queue/%s", disk, attr);
	return v;
}

TEST_F_TIMEOUT(io, queue_limits, 120)
{
	char buf[64];

	EXPECT_EQ(512, q(_metadata, "chorus0", "logical_block_size"));
	EXPECT_LE(q(_metadata, "chorus0", "logical_block_size"),
		  q(_metadata, "chorus0", "physical_block_size"));
	/* Inherited from the backing device, capped at one wire message (1 MiB). */
	EXPECT_EQ(MIN(q(_metadata, "vda", "max_sectors_kb"), 1024),
		  q(_metadata, "chorus0", "max_sectors_kb"))
		TH_LOG("max_sectors_kb: chorus0 %llu, vda %llu (max_hw: %llu, %llu)",
		       (unsigned long long)q(_metadata, "chorus0", "max_sectors_kb"),
		       (unsigned long long)q(_metadata, "vda", "max_sectors_kb"),
		       (unsigned long long)q(_metadata, "chorus0", "max_hw_sectors_kb"),
		       (unsigned long long)q(_metadata, "vda", "max_hw_sectors_kb"));
	ASSERT_EQ(0, read_file("/sys/block/chorus0/queue/write_cache", buf, sizeof(buf)));
	EXPECT_STREQ("write back", buf);
	EXPECT_EQ(1, q(_metadata, "chorus0", "fua"));
	EXPECT_EQ(queue_supports("vda", "discard_max_bytes"),
		  queue_supports("chorus0", "discard_max_bytes"));
	EXPECT_EQ(queue_supports("vda", "write_zeroes_max_bytes"),
		  queue_supports("chorus0", "write_zeroes_max_bytes"));
	EXPECT_LE(q(_metadata, "chorus0", "discard_max_bytes"),
		  q(_metadata, "vda", "discard_max_hw_bytes"));
}

TEST_F_TIMEOUT(io, queue_limits_4k_volume, 120)
{
	struct chorus_vol v;
	char buf[64];

	create_ok(&self->env, "io4k", "/dev/vdb", 32 * MiB, 4096, NULL, &v);
	ASSERT_STREQ("chorus1", v.disk_name);
	EXPECT_EQ(4096, q(_metadata, "chorus1", "logical_block_size"));
	EXPECT_LE(4096, q(_metadata, "chorus1", "physical_block_size"));
	ASSERT_EQ(0, read_file("/sys/block/chorus1/queue/write_cache", buf, sizeof(buf)));
	EXPECT_STREQ("write back", buf);
	EXPECT_EQ(1, q(_metadata, "chorus1", "fua"));
	EXPECT_EQ(MIN(q(_metadata, "vdb", "max_sectors_kb"), 1024),
		  q(_metadata, "chorus1", "max_sectors_kb"));
	EXPECT_GE(1024, q(_metadata, "chorus1", "max_hw_sectors_kb"));
	EXPECT_GE(1024ULL << 10, q(_metadata, "chorus1", "discard_max_bytes"));
}

CHORUS_HARNESS_MAIN
