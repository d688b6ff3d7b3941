// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_hdr: one received header, as the TCP and RDMA receive paths check
 * it: chorus_wire_check_hdr(), then chorus_wire_check_range() against a
 * volume (conn.c). Input: a control byte (bit 0: seal the header, so that
 * the fuzzer gets past hdr_crc), the volume's geometry, the 64 bytes.
 */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_selftest();
	return 0;
}

static void check_range(const struct fuzz_geom *g,
			const struct chorus_wire_hdr *hdr)
{
	u64 sector = le64_to_cpu(hdr->sector);
	u32 len = le32_to_cpu(hdr->len);
	const char *why;
	int ret;

	ret = chorus_wire_check_range(g->nr_sectors, g->block_size, hdr, &why);
	FUZZ_CHECK(!ret == !why && (!ret || ret == -EPROTO), "range: %d", ret);
	FUZZ_CHECK(!ret == spec_range_ok(g, hdr),
		   "range check says %s, the page says the opposite (sector %llu len %u, volume %llu sectors of %u)",
		   why ?: "ok", (unsigned long long)sector, len,
		   (unsigned long long)g->nr_sectors, g->block_size);
	if (ret || !spec_type_has_range(hdr->type))
		return;
	/* What a bio built from it covers lies inside the backing device. */
	FUZZ_CHECK(sector < g->nr_sectors &&
		   (len >> 9) <= g->nr_sectors - sector, "outside the volume");
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct chorus_wire_hdr hdr;
	struct fuzz_geom g;
	const char *why;
	u8 ctl;
	int ret;

	ctl = fuzz_u8(&in);
	fuzz_geom_take(&in, &g);
	fuzz_take(&in, &hdr, sizeof(hdr));
	if (ctl & 1)
		chorus_wire_seal(&hdr);

	ret = chorus_wire_check_hdr(&hdr, &why);
	FUZZ_CHECK(!ret == !why && (!ret || ret == -EPROTO), "hdr: %d", ret);
	FUZZ_CHECK(!ret == spec_hdr_ok(&hdr),
		   "header check says %s, the page says the opposite (type %u flags %#x)",
		   why ?: "ok", hdr.type, le16_to_cpu(hdr.flags));
	if (ret)
		return 0;
	fuzz_check_accepted_hdr(&hdr);
	check_range(&g, &hdr);
	return 0;
}
