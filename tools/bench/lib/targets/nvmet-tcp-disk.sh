# shellcheck shell=bash
# Target "nvmet-tcp-disk": plain nvmet-tcp exporting node 2's backing disk, fio on node 1: the floor of a replicated write.
# shellcheck source-path=SCRIPTDIR source=../nvmet-plain.sh
source "$BENCH_LIB/nvmet-plain.sh"

target_check() { nvmet_plain_check tcp disk; }
target_setup() { nvmet_plain_setup tcp disk; }
target_teardown() { nvmet_plain_teardown; }
