/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared fixture plumbing for the chorus selftests. Include exactly once,
 * from the test's .c file (it pulls in kselftest_harness.h, which defines
 * functions).
 *
 * Every test case runs in a forked child with a fresh state:
 *   setup:    mark the kernel log, clean up leftovers of an earlier test
 *             that died, insmod chorus.ko, open a netlink socket and
 *             resolve the "chorus" family and its "events" group;
 *   teardown: close what the test registered (fds, child processes,
 *             mounts, trace instance), destroy every volume, rmmod (the
 *             test FAILS if rmmod does not succeed), run registered cleanup
 *             commands, then FAIL on any BUG/WARNING/Oops/lockdep/hung
 *             task line logged since the mark.
 */
#ifndef CHORUS_SELFTEST_COMMON_H
#define CHORUS_SELFTEST_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The harness arms alarm(timeout) around each test case; on the debug lab
 * kernel, which runs everything several times slower, the run script asks
 * for longer ones with CHORUS_SELFTEST_TIMEOUT_SCALE. unistd.h is already
 * in, so only the harness's calls see this.
 */
static inline unsigned int chorus_scaled_alarm(unsigned int seconds)
{
	const char *s = getenv("CHORUS_SELFTEST_TIMEOUT_SCALE");
	unsigned long scale = s ? strtoul(s, NULL, 10) : 1;

	return alarm(seconds * (scale ? scale : 1));
}
#define alarm(seconds) chorus_scaled_alarm(seconds)

#include "kselftest_harness.h"
#include "genl.h"
#include "util.h"

#define ENV_MAX_FDS	32
#define ENV_MAX_PIDS	8
#define ENV_MAX_CMDS	8

struct chorus_env {
	struct genl_sock nl;
	struct kmsg_mark mark;
	struct kmsg_mark remote_mark[4];
	int nremote;
	int fds[ENV_MAX_FDS];
	int nfds;
	pid_t pids[ENV_MAX_PIDS];
	int npids;
	char cleanup[ENV_MAX_CMDS][512];	/* shell commands, run after rmmod */
	int ncleanup;
	char pre_cleanup[ENV_MAX_CMDS][512];	/* shell commands, run before destroy */
	int npre_cleanup;
	struct blktrace trace;
	bool loaded_by_setup;
	bool keep_loaded;	/* leave chorus loaded: a suite keeps its nodes up */
	pid_t watchdog;		/* env_arm_watchdog() */
};

/* The 6.1 harness re-enters teardown when an ASSERT fails inside it. */
static bool __chorus_teardown_entered;

#define NLERR(e) ({ static char __b[800]; genl_err_str((e), __b, sizeof(__b)); })

static inline int env_track_fd(struct chorus_env *env, int fd)
{
	if (fd >= 0 && env->nfds < ENV_MAX_FDS)
		env->fds[env->nfds++] = fd;
	return fd;
}

static inline void env_close_fd(struct chorus_env *env, int fd)
{
	int i;

	for (i = 0; i < env->nfds; i++) {
		if (env->fds[i] == fd) {
			env->fds[i] = env->fds[--env->nfds];
			break;
		}
	}
	close(fd);
}

static inline void env_track_pid(struct chorus_env *env, pid_t pid)
{
	if (pid > 0 && env->npids < ENV_MAX_PIDS)
		env->pids[env->npids++] = pid;
}

static inline void env_on_cleanup(struct chorus_env *env, bool before_destroy,
				  const char *cmd)
{
	if (before_destroy) {
		if (env->npre_cleanup < ENV_MAX_CMDS)
			snprintf(env->pre_cleanup[env->npre_cleanup++], 512, "%s", cmd);
	} else if (env->ncleanup < ENV_MAX_CMDS) {
		snprintf(env->cleanup[env->ncleanup++], 512, "%s", cmd);
	}
}

/*
 * The tasks blocked in every lab VM (sysrq w), into the test's output: when
 * a case ended by its timeout left chorus behind, this is what it was
 * waiting for.
 */
