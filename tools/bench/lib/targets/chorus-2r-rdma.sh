# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "chorus-2r-rdma": chorus-2r (same nodes, disks, uuid, roles, no initial sync, same
# health check) with both peers added with `--transport rdma`: RDMA only, no TCP fallback, so
# a session can only come up over RDMA. Setup also fails, naming what it found, unless each
# node's `volume status --json` shows the other with active_transport "rdma" once connected;
# the check is repeated after every row.
# As for nvmet-rdma-ram, the RDMA device is found from the node's address (rdma_cm): in the lab
# soft-RoCE rxe0 on eth0, on real machines BENCH_ADDRS must be the RoCE interfaces' addresses.
# shellcheck source-path=SCRIPTDIR source=chorus-2r.sh
source "$BENCH_LIB/targets/chorus-2r.sh"   # chorus_2r_* (target_* redefined below)

target_check() {
	chorus_2r_check || return 1
	"$ROOT/build/bin/chorusctl" peer add --help 2>&1 | grep -q -- --transport ||
		{ echo "not available: this chorusctl has no RDMA transport (peer add --transport)"; return 1; }
	local n
	for n in 1 2; do
		on "$n" -- "rdma link show | grep -q ." || { echo "no RDMA device on node $n"; return 1; }
	done
}

# chorus_2r_rdma_jq NODE: jq filter of `volume status --json` on NODE giving the other node's
# "ACTIVE_TRANSPORT (paths: TRANSPORT active=… sessions=… msgs_sent=…; …)".
chorus_2r_rdma_jq() {
	printf '.peers[] | select(.node_id == %s) | "%s"' $((3 - $1)) \
		'\(.active_transport) (paths: \([.paths[] | "\(.transport) active=\(.active) sessions=\(.sessions) msgs_sent=\(.msgs_sent)"] | join("; ")))'
}

# chorus_2r_rdma_check_transport: fails unless each node sees the other's session carried by
# RDMA (`.peers[].active_transport`), printing what it shows instead; logs the paths.
chorus_2r_rdma_check_transport() {
	local n t
	for n in 1 2; do
		t=$(on "$n" -- "build/bin/chorusctl --json volume status bench | jq -r '$(chorus_2r_rdma_jq "$n")'") ||
			{ bench_log "chorus-2r-rdma: cannot read node $n's volume status"; return 1; }
		if [[ $t != "rdma "* ]]; then
			bench_log "chorus-2r-rdma: node $n's session to node $((3 - n)) is carried by '${t%% *}', not rdma; ${t#* }"
			on "$n" -- "build/bin/chorusctl volume status bench" >&2 || true
			return 1
		fi
		bench_log "chorus-2r-rdma: node $n -> node $((3 - n)): active transport $t"
	done
}

target_setup() {
	chorus_2r_setup --transport rdma
	chorus_2r_rdma_check_transport
}

target_check_healthy() {
	chorus_2r_healthy && chorus_2r_rdma_check_transport
}
