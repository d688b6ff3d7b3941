/* SPDX-License-Identifier: GPL-2.0 */
/* Stand-in for the kernel's <linux/string.h> (tests/fuzz). */
#ifndef CHORUS_FUZZ_LINUX_STRING_H
#define CHORUS_FUZZ_LINUX_STRING_H

#include <string.h>

void *memchr_inv(const void *start, int c, size_t bytes);

#endif
