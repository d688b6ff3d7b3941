/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * chorus - replicated block storage: generic netlink ABI.
 *
 * This header is the only definition of the commands, attributes and
 * enums spoken between chorus.ko and userspace (chorusd, chorusctl).
 * Attribute numbers are ABI: append only, never renumber.
 *
 * Documentation/netlink-abi.rst describes every command.
 */
#ifndef _UAPI_LINUX_CHORUS_H
#define _UAPI_LINUX_CHORUS_H

#include <linux/types.h>

#define CHORUS_GENL_NAME		"chorus"
#define CHORUS_GENL_VERSION		1
#define CHORUS_GENL_MCGRP_EVENTS	"events"

/* Limits, including the terminating NUL for strings. */
#define CHORUS_VOLUME_NAME_MAX		64
#define CHORUS_BACKING_PATH_MAX		256
#define CHORUS_UUID_LEN			16
#define CHORUS_DISK_NAME_MAX		32	/* "chorusN", the kernel's DISK_NAME_LEN */

/**
 * enum chorus_cmd - generic netlink commands of the "chorus" family
 * @CHORUS_CMD_UNSPEC: unused
 * @CHORUS_CMD_VOLUME_CREATE: create a volume on a backing block device.
 *	Requires %CHORUS_A_VOLUME_NAME and %CHORUS_A_BACKING_PATH; optional
 *	%CHORUS_A_SIZE_BYTES (default: the backing device's size),
 *	%CHORUS_A_BLOCK_SIZE (default: the backing device's logical block
 *	size) and %CHORUS_A_UUID (default: random). Replies with the volume
 *	as %CHORUS_CMD_VOLUME_GET does. Needs CAP_NET_ADMIN.
 * @CHORUS_CMD_VOLUME_DESTROY: destroy the volume named by
 *	%CHORUS_A_VOLUME_NAME; fails with -EBUSY while it is open.
 *	Needs CAP_NET_ADMIN.
 * @CHORUS_CMD_VOLUME_GET: doit: the volume named by %CHORUS_A_VOLUME_NAME;
 *	dumpit: every volume. Open to every user.
 * @CHORUS_CMD_EVENT: multicast on the "events" group only: a volume was
 *	created, destroyed or changed state. Carries %CHORUS_A_EVENT and
 *	the volume's attributes as %CHORUS_CMD_VOLUME_GET does.
 * @__CHORUS_CMD_MAX: internal
 * @CHORUS_CMD_MAX: highest command number
 */
enum chorus_cmd {
	CHORUS_CMD_UNSPEC,
	CHORUS_CMD_VOLUME_CREATE,
	CHORUS_CMD_VOLUME_DESTROY,
	CHORUS_CMD_VOLUME_GET,
	CHORUS_CMD_EVENT,

	__CHORUS_CMD_MAX,
	CHORUS_CMD_MAX = __CHORUS_CMD_MAX - 1
};

/**
 * enum chorus_attr - top-level attributes of the "chorus" family
 * @CHORUS_A_UNSPEC: unused
 * @CHORUS_A_PAD: padding for 64-bit attributes
 * @CHORUS_A_VOLUME_NAME: NUL-terminated string, 1..63 characters of
 *	[A-Za-z0-9._-], not starting with '.'; unique per node
 * @CHORUS_A_BACKING_PATH: NUL-terminated absolute path of a block device
 * @CHORUS_A_SIZE_BYTES: u64, volume size in bytes, a multiple of the
 *	block size and at most the backing device's size
 * @CHORUS_A_BLOCK_SIZE: u32, logical block size: 512, 1024, 2048 or 4096
 *	and at least the backing device's logical block size
 * @CHORUS_A_UUID: binary, %CHORUS_UUID_LEN bytes, the volume's identity
 * @CHORUS_A_MINOR: u32, first minor of the volume's block device
 * @CHORUS_A_DISK_NAME: string, kernel name of the block device ("chorus0")
 * @CHORUS_A_STATE: u32, &enum chorus_volume_state
 * @CHORUS_A_EVENT: u32, &enum chorus_event (events only)
 * @CHORUS_A_OPEN_COUNT: u32, how many times the block device is open
 * @CHORUS_A_STATS: nested, &enum chorus_stat_attr
 * @__CHORUS_A_MAX: internal
 * @CHORUS_A_MAX: highest attribute number
 */
