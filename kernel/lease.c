// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the node's lease deadline.
 *
 * chorusd holds a session lease in the cluster store, and the owner key of
 * every volume this node owns is bound to it. After each successful
 * keepalive the daemon hands the kernel a deadline, shorter than the lease's
 * TTL by a safety margin. Past the deadline, an owner neither starts nor
 * completes reads and writes: dev.c holds them until a later deadline comes
 * (they go on) or the node stops being the owner (they fail). So a hung,
 * stopped or crashed daemon cannot leave a stale owner serving once another
 * node may have taken its lease (DESIGN.md invariant 5): the kernel stops by
 * its own clock.
 *
 * The clock is CLOCK_BOOTTIME: monotonic, and unlike CLOCK_MONOTONIC it
 * keeps counting while the machine is suspended, as the store's lease does.
 *
 * Until the first deadline the lease is disarmed, and volumes managed by
 * hand without a daemon never hold.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <net/netlink.h>

#include "chorus.h"

#define CHORUS_LEASE_MAX_AHEAD_MS	60000

/*
 * chorus_lease_mutex serialises the setters and the expiry work.
 * chorus_lease_deadline: CLOCK_BOOTTIME ns, 0 when disarmed; written with
 *	WRITE_ONCE under chorus_lease_mutex, read with READ_ONCE anywhere
 *	(the I/O path orders it against held requests with each volume's
 *	held_lock, see chorus_dev_release_held())
 * chorus_lease_expiries, chorus_lease_logged: under chorus_lease_mutex
 */
static DEFINE_MUTEX(chorus_lease_mutex);
static u64 chorus_lease_deadline;
static u64 chorus_lease_expiries;
static bool chorus_lease_logged;

static void chorus_lease_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(chorus_lease_work, chorus_lease_workfn);

/**
 * chorus_lease_expired() - whether owners must hold their I/O now
 *
 * Context: any.
 * Return: true when a deadline is set and has passed.
 */
bool chorus_lease_expired(void)
{
	u64 deadline = READ_ONCE(chorus_lease_deadline);

	return deadline && ktime_get_boottime_ns() >= deadline;
}

/* The delay from now to @deadline, rounded up to whole jiffies. */
static unsigned long chorus_lease_delay(u64 deadline, u64 now)
{
	return deadline > now ? nsecs_to_jiffies(deadline - now) + 1 : 0;
}

/*
 * Logs and announces an expiry once per deadline. The delay was counted in
 * jiffies and the deadline is on CLOCK_BOOTTIME: should the work ever run
 * before the deadline, it waits out the rest instead of dropping the
 * announcement (which left an expiry unlogged and unannounced once, in CI).
 */
static void chorus_lease_workfn(struct work_struct *work)
{
	struct chorus_volume *vol;
	bool announce = false;
	u64 deadline, now;
	int index = 0;

	mutex_lock(&chorus_lease_mutex);
	deadline = chorus_lease_deadline;
	now = ktime_get_boottime_ns();
	if (deadline && !chorus_lease_logged) {
		if (now < deadline) {
			mod_delayed_work(chorus_wq, &chorus_lease_work,
					 chorus_lease_delay(deadline, now));
		} else {
			chorus_lease_logged = true;
			chorus_lease_expiries++;
			announce = true;
		}
	}
	mutex_unlock(&chorus_lease_mutex);
	if (!announce)
		return;

	pr_warn("lease deadline passed: volumes this node owns hold their I/O until a new deadline\n");
	mutex_lock(&chorus_volumes_lock);
	while ((vol = chorus_volume_next(&index))) {
		if (READ_ONCE(vol->repl.role) == CHORUS_ROLE_OWNER)
			chorus_genl_notify(vol, CHORUS_EVENT_LEASE_EXPIRED);
		index++;
	}
	mutex_unlock(&chorus_volumes_lock);
}

/**
 * chorus_lease_set() - set or disarm the lease deadline
 * @deadline: CLOCK_BOOTTIME ns, at most %CHORUS_LEASE_MAX_AHEAD_MS ahead
 *	(a deadline already past is accepted: it holds at once); 0 disarms
 * @extack: where to say why not
 *
 * The caller then releases what volumes hold, when the new deadline lets
 * them go (chorus_dev_release_held()).
 *
 * Context: process context.
 * Return: 0, or -ERANGE for a deadline too far ahead (nothing changed).
 */
int chorus_lease_set(u64 deadline, struct netlink_ext_ack *extack)
{
	u64 now = ktime_get_boottime_ns();

	if (deadline > now &&
	    deadline - now > (u64)CHORUS_LEASE_MAX_AHEAD_MS * NSEC_PER_MSEC) {
		NL_SET_ERR_MSG(extack,
			       "lease deadline more than 60 s ahead (is it CLOCK_BOOTTIME in ns?)");
		return -ERANGE;
	}
	mutex_lock(&chorus_lease_mutex);
	WRITE_ONCE(chorus_lease_deadline, deadline);
	chorus_lease_logged = false;
	if (!deadline)
		cancel_delayed_work(&chorus_lease_work);
	else
		mod_delayed_work(chorus_wq, &chorus_lease_work,
				 chorus_lease_delay(deadline, now));
	mutex_unlock(&chorus_lease_mutex);
	return 0;
}

/**
 * chorus_lease_get() - the lease as netlink reports it
 * @info: filled in
 *
 * Context: process context.
 */
void chorus_lease_get(struct chorus_lease_info *info)
{
	mutex_lock(&chorus_lease_mutex);
	info->deadline = chorus_lease_deadline;
	info->now = ktime_get_boottime_ns();
	info->expiries = chorus_lease_expiries;
	mutex_unlock(&chorus_lease_mutex);
	if (!info->deadline)
		info->state = CHORUS_LEASE_DISARMED;
	else if (info->now >= info->deadline)
		info->state = CHORUS_LEASE_EXPIRED;
	else
		info->state = CHORUS_LEASE_VALID;
}

/**
 * chorus_lease_exit() - stop the expiry work, at module exit
 *
 * Context: process context, after the netlink family is gone.
 */
void chorus_lease_exit(void)
{
	cancel_delayed_work_sync(&chorus_lease_work);
}
