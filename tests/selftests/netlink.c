// SPDX-License-Identifier: GPL-2.0
/*
 * netlink: every bad request gets the right errno and an extack message,
 * and leaves the existing volume exactly as it was.
 *
 * Setup creates volume "base" on /dev/vda (16 MiB), fills it with a known
 * pattern and records its attributes and checksum. Each bad request is sent
 * raw (see lib/genl.c) and then:
 *   - the errno must be one of those the spec allows;
 *   - the extack message must be non-empty and "mention the problem": contain
 *     one of the given keywords, or come with NLMSGERR_ATTR_OFFS pointing at
 *     the offending attribute (the policy layer's messages are generic);
 *   - for missing attributes NLMSGERR_ATTR_MISS_TYPE must name the attribute;
 *   - "base" must be unchanged (attributes, data checksum), no other volume
 *     and no /dev/chorus1 may have appeared.
 */
#include <grp.h>
#include <linux/netlink.h>
#include <sys/mount.h>

#include "common.h"

#define BASE_SIZE	(16 * MiB)
#define NO_OFFS		(-1L)

FIXTURE(netlink) {
	struct chorus_env env;
	struct chorus_vol base;
	uint64_t base_sum;
	uint64_t vdb_bytes;
	int expected_volumes;
};

FIXTURE_SETUP(netlink)
{
	uint64_t sectors = 0;

	env_setup(_metadata, &self->env, true);
	create_ok(&self->env, "base", "/dev/vda", BASE_SIZE, 0, NULL, &self->base);
	ASSERT_TRUE(wait_path("/dev/chorus0", true, 5000));
	ASSERT_EQ(0, dev_fill("/dev/chorus0", 0, BASE_SIZE, 0xba5e, 0));
	self->base_sum = checksum("/dev/chorus0", 0, BASE_SIZE);
	ASSERT_EQ(self->base_sum, checksum("/dev/vda", 0, BASE_SIZE));
	ASSERT_EQ(0, read_u64f(&sectors, "/sys/block/vdb/size"));
	self->vdb_bytes = sectors * 512;
	self->expected_volumes = 1;
}

FIXTURE_TEARDOWN(netlink)
{
	env_teardown(_metadata, &self->env);
}

/* "base" is as setup left it; nothing else appeared. */
static void __base_unchanged(struct __test_metadata *_metadata, FIXTURE_DATA(netlink) *self,
			     const char *after)
{
	struct chorus_vol v, vols[8];
	const struct chorus_vol *b = &self->base;
	struct genl_err e;
	int n;

	ASSERT_EQ(0, chorus_get(&self->env.nl, "base", &v, &e))
		TH_LOG("after %s: GET base: %s", after, NLERR(&e));
	EXPECT_STREQ(b->name, v.name) TH_LOG("after %s", after);
	EXPECT_STREQ(b->backing, v.backing) TH_LOG("after %s", after);
	EXPECT_STREQ(b->disk_name, v.disk_name) TH_LOG("after %s", after);
	EXPECT_EQ(b->size, v.size) TH_LOG("after %s", after);
	EXPECT_EQ(b->block_size, v.block_size) TH_LOG("after %s", after);
	EXPECT_EQ(b->minor, v.minor) TH_LOG("after %s", after);
	EXPECT_EQ(0, memcmp(b->uuid, v.uuid, CHORUS_UUID_LEN)) TH_LOG("after %s", after);
	EXPECT_EQ(CHORUS_VOLUME_STATE_ONLINE, v.state) TH_LOG("after %s", after);
	EXPECT_EQ(0, v.stat[CHORUS_STAT_ERRORS]) TH_LOG("after %s", after);
	n = chorus_dump(&self->env.nl, vols, 8, &e);
	EXPECT_EQ(self->expected_volumes, n) TH_LOG("after %s: %d volumes", after, n);
	if (self->expected_volumes == 1)
		EXPECT_FALSE(path_exists("/sys/block/chorus1")) TH_LOG("after %s", after);
	ASSERT_EQ(self->base_sum, checksum("/dev/chorus0", 0, BASE_SIZE))
		TH_LOG("after %s: data of base changed", after);
}
#define base_unchanged(after) __base_unchanged(_metadata, self, after)

static bool mentions(const char *msg, const char *keywords)
{
	char *dup, *save = NULL, *k;
	bool ok = false;

	if (!keywords)
		return false;
	dup = strdup(keywords);
	for (k = strtok_r(dup, "|", &save); k && !ok; k = strtok_r(NULL, "|", &save))
		ok = strcasestr(msg, k) != NULL;
	free(dup);
	return ok;
}

/*
 * Send m; expect errno ea or eb (negative), an extack message that contains
 * one of kw ("a|b") or an attribute offset equal to offs, and a missing
 * attribute type miss (0: not checked). Then check base.
 */
