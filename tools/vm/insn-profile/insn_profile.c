// SPDX-License-Identifier: GPL-2.0
/*
 * insn_profile.so - a QEMU TCG plugin that counts the guest instructions
 * executed at each translation block's start address.
 *
 * Sampling profilers do not work in the lab: TCG delivers the sampling
 * timer's interrupt only where the guest enables interrupts or halts, so
 * `perf record` sees the idle loop and interrupt-enable points only
 * (Documentation/benchmarks.md, "Profiles under TCG"). Counting instead of
 * sampling has no such bias: every block adds its instruction count to a
 * counter of its start address each time it runs (an inline add, no call
 * into the plugin). Guest user space is one counter.
 *
 * Usage: qemu ... -plugin insn_profile.so,out=PATH
 * While the guest runs, create PATH.req: within 100 ms the counts so far
 * are written to PATH.snap ("vaddr insns blocks" per line, hex vaddr,
 * kernel addresses only, then "user INSNS BLOCKS") and PATH.req removed.
 * The difference of two snapshots is a window's profile;
 * tools/vm/insn-profile/report turns it into symbols.
 *
 * Counters are plain adds from the vCPU thread (the lab runs TCG with one
 * thread per VM, tools/vm/README.md), read by the dump thread without a
 * lock: a snapshot may miss the last few adds, which a profile of millions
 * does not notice.
 *
 * The plugin API is QEMU's (include/qemu/qemu-plugin.h, version 1, QEMU
 * 7.2); the few declarations used are written out below, since Debian ships
 * no header for it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The QEMU plugin API, version 1: only what this plugin uses. */
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id,
					       struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = 1;

/* x86-64 kernel text starts in the top 2 GiB; below the hole is user space. */
#define KERNEL_START	0xffff800000000000ULL

/* Open addressing; never resized, since the inline adds hold its addresses. */
#define TABLE_BITS	20
#define TABLE_SIZE	(1UL << TABLE_BITS)

struct counter {
	uint64_t vaddr;		/* 0: free */
	uint64_t insns;
	uint64_t blocks;
};

static struct counter *table;
static struct counter user;	/* every block below KERNEL_START */
static struct counter overflow;	/* kernel blocks once the table is full */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char *out_path;

static struct counter *counter_of(uint64_t vaddr)
{
	uint64_t h = (vaddr * 0x9e3779b97f4a7c15ULL) >> (64 - TABLE_BITS);
	unsigned long i;

	for (i = 0; i < TABLE_SIZE; i++) {
		struct counter *c = &table[(h + i) & (TABLE_SIZE - 1)];

		if (c->vaddr == vaddr)
			return c;
		if (!c->vaddr) {
			c->vaddr = vaddr;
			return c;
		}
	}
	return &overflow;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct counter *c = &user;

	(void)id;
	if (vaddr >= KERNEL_START) {
		pthread_mutex_lock(&table_lock);
		c = counter_of(vaddr);
		pthread_mutex_unlock(&table_lock);
	}
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &c->insns,
						 qemu_plugin_tb_n_insns(tb));
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &c->blocks, 1);
}

static int write_line(FILE *f, const char *name, const struct counter *c)
{
	return fprintf(f, "%s %" PRIu64 " %" PRIu64 "\n", name,
		       c->insns, c->blocks) < 0 ? -1 : 0;
}

/* Write the counts to PATH.snap through a temporary file; 0 or -1. */
static int dump(void)
{
	char tmp[4096], snap[4096];
	unsigned long i;
	FILE *f;
	int ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.snap.tmp", out_path);
	snprintf(snap, sizeof(snap), "%s.snap", out_path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	pthread_mutex_lock(&table_lock);
	for (i = 0; i < TABLE_SIZE && !ret; i++) {
		const struct counter *c = &table[i];

		if (c->vaddr && c->insns &&
		    fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
			    c->vaddr, c->insns, c->blocks) < 0)
			ret = -1;
	}
	pthread_mutex_unlock(&table_lock);
	if (!ret)
		ret = write_line(f, "user", &user);
	if (!ret)
		ret = write_line(f, "overflow", &overflow);
	if (fclose(f) || ret || rename(tmp, snap))
		return -1;
	return 0;
}

static void *dump_thread(void *arg)
{
	struct timespec tick = { .tv_nsec = 100 * 1000 * 1000 };
	char req[4096];

	(void)arg;
	snprintf(req, sizeof(req), "%s.req", out_path);
	for (;;) {
		nanosleep(&tick, NULL);
		if (access(req, F_OK))
			continue;
		if (dump())
			fprintf(stderr, "insn_profile: cannot write %s.snap: %s\n",
				out_path, strerror(errno));
		unlink(req);
	}
	return NULL;
}

static void on_exit_dump(qemu_plugin_id_t id, void *userdata)
{
	(void)id;
	(void)userdata;
	dump();
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
			       int argc, char **argv)
{
	pthread_t thread;
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = argv[i] + 4;
	if (!out_path || !*out_path) {
		fprintf(stderr, "insn_profile: needs out=PATH\n");
		return -1;
	}
	table = calloc(TABLE_SIZE, sizeof(*table));
	if (!table) {
		fprintf(stderr, "insn_profile: out of memory\n");
		return -1;
	}
	if (pthread_create(&thread, NULL, dump_thread, NULL)) {
		fprintf(stderr, "insn_profile: cannot start the dump thread\n");
		free(table);
		return -1;
	}
	pthread_detach(thread);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_dump, NULL);
	return 0;
}
