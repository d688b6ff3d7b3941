# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "chorus-2r": a 2-replica chorus volume, owner on node 1, replica on node 2, both over
# their backing disks, fio on node 1. Skipped until chorusctl can create a replicated volume.
# The replication work fills in target_setup with the real command line.
# shellcheck source-path=SCRIPTDIR source=chorus-local.sh
source "$BENCH_LIB/targets/chorus-local.sh"   # chorus_insmod (its target_* are redefined below)

target_check() {
	[[ -e $ROOT/chorus.ko && -x $ROOT/build/bin/chorusctl ]] ||
		{ echo "chorus.ko or build/bin/chorusctl missing: run make"; return 1; }
	"$ROOT/build/bin/chorusctl" volume create --help 2>&1 | grep -q -- --peer ||
		{ echo "not available yet: replication is not built"; return 1; }
}

target_setup() {
	FIO_NODE=1
	chorus_insmod 1
	chorus_insmod 2
	# Replica first, then the owner that connects to it (adjust to the real CLI when it lands).
	on 2 -- "build/bin/chorusctl volume create bench --backing $BENCH_DISK --peer $(addr 1)"
	on 1 -- "build/bin/chorusctl volume create bench --backing $BENCH_DISK --peer $(addr 2)"
	FIO_DEV=/dev/chorus0
	on 1 -- "test -b $FIO_DEV"
}

target_teardown() {
	local n
	for n in 1 2; do
		on "$n" -- "build/bin/chorusctl volume destroy bench >/dev/null; rmmod chorus" || true
	done
}
