// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_state: a STATE's payload, the owner's activity log, as a replica
 * checks it before it stores the block (chorus_al_store()) and later marks
 * its extents in the bitmaps (actlog.c). Input: a control byte (bit 0:
 * seal the block's crc), the volume's geometry, the header's epoch, the
 * peer's node id, the 4096-byte block.
 */
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_selftest();
	return 0;
}

static struct chorus_meta_al block;

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct chorus_wire_hdr hdr;
	struct fuzz_geom g;
	u32 owner, i, nr;
	bool ok;
	u8 ctl;
	u64 e;

	ctl = fuzz_u8(&in);
	fuzz_geom_take(&in, &g);
	chorus_wire_init_hdr(&hdr, CHORUS_MSG_STATE, fuzz_u64(&in), 0, 0, 0);
	owner = fuzz_u32(&in);
	fuzz_take(&in, &block, sizeof(block));
	if (ctl & 1)
		block.crc = cpu_to_le32(spec_crc32c(&block,
						    offsetof(struct chorus_meta_al, crc)));

	ok = !chorus_wire_check_state(&block, &hdr, g.al_extents, owner);
	FUZZ_CHECK(ok == spec_state_ok(&block, le64_to_cpu(hdr.epoch),
				       g.al_extents, owner),
		   "state check says %s, the page the opposite", ok ? "ok" : "bad");
	if (!ok)
		return 0;
	/* chorus_al_mark_peer(), chorus_al_mark_block() */
	nr = le32_to_cpu(block.nr_extents);
	FUZZ_CHECK(nr <= CHORUS_META_AL_MAX_EXTENTS, "nr_extents %u", nr);
	for (i = 0; i < nr; i++) {
		e = le32_to_cpu(block.extents[i]);
		FUZZ_CHECK((e << g.al_shift) < g.nr_sectors,
			   "extent %llu starts past the volume",
			   (unsigned long long)e);
	}
	return 0;
}
