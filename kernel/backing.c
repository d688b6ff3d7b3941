// SPDX-License-Identifier: GPL-2.0
/*
 * chorus - replicated block storage: the local replica, a lower block
 * device opened exclusively by its volume.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/string.h>
#include <net/netlink.h>

#include "chorus.h"

/* NL_SET_ERR_MSG() takes string literals only, hence one call per case. */
static void chorus_backing_open_error(int err, struct netlink_ext_ack *extack)
{
	switch (err) {
	case -ENOENT:
		NL_SET_ERR_MSG(extack, "backing device does not exist");
		break;
	case -ENOTBLK:
		NL_SET_ERR_MSG(extack, "backing path is not a block device");
		break;
	case -EBUSY:
		NL_SET_ERR_MSG(extack,
			       "backing device is in use (mounted, or held by another volume or program)");
		break;
	case -EACCES:
	case -EROFS:
		NL_SET_ERR_MSG(extack, "backing device is read-only");
		break;
	case -ENXIO:
		NL_SET_ERR_MSG(extack, "backing device is gone");
		break;
	default:
		NL_SET_ERR_MSG(extack, "cannot open the backing device");
		break;
	}
}

/**
 * chorus_backing_open() - open and claim a volume's backing device
 * @backing: filled on success
 * @path: absolute path of a block device
 * @holder: exclusive holder cookie, the volume
 * @extack: where to say what was wrong
 *
 * Context: process context.
 * Return: 0, or a negative errno with a message in @extack.
 */
int chorus_backing_open(struct chorus_backing *backing, const char *path,
			void *holder, struct netlink_ext_ack *extack)
{
	const fmode_t mode = FMODE_READ | FMODE_WRITE | FMODE_EXCL;
	struct block_device *bdev;

	if (path[0] != '/') {
		NL_SET_ERR_MSG(extack, "backing path must be absolute");
		return -EINVAL;
	}

	bdev = blkdev_get_by_path(path, mode, holder);
	if (IS_ERR(bdev)) {
		chorus_backing_open_error(PTR_ERR(bdev), extack);
		return PTR_ERR(bdev);
	}

	if (bdev_is_zoned(bdev)) {
		blkdev_put(bdev, mode);
		NL_SET_ERR_MSG(extack, "zoned backing devices are not supported");
		return -EINVAL;
	}

	backing->bdev = bdev;
	backing->mode = mode;
	strscpy(backing->path, path, sizeof(backing->path));
	return 0;
}

/**
 * chorus_backing_close() - release a backing device
 * @backing: opened by chorus_backing_open()
 *
 * Context: process context, no I/O in flight on @backing.
 */
void chorus_backing_close(struct chorus_backing *backing)
{
	blkdev_put(backing->bdev, backing->mode);
	backing->bdev = NULL;
}