static inline void chorus_show_blocked(void)
{
	const char *count = getenv("CHORUS_VM_COUNT");
	int vm, vms = count ? atoi(count) : 1;
	char *out = malloc(16384);

	for (vm = 1; out && vm <= vms; vm++) {
		out[0] = '\0';
		lab_run_out(vm, out, 16384, "echo w > /proc/sysrq-trigger; sleep 1; "
			    "dmesg | sed -n '/Show Blocked State/,$p' | tail -n 150 | "
			    "sed 's/^/#   /'");
		fprintf(stderr, "# vm%d: tasks blocked:\n%s", vm, out);
	}
	free(out);
}

/*
 * What every lab VM is doing, into the test's output: each volume's counters
 * and peers, the RDMA transport's counters, what chorus and soft-RoCE
 * logged last, and the tasks blocked (sysrq w).
 */
static inline void chorus_show_state(void)
{
	const char *count = getenv("CHORUS_VM_COUNT");
	int vm, vms = count ? atoi(count) : 1;
	size_t len = 32768;
	char *out = malloc(len);

	for (vm = 1; out && vm <= vms; vm++) {
		out[0] = '\0';
		lab_run_out(vm, out, len, "{ C=%s/build/bin/chorusctl; "
			    "for v in $($C --json volume list 2>/dev/null | jq -r '.[].name'); do "
			    "$C volume status $v | sed -n '/^counters/,$p'; done; "
			    "cat /sys/kernel/debug/chorus_rdma 2>/dev/null; "
			    "dmesg | grep -E 'chorus|rxe' | tail -n 30; "
			    "echo w > /proc/sysrq-trigger; sleep 1; "
			    "dmesg | sed -n '/Show Blocked State/,$p' | tail -n 120; } 2>&1 | "
			    "sed 's/^/#   /'", chorus_src());
		fprintf(stderr, "# vm%d:\n%s", vm, out);
	}
	free(out);
}

/*
 * A case that reaches its timeout is killed by the harness, teardown and
 * all, and leaves only "terminated by timeout". So each case gets a
 * watchdog: a tenth of the timeout (at least 30 s) before it, it prints
 * what the lab's nodes are doing (chorus_show_state()). It dies with the
 * case (PR_SET_PDEATHSIG), or in env_teardown().
 */
static inline void env_arm_watchdog(struct __test_metadata *_metadata,
				    struct chorus_env *env)
{
	const char *s = getenv("CHORUS_SELFTEST_TIMEOUT_SCALE");
	unsigned long scale = s ? strtoul(s, NULL, 10) : 1;
	unsigned int timeout = _metadata->timeout * (scale ? scale : 1);
	unsigned int early = timeout / 10 > 30 ? timeout / 10 : 30;
	pid_t parent = getpid();

	if (timeout < 90)
		return;
	env->watchdog = fork();
	if (env->watchdog)
		return;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(0);
	sleep(timeout - early);
	fprintf(stderr, "# %s: %u s before its timeout, what the lab is doing:\n",
		_metadata->name, early);
	chorus_show_state();
	_exit(0);
}

static inline void env_disarm_watchdog(struct chorus_env *env)
{
	if (env->watchdog <= 0)
		return;
	kill(env->watchdog, SIGKILL);
	waitpid(env->watchdog, NULL, 0);
	env->watchdog = 0;
}

/*
 * make check runs each scenario once, and a variant that repeats a case
 * under another transport or set-up only where that changes what the case
 * tests: @cases lists the cases (space-separated test names) a variant runs
 * in make check, NULL meaning all. CHORUS_SELFTEST_ALL_VARIANTS=1 (make
 * check-all-variants) runs every case in every variant.
 */
/* Whether @name is one of the words of @list (separated by commas or spaces). */
static inline bool chorus_in_list(const char *list, const char *name)
{
	char *dup = strdup(list), *save = NULL, *word;
	bool found = false;

	for (word = strtok_r(dup, ", ", &save); word && !found;
	     word = strtok_r(NULL, ", ", &save))
		found = !strcmp(word, name);
	free(dup);
	return found;
}

static inline bool chorus_in_check_lane(const char *cases, const char *test)
{
	const char *all = getenv("CHORUS_SELFTEST_ALL_VARIANTS");

	return !cases || (all && !strcmp(all, "1")) || chorus_in_list(cases, test);
}

