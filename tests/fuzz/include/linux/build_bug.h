/* SPDX-License-Identifier: GPL-2.0 */
/* Stand-in for the kernel's <linux/build_bug.h> (tests/fuzz). */
#ifndef CHORUS_FUZZ_LINUX_BUILD_BUG_H
#define CHORUS_FUZZ_LINUX_BUILD_BUG_H

#include <stddef.h>

#define BUILD_BUG_ON(cond) _Static_assert(!(cond), #cond)

#endif
