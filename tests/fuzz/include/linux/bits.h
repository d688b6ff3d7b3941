/* SPDX-License-Identifier: GPL-2.0 */
/* Stand-in for the kernel's <linux/bits.h> (tests/fuzz). */
#ifndef CHORUS_FUZZ_LINUX_BITS_H
#define CHORUS_FUZZ_LINUX_BITS_H

#define BIT(nr) (1UL << (nr))

#endif
