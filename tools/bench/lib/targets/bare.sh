# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "bare": the backing disk of node 1 itself, the reference of every ratio.
#
# Every file in this directory defines the same three functions (run sources one file per
# target, in a subshell of its own):
#   target_check     exit 0 if the target can run here; else print why and exit non-zero
#   target_setup     bring it up; set FIO_NODE (1 or 2) and FIO_DEV (the device fio runs on)
#   target_teardown  undo target_setup, best effort, also after a half-done setup

target_check() { :; }

target_setup() {
	FIO_NODE=1
	FIO_DEV=$BENCH_DISK
	on 1 -- "test -b $FIO_DEV"
}

target_teardown() { :; }
