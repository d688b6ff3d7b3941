# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "chorus-2r-rdma-read": chorus-2r-rdma (RDMA only, same nodes, disks, roles, checks) with
# chorus loaded with `rdma_data=read` on both nodes: data moves by RDMA READ of FRWR-registered
# pages instead of SEND into posted buffers (Documentation/rdma.rst). Setup fails unless both
# nodes report that data path (debugfs chorus_rdma); the READ counters are logged after setup
# and checked after every row (the owner's messages did go by READ).
# shellcheck source-path=SCRIPTDIR source=chorus-2r-rdma.sh
source "$BENCH_LIB/targets/chorus-2r-rdma.sh"   # chorus-2r-rdma's target_* (check/teardown kept)

# chorus-2r-rdma-send sets it to send before sourcing this file.
CHORUS_RDMA_DATA=${CHORUS_RDMA_DATA:-read}
CHORUS_RDMA_STATS="{ mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; } && cat /sys/kernel/debug/chorus_rdma"

# chorus_insmod NODE (replaces chorus-local.sh's): load chorus.ko with rdma_data=read (or
# $CHORUS_RDMA_DATA); fails if a chorus with another data path is loaded already.
chorus_insmod() {
	local m=$CHORUS_RDMA_DATA
	on "$1" -- "lsmod | grep -q '^chorus ' || $ROOT/tools/insmod-chorus rdma_data=$m"
	on "$1" -- "grep -qx $m /sys/module/chorus/parameters/rdma_data" ||
		{ bench_log "chorus-2r-rdma-$m: node $1's chorus is not loaded with rdma_data=$m"; return 1; }
}

# chorus_2r_rdma_read_check [after-row]: both nodes are on the READ data path; after a row, the
# owner has sent messages by READ too (with rdma_data=read; auto READs large writes only). Logs
# the counters.
chorus_2r_rdma_read_check() {
	local s1 s2 msgs
	s1=$(on 1 -- "$CHORUS_RDMA_STATS" | tr '\n' ' ') || return 1
	s2=$(on 2 -- "$CHORUS_RDMA_STATS" | tr '\n' ' ') || return 1
	bench_log "chorus-2r-rdma-$CHORUS_RDMA_DATA: node 1: $s1; node 2: $s2"
	[[ $s1 == *"data_path $CHORUS_RDMA_DATA"* && $s2 == *"data_path $CHORUS_RDMA_DATA"* ]] ||
		{ bench_log "chorus-2r-rdma-$CHORUS_RDMA_DATA: a node is not on that data path"; return 1; }
	[[ ${1:-} == after-row && $CHORUS_RDMA_DATA == read ]] || return 0
	msgs=$(sed -n 's/.*read_msgs \([0-9]*\).*/\1/p' <<<"$s1")
	((${msgs:-0} > 0)) || { bench_log "chorus-2r-rdma-read: node 1 sent nothing by READ"; return 1; }
}

target_setup() {
	chorus_2r_setup --transport rdma
	chorus_2r_rdma_check_transport
	chorus_2r_rdma_read_check
}

target_check_healthy() {
	chorus_2r_healthy && chorus_2r_rdma_check_transport && chorus_2r_rdma_read_check after-row
}
