# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "nvmet-rdma-ram": plain nvmet-rdma exporting a ramdisk of node 1, fio on node 2.
# shellcheck source-path=SCRIPTDIR source=../nvmet-ram.sh
source "$BENCH_LIB/nvmet-ram.sh"

target_check() {
	on 1 -- "modinfo -F name nvmet-rdma brd >/dev/null" || { echo "nvmet-rdma or brd module missing"; return 1; }
	on 1 -- "rdma link show | grep -q ." || { echo "no RDMA device on node 1"; return 1; }
}

target_setup() { nvmet_ram_setup rdma; }
target_teardown() { nvmet_ram_teardown; }
