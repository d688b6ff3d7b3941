// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for the chorus selftests: which requests reach a block device, as
 * the block layer's tracepoints in a tracefs instance of the test's own
 * show them (blktrace_start() and the rest). See util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static const char *trace_root(void)
{
	if (path_exists("/sys/kernel/tracing/instances"))
		return "/sys/kernel/tracing";
	return "/sys/kernel/debug/tracing";
}

static int trace_write(struct blktrace *t, const char *file, const char *val)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", t->dir, file);
	return write_file(path, val);
}

int blktrace_start(struct blktrace *t)
{
	static const char *const ev[] = {
		"events/block/block_bio_queue/enable",
		"events/block/block_getrq/enable",
		"events/block/block_rq_issue/enable",
	};
	size_t i;
	int err;

	snprintf(t->dir, sizeof(t->dir), "%s/instances/chorus-selftest-%d", trace_root(),
		 (int)getpid());
	if (mkdir(t->dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	t->on = true;
	trace_write(t, "buffer_size_kb", "8192");
	for (i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		err = trace_write(t, ev[i], "1");
		if (err)
			return err;
	}
	err = trace_write(t, "tracing_on", "1");
	return err ? err : blktrace_clear(t);
}

int blktrace_clear(struct blktrace *t)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/trace", t->dir);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

void blktrace_stop(struct blktrace *t)
{
	if (!t->on)
		return;
	trace_write(t, "tracing_on", "0");
	trace_write(t, "events/enable", "0");
	rmdir(t->dir);
	t->on = false;
}

static bool rwbs_match(const char *rwbs, enum rwbs_kind kind)
{
	bool preflush = false;
	char op;
	size_t i = 0;

	if (rwbs[0] == 'F' && rwbs[1] && strchr("WRDNF", rwbs[1])) {
		preflush = true;
		i = 1;
	}
	op = rwbs[i];
	if (op == 'D' && rwbs[i + 1] == 'E')
		i++;
	switch (kind) {
	case RWBS_PREFLUSH:
		return preflush;
	case RWBS_FLUSH_ANY:
		return preflush || op == 'F';
	case RWBS_FUA_WRITE:
		return op == 'W' && strchr(rwbs + i + 1, 'F') != NULL;
	case RWBS_DISCARD:
		return op == 'D';
	case RWBS_WRITE_ZEROES:
		/* 6.1's blk_fill_rwbs() has no letter for REQ_OP_WRITE_ZEROES: 'N' */
		return op == 'N';
	}
	return false;
}

int blktrace_count(struct blktrace *t, const char *event, unsigned int major,
		   unsigned int minor, enum rwbs_kind kind, long long sector)
{
	char path[512], line[1024], key[96];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/trace", t->dir);
	snprintf(key, sizeof(key), " %s: ", event);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, key), *plus;
		unsigned int ma, mi;
		char rwbs[16];
		long long sec = -1;

		if (!p || line[0] == '#')
			continue;
		p += strlen(key);
		if (sscanf(p, "%u,%u %15s", &ma, &mi, rwbs) != 3)
			continue;
		if (ma != major || mi != minor || !rwbs_match(rwbs, kind))
			continue;
		plus = strstr(p, " + ");
		if (plus) {
			char *q = plus;

			while (q > p && q[-1] != ' ')
				q--;
			sec = strtoll(q, NULL, 10);
		}
		if (sector >= 0 && sec != sector)
			continue;
		fprintf(stderr, "# trace: %s", strstr(line, key) + 1);
		n++;
	}
	fclose(f);
	return n;
}
