# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "chorus-local": a single-node chorus volume on node 1 over its backing disk.

# chorus_insmod NODE: load chorus.ko of this checkout with its dependencies.
chorus_insmod() {
	on "$1" -- "lsmod | grep -q '^chorus ' || $ROOT/tools/insmod-chorus"
}

# chorus_format NODE [OPTIONS]: fresh chorus metadata on the node's backing disk.
chorus_format() {
	local n=$1
	shift
	on "$n" -- "build/bin/chorusctl volume format --backing $BENCH_DISK --force $* >/dev/null"
}

target_check() {
	[[ -e $ROOT/chorus.ko && -x $ROOT/build/bin/chorusctl ]] ||
		{ echo "chorus.ko or build/bin/chorusctl missing: run make"; return 1; }
}

target_setup() {
	FIO_NODE=1
	chorus_insmod 1
	chorus_format 1
	FIO_DEV=$(on 1 -- "build/bin/chorusctl --json volume create bench --backing $BENCH_DISK" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["device"])')
	on 1 -- "test -b $FIO_DEV"
}

target_teardown() {
	on 1 -- "build/bin/chorusctl volume destroy bench >/dev/null; rmmod chorus" || true
}