/*
 * In a FIXTURE_SETUP, before it does anything: skip a case that is not in
 * make check's lane for this variant (see chorus_in_check_lane()). The
 * harness runs each case in a child; 255 is its exit status for SKIP.
 */
#define CHORUS_CHECK_LANE(cases) do { \
	if (!chorus_in_check_lane((cases), _metadata->name)) \
		SKIP(_exit(255), "not in make check's lane for this variant " \
		     "(make check-all-variants runs it)"); \
} while (0)

/*
 * A test that failed may leave a writer blocked on writes held for a peer
 * that never came back: take every peer out of the write set (held writes
 * complete) and kill whoever still has the device open, so that the volume
 * can be destroyed and the next test starts clean instead of failing too.
 */
static inline void chorus_release_opened(const struct chorus_vol *v)
{
	run("C=%s/build/bin/chorusctl; for n in $($C --json volume status %s | "
	    "jq -r '.peers[].node_id'); do $C writeset remove %s $n; done; "
	    "fuser -k -9 /dev/%s; sleep 2", chorus_src(), v->name, v->name,
	    v->disk_name);
}

/* Destroy every volume and rmmod. Returns rmmod's status (0 when not loaded). */
static inline int chorus_reset(struct chorus_env *env, int *destroy_failures)
{
	struct chorus_vol vols[16];
	struct genl_sock nl;
	struct genl_err e;
	int n, i, rc;

	if (destroy_failures)
		*destroy_failures = 0;
	if (!chorus_module_loaded())
		return 0;
	if (genl_open(&nl) == 0) {
		n = chorus_dump(&nl, vols, 16, &e);
		if (n < 0)
			fprintf(stderr, "# teardown: dump failed: %s\n", NLERR(&e));
		for (i = 0; i < n && i < 16; i++) {
			if (!chorus_destroy(&nl, vols[i].name, &e))
				continue;
			fprintf(stderr, "# teardown: destroy %s failed: %s\n",
				vols[i].name, NLERR(&e));
			if (destroy_failures)
				(*destroy_failures)++;
			chorus_release_opened(&vols[i]);
			if (chorus_destroy(&nl, vols[i].name, &e))
				fprintf(stderr, "# teardown: destroy %s failed again: %s\n",
					vols[i].name, NLERR(&e));
		}
		genl_close(&nl);
	}
	(void)env;
	rc = chorus_unload();
	if (rc && chorus_module_loaded()) {
		/* give a lazily released opener (udev-less /dev, nvmet) a moment */
		sleep(2);
		rc = chorus_unload();
	}
	return rc;
}

static inline void env_setup(struct __test_metadata *_metadata, struct chorus_env *env,
			     bool load)
{
	int rc;

	env->nl.fd = -1;
	__chorus_teardown_entered = false;
	env_disarm_watchdog(env);
	env_arm_watchdog(_metadata, env);
	/* never insmod into the build host's kernel */
	ASSERT_NE(NULL, getenv("CHORUS_VM_ID"))
		TH_LOG("not inside a lab VM (CHORUS_VM_ID unset): run through tests/selftests/run");
	ASSERT_EQ(0, kmsg_mark(&env->mark, 0, _metadata->name));
	if (chorus_module_loaded() && !env->keep_loaded) {
		TH_LOG("chorus already loaded (left over from an earlier test?), resetting");
		chorus_show_blocked();
		rc = chorus_reset(env, NULL);
		ASSERT_EQ(0, rc) TH_LOG("cannot unload the leftover chorus module");
	}
	ASSERT_TRUE(path_exists("/dev/vda")) TH_LOG("no /dev/vda: not running in the lab?");
	if (load) {
		char ko[4096];

		snprintf(ko, sizeof(ko), "%s/chorus.ko", chorus_src());
		ASSERT_TRUE(path_exists(ko)) TH_LOG("%s missing: run make module", ko);
		ASSERT_EQ(0, chorus_load());
		env->loaded_by_setup = true;
		ASSERT_EQ(0, genl_open(&env->nl));
		ASSERT_EQ(0, genl_resolve_chorus(&env->nl))
			TH_LOG("family \"chorus\" with group \"events\" not registered");
		ASSERT_NE(0, env->nl.family);
		ASSERT_NE(0, env->nl.mcgrp_events);
	}
}

