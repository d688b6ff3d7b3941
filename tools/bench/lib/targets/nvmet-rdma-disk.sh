# shellcheck shell=bash
# Target "nvmet-rdma-disk": plain nvmet-rdma exporting node 2's backing disk, fio on node 1: the floor of a replicated write.
# shellcheck source-path=SCRIPTDIR source=../nvmet-plain.sh
source "$BENCH_LIB/nvmet-plain.sh"

target_check() { nvmet_plain_check rdma disk; }
target_setup() { nvmet_plain_setup rdma disk; }
target_teardown() { nvmet_plain_teardown; }
