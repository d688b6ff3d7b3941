# shellcheck shell=bash
# Target "nvmet-tcp-ram": plain nvmet-tcp exporting a ramdisk of node 1, fio on node 2: the link's own cost.
# shellcheck source-path=SCRIPTDIR source=../nvmet-plain.sh
source "$BENCH_LIB/nvmet-plain.sh"

target_check() { nvmet_plain_check tcp ram; }
target_setup() { nvmet_plain_setup tcp ram; }
target_teardown() { nvmet_plain_teardown; }