static inline void env_teardown(struct __test_metadata *_metadata, struct chorus_env *env)
{
	int i, rc, destroy_failures = 0, bad, r;

	if (__chorus_teardown_entered)
		return;
	__chorus_teardown_entered = true;
	/* a failed ASSERT longjmps out with trigger still set, which would make
	 * the next passing EXPECT print its message */
	_metadata->trigger = 0;
	env_disarm_watchdog(env);

	for (i = 0; i < env->nfds; i++)
		close(env->fds[i]);
	env->nfds = 0;
	for (i = 0; i < env->npids; i++) {
		kill(env->pids[i], SIGKILL);
		waitpid(env->pids[i], NULL, 0);
	}
	env->npids = 0;
	blktrace_stop(&env->trace);
	for (i = 0; i < env->npre_cleanup; i++)
		run("%s", env->pre_cleanup[i]);
	if (env->nl.fd >= 0)
		genl_close(&env->nl);

	rc = env->keep_loaded ? 0 : chorus_reset(env, &destroy_failures);
	for (i = 0; i < env->ncleanup; i++)
		run("%s", env->cleanup[i]);

	bad = kmsg_check(&env->mark);
	for (i = 0; i < env->nremote; i++) {
		r = kmsg_check(&env->remote_mark[i]);
		bad = (bad < 0 || r < 0) ? -1 : bad + r;
	}

	/* the 6.1 harness reports a skipped test as ok: a failed teardown must show */
	if (destroy_failures || rc || bad)
		_metadata->skip = 0;
	EXPECT_EQ(0, destroy_failures) TH_LOG("teardown could not destroy every volume");
	ASSERT_EQ(0, rc) TH_LOG("rmmod chorus failed in teardown");
	ASSERT_TRUE(env->keep_loaded || !chorus_module_loaded());
	ASSERT_EQ(0, bad) TH_LOG("kernel log has BUG/WARNING/Oops/lockdep/hung task lines");
}

/*
 * Format the backing device with this size, block size and uuid, then
 * attach it as a volume with the same expectations; ASSERTs success.
 */
static inline void __create_ok(struct __test_metadata *_metadata, struct chorus_env *env,
			       const char *name, const char *backing, uint64_t size,
			       uint32_t bs, const uint8_t *uuid, struct chorus_vol *out)
{
	struct chorus_create_args a = {
		.name = name, .backing = backing, .size = size, .block_size = bs, .uuid = uuid,
	};
	struct chorus_vol tmp;
	struct genl_err e;

	ASSERT_EQ(0, chorus_format(backing, size, bs, uuid))
		TH_LOG("chorusctl volume format of %s failed", backing);
	ASSERT_EQ(0, chorus_create(&env->nl, &a, out ? out : &tmp, &e))
		TH_LOG("create %s on %s: %s", name, backing, NLERR(&e));
}
#define create_ok(env, name, backing, size, bs, uuid, out) \
	__create_ok(_metadata, env, name, backing, size, bs, uuid, out)

static inline void __destroy_ok(struct __test_metadata *_metadata, struct chorus_env *env,
				const char *name)
{
	struct genl_err e;

	ASSERT_EQ(0, chorus_destroy(&env->nl, name, &e))
		TH_LOG("destroy %s: %s", name, NLERR(&e));
}
#define destroy_ok(env, name) __destroy_ok(_metadata, env, name)

/* Open a device and register the fd for teardown. */
static inline int __open_dev(struct __test_metadata *_metadata, struct chorus_env *env,
			     const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	ASSERT_LE(0, fd) TH_LOG("open %s: %s", path, strerror(errno));
	return env_track_fd(env, fd);
}
#define open_dev(env, path, flags) __open_dev(_metadata, env, path, flags)

static inline uint64_t __counter(struct __test_metadata *_metadata, const char *disk,
				 const char *name)
{
	uint64_t v = 0;

	ASSERT_EQ(0, chorus_counter(disk, name, &v))
		TH_LOG("cannot read /sys/block/%s/chorus/%s", disk, name);
	return v;
}
#define counter(disk, name) __counter(_metadata, disk, name)