static void __bad(struct __test_metadata *_metadata, FIXTURE_DATA(netlink) *self,
		  struct genl_msg *m, const char *what, int ea, int eb, const char *kw,
		  int miss, long offs)
{
	struct chorus_vol out[2];
	struct genl_err e;
	int err, n = 0;

	err = genl_xfer(&self->env.nl, m, &e, out, 2, &n);
	TH_LOG("%-40s -> %s", what, NLERR(&e));
	EXPECT_TRUE(err == ea || err == eb)
		TH_LOG("%s: expected %d (%s) or %d, got %d (%s)", what, ea, strerror(-ea), eb,
		       err, strerror(-err));
	if (err == 0 && n > 0 && out[0].name[0] && strcmp(out[0].name, "base")) {
		/* accepted by mistake: do not leak it into the next check */
		chorus_destroy(&self->env.nl, out[0].name, NULL);
	}
	EXPECT_NE(0, e.msg[0]) TH_LOG("%s: no extack message", what);
	if (kw || offs != NO_OFFS) {
		bool by_word = mentions(e.msg, kw);
		bool by_offs = offs != NO_OFFS && e.has_offs && (long)e.offs == offs;

		EXPECT_TRUE(by_word || by_offs)
			TH_LOG("%s: extack \"%s\" (offs %s%u) mentions neither \"%s\" nor the attribute at %ld",
			       what, e.msg, e.has_offs ? "" : "none/", e.offs, kw ? kw : "", offs);
	}
	if (miss) {
		EXPECT_TRUE(e.has_miss_type) TH_LOG("%s: no NLMSGERR_ATTR_MISS_TYPE", what);
		EXPECT_EQ(miss, e.miss_type) TH_LOG("%s: wrong missing attribute", what);
	}
	base_unchanged(what);
}
#define bad(m, what, ea, eb, kw, miss, offs) __bad(_metadata, self, m, what, ea, eb, kw, miss, offs)

/* Message helpers. Each returns the offset of the last attribute put. */
static void create_msg(struct genl_msg *m, FIXTURE_DATA(netlink) *self)
{
	msg_init(m, self->env.nl.family, CHORUS_CMD_VOLUME_CREATE, 0);
}

#define EINVAL_ (-EINVAL)
#define ERANGE_ (-ERANGE)

TEST_F_TIMEOUT(netlink, missing_attributes, 300)
{
	struct genl_msg m;

	create_msg(&m, self);
	bad(&m, "create without any attribute", EINVAL_, EINVAL_, "name|backing",
	    0, NO_OFFS);

	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create without VOLUME_NAME", EINVAL_, EINVAL_, "name",
	    CHORUS_A_VOLUME_NAME, NO_OFFS);

	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "nobacking");
	bad(&m, "create without BACKING_PATH", EINVAL_, EINVAL_, "backing|path",
	    CHORUS_A_BACKING_PATH, NO_OFFS);

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_DESTROY, 0);
	bad(&m, "destroy without VOLUME_NAME", EINVAL_, EINVAL_, "name",
	    CHORUS_A_VOLUME_NAME, NO_OFFS);

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_GET, 0);
	bad(&m, "get (doit) without VOLUME_NAME", EINVAL_, EINVAL_, "name",
	    CHORUS_A_VOLUME_NAME, NO_OFFS);
}

TEST_F_TIMEOUT(netlink, invalid_names, 300)
{
	static const char *const names[] = {
		"", "../x", "a/b", ".hidden", ".", "..", "a b", "tab\tname", "new\nline",
		"semi;colon", "star*", "caf\xc3\xa9", "x\x01y",
	};
	char longname[CHORUS_VOLUME_NAME_MAX + 8], what[128], q[64];
	struct genl_msg m;
	struct chorus_vol v;
	size_t i, off;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		create_msg(&m, self);
		off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, names[i]);
		msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
		snprintf(what, sizeof(what), "create name %s", shquote(names[i], q, sizeof(q)));
		bad(&m, what, EINVAL_, EINVAL_, "name", 0, (long)off);
	}

	/* 64 characters: one too many (the limit includes the NUL) */
	memset(longname, 'n', CHORUS_VOLUME_NAME_MAX);
	longname[CHORUS_VOLUME_NAME_MAX] = '\0';
	create_msg(&m, self);
	off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, longname);
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create name of 64 characters", EINVAL_, ERANGE_, "name|long", 0, (long)off);

	/* 1000 characters */
	{
		static char huge[1001];

		memset(huge, 'h', 1000);
		create_msg(&m, self);
		off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, huge);
		msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
		bad(&m, "create name of 1000 characters", EINVAL_, ERANGE_, "name|long", 0,
		    (long)off);
	}

	/* the boundaries that are valid: 63 characters, every allowed class */
	longname[CHORUS_VOLUME_NAME_MAX - 1] = '\0';
	create_ok(&self->env, longname, "/dev/vdb", 16 * MiB, 0, NULL, &v);
	EXPECT_STREQ(longname, v.name);
	destroy_ok(&self->env, longname);
	create_ok(&self->env, "Az09._-x", "/dev/vdb", 16 * MiB, 0, NULL, &v);
	destroy_ok(&self->env, "Az09._-x");
	base_unchanged("valid names");
}

