/* SPDX-License-Identifier: GPL-2.0 */
/* Stand-in for the kernel's <linux/blk_types.h> (tests/fuzz). */
#ifndef CHORUS_FUZZ_LINUX_BLK_TYPES_H
#define CHORUS_FUZZ_LINUX_BLK_TYPES_H

#define SECTOR_SHIFT 9
#define SECTOR_SIZE (1 << SECTOR_SHIFT)

#endif
