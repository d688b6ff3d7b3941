/* SPDX-License-Identifier: GPL-2.0 */
/* Stand-in for the kernel's <linux/errno.h> (tests/fuzz). */
#ifndef CHORUS_FUZZ_LINUX_ERRNO_H
#define CHORUS_FUZZ_LINUX_ERRNO_H

#include_next <linux/errno.h>

#endif
