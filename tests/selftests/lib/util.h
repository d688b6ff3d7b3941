/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the chorus selftests that do not depend on the harness:
 * shell commands, sysfs, block devices, checksums, tracefs, the guest's
 * kernel log and lab_run() (acting on another VM of the lab).
 */
#ifndef CHORUS_SELFTEST_UTIL_H
#define CHORUS_SELFTEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MiB (1024ULL * 1024ULL)

/* Project root inside the guest ($CHORUS_SRC, else derived from /proc/self/exe). */
const char *chorus_src(void);

/*
 * Run "sh -c CMD" (stderr merged into stdout). The command line and, when
 * it fails or CHORUS_SELFTEST_VERBOSE is set, its output are logged as TAP
 * diagnostics. Returns the exit status (0..255), 128+sig when killed, -1
 * when it could not be run. run_out() also stores the output (NUL
 * terminated, truncated to len-1).
 */
int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int run_out(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int run_quiet(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Run CMD on VM number vm of the lab, through its command mailbox in the
 * lab's shared dir (lab-run's protocol, without lab-run's processes): 124
 * after $CHORUS_LAB_RUN_TIMEOUT (default 600) seconds, 125 if the VM is or
 * goes down. When vm is this VM ($CHORUS_VM_ID) the command runs locally.
 */
int lab_run(int vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int lab_run_out(int vm, char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int this_vm(void);

/* Quote s for sh in single quotes into buf. */
const char *shquote(const char *s, char *buf, size_t len);

/* sysfs / procfs. read_file trims trailing newlines; returns 0 or -errno. */
int read_file(const char *path, char *buf, size_t len);
int read_filef(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Parse an unsigned integer file; returns 0 or -errno. */
int read_u64f(uint64_t *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int write_file(const char *path, const char *s);
bool path_exists(const char *path);

/* /sys/block/<dev>/stat fields (Documentation/block/stat.rst), 0-based. */
enum {
	BSTAT_READ_IOS, BSTAT_READ_MERGES, BSTAT_READ_SECTORS, BSTAT_READ_TICKS,
	BSTAT_WRITE_IOS, BSTAT_WRITE_MERGES, BSTAT_WRITE_SECTORS, BSTAT_WRITE_TICKS,
	BSTAT_IN_FLIGHT, BSTAT_IO_TICKS, BSTAT_TIME_IN_QUEUE,
	BSTAT_DISCARD_IOS, BSTAT_DISCARD_MERGES, BSTAT_DISCARD_SECTORS, BSTAT_DISCARD_TICKS,
	BSTAT_FLUSH_IOS, BSTAT_FLUSH_TICKS,
	BSTAT_NR
};
int blk_stat(const char *disk, uint64_t st[BSTAT_NR]);

/* Chorus per-volume sysfs counter /sys/block/<disk>/chorus/<name>. */
int chorus_counter(const char *disk, const char *name, uint64_t *v);

/* Module. */
bool chorus_module_loaded(void);
int chorus_load(void);		/* tools/insmod-chorus; exit status */
int chorus_unload(void);	/* rmmod chorus; exit status */
/*
 * Write chorus metadata on a backing device (chorusctl volume format
 * --force); 0 for size, block_size or NULL uuid takes the default. Exit
 * status.
 */
int chorus_format(const char *backing, uint64_t size, uint32_t block_size,
		  const uint8_t *uuid);
/* The data size the metadata on backing gives the volume; 0 or -errno. */
int chorus_formatted_bytes(const char *backing, uint64_t *bytes);

/* Block devices. */
int bdev_size(const char *path, uint64_t *bytes);	/* BLKGETSIZE64 */
int bdev_ssz(const char *path, int *ssz);		/* BLKSSZGET */
/* 64-bit checksum of len bytes at off, read with O_DIRECT. */
int dev_checksum(const char *path, uint64_t off, uint64_t len, uint64_t *sum);
/* Is [off, off+len) all zero (O_DIRECT)? 1 yes, 0 no, -errno. */
int dev_is_zero(const char *path, uint64_t off, uint64_t len);
/* Write a deterministic pattern (seeded) with O_DIRECT; 0 or -errno. */
int dev_fill(const char *path, uint64_t off, uint64_t len, uint32_t seed, int extra_flags);
/* Open a file with O_DIRECT-aligned buffers helper. */
void *abuf(size_t len);
/* Wait (polling) until the path exists / does not exist; true on success. */
bool wait_path(const char *path, bool exists, int timeout_ms);
/* Waits up to timeout_ms for child pid: its exit status (128 if killed), or -1 if still running. */
int wait_child(pid_t pid, int timeout_ms);
/* Lines of a file (wc -l), -1 if it cannot be read. */
int lines_of(const char *path);

/*
 * Kernel log. kmsg_mark() writes a unique marker line into VM vm's kernel
 * log (vm 0 = this VM); kmsg_check() prints every line after the marker
 * that looks like a kernel BUG/WARNING/Oops/lockdep/hung task report and
 * returns how many there were (or -1 if the log could not be read).
 */
struct kmsg_mark {
	int vm;
	char tag[96];
};
int kmsg_mark(struct kmsg_mark *m, int vm, const char *test);
int kmsg_check(const struct kmsg_mark *m);

/*
 * tracefs: a private instance with block_bio_queue, block_getrq and
 * block_rq_issue enabled. trace_read() returns the instance's buffer.
 */
struct blktrace {
	char dir[256];
	bool on;
};
int blktrace_start(struct blktrace *t);
void blktrace_stop(struct blktrace *t);
int blktrace_clear(struct blktrace *t);
/*
 * Count events on device major:minor whose rwbs satisfies the predicate;
 * sector < 0 matches any sector. Matching lines are printed.
 */
enum rwbs_kind { RWBS_PREFLUSH, RWBS_FUA_WRITE, RWBS_DISCARD, RWBS_WRITE_ZEROES, RWBS_FLUSH_ANY };
int blktrace_count(struct blktrace *t, const char *event, unsigned int major,
		   unsigned int minor, enum rwbs_kind kind, long long sector);
int dev_numbers(const char *disk, unsigned int *major, unsigned int *minor);

uint64_t now_ms(void);

#endif
