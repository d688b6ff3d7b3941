# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "chorus-2r": a 2-replica chorus volume over kernel TCP, owner on node 1 (node id 1),
# replica on node 2 (node id 2), each over its whole backing disk like chorus-local and drbd;
# fio on /dev/chorus0 of node 1. Every write is acked only when both disks have it.
# The initial sync is skipped: both nodes zero the whole disk (data and metadata area) and
# format it with the same uuid, so the replicas are identical and the peers are added with
# --initial-sync none (no full sync of the disk before the rows, as drbd skips its own).
# Timeouts stay the module's (ping 5 s, request 10 s): more generous than drbd's here (3 s, 6 s).
# chorus-2r-rdma.sh sources this file: the chorus_2r_* functions are shared, the target_*
# functions at the end are chorus-2r's.
# shellcheck source-path=SCRIPTDIR source=chorus-local.sh
source "$BENCH_LIB/targets/chorus-local.sh"   # chorus_insmod, chorus_format (target_* redefined)

CHORUS_2R_UUID=6c0b3e1a-2f4d-4e8b-9a7c-5d1e0f2b3a4c
CHORUS_2R_EPOCH=1

# chorus_2r_check: target_check of chorus-2r (also run by chorus-2r-rdma's).
chorus_2r_check() {
	[[ -e $ROOT/chorus.ko && -x $ROOT/build/bin/chorusctl ]] ||
		{ echo "chorus.ko or build/bin/chorusctl missing: run make"; return 1; }
	"$ROOT/build/bin/chorusctl" peer add --help 2>&1 | grep -q -- --initial-sync ||
		{ echo "not available: this chorusctl has no replication (peer add --initial-sync)"; return 1; }
	on 1 -- "command -v jq >/dev/null" || { echo "jq missing on node 1 (make deps)"; return 1; }
}

# chorus_2r_jq NODE: jq filter of `volume status --json` on NODE giving the other node's
# "CONN_STATE REPL_STATE IN_WRITESET HELD".
chorus_2r_jq() {
	printf '.peers[] | select(.node_id == %s) | "%s"' $((3 - $1)) \
		'\(.conn_state) \(.repl_state) \(.in_writeset) \(.held)'
}

# chorus_2r_wait NODE WANT: wait (100 s at most) until NODE sees the other node's state
# starting with WANT; else print the volume's status and fail.
chorus_2r_wait() {
	on "$1" --timeout 130 -- "for i in \$(seq 100); do
			s=\$(build/bin/chorusctl --json volume status bench | jq -r '$(chorus_2r_jq "$1")')
			case \"\$s\" in \"$2\"*) exit 0 ;; esac
			sleep 1
		done; build/bin/chorusctl volume status bench; exit 1"
}

# chorus_2r_setup [PEER_ADD_OPTIONS...]: target_setup of chorus-2r, the options added to both
# `peer add`s (chorus-2r gives none: the module's default transport, TCP; chorus-2r-rdma gives
# --transport rdma), then $BENCH_PEER_OPTS (an A/B: "--conns 1").
# shellcheck disable=SC2120   # (chorus-2r-rdma.sh passes options)
chorus_2r_setup() {
	local n p opts=${*:+ $*}${BENCH_PEER_OPTS:+ $BENCH_PEER_OPTS}
	FIO_NODE=1
	# Replica first, then the owner; each zeroes its disk, formats with the shared uuid,
	# attaches with its node id, listens on its address and declares the other node.
	for n in 2 1; do
		p=$((3 - n))
		chorus_insmod "$n"
		on "$n" -- "blkdiscard -z $BENCH_DISK"
		chorus_format "$n" --uuid $CHORUS_2R_UUID
		on "$n" -- "set -e; C=build/bin/chorusctl
			\$C volume create bench --backing $BENCH_DISK --node-id $n >/dev/null
			\$C listen $(addr "$n") >/dev/null
			\$C peer add bench $p $(addr "$p") --initial-sync none$opts >/dev/null"
	done
	on 2 -- "build/bin/chorusctl volume role bench replica >/dev/null"
	on 1 -- "build/bin/chorusctl volume role bench owner --epoch $CHORUS_2R_EPOCH >/dev/null"
	for n in 2 1; do
		on "$n" -- "build/bin/chorusctl peer connect bench $((3 - n)) >/dev/null"
	done
	chorus_2r_wait 1 "connected up-to-date true"
	chorus_2r_wait 2 "connected"
	FIO_DEV=$(on 1 -- "build/bin/chorusctl --json volume status bench" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["device"])')
	on 1 -- "test -b $FIO_DEV"
}

# chorus_2r_healthy: target_check_healthy of chorus-2r. Fails (and the run marks the target
# failed) if the replica is not connected, up to date and in the write set any more, or writes
# are held for it.
chorus_2r_healthy() {
	on 1 -- "s=\$(build/bin/chorusctl --json volume status bench | jq -r '$(chorus_2r_jq 1)')
		[ \"\$s\" = 'connected up-to-date true 0' ] || { build/bin/chorusctl volume status bench; exit 1; }"
}

target_check() { chorus_2r_check; }
# shellcheck disable=SC2119   # (no options: TCP)
target_setup() { chorus_2r_setup; }
target_check_healthy() { chorus_2r_healthy; }

target_teardown() {
	local n
	for n in 1 2; do
		on "$n" -- "build/bin/chorusctl unlisten >/dev/null; build/bin/chorusctl volume destroy bench >/dev/null;
			rmmod chorus" || true
	done
}
