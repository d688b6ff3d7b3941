// SPDX-License-Identifier: GPL-2.0
/*
 * The two kernel library functions that kernel/wire.c needs, for the
 * fuzzers: crc32c() and memchr_inv(), with the kernel's contracts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <linux/crc32c.h>
#include <linux/string.h>

#include "fuzz.h"

static u32 crc32c_table[256];

static void crc32c_init(void)
{
	u32 i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78U : c >> 1;
		crc32c_table[i] = c;
	}
}

u32 crc32c(u32 crc, const void *address, unsigned int length)
{
	const u8 *p = address;

	if (!crc32c_table[1])
		crc32c_init();
	while (length--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

void *memchr_inv(const void *start, int c, size_t bytes)
{
	const u8 *p = start;

	for (; bytes; p++, bytes--)
		if (*p != (u8)c)
			return (void *)p;
	return NULL;
}

/*
 * The worked example of Documentation/wire-protocol.rst: a 4 KiB FUA
 * WRITE and its WRITE_ACK, whose hdr_crc the page gives.
 */
static const u8 doc_write[64] = {
	0x43, 0x48, 0x4f, 0x52, 0x01, 0x03, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x3e, 0xc1, 0xb8, 0xaa,
};

/**
 * fuzz_selftest() - check the stand-ins before fuzzing with them
 *
 * A wrong crc32c would make every sealed header the fuzzers build one the
 * kernel would refuse, and the fuzzers would test nothing.
 */
void fuzz_selftest(void)
{
	struct chorus_wire_hdr hdr;
	const char *why;

	FUZZ_CHECK(~crc32c(~0U, "123456789", 9) == 0xe3069283U &&
		   spec_crc32c("123456789", 9) == 0xe3069283U,
		   "crc32c of \"123456789\" is not the documented one");
	memcpy(&hdr, doc_write, sizeof(hdr));
	FUZZ_CHECK(!chorus_wire_check_hdr(&hdr, &why),
		   "the documented WRITE is refused: bad %s", why);
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_WRITE, 7, 42, 2048, 4096);
	hdr.flags = cpu_to_le16(CHORUS_MSG_F_FUA);
	hdr.payload_len = cpu_to_le32(4096);
	chorus_wire_seal(&hdr);
	FUZZ_CHECK(!memcmp(&hdr, doc_write, sizeof(hdr)),
		   "chorus_wire_seal() does not build the documented WRITE");
	FUZZ_CHECK(memchr_inv(doc_write, 0, 4) == doc_write &&
		   !memchr_inv(doc_write + 56, 0, 8), "memchr_inv()");
}