TEST_F_TIMEOUT(netlink, duplicate_name, 300)
{
	struct genl_msg m;
	size_t off;

	create_msg(&m, self);
	off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, "base");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create duplicate name on vdb", -EEXIST, -EEXIST,
	    "exist|already|duplicate|name", 0, (long)off);

	create_msg(&m, self);
	off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, "base");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vda");
	bad(&m, "create duplicate name on the same backing", -EEXIST, -EBUSY,
	    "exist|already|duplicate|name|busy|in use", 0, (long)off);
}

TEST_F_TIMEOUT(netlink, backing_errors, 300)
{
	static const struct {
		const char *path;
		int err;
		const char *kw;
	} cases[] = {
		{ "/dev/nonexistent-chorus", -ENOENT, "backing|path|not found|no such|exist" },
		{ "/nonexistent/dir/vdb", -ENOENT, "backing|path|not found|no such|exist" },
		{ "/dev/null", -ENOTBLK, "block" },
		{ "/etc/hostname", -ENOTBLK, "block" },
		{ "/dev", -ENOTBLK, "block" },
	};
	char longpath[CHORUS_BACKING_PATH_MAX + 16], what[160];
	struct genl_msg m;
	size_t i, off;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		create_msg(&m, self);
		msg_put_str(&m, CHORUS_A_VOLUME_NAME, "bk");
		off = msg_put_str(&m, CHORUS_A_BACKING_PATH, cases[i].path);
		snprintf(what, sizeof(what), "create backing %s", cases[i].path);
		bad(&m, what, cases[i].err, cases[i].err, cases[i].kw, 0, (long)off);
	}

	/* 255 characters: the longest allowed, resolves to nothing */
	memset(longpath, 0, sizeof(longpath));
	for (i = 0; i + 2 < CHORUS_BACKING_PATH_MAX - 1; i += 2)
		memcpy(longpath + i, "/x", 2);
	longpath[CHORUS_BACKING_PATH_MAX - 1] = '\0';
	longpath[CHORUS_BACKING_PATH_MAX - 2] = 'y';
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "bk");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, longpath);
	bad(&m, "create backing path of 255 characters", -ENOENT, -ENOENT,
	    "backing|path|not found|no such|exist", 0, (long)off);

	/* 256 characters: too long */
	memset(longpath, 'p', CHORUS_BACKING_PATH_MAX);
	longpath[0] = '/';
	longpath[CHORUS_BACKING_PATH_MAX] = '\0';
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "bk");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, longpath);
	bad(&m, "create backing path of 256 characters", EINVAL_, ERANGE_,
	    "backing|path|long", 0, (long)off);

	/* relative and empty paths */
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "bk");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, "");
	bad(&m, "create backing \"\"", EINVAL_, -ENOENT, "backing|path", 0, (long)off);
}

TEST_F_TIMEOUT(netlink, backing_in_use_by_volume, 300)
{
	struct genl_msg m;
	size_t off;

	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "second");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vda");
	bad(&m, "create on vda, used by base", -EBUSY, -EBUSY,
	    "busy|in use|use|claimed|held|exclusive", 0, (long)off);

	/* through another path to the same device node */
	ASSERT_EQ(0, run("mknod /run/chorus-selftest-vda b $(tr : ' ' < /sys/block/vda/dev)"));
	env_on_cleanup(&self->env, false, "rm -f /run/chorus-selftest-vda");
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "second");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, "/run/chorus-selftest-vda");
	bad(&m, "create on another node of vda", -EBUSY, -EBUSY,
	    "busy|in use|use|claimed|held|exclusive", 0, (long)off);
}

TEST_F_TIMEOUT(netlink, backing_held_exclusively, 300)
{
	struct genl_msg m;
	int fd, pfd[2];
	size_t off;
	pid_t pid;
	char c;

	/* by this process */
	fd = open("/dev/vdb", O_RDONLY | O_EXCL | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open vdb O_EXCL: %s", strerror(errno));
	env_track_fd(&self->env, fd);
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "excl");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create on vdb held O_EXCL by the caller", -EBUSY, -EBUSY,
	    "busy|in use|use|claimed|held|exclusive", 0, (long)off);
	env_close_fd(&self->env, fd);

	/* by another process */
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int xfd = open("/dev/vdb", O_RDONLY | O_EXCL);

		c = xfd >= 0 ? 'y' : 'n';
		if (write(pfd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	env_track_pid(&self->env, pid);
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	close(pfd[0]);
	ASSERT_EQ('y', c) TH_LOG("the holder could not open vdb O_EXCL");
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "excl");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create on vdb held O_EXCL by another process", -EBUSY, -EBUSY,
	    "busy|in use|use|claimed|held|exclusive", 0, (long)off);

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	self->env.npids = 0;
	/* released: now it works */
	create_ok(&self->env, "excl", "/dev/vdb", 16 * MiB, 0, NULL, NULL);
	self->expected_volumes = 2;
	base_unchanged("create on vdb after the holder exited");
}