static inline uint64_t __checksum(struct __test_metadata *_metadata, const char *path,
				  uint64_t off, uint64_t len)
{
	uint64_t sum = 0;
	int err = dev_checksum(path, off, len, &sum);

	ASSERT_EQ(0, err) TH_LOG("checksum %s: %s", path, strerror(-err));
	return sum;
}
#define checksum(path, off, len) __checksum(_metadata, path, off, len)

/* --- main with a test filter --------------------------------------------- */

/*
 * CHORUS_SELFTEST_FILTER="pat[,pat...]": run only test cases whose
 * "fixture.test" or "test" matches one of the fnmatch patterns, or
 * "binary.test" or "binary.fixture.test" (tests/selftests/run passes
 * "binary.test": cluster_disk and cluster_iscsi use cluster's fixture).
 * "-l" lists the test cases.
 */
static bool __chorus_match(const char *filter, const char *fixture, const char *test)
{
	char *dup = strdup(filter), *save = NULL, *pat;
	const char *bin = program_invocation_short_name;
	char full[256], by_bin[256], full3[384];
	bool ok = false;

	snprintf(full, sizeof(full), "%s.%s", fixture, test);
	snprintf(by_bin, sizeof(by_bin), "%s.%s", bin, test);
	snprintf(full3, sizeof(full3), "%s.%s.%s", bin, fixture, test);
	for (pat = strtok_r(dup, ", ", &save); pat && !ok; pat = strtok_r(NULL, ", ", &save)) {
		if (!fnmatch(pat, full, 0) || !fnmatch(pat, test, 0) ||
		    !fnmatch(pat, by_bin, 0) || !fnmatch(pat, full3, 0) ||
		    !strcmp(pat, fixture))
			ok = true;
	}
	free(dup);
	return ok;
}

/*
 * CHORUS_SELFTEST_VARIANTS="name[,name...]": run only these variants of a
 * fixture that has variants (a fixture with none of them keeps all).
 */
static void __chorus_keep_variants(const char *names)
{
	struct __fixture_variant_metadata *v, *next, *head, *tail;
	struct __fixture_metadata *f;

	for (f = __fixture_list; f; f = f->next) {
		head = tail = NULL;
		for (v = f->variant; v; v = next) {
			next = v->next;
			if (!chorus_in_list(names, v->name))
				continue;
			v->next = NULL;
			if (!head)
				head = v;
			else
				tail->next = v;
			tail = v;
			head->prev = tail;
		}
		if (head)
			f->variant = head;
	}
}

static int chorus_harness_main(int argc, char **argv)
{
	const char *filter = getenv("CHORUS_SELFTEST_FILTER");
	const char *variants = getenv("CHORUS_SELFTEST_VARIANTS");
	struct __fixture_metadata *f;
	bool list = false;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	setvbuf(stderr, NULL, _IONBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-l")) {
			list = true;
			continue;
		}
		if (!strcmp(argv[i], "-t") && i + 1 < argc) {
			filter = argv[++i];
			continue;
		}
		fprintf(stderr, "usage: %s [-l] [-t PATTERN[,PATTERN...]]\n", argv[0]);
		return 2;
	}
	if (filter && *filter) {
		for (f = __fixture_list; f; f = f->next) {
			struct __test_metadata *t, *next, *head = NULL, *tail = NULL;

			for (t = f->tests; t; t = next) {
				next = t->next;
				if (!__chorus_match(filter, f->name, t->name))
					continue;
				t->next = NULL;
				if (!head) {
					head = t;
				} else {
					tail->next = t;
				}
				tail = t;
				head->prev = tail;
			}
			f->tests = head;
		}
	}
	if (variants && *variants)
		__chorus_keep_variants(variants);
	if (list) {
		for (f = __fixture_list; f; f = f->next) {
			struct __test_metadata *t;

			for (t = f->tests; t; t = t->next)
				printf("%s.%s\n", f->name, t->name);
		}
		return 0;
	}
	return test_harness_run(argc, argv);
}

#define CHORUS_HARNESS_MAIN \
	int main(int argc, char **argv) { return chorus_harness_main(argc, argv); }

#endif
