/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stand-in for the kernel's <linux/types.h>, so that tests/fuzz compiles
 * kernel/wire.c and kernel/rdma_wire.c in userspace: the uapi types from
 * the system's header, the kernel's short names, and the byte order
 * helpers (the fuzzers run on little-endian x86-64 only, like the lab).
 */
#ifndef CHORUS_FUZZ_LINUX_TYPES_H
#define CHORUS_FUZZ_LINUX_TYPES_H

#include_next <linux/types.h>
#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER != __LITTLE_ENDIAN
#error "tests/fuzz assumes a little-endian host"
#endif

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define cpu_to_le16(x) ((__le16)htole16(x))
#define cpu_to_le32(x) ((__le32)htole32(x))
#define cpu_to_le64(x) ((__le64)htole64(x))
#define le16_to_cpu(x) ((u16)le16toh(x))
#define le32_to_cpu(x) ((u32)le32toh(x))
#define le64_to_cpu(x) ((u64)le64toh(x))

#define U32_MAX ((u32)~0U)

#endif