TEST_F_TIMEOUT(netlink, backing_mounted, 600)
{
	const char *mnt = "/run/chorus-selftest-mnt";
	struct genl_msg m;
	size_t off;

	ASSERT_EQ(0, run("mkfs.ext4 -q -F -E nodiscard,lazy_itable_init=1,lazy_journal_init=1 "
			 "/dev/vdb 64M"));
	ASSERT_EQ(0, run("mkdir -p %s && mount -t ext4 /dev/vdb %s", mnt, mnt));
	env_on_cleanup(&self->env, true,
		       "! mountpoint -q /run/chorus-selftest-mnt || umount /run/chorus-selftest-mnt");
	ASSERT_EQ(0, run("echo data > %s/file && sync", mnt));

	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mounted");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create on mounted vdb", -EBUSY, -EBUSY,
	    "busy|in use|use|claimed|held|exclusive|mount", 0, (long)off);
	/* the file system is still fine */
	EXPECT_EQ(0, run("grep -qx data %s/file", mnt));
	EXPECT_EQ(0, run("umount %s && fsck.ext4 -n /dev/vdb", mnt));
}

static size_t create_with_size(struct genl_msg *m, FIXTURE_DATA(netlink) *self,
			       uint64_t size, uint32_t bs)
{
	size_t off;

	create_msg(m, self);
	msg_put_str(m, CHORUS_A_VOLUME_NAME, "sz");
	msg_put_str(m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	off = msg_put_u64(m, CHORUS_A_SIZE_BYTES, size);
	if (bs)
		msg_put_u32(m, CHORUS_A_BLOCK_SIZE, bs);
	return off;
}

TEST_F_TIMEOUT(netlink, bad_sizes, 300)
{
	const uint64_t vdb = self->vdb_bytes;
	const struct {
		uint64_t size;
		uint32_t bs;
		const char *what;
	} cases[] = {
		{ 0, 0, "size 0" },
		{ vdb + 512, 0, "size = backing + 512" },
		{ vdb + 4096, 4096, "size = backing + 4096, bs 4096" },
		{ vdb * 2, 0, "size = 2 x backing" },
		{ UINT64_MAX - 511, 0, "size near 2^64" },
		{ UINT64_MAX, 0, "size 2^64-1" },
		{ 1000, 0, "size 1000 (not a multiple of 512)" },
		{ 511, 0, "size 511" },
		{ 4096 + 512, 4096, "size 4608 with bs 4096" },
		{ 1 * MiB + 1024, 2048, "size 1 MiB + 1 KiB with bs 2048" },
	};
	uint64_t formatted = 0;
	struct genl_msg m;
	size_t i, off;

	ASSERT_LT(0, vdb);
	ASSERT_EQ(0, chorus_format("/dev/vdb", 0, 0, NULL));
	ASSERT_EQ(0, chorus_formatted_bytes("/dev/vdb", &formatted));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		off = create_with_size(&m, self, cases[i].size, cases[i].bs);
		bad(&m, cases[i].what, EINVAL_, EINVAL_, "size", 0, (long)off);
	}
	/* exactly the formatted size is fine */
	off = create_with_size(&m, self, formatted, 0);
	{
		struct chorus_vol v[1];
		struct genl_err e;
		int n = 0;

		ASSERT_EQ(0, genl_xfer(&self->env.nl, &m, &e, v, 1, &n)) TH_LOG("%s", NLERR(&e));
		EXPECT_EQ(formatted, v[0].size);
	}
	destroy_ok(&self->env, "sz");
	base_unchanged("size = formatted size");
}

