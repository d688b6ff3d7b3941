# shellcheck shell=bash
# Target "nvmet-rdma-ram": plain nvmet-rdma exporting a ramdisk of node 1, fio on node 2: the link's own cost.
# shellcheck source-path=SCRIPTDIR source=../nvmet-plain.sh
source "$BENCH_LIB/nvmet-plain.sh"

target_check() { nvmet_plain_check rdma ram; }
target_setup() { nvmet_plain_setup rdma ram; }
target_teardown() { nvmet_plain_teardown; }
