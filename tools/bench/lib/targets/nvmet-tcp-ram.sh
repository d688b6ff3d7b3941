# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "nvmet-tcp-ram": plain nvmet-tcp exporting a ramdisk of node 1, fio on node 2.
# shellcheck source-path=SCRIPTDIR source=../nvmet-ram.sh
source "$BENCH_LIB/nvmet-ram.sh"

target_check() {
	on 1 -- "modinfo -F name nvmet-tcp brd >/dev/null" || { echo "nvmet-tcp or brd module missing"; return 1; }
}

target_setup() { nvmet_ram_setup tcp; }
target_teardown() { nvmet_ram_teardown; }