TEST_F_TIMEOUT(netlink, bad_block_sizes, 300)
{
	static const uint32_t sizes[] = { 1, 256, 511, 513, 768, 1000, 1536, 3072, 4095, 4097,
					  8192, 65536, 1u << 31, UINT32_MAX };
	struct chorus_vol v;
	struct genl_msg m;
	char what[64];
	size_t i, off;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		create_msg(&m, self);
		msg_put_str(&m, CHORUS_A_VOLUME_NAME, "bs");
		msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
		off = msg_put_u32(&m, CHORUS_A_BLOCK_SIZE, sizes[i]);
		snprintf(what, sizeof(what), "create block size %u", sizes[i]);
		bad(&m, what, EINVAL_, EINVAL_, "block", 0, (long)off);
	}
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "bs");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	off = msg_put_u32(&m, CHORUS_A_BLOCK_SIZE, 0);
	bad(&m, "create block size 0", EINVAL_, EINVAL_, "block", 0, (long)off);

	/* every allowed size works on a 512-byte device */
	for (i = 512; i <= 4096; i *= 2) {
		create_ok(&self->env, "bs", "/dev/vdb", 16 * MiB, (uint32_t)i, NULL, &v);
		EXPECT_EQ(i, v.block_size);
		destroy_ok(&self->env, "bs");
	}

	/* smaller than the backing device's logical block size: null_blk with 4K sectors */
	ASSERT_EQ(0, run("rmmod null_blk 2>/dev/null; "
			 "modprobe null_blk nr_devices=1 bs=4096 gb=1 memory_backed=1"));
	env_on_cleanup(&self->env, false, "rmmod null_blk");
	ASSERT_TRUE(wait_path("/dev/nullb0", true, 5000));
	/* formatted with its own 4096-byte logical block size */
	ASSERT_EQ(0, chorus_format("/dev/nullb0", 0, 0, NULL));
	for (i = 512; i < 4096; i *= 2) {
		create_msg(&m, self);
		msg_put_str(&m, CHORUS_A_VOLUME_NAME, "bs");
		msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/nullb0");
		off = msg_put_u32(&m, CHORUS_A_BLOCK_SIZE, (uint32_t)i);
		snprintf(what, sizeof(what), "create bs %zu on a 4K-sector device", i);
		bad(&m, what, EINVAL_, EINVAL_, "block", 0, (long)off);
	}
	/* the default is the backing device's logical block size */
	create_ok(&self->env, "bs", "/dev/nullb0", 0, 0, NULL, &v);
	EXPECT_EQ(4096, v.block_size);
	destroy_ok(&self->env, "bs");
	base_unchanged("create on nullb0");
}

TEST_F_TIMEOUT(netlink, bad_uuid, 300)
{
	static const size_t lens[] = { 0, 1, 8, 15, 17, 32, 100 };
	unsigned char u[128];
	struct genl_msg m;
	char what[64];
	size_t i, off;

	memset(u, 0xab, sizeof(u));
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		create_msg(&m, self);
		msg_put_str(&m, CHORUS_A_VOLUME_NAME, "uu");
		msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
		off = msg_put(&m, CHORUS_A_UUID, u, lens[i]);
		snprintf(what, sizeof(what), "create uuid of %zu bytes", lens[i]);
		bad(&m, what, EINVAL_, ERANGE_, "uuid", 0, (long)off);
	}
}

