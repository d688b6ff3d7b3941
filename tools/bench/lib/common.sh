# shellcheck shell=bash disable=SC2034   # (variables used by the files sourcing this one)
# Helpers of tools/bench/run: running commands on the two nodes, the fio rows, one measured run.

bench_log() { printf 'bench: %s\n' "$*" >&2; }
bench_die() { bench_log "error: $*"; exit 1; }

# The two nodes. In the lab they are vm1 and vm2 (10.99.0.1/2, disk /dev/vdb, rxe0). On real
# machines set BENCH_HOSTS="host1 host2" (ssh, root, this checkout at the same path on both)
# and BENCH_ADDRS / BENCH_DISK to their replication addresses and the disk to use.
BENCH_ADDRS=${BENCH_ADDRS:-10.99.0.1 10.99.0.2}
BENCH_DISK=${BENCH_DISK:-/dev/vdb}
read -r -a NODE_ADDR <<<"$BENCH_ADDRS"
read -r -a NODE_HOST <<<"${BENCH_HOSTS:-}"

# on N [--timeout S] -- CMD: run a shell command line on node N (1 or 2) as root, in $ROOT.
on() {
	local n=$1 t=600
	shift
	if [[ $1 == --timeout ]]; then t=$2; shift 2; fi
	[[ $1 == -- ]] && shift
	if ((${#NODE_HOST[@]})); then
		timeout -k 5 "$t" ssh -o BatchMode=yes "root@${NODE_HOST[n - 1]}" \
			"cd $(printf '%q' "$ROOT") && bash -c $(printf '%q' "$1")"
	else
		"$LAB" run "$n" --timeout "$t" -- "$1"
	fi
}

# Node N's address on the replication / fabric network.
addr() { printf '%s' "${NODE_ADDR[$1 - 1]}"; }

# The rows: name -> fio arguments. ROW_ORDER is the default order of the run and the report.
ROW_ORDER=(randwrite-4k-qd1 randwrite-4k-qd32 randread-4k-qd32 seqwrite-256k-qd8 randrw-8k-qd16)
declare -A ROW_ARGS=(
	[randwrite-4k-qd1]="--rw=randwrite --bs=4k --iodepth=1"
	[randwrite-4k-qd32]="--rw=randwrite --bs=4k --iodepth=32"
	[randread-4k-qd32]="--rw=randread --bs=4k --iodepth=32"
	[seqwrite-256k-qd8]="--rw=write --bs=256k --iodepth=8"
	[randrw-8k-qd16]="--rw=randrw --rwmixread=50 --bs=8k --iodepth=16"
)

# fio_cmd DEV ROW RUNTIME: the fio command line of one run (JSON on stdout).
fio_cmd() {
	printf 'fio --name=%s --filename=%s --direct=1 --ioengine=libaio --numjobs=1 ' "$2" "$1"
	printf -- '--size=%s --offset=0 --time_based --runtime=%s ' "$BENCH_SIZE" "$3"
	printf -- '--randrepeat=0 --norandommap --output-format=json %s' "${ROW_ARGS[$2]}"
}

# sampled_run NODE DEV ROW RUNTIME OUTPREFIX SAMPLER: one fio run on NODE while both nodes run
# SAMPLER over its middle: "cpustat" (lib/cpustat, OUTPREFIX.cpu-vmN), "perf" (a flat profile,
# OUTPREFIX.profile-vmN) or "sched" (lib/schedtrace, OUTPREFIX.sched-vmN). Writes OUTPREFIX.json
# and OUTPREFIX.stderr.
sampled_run() {
	local node=$1 dev=$2 row=$3 rt=$4 out=$5 sampler=$6 margin window n cmd suffix t0 pids=() rc=0
	margin=$((rt >= 8 ? 2 : (rt + 3) / 4))
	window=$((rt - 2 * margin))
	((window >= 1)) || bench_die "runtime $rt s is too short to sample over its middle"
	if [[ $sampler == cpustat ]]; then
		cmd="sh tools/bench/lib/cpustat $margin $window" suffix=cpu
	elif [[ $sampler == sched ]]; then
		cmd="sh ${BENCH_SCHEDTRACE:-tools/bench/lib/schedtrace} $margin $window" suffix=sched
	elif [[ $sampler == insn ]]; then
		suffix=insn
	elif [[ $sampler == hostprof ]]; then
		((${#NODE_HOST[@]} == 0)) || bench_die "a host profile needs the lab (TCG), not BENCH_HOSTS"
		suffix=hostprof
	else
		cmd="sleep $margin
			perf record -q -e cpu-clock -a -o /tmp/bench-perf.data -- sleep $window >/dev/null 2>&1 &&
			perf report -q -i /tmp/bench-perf.data --stdio --sort dso,sym --percent-limit 0.01 |
				grep -v '^\$' | head -300; rc=\$?; rm -f /tmp/bench-perf.data; exit \$rc"
		suffix=profile
	fi
	for n in 1 2; do
		if [[ $sampler == hostprof ]]; then
			break	# the host's side, below; the guests sample nothing
		elif [[ $sampler == insn ]]; then
			insn_window "$n" "$margin" "$window" "$out.$suffix-vm$n" &
		else
			on "$n" --timeout $((rt + 300)) -- "$cmd" > "$out.$suffix-vm$n" 2>&1 &
		fi
		pids+=($!)
	done
	# On the host too (a lab, not BENCH_HOSTS): the qemu threads' CPU time over the same window.
	if [[ $sampler == cpustat ]] && ((${#NODE_HOST[@]} == 0)); then
		sh "$BENCH_LIB/hoststat" "$margin" "$window" "$CHORUS_LAB_DIR"/vm{1,2}/qemu.pid \
			> "$out.host" 2>&1 &
		pids+=($!)
	elif [[ $sampler == hostprof ]]; then
		sh "$BENCH_LIB/hostprof" "$margin" "$window" "$out" \
			"$CHORUS_LAB_DIR"/vm{1,2}/qemu.pid > "$out.hostprof.log" 2>&1 &
		pids+=($!)
	fi
	t0=$(date +%s.%N)
	on "$node" --timeout $((rt + 300)) -- "$(fio_cmd "$dev" "$row" "$rt")" \
		> "$out.json" 2> "$out.stderr" || rc=$?
	echo "$(date +%s.%N) - $t0" | bc > "$out.host-seconds"
	for n in "${pids[@]}"; do wait "$n" || rc=1; done
	return "$rc"
}

# clock_ran_ahead OUTPREFIX RUNTIME: true when a run of RUNTIME seconds, time-based by the
# guest's clock, took less than 90 % of that in host time (OUTPREFIX.host-seconds): the
# guest's clock jumped during it (seen once under TCG, stop 53) and its I/O rate is wrong.
clock_ran_ahead() {
	local host
	host=$(cat "$1.host-seconds" 2>/dev/null) || return 1
	[[ $(echo "$host < 0.9 * $2" | bc) == 1 ]]
}

# measure NODE DEV ROW RUNTIME OUTPREFIX: one measured fio run on NODE, while both nodes sample
# their CPU time in the middle of it (lib/cpustat), and the host its qemu threads' (lib/hoststat).
measure() { sampled_run "$@" cpustat; }

# profile NODE DEV ROW RUNTIME OUTPREFIX: one more fio run, not counted in the figures, with a
# flat CPU profile of both nodes over its middle (perf's cpu-clock: TCG has no PMU): the 300
# symbols with the most samples (above 0.01 %), with their module ([chorus], [drbd],
# [kernel.kallsyms], ...). Under TCG most samples land in the idle loop whatever the load
# (stop 50: 97 % in native_safe_halt on a guest /proc/stat called half busy), so the report
# counts the busy samples only; for real machines.
profile() { sampled_run "$@" perf; }

# insn_window NODE MARGIN WINDOW OUT: NODE's guest instruction counts over WINDOW seconds after
# MARGIN (the lab booted with tools/vm/insn-profile's plugin): OUT.kallsyms (read first, during
# the margin), OUT.before, OUT.after, OUT.times (when each was asked for, in seconds since the
# epoch); tools/vm/insn-profile/report makes a profile of them.
insn_window() {
	local n=$1 margin=$2 window=$3 out=$4 snap=$ROOT/tools/vm/insn-profile/snap t0
	t0=$(date +%s.%N)
	on "$n" -- "cat /proc/kallsyms" > "$out.kallsyms" || return 1
	sleep "$(echo "$margin - ($(date +%s.%N) - $t0)" | bc | sed 's/^-.*/0/')"
	date +%s.%N > "$out.times"
	"$snap" "$CHORUS_LAB_DIR" "$n" "$out.before" || return 1
	sleep "$window"
	date +%s.%N >> "$out.times"
	"$snap" "$CHORUS_LAB_DIR" "$n" "$out.after"
}

# insn NODE DEV ROW RUNTIME OUTPREFIX: one more fio run, not counted in the figures, with both
# guests' instructions counted by code address over its middle (insn_window): where the CPU
# goes under TCG, which sampling cannot show (tools/vm/insn-profile/README.md).
insn() { sampled_run "$@" insn; }

# trace NODE DEV ROW RUNTIME OUTPREFIX: one more fio run, not counted in the figures, with the
# scheduler's switches (by the thread switched to) and the work items run (by function) counted
# on both nodes over its middle (lib/schedtrace): which threads and work items each I/O wakes.
trace() { sampled_run "$@" sched; }

# hostprofile NODE DEV ROW RUNTIME OUTPREFIX: one more fio run, not counted in the figures, with
# a flat profile of both VMs' qemu processes on the host over its middle (lib/hostprof:
# OUTPREFIX.hostprof.vmN; lib/hostprof-report summarises them per I/O).
hostprofile() { sampled_run "$@" hostprof; }
