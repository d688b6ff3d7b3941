// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: read and write latency histograms of a
 * volume, kept per CPU like its counters and summed when netlink reports
 * them (%CHORUS_STAT_READ_LATENCY, %CHORUS_STAT_WRITE_LATENCY). The buckets
 * are fixed powers of two so that recording a request costs a division and
 * two per-CPU adds, and userspace (chorusd's metrics) only reads them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <net/netlink.h>

#include "chorus.h"

/**
 * chorus_lat_alloc() - allocate a volume's histograms, all zero
 * @vol: the volume
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int chorus_lat_alloc(struct chorus_volume *vol)
{
	vol->lat = alloc_percpu(struct chorus_lat);
	return vol->lat ? 0 : -ENOMEM;
}

/**
 * chorus_lat_free() - free what chorus_lat_alloc() allocated
 * @vol: the volume, with no request left in flight
 */
void chorus_lat_free(struct chorus_volume *vol)
{
	free_percpu(vol->lat);
	vol->lat = NULL;
}

/* The bucket of a latency: the first whose bound, in whole us, it is within. */
static unsigned int chorus_lat_bucket(u64 ns)
{
	u64 us = DIV_ROUND_UP_ULL(ns, NSEC_PER_USEC);
	unsigned int b;

	if (us <= CHORUS_LAT_FIRST_US)
		return 0;
	/* us - 1 in [16 << (b - 1), 16 << b): ilog2 is 3 + b */
	b = ilog2(us - 1) - ilog2(CHORUS_LAT_FIRST_US) + 1;
	return min_t(unsigned int, b, CHORUS_LAT_BUCKETS - 1);
}

/**
 * chorus_lat_account() - count a completed request in its histogram
 * @vol: the volume
 * @rq: the request, whose chorus_rq.start_ns was set when it was queued
 * @status: how it completed; only successful reads and writes count, as
 *	in the reads and writes counters
 *
 * Context: any, including hard irq (request completion).
 */
void chorus_lat_account(struct chorus_volume *vol, struct request *rq,
			blk_status_t status)
{
	struct chorus_rq *rqd = blk_mq_rq_to_pdu(rq);
	unsigned int op, b;
	u64 ns;

	if (status != BLK_STS_OK)
		return;
	switch (req_op(rq)) {
	case REQ_OP_READ:
		op = CHORUS_LAT_READ;
		break;
	case REQ_OP_WRITE:
		op = CHORUS_LAT_WRITE;
		break;
	default:
		return;
	}
	ns = ktime_get_ns() - rqd->start_ns;
	b = chorus_lat_bucket(ns);
	this_cpu_inc(vol->lat->hist[op].bucket[b]);
	this_cpu_add(vol->lat->hist[op].sum_ns, ns);
}

/* One histogram, summed over the CPUs; readers accept a slightly stale sum. */
static void chorus_lat_sum(struct chorus_volume *vol, unsigned int op,
			   struct chorus_lat_hist *sum)
{
	int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct chorus_lat_hist *h = &per_cpu_ptr(vol->lat, cpu)->hist[op];

		for (i = 0; i < CHORUS_LAT_BUCKETS; i++)
			sum->bucket[i] += READ_ONCE(h->bucket[i]);
		sum->sum_ns += READ_ONCE(h->sum_ns);
	}
}

static int chorus_lat_fill_one(struct sk_buff *skb, struct chorus_volume *vol,
			       unsigned int op, int attr)
{
	struct chorus_lat_hist sum;
	struct nlattr *nest;
	int i;

	chorus_lat_sum(vol, op, &sum);
	nest = nla_nest_start(skb, attr);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, CHORUS_LAT_A_SUM_NS, sum.sum_ns,
			      CHORUS_LAT_A_PAD))
		goto cancel;
	for (i = 0; i < CHORUS_LAT_BUCKETS; i++)
		if (nla_put_u64_64bit(skb, CHORUS_LAT_A_BUCKET, sum.bucket[i],
				      CHORUS_LAT_A_PAD))
			goto cancel;
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/**
 * chorus_lat_fill() - put both histograms into a volume's stats nest
 * @skb: the message, inside %CHORUS_A_STATS
 * @vol: the volume
 *
 * Return: 0, or -EMSGSIZE; the caller cancels the stats nest then.
 */
int chorus_lat_fill(struct sk_buff *skb, struct chorus_volume *vol)
{
	if (chorus_lat_fill_one(skb, vol, CHORUS_LAT_READ,
				CHORUS_STAT_READ_LATENCY) ||
	    chorus_lat_fill_one(skb, vol, CHORUS_LAT_WRITE,
				CHORUS_STAT_WRITE_LATENCY))
		return -EMSGSIZE;
	return 0;
}

/**
 * chorus_lat_size() - room chorus_lat_fill() needs
 *
 * Return: an upper bound, in bytes.
 */
size_t chorus_lat_size(void)
{
	return CHORUS_LAT_NR_OPS *
	       (nla_total_size(0) +
		(CHORUS_LAT_BUCKETS + 1) * nla_total_size_64bit(sizeof(u64)));
}
