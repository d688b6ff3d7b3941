// SPDX-License-Identifier: GPL-2.0
/* Helpers for the chorus selftests. See util.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "util.h"

#define OUT_MAX (256 * 1024)

uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *chorus_src(void)
{
	static char src[PATH_MAX];
	const char *env = getenv("CHORUS_SRC");
	char exe[PATH_MAX];
	ssize_t n;
	char *p;
	int i;

	if (env && *env)
		return env;
	if (src[0])
		return src;
	/* <root>/build/selftests/<binary> */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return ".";
	exe[n] = '\0';
	for (i = 0; i < 3; i++) {
		p = strrchr(exe, '/');
		if (!p)
			return ".";
		*p = '\0';
	}
	snprintf(src, sizeof(src), "%s", exe);
	return src;
}

int this_vm(void)
{
	const char *id = getenv("CHORUS_VM_ID");

	return id ? atoi(id) : 0;
}

const char *shquote(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (len < 3)
		return "''";
	buf[o++] = '\'';
	for (; *s && o + 6 < len; s++) {
		if (*s == '\'') {
			memcpy(buf + o, "'\\''", 4);
			o += 4;
		} else {
			buf[o++] = *s;
		}
	}
	buf[o++] = '\'';
	buf[o] = '\0';
	return buf;
}

static void log_output(const char *out)
{
	const char *p = out;

	while (*p) {
		const char *nl = strchr(p, '\n');
		int l = nl ? (int)(nl - p) : (int)strlen(p);

		fprintf(stderr, "# | %.*s\n", l, p);
		if (!nl)
			break;
		p = nl + 1;
	}
}

static int vrun(char *out, size_t outlen, bool quiet, const char *fmt, va_list ap)
{
	char *cmd = NULL, *buf;
	size_t used = 0;
	int pfd[2], status;
	pid_t pid;
	bool verbose = getenv("CHORUS_SELFTEST_VERBOSE") != NULL;

	if (vasprintf(&cmd, fmt, ap) < 0)
		return -1;
	if (!quiet || verbose)
		fprintf(stderr, "# $ %s\n", cmd);
	fflush(stdout);
	fflush(stderr);
	buf = malloc(OUT_MAX);
	if (!buf || pipe2(pfd, O_CLOEXEC) < 0) {
		free(cmd);
		free(buf);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		free(cmd);
		free(buf);
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(devnull, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t n;

		if (used < OUT_MAX - 1) {
			n = read(pfd[0], buf + used, OUT_MAX - 1 - used);
		} else {
			char sink[4096];

			n = read(pfd[0], sink, sizeof(sink));
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (used < OUT_MAX - 1)
			used += n;
	}
	buf[used] = '\0';
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		status = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		status = 128 + WTERMSIG(status);
	else
		status = -1;
	if (verbose || (status != 0 && !quiet)) {
		if (status != 0)
			fprintf(stderr, "# (exit %d)\n", status);
		log_output(buf);
	}
	if (out && outlen) {
		snprintf(out, outlen, "%s", buf);
	}
	free(buf);
	free(cmd);
	return status;
}

int run(const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vrun(NULL, 0, false, fmt, ap);
	va_end(ap);
	return r;
}

int run_out(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vrun(out, len, false, fmt, ap);
	va_end(ap);
	return r;
}

int run_quiet(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vrun(out, len, true, fmt, ap);
	va_end(ap);
	return r;
}

/*
 * A command for another VM goes straight into that VM's mailbox in the lab's
 * shared dir, by the protocol of tools/vm/lib/run.sh (the agent's side is
 * tools/vm/guest/agent): ID.out and ID.err created empty, ID.sh written by
 * rename, the bell rung; the agent writes ID.rc when the command is done.
 * Going through the lab-run script instead costs about a second a call in a
 * TCG guest (bash, its libraries, a waiter and two tail processes), and the
 * cluster cases make hundreds of calls.
 */
#define MAILBOX_POLL_US (20 * 1000)

/* p = base.suffix (a mailbox file of one command); false if it does not fit. */
static bool mailbox_path(char *p, size_t len, const char *base, const char *suffix)
{
	return snprintf(p, len, "%s.%s", base, suffix) < (int)len;
}

static int mailbox_file(const char *path, const char *text, int flags)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
	bool ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -EIO;
}

static bool mailbox_vm_alive(const char *lab, int vm)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/vm%d/exited", lab, vm);
	if (path_exists(p))
		return false;
	snprintf(p, sizeof(p), "%s/vm%d/ready", lab, vm);
	return path_exists(p);
}

