/* SPDX-License-Identifier: GPL-2.0 */
/* Stand-in for the kernel's <linux/mm.h> (tests/fuzz): x86-64's page. */
#ifndef CHORUS_FUZZ_LINUX_MM_H
#define CHORUS_FUZZ_LINUX_MM_H

#define PAGE_SIZE 4096UL

#endif