enum chorus_attr {
	CHORUS_A_UNSPEC,
	CHORUS_A_PAD,
	CHORUS_A_VOLUME_NAME,
	CHORUS_A_BACKING_PATH,
	CHORUS_A_SIZE_BYTES,
	CHORUS_A_BLOCK_SIZE,
	CHORUS_A_UUID,
	CHORUS_A_MINOR,
	CHORUS_A_DISK_NAME,
	CHORUS_A_STATE,
	CHORUS_A_EVENT,
	CHORUS_A_OPEN_COUNT,
	CHORUS_A_STATS,

	__CHORUS_A_MAX,
	CHORUS_A_MAX = __CHORUS_A_MAX - 1
};

/**
 * enum chorus_stat_attr - per-volume counters, nested in %CHORUS_A_STATS
 *
 * All are u64 and count since the volume was created.
 * @CHORUS_STAT_UNSPEC: unused
 * @CHORUS_STAT_PAD: padding
 * @CHORUS_STAT_READS: completed read requests
 * @CHORUS_STAT_READ_BYTES: bytes read
 * @CHORUS_STAT_WRITES: completed write requests
 * @CHORUS_STAT_WRITE_BYTES: bytes written
 * @CHORUS_STAT_FLUSHES: completed flush requests
 * @CHORUS_STAT_FUA_WRITES: completed writes that carried FUA
 * @CHORUS_STAT_DISCARDS: completed discard requests
 * @CHORUS_STAT_WRITE_ZEROES: completed write-zeroes requests
 * @CHORUS_STAT_ERRORS: requests completed with an error
 * @__CHORUS_STAT_MAX: internal
 * @CHORUS_STAT_MAX: highest counter number
 */
enum chorus_stat_attr {
	CHORUS_STAT_UNSPEC,
	CHORUS_STAT_PAD,
	CHORUS_STAT_READS,
	CHORUS_STAT_READ_BYTES,
	CHORUS_STAT_WRITES,
	CHORUS_STAT_WRITE_BYTES,
	CHORUS_STAT_FLUSHES,
	CHORUS_STAT_FUA_WRITES,
	CHORUS_STAT_DISCARDS,
	CHORUS_STAT_WRITE_ZEROES,
	CHORUS_STAT_ERRORS,

	__CHORUS_STAT_MAX,
	CHORUS_STAT_MAX = __CHORUS_STAT_MAX - 1
};

/**
 * enum chorus_volume_state - what a volume can do now
 * @CHORUS_VOLUME_STATE_UNSPEC: unused
 * @CHORUS_VOLUME_STATE_ONLINE: serving I/O
 * @CHORUS_VOLUME_STATE_FAILED: the backing device returned an I/O error;
 *	the volume keeps passing I/O through and reports each error
 * @__CHORUS_VOLUME_STATE_MAX: internal
 */
enum chorus_volume_state {
	CHORUS_VOLUME_STATE_UNSPEC,
	CHORUS_VOLUME_STATE_ONLINE,
	CHORUS_VOLUME_STATE_FAILED,

	__CHORUS_VOLUME_STATE_MAX,
};

/**
 * enum chorus_event - what a %CHORUS_CMD_EVENT announces
 * @CHORUS_EVENT_UNSPEC: unused
 * @CHORUS_EVENT_VOLUME_CREATED: a volume was created
 * @CHORUS_EVENT_VOLUME_DESTROYED: a volume was destroyed
 * @CHORUS_EVENT_VOLUME_STATE: a volume's %CHORUS_A_STATE changed
 * @__CHORUS_EVENT_MAX: internal
 */
enum chorus_event {
	CHORUS_EVENT_UNSPEC,
	CHORUS_EVENT_VOLUME_CREATED,
	CHORUS_EVENT_VOLUME_DESTROYED,
	CHORUS_EVENT_VOLUME_STATE,

	__CHORUS_EVENT_MAX,
};

#endif /* _UAPI_LINUX_CHORUS_H */