TEST_F_TIMEOUT(netlink, malformed_attributes, 300)
{
	struct genl_msg m;
	struct nlmsghdr *nlh;
	size_t off;

	/* unknown attribute types */
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	off = msg_put_u32(&m, CHORUS_A_MAX + 1, 1);
	bad(&m, "create with attribute CHORUS_A_MAX+1", EINVAL_, EINVAL_, "unknown|attribute", 0,
	    (long)off);

	create_msg(&m, self);
	off = msg_put_u32(&m, 200, 1);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create with attribute 200 first", EINVAL_, EINVAL_, "unknown|attribute", 0,
	    (long)off);

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_DESTROY, 0);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "base");
	off = msg_put_u32(&m, CHORUS_A_MAX + 7, 1);
	bad(&m, "destroy base with an unknown attribute", EINVAL_, EINVAL_, "unknown|attribute",
	    0, (long)off);

	/* strings without NUL */
	create_msg(&m, self);
	off = msg_put_str_nonul(&m, CHORUS_A_VOLUME_NAME, "nonul");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create name without NUL", EINVAL_, ERANGE_, "name|string|null|nul", 0, (long)off);

	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	off = msg_put_str_nonul(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create backing without NUL", EINVAL_, ERANGE_, "backing|path|string|nul", 0,
	    (long)off);

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_DESTROY, 0);
	off = msg_put_str_nonul(&m, CHORUS_A_VOLUME_NAME, "base");
	bad(&m, "destroy \"base\" without NUL", EINVAL_, ERANGE_, "name|string|nul", 0, (long)off);

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_GET, 0);
	off = msg_put_str_nonul(&m, CHORUS_A_VOLUME_NAME, "base");
	bad(&m, "get \"base\" without NUL", EINVAL_, ERANGE_, "name|string|nul", 0, (long)off);

	/* zero-length attributes */
	create_msg(&m, self);
	off = msg_put(&m, CHORUS_A_VOLUME_NAME, NULL, 0);
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create zero-length name", EINVAL_, ERANGE_, "name", 0, (long)off);

	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	off = msg_put(&m, CHORUS_A_SIZE_BYTES, NULL, 0);
	bad(&m, "create zero-length SIZE_BYTES", EINVAL_, ERANGE_, "size|length", 0, (long)off);

	/* wrong integer widths */
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	off = msg_put_u32(&m, CHORUS_A_SIZE_BYTES, 16 * MiB);
	bad(&m, "create SIZE_BYTES as u32", EINVAL_, ERANGE_, "size|length", 0, (long)off);

	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	off = msg_put_u64(&m, CHORUS_A_BLOCK_SIZE, 4096);
	bad(&m, "create BLOCK_SIZE as u64", EINVAL_, ERANGE_, "block|length", 0, (long)off);

	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	off = msg_put_u16(&m, CHORUS_A_BLOCK_SIZE, 4096);
	bad(&m, "create BLOCK_SIZE as u16", EINVAL_, ERANGE_, "block|length", 0, (long)off);

	create_msg(&m, self);
	off = msg_put_u32(&m, CHORUS_A_VOLUME_NAME, 0x41414141);
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create VOLUME_NAME as u32", EINVAL_, ERANGE_, "name|string", 0, (long)off);

	/* a nest where a string belongs */
	create_msg(&m, self);
	off = msg_nest_start(&m, CHORUS_A_VOLUME_NAME);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "nested");
	msg_nest_end(&m);
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "create VOLUME_NAME as a nest", EINVAL_, ERANGE_, "name|string|nest", 0, (long)off);

	/* bytes left over after the attributes */
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	memset(m.buf + m.len, 0xee, 2);
	m.len += 2;
	bad(&m, "create with 2 trailing bytes", EINVAL_, ERANGE_, "leftover|trailing|bytes", 0,
	    NO_OFFS);

	/* an attribute whose length runs past the message */
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "mal");
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	((struct nlattr *)(m.buf + off))->nla_len += 64;
	bad(&m, "create with an attribute longer than the message", EINVAL_, ERANGE_,
	    "leftover|trailing|bytes|length|attribute", 0, (long)off);

	/* an unknown command */
	msg_init(&m, self->env.nl.family, CHORUS_CMD_MAX + 1, 0);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "base");
	{
		struct genl_err e;
		int err = genl_xfer(&self->env.nl, &m, &e, NULL, 0, NULL);

		EXPECT_EQ(-EOPNOTSUPP, err) TH_LOG("unknown command: %s", NLERR(&e));
		base_unchanged("unknown command");
	}
	/* the EVENT command is multicast only */
	msg_init(&m, self->env.nl.family, CHORUS_CMD_EVENT, 0);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "base");
	{
		struct genl_err e;
		int err = genl_xfer(&self->env.nl, &m, &e, NULL, 0, NULL);

		EXPECT_EQ(-EOPNOTSUPP, err) TH_LOG("CHORUS_CMD_EVENT as a request: %s", NLERR(&e));
		base_unchanged("EVENT request");
	}
	(void)nlh;
}

TEST_F_TIMEOUT(netlink, duplicate_attributes, 300)
{
	struct chorus_vol vols[4];
	struct genl_msg m;
	struct genl_err e;
	int err, n, i;

	/* The spec does not say which copy wins; it must not crash, leak or
	 * touch base, and a created volume must be consistent. */
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "dup1");
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "dup2");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	msg_put_u64(&m, CHORUS_A_SIZE_BYTES, 8 * MiB);
	msg_put_u64(&m, CHORUS_A_SIZE_BYTES, 16 * MiB);
	err = genl_xfer(&self->env.nl, &m, &e, vols, 1, &n);
	TH_LOG("duplicate attributes -> %s", NLERR(&e));
	if (err == 0) {
		ASSERT_EQ(1, n);
		EXPECT_TRUE(!strcmp(vols[0].name, "dup1") || !strcmp(vols[0].name, "dup2"));
		EXPECT_TRUE(vols[0].size == 8 * MiB || vols[0].size == 16 * MiB);
		n = chorus_dump(&self->env.nl, vols, 4, &e);
		ASSERT_EQ(2, n);
		for (i = 0; i < n; i++)
			if (strcmp(vols[i].name, "base"))
				destroy_ok(&self->env, vols[i].name);
	} else {
		EXPECT_EQ(-EINVAL, err);
		EXPECT_NE(0, e.msg[0]);
	}
	base_unchanged("duplicate attributes");

	/* duplicate names of base in a destroy: must not destroy anything else */
	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_DESTROY, 0);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "nosuch");
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "nosuch2");
	err = genl_xfer(&self->env.nl, &m, &e, NULL, 0, NULL);
	EXPECT_NE(0, err) TH_LOG("destroy of unknown names succeeded");
	base_unchanged("destroy with duplicate names");
}

