/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the logs of tests/selftests/ack_writer.py ("INDEX SEQ TIME" per
 * acknowledged write, TIME the writing VM's clock) and comparing the lab
 * VMs' clocks: pauses in acknowledged writes across a fault, and when the
 * last write was acknowledged.
 */
#ifndef CHORUS_SELFTEST_ACK_LOG_H
#define CHORUS_SELFTEST_ACK_LOG_H

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "repl_lab.h"

/* This VM's CLOCK_REALTIME in seconds. */
static inline double realtime_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The longest time in [@from, @to] (this VM's clock) without an
 * acknowledged write in @log, whose TIME fields must be this VM's clock too.
 */
static inline double max_ack_gap(const char *path, double from, double to)
{
	double t, last = from, gap = 0;
	char line[128];
	FILE *f = fopen(path, "r");

	if (!f)
		return to - from;
	while (fgets(line, sizeof(line), f)) {
		if (!strchr(line, '\n') || sscanf(line, "%*d %*d %lf", &t) != 1 || t < from)
			continue;
		if (t > to)
			break;
		gap = t - last > gap ? t - last : gap;
		last = t;
	}
	fclose(f);
	return to - last > gap ? to - last : gap;
}

/*
 * Whether @log grows in every 5 s of the next @seconds (under TCG a VM is
 * sometimes not scheduled for a second or two: shorter would be noise).
 */
static inline bool writer_goes_on(const char *log, int seconds)
{
	int i, before;

	for (i = 0; i < seconds; i += 5) {
		before = lines_of(log);
		sleep(5);
		if (lines_of(log) == before)
			return false;
	}
	return true;
}

/*
 * How far @vm's clock is ahead of this VM's, within +-*err: the lab's VMs
 * keep no common time, so a timestamp from one is compared with another's
 * through these offsets. The best of three reads over the control channel,
 * or of up to ten while the best is still uncertain by more than half a
 * second: a busy guest on the debug kernel takes seconds to answer (stop
 * 62: +-11 s from three reads, more than the gap the offsets were to show).
 */
static inline int clock_offset(int vm, double *off, double *err)
{
	double before, after;
	char out[64];
	int i;

	*err = 1e9;
	for (i = 0; i < 10 && (i < 3 || *err > 0.5); i++) {
		before = realtime_s();
		if (rl_on_out(vm, out, sizeof(out), "date +%%s.%%N"))
			return -1;
		after = realtime_s();
		if ((after - before) / 2 < *err) {
			*err = (after - before) / 2;
			*off = atof(out) - (before + after) / 2;
		}
	}
	return 0;
}

/* The third field of the last line of @path (ack_writer's TIME); 0 if none. */
static inline double last_ack_time(const char *path)
{
	char line[128], last[128] = "";
	double t = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strchr(line, '\n'))
			strcpy(last, line);
	fclose(f);
	if (sscanf(last, "%*d %*d %lf", &t) != 1)
		return 0;
	return t;
}

#endif /* CHORUS_SELFTEST_ACK_LOG_H */