/* The command's exit status once ID.rc holds it, else -1. */
static int mailbox_rc(const char *base)
{
	char p[PATH_MAX], rc[32];

	mailbox_path(p, sizeof(p), base, "rc");
	if (read_file(p, rc, sizeof(rc)) || !rc[0])
		return -1;	/* not written atomically: empty means not yet */
	return atoi(rc);
}

static void mailbox_ring(const char *lab, int vm)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/vm%d/bell", lab, vm);
	mailbox_file(p, "\n", O_APPEND);
}

/*
 * Wait for the command at base (a path without suffix); 124 on timeout, 125 if the VM died.
 * The timeout is CHORUS_LAB_RUN_TIMEOUT, else 600 s times CHORUS_SELFTEST_TIMEOUT_SCALE (on
 * the debug kernel, PostgreSQL's initdb and start alone took longer than 600 s).
 */
static int mailbox_wait(const char *lab, int vm, const char *base)
{
	const char *t = getenv("CHORUS_LAB_RUN_TIMEOUT");
	const char *scale = getenv("CHORUS_SELFTEST_TIMEOUT_SCALE");
	uint64_t secs = t && atoi(t) > 0 ? atoi(t) : 600 * (scale && atoi(scale) > 0 ? atoi(scale) : 1);
	uint64_t deadline = now_ms() + secs * 1000;
	unsigned int n;
	char p[PATH_MAX];
	int rc;

	for (n = 0;; n++) {
		rc = mailbox_rc(base);
		if (rc >= 0)
			return rc;
		if (n % 25 == 24 && !mailbox_vm_alive(lab, vm))
			return 125;
		if (now_ms() >= deadline) {
			mailbox_path(p, sizeof(p), base, "kill");
			mailbox_file(p, "", O_TRUNC);
			mailbox_ring(lab, vm);
			return 124;
		}
		usleep(MAILBOX_POLL_US);
	}
}

