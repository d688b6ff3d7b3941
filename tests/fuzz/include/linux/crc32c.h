/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stand-in for the kernel's <linux/crc32c.h> (tests/fuzz): the same
 * contract, the running Castagnoli crc without the final inversion;
 * kshim.c computes it, and checks itself against the documented values.
 */
#ifndef CHORUS_FUZZ_LINUX_CRC32C_H
#define CHORUS_FUZZ_LINUX_CRC32C_H

#include <linux/types.h>

u32 crc32c(u32 crc, const void *address, unsigned int length);

#endif