TEST_F_TIMEOUT(netlink, destroy_and_get_errors, 300)
{
	struct genl_msg m;
	char *buf;
	size_t off;
	int fd;

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_DESTROY, 0);
	off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, "nosuch");
	bad(&m, "destroy unknown volume", -ENOENT, -ENOENT,
	    "volume|not found|no such|exist|unknown", 0, (long)off);

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_DESTROY, 0);
	off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, "Base");
	bad(&m, "destroy \"Base\" (case differs)", -ENOENT, -ENOENT,
	    "volume|not found|no such|exist|unknown", 0, (long)off);

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_DESTROY, 0);
	off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, "");
	bad(&m, "destroy \"\"", EINVAL_, -ENOENT, "name|volume|not found|exist", 0, (long)off);

	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_GET, 0);
	off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, "nosuch");
	bad(&m, "get unknown volume", -ENOENT, -ENOENT, "volume|not found|no such|exist|unknown",
	    0, (long)off);

	/* destroy while open */
	fd = open_dev(&self->env, "/dev/chorus0", O_RDWR | O_DIRECT);
	msg_init(&m, self->env.nl.family, CHORUS_CMD_VOLUME_DESTROY, 0);
	off = msg_put_str(&m, CHORUS_A_VOLUME_NAME, "base");
	bad(&m, "destroy base while open", -EBUSY, -EBUSY, "open|busy|in use|use", 0, (long)off);
	buf = abuf(4096);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(4096, pread(fd, buf, 4096, 0)) TH_LOG("read after refused destroy");
	free(buf);
	env_close_fd(&self->env, fd);
	base_unchanged("close");
}

/* Results of the unprivileged child, sent back through a pipe. */
/*
 * A diskless VOLUME_CREATE with @size, a uuid unless !@with_uuid and node id
 * @node (0: left out). Returns the offset of the SIZE_BYTES attribute.
 */
static size_t diskless_msg(struct genl_msg *m, FIXTURE_DATA(netlink) *self,
			   uint64_t size, bool with_uuid, uint32_t node)
{
	static const uint8_t uuid[CHORUS_UUID_LEN] = { 0xd1, 0x5c, 0x1e, 0x55, 1, 2, 3, 4,
						       5, 6, 7, 8, 9, 10, 11, 12 };
	size_t off = 0;

	create_msg(m, self);
	msg_put_str(m, CHORUS_A_VOLUME_NAME, "dl");
	msg_put(m, CHORUS_A_DISKLESS, NULL, 0);
	if (size)
		off = msg_put_u64(m, CHORUS_A_SIZE_BYTES, size);
	if (with_uuid)
		msg_put(m, CHORUS_A_UUID, uuid, sizeof(uuid));
	if (node)
		msg_put_u32(m, CHORUS_A_NODE_ID, node);
	return off;
}

/*
 * A diskless access point has no metadata: its size, uuid and node id come
 * with the request, and what makes no sense for one is refused by name.
 * The one made at last reports DISKLESS and no backing device, fails I/O
 * (it has no owner to forward to), refuses the owner's role and a diskless
 * peer, and is destroyed like any volume.
 */
TEST_F_TIMEOUT(netlink, diskless_errors_then_create, 300)
{
	struct chorus_vol v[1];
	struct genl_msg m;
	struct genl_err e;
	size_t off;
	int n = 0;

	diskless_msg(&m, self, 0, true, 3);
	bad(&m, "diskless without SIZE_BYTES", EINVAL_, EINVAL_, "size",
	    CHORUS_A_SIZE_BYTES, NO_OFFS);
	diskless_msg(&m, self, 16 * MiB, false, 3);
	bad(&m, "diskless without UUID", EINVAL_, EINVAL_, "uuid", CHORUS_A_UUID, NO_OFFS);
	diskless_msg(&m, self, 16 * MiB, true, 0);
	bad(&m, "diskless without NODE_ID", EINVAL_, EINVAL_, "node", CHORUS_A_NODE_ID,
	    NO_OFFS);
	off = diskless_msg(&m, self, 16 * MiB + 512, true, 3);
	msg_put_u32(&m, CHORUS_A_BLOCK_SIZE, 4096);
	bad(&m, "diskless size not a multiple of bs", EINVAL_, EINVAL_, "multiple", 0,
	    (long)off);
	diskless_msg(&m, self, 16 * MiB, true, 3);
	off = msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	bad(&m, "diskless with BACKING_PATH", EINVAL_, EINVAL_, "backing", 0, (long)off);
	create_msg(&m, self);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "ep");
	msg_put_str(&m, CHORUS_A_BACKING_PATH, "/dev/vdb");
	off = msg_put_u64(&m, CHORUS_A_EPOCH, 7);
	bad(&m, "EPOCH for a volume with a disk", EINVAL_, EINVAL_, "diskless", 0, (long)off);

	diskless_msg(&m, self, 16 * MiB, true, 3);
	msg_put_u64(&m, CHORUS_A_EPOCH, 7);
	ASSERT_EQ(0, genl_xfer(&self->env.nl, &m, &e, v, 1, &n)) TH_LOG("%s", NLERR(&e));
	self->expected_volumes = 2;
	EXPECT_TRUE(v[0].has[CHORUS_A_DISKLESS]);
	EXPECT_FALSE(v[0].has[CHORUS_A_BACKING_PATH]);
	EXPECT_EQ(16 * MiB, v[0].size);
	EXPECT_EQ(512, v[0].block_size);
	ASSERT_TRUE(wait_path("/dev/chorus1", true, 5000));
	EXPECT_NE(0, run("dd if=/dev/chorus1 of=/dev/null bs=4k count=1 iflag=direct "
			 "status=none 2>/dev/null")) TH_LOG("a read with no owner succeeded");

	msg_init(&m, self->env.nl.family, CHORUS_CMD_SET_ROLE, 0);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "dl");
	msg_put_u32(&m, CHORUS_A_ROLE, CHORUS_ROLE_OWNER);
	msg_put_u64(&m, CHORUS_A_EPOCH, 9);
	bad(&m, "diskless made the owner", EINVAL_, EINVAL_, "diskless", 0, NO_OFFS);
	msg_init(&m, self->env.nl.family, CHORUS_CMD_PEER_ADD, 0);
	msg_put_str(&m, CHORUS_A_VOLUME_NAME, "dl");
	msg_put_u32(&m, CHORUS_A_NODE_ID, 4);
	msg_put_str(&m, CHORUS_A_ADDRESS, "10.99.0.4");
	msg_put(&m, CHORUS_A_DISKLESS, NULL, 0);
	bad(&m, "diskless peer of a diskless volume", EINVAL_, EINVAL_, "diskless", 0, NO_OFFS);

	destroy_ok(&self->env, "dl");
	self->expected_volumes = 1;
	base_unchanged("the diskless volume destroyed");
}