static int mailbox_run(int vm, const char *cmd, char *buf, size_t len)
{
	static unsigned int seq;
	const char *lab = getenv("LAB_DIR");
	char base[PATH_MAX / 2], p[PATH_MAX], sh[PATH_MAX], *script;
	const char *const done[] = { "out", "err", "sh", "rc", "pid" };
	size_t i, got;
	int r, fd;
	ssize_t n;

	if (!lab || !*lab)
		lab = "/lab";
	if (!mailbox_vm_alive(lab, vm))
		return 125;
	snprintf(base, sizeof(base), "%s/vm%d/cmd/vm%d-%d-%u-%ld", lab, vm, this_vm(),
		 (int)getpid(), seq++, random());
	/* Everything into ID.out, in order: what the caller reads back. */
	if (asprintf(&script, "{\n%s\n} 2>&1\n", cmd) < 0)
		return -1;
	mailbox_path(p, sizeof(p), base, "out");
	r = mailbox_file(p, "", O_TRUNC);
	mailbox_path(p, sizeof(p), base, "err");
	r = r ?: mailbox_file(p, "", O_TRUNC);
	mailbox_path(p, sizeof(p), base, "tmp");
	r = r ?: mailbox_file(p, script, O_TRUNC);
	free(script);
	mailbox_path(sh, sizeof(sh), base, "sh");
	if (r || rename(p, sh) < 0)
		return -1;
	mailbox_ring(lab, vm);
	r = mailbox_wait(lab, vm, base);
	/* After a kill the agent cleans up; a dead VM's files go with the lab. */
	if (r == 124 || r == 125)
		return r;
	mailbox_path(p, sizeof(p), base, "out");
	fd = open(p, O_RDONLY | O_CLOEXEC);
	got = 0;
	/* 9p hands a large file over in pieces: read to its end. */
	while (fd >= 0 && got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	buf[got] = '\0';
	if (fd >= 0)
		close(fd);
	for (i = 0; i < sizeof(done) / sizeof(done[0]); i++) {
		if (mailbox_path(p, sizeof(p), base, done[i]))
			unlink(p);
	}
	return r;
}

static int vlab_run(int vm, char *out, size_t len, bool quiet, const char *fmt, va_list ap)
{
	bool verbose = getenv("CHORUS_SELFTEST_VERBOSE") != NULL;
	char *cmd = NULL, *buf;
	int r;

	if (vasprintf(&cmd, fmt, ap) < 0)
		return -1;
	if (vm == this_vm()) {
		r = quiet ? run_quiet(out, len, "%s", cmd) : run_out(out, len, "%s", cmd);
		free(cmd);
		return r;
	}
	if (!quiet || verbose)
		fprintf(stderr, "# vm%d$ %s\n", vm, cmd);
	buf = calloc(1, OUT_MAX);
	if (!buf) {
		free(cmd);
		return -1;
	}
	r = mailbox_run(vm, cmd, buf, OUT_MAX);
	if ((r != 0 && !quiet) || verbose) {
		fprintf(stderr, "# (vm%d: exit %d)\n", vm, r);
		log_output(buf);
	}
	if (out && len)
		snprintf(out, len, "%s", buf);
	free(buf);
	free(cmd);
	return r;
}

int lab_run(int vm, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vlab_run(vm, NULL, 0, false, fmt, ap);
	va_end(ap);
	return r;
}

int lab_run_out(int vm, char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vlab_run(vm, out, len, false, fmt, ap);
	va_end(ap);
	return r;
}

int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int read_filef(char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return read_file(path, buf, len);
}

int read_u64f(uint64_t *v, const char *fmt, ...)
{
	char path[PATH_MAX], buf[128], *end;
	va_list ap;
	int err;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	err = read_file(path, buf, sizeof(buf));
	if (err)
		return err;
	errno = 0;
	*v = strtoull(buf, &end, 0);
	if (errno || end == buf || *end)
		return -EINVAL;
	return 0;
}

int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

bool path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

bool wait_path(const char *path, bool exists, int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;

	for (;;) {
		if (path_exists(path) == exists)
			return true;
		if (now_ms() > end)
			return false;
		usleep(50 * 1000);
	}
}

int blk_stat(const char *disk, uint64_t st[BSTAT_NR])
{
	char buf[512], *p, *end;
	int i, err;

	memset(st, 0, sizeof(uint64_t) * BSTAT_NR);
	err = read_filef(buf, sizeof(buf), "/sys/block/%s/stat", disk);
	if (err)
		return err;
	p = buf;
	for (i = 0; i < BSTAT_NR; i++) {
		st[i] = strtoull(p, &end, 10);
		if (end == p)
			break;
		p = end;
	}
	return 0;
}

int chorus_counter(const char *disk, const char *name, uint64_t *v)
{
	return read_u64f(v, "/sys/block/%s/chorus/%s", disk, name);
}

bool chorus_module_loaded(void)
{
	return path_exists("/sys/module/chorus");
}

int chorus_load(void)
{
	return run("%s/tools/insmod-chorus", chorus_src());
}

int chorus_format(const char *backing, uint64_t size, uint32_t block_size,
		  const uint8_t *uuid)
{
	char opts[128] = "", u[37];

	if (size)
		snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), " --size %llu",
			 (unsigned long long)size);
	if (block_size)
		snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), " --block-size %u",
			 block_size);
	if (uuid) {
		snprintf(u, sizeof(u),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 uuid[0], uuid[1], uuid[2], uuid[3], uuid[4], uuid[5], uuid[6], uuid[7],
			 uuid[8], uuid[9], uuid[10], uuid[11], uuid[12], uuid[13], uuid[14],
			 uuid[15]);
		snprintf(opts + strlen(opts), sizeof(opts) - strlen(opts), " --uuid %s", u);
	}
	return run_quiet(NULL, 0, "%s/build/bin/chorusctl volume format --backing %s --force%s",
			 chorus_src(), backing, opts);
}

int chorus_formatted_bytes(const char *backing, uint64_t *bytes)
{
	char out[64];
	int r = run_quiet(out, sizeof(out),
			  "%s/build/bin/chorusctl --json volume inspect --backing %s | "
			  "python3 -c 'import json,sys; print(json.load(sys.stdin)[\"size_bytes\"])'",
			  chorus_src(), backing);

	if (r)
		return -EIO;
	*bytes = strtoull(out, NULL, 10);
	return *bytes ? 0 : -EIO;
}

int chorus_unload(void)
{
	return run("rmmod chorus");
}

int bdev_size(const char *path, uint64_t *bytes)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKGETSIZE64, bytes) < 0)
		err = -errno;
	close(fd);
	return err;
}

int bdev_ssz(const char *path, int *ssz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, BLKSSZGET, ssz) < 0)
		err = -errno;
	close(fd);
	return err;
}

void *abuf(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, 0, len);
	return p;
}

#define CHUNK (1024 * 1024)

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/*
 * Read [off, off+len) with O_DIRECT in CHUNK pieces and hand each to fn,
 * which returns 0 to go on or anything else to stop with that value.
 * Returns 0 when every chunk was seen, fn's value, or -errno.
 */
static int dev_for_each_chunk(const char *path, uint64_t off, uint64_t len,
			      int (*fn)(const uint64_t *words, size_t nwords, void *ctx),
			      void *ctx)
{
	int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
	uint64_t done = 0;
	uint64_t *buf;
	int ret = 0;

	if (fd < 0)
		return -errno;
	buf = abuf(CHUNK);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (done < len && !ret) {
		size_t want = len - done > CHUNK ? CHUNK : len - done;
		ssize_t n = pread(fd, buf, want, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (size_t)n != want) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		ret = fn(buf, want / 8, ctx);
		done += want;
	}
	free(buf);
	close(fd);
	return ret;
}

static int checksum_chunk(const uint64_t *words, size_t nwords, void *ctx)
{
	uint64_t *h = ctx;
	size_t i;

	for (i = 0; i < nwords; i++)
		*h = (*h ^ words[i]) * 0x100000001b3ULL + (*h >> 29);
	return 0;
}

int dev_checksum(const char *path, uint64_t off, uint64_t len, uint64_t *sum)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int ret = dev_for_each_chunk(path, off, len, checksum_chunk, &h);

	if (ret)
		return ret;
	*sum = mix64(h ^ len);
	return 0;
}

/* Stops the walk with 1 at the first non-zero word. */
static int nonzero_chunk(const uint64_t *words, size_t nwords, void *ctx)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < nwords; i++) {
		if (words[i])
			return 1;
	}
	return 0;
}

int dev_is_zero(const char *path, uint64_t off, uint64_t len)
{
	int ret = dev_for_each_chunk(path, off, len, nonzero_chunk, NULL);

	if (ret < 0)
		return ret;
	return ret == 0;
}

int dev_fill(const char *path, uint64_t off, uint64_t len, uint32_t seed, int extra_flags)
{
	int fd = open(path, O_WRONLY | O_DIRECT | O_CLOEXEC | extra_flags);
	uint64_t done = 0;
	uint64_t *buf;

	if (fd < 0)
		return -errno;
	buf = abuf(CHUNK);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (done < len) {
		size_t want = len - done > CHUNK ? CHUNK : len - done;
		size_t i;
		ssize_t n;

		for (i = 0; i < want / 8; i++)
			buf[i] = mix64(((uint64_t)seed << 40) ^ ((off + done) / 8 + i)) | 1;
		n = pwrite(fd, buf, want, off + done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (size_t)n != want) {
			int err = n < 0 ? -errno : -EIO;

			free(buf);
			close(fd);
			return err;
		}
		done += want;
	}
	free(buf);
	close(fd);
	return 0;
}