struct unpriv_result {
	int setup_err;
	int create_err;
	char create_msg[128];
	int destroy_err;
	int get_err;
	char get_name[64];
	int dump_n;
	int root_sock_create_err;
};

static void unpriv_child(int wfd, int root_sock_fd, uint16_t family)
{
	struct unpriv_result r = { 0 };
	struct chorus_create_args a = { .name = "evil", .backing = "/dev/vdb" };
	struct chorus_vol v, vols[4];
	struct genl_sock s, rs;
	struct genl_err e;

	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534)) {
		r.setup_err = -errno;
		goto out;
	}
	/* a socket opened by root, used after dropping privileges: still EPERM */
	rs.fd = root_sock_fd;
	rs.family = family;
	rs.seq = 1000;
	r.root_sock_create_err = chorus_create(&rs, &a, NULL, &e);

	r.setup_err = genl_open(&s);
	if (r.setup_err)
		goto out;
	if (s.family != family) {
		r.setup_err = -ENOENT;
		goto out;
	}
	r.create_err = chorus_create(&s, &a, NULL, &e);
	snprintf(r.create_msg, sizeof(r.create_msg), "%.127s", e.msg);
	r.destroy_err = chorus_destroy(&s, "base", &e);
	r.get_err = chorus_get(&s, "base", &v, &e);
	snprintf(r.get_name, sizeof(r.get_name), "%.63s", v.name);
	r.dump_n = chorus_dump(&s, vols, 4, &e);
out:
	if (write(wfd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

TEST_F_TIMEOUT(netlink, unprivileged, 300)
{
	struct unpriv_result r;
	struct genl_sock rootsock;
	int pfd[2], status;
	pid_t pid;
	char out[256];

	ASSERT_EQ(0, genl_open(&rootsock));
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(pfd[0]);
		unpriv_child(pfd[1], rootsock.fd, self->env.nl.family);
	}
	close(pfd[1]);
	ASSERT_EQ((ssize_t)sizeof(r), read(pfd[0], &r, sizeof(r)));
	close(pfd[0]);
	waitpid(pid, &status, 0);
	genl_close(&rootsock);

	ASSERT_EQ(0, r.setup_err) TH_LOG("child setup: %s", strerror(-r.setup_err));
	EXPECT_EQ(-EPERM, r.create_err) TH_LOG("unprivileged create: %d", r.create_err);
	EXPECT_EQ(-EPERM, r.destroy_err) TH_LOG("unprivileged destroy: %d", r.destroy_err);
	EXPECT_EQ(-EPERM, r.root_sock_create_err)
		TH_LOG("create on root's socket after setuid: %d", r.root_sock_create_err);
	EXPECT_EQ(0, r.get_err) TH_LOG("unprivileged get: %d", r.get_err);
	EXPECT_STREQ("base", r.get_name);
	EXPECT_EQ(1, r.dump_n) TH_LOG("unprivileged dump: %d", r.dump_n);
	base_unchanged("unprivileged requests");

	/* sysfs is readable by everyone too */
	EXPECT_EQ(0, run_out(out, sizeof(out),
			     "setpriv --reuid=65534 --regid=65534 --clear-groups "
			     "cat /sys/block/chorus0/chorus/name"));
	EXPECT_STREQ("base\n", out);
}

CHORUS_HARNESS_MAIN