static int lab_run_quiet(int vm, char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vlab_run(vm, out, len, true, fmt, ap);
	va_end(ap);
	return r;
}

/* --- kernel log ------------------------------------------------------- */

#define KMSG_BAD_RE \
	"BUG:|WARNING:|Oops|general protection|lockdep|possible circular locking|" \
	"possible recursive locking|blocked for more than|Kernel panic|KASAN|UBSAN|" \
	"kernel BUG at|list_add corruption|list_del corruption|refcount_t: |" \
	"Unable to handle kernel|stack-protector|double free"

int kmsg_mark(struct kmsg_mark *m, int vm, const char *test)
{
	char line[256];

	m->vm = vm;
	snprintf(m->tag, sizeof(m->tag), "chorus-selftest-mark-%d-%llu", (int)getpid(),
		 (unsigned long long)now_ms());
	snprintf(line, sizeof(line), "chorus-selftest: %s begin [%s]", test, m->tag);
	if (vm == 0 || vm == this_vm()) {
		int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
		char rec[300];

		if (fd < 0)
			return -errno;
		snprintf(rec, sizeof(rec), "<5>%s\n", line);
		if (write(fd, rec, strlen(rec)) < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		close(fd);
		return 0;
	}
	return lab_run(vm, "echo '<5>%s' > /dev/kmsg", line) ? -EIO : 0;
}

int kmsg_check(const struct kmsg_mark *m)
{
	static char out[64 * 1024];
	int vm = m->vm ? m->vm : this_vm();
	int r, n = 0;
	char *p;

	/*
	 * A mark that scrolled out of the ring would hide everything after it.
	 * The log after the mark is split into reports; those of other
	 * subsystems listed in tools/vm/known-kernel-reports are printed but
	 * not counted, as the lab's own log check does. The splitter reports
	 * only lines that match KMSG_BAD_RE, so a log grep finds none in needs
	 * no Python (whose start costs a second or two under TCG, in every
	 * case's teardown on every VM).
	 */
	r = lab_run_quiet(vm, out, sizeof(out),
			"f=$(mktemp); dmesg | awk -v tag='%s' 'f; index($0, tag) { f = 1 } "
			"END { if (!f) print \"CHORUS_MARK_MISSING\" }' > $f; "
			"grep -q CHORUS_MARK_MISSING $f && echo CHORUS_MARK_MISSING; "
			"! grep -Eq '" KMSG_BAD_RE "' $f || "
			"python3 %s/tools/vm/lib/kernel-reports '" KMSG_BAD_RE "' "
			"%s/tools/vm/known-kernel-reports vm%d < $f; rm -f $f; true",
			m->tag, chorus_src(), chorus_src(), vm);
	if (r != 0)
		return -1;
	if (strstr(out, "CHORUS_MARK_MISSING")) {
		fprintf(stderr, "# kernel log (vm%d): mark '%s' is gone from dmesg, cannot check\n",
			vm, m->tag);
		return -1;
	}
	for (p = out; *p; ) {
		char *nl = strchr(p, '\n');

		if (nl)
			*nl = '\0';
		/* lab-run may prefix or add its own lines; count report lines only */
		if (*p && strstr(p, "chorus-selftest:") == NULL) {
			fprintf(stderr, "# kernel log (vm%d): %s\n", vm, p);
			if (!strstr(p, "known report, not chorus"))
				n++;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return n;
}

int dev_numbers(const char *disk, unsigned int *major, unsigned int *minor)
{
	char buf[64];
	int err = read_filef(buf, sizeof(buf), "/sys/block/%s/dev", disk);

	if (err)
		return err;
	if (sscanf(buf, "%u:%u", major, minor) != 2)
		return -EINVAL;
	return 0;
}

int wait_child(pid_t pid, int timeout_ms)
{
	uint64_t end = now_ms() + timeout_ms;
	int status;

	do {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
		usleep(50000);
	} while (now_ms() < end);
	return -1;
}

int lines_of(const char *path)
{
	char out[64];

	if (run_quiet(out, sizeof(out), "wc -l < %s", path))
		return -1;
	return atoi(out);
}
