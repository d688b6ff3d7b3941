# shellcheck shell=bash
# Running a command on a VM through the shared lab dir (works on the host and inside guests).
#
# The protocol, in $LAB_DIR/vmN/ (the agent's side is in tools/vm/guest/agent): the submitter
# creates cmd/ID.out and cmd/ID.err empty, writes cmd/ID.sh atomically (by rename) and rings the
# bell (appends to vmN/bell). The agent runs ID.sh, appending to ID.out/ID.err, and writes its
# status to ID.rc. The submitter streams ID.out/ID.err meanwhile, then reads ID.rc and removes
# ID.*. On timeout or interruption it creates ID.kill (and rings): the agent SIGKILLs the
# command's session and removes ID.* itself.

# Build the script text: one argument is a shell command line, several are an argv (quoted).
cmd_text() {
	if (($# == 1)); then
		printf '%s\n' "$1"
	else
		printf '%q ' "$@"
		printf '\n'
	fi
}

# Wait for ID.rc; exit with the command's status, 124 on timeout, 125 if the VM went away.
# Runs as a background process; the tail processes streaming the output follow its pid.
_run_waiter() {
	local vm=$1 id=$2 timeout=$3 dir rc deadline
	dir=$(vm_dir "$vm")/cmd
	# Polling loop: no command substitutions (forks are slow in a TCG guest).
	deadline=$((${EPOCHREALTIME/./} + timeout * 1000000))
	while :; do
		# ID.rc is not written atomically: empty means not yet.
		if [[ -s $dir/$id.rc ]] && read -r rc < "$dir/$id.rc" && [[ -n $rc ]]; then
			exit "$rc"
		fi
		vm_alive "$vm" || { log "vm$vm is gone"; exit 125; }
		if ((${EPOCHREALTIME/./} >= deadline)); then
			: > "$dir/$id.kill"
			echo >> "$dir/../bell"
			log "vm$vm: timeout after ${timeout}s, command killed"
			exit 124
		fi
		nap "$LAB_POLL"
	done
}

# run_on VM TIMEOUT CMD...: run CMD on VM, streaming its stdout/stderr, return its status.
run_on() {
	local vm=$1 timeout=$2 dir id waiter t1 t2 rc
	shift 2
	dir=$(vm_dir "$vm")/cmd
	vm_alive "$vm" || { log "vm$vm is not running"; return 125; }
	id=$HOSTNAME-$$-$BASHPID-$RANDOM$RANDOM
	: > "$dir/$id.out"
	: > "$dir/$id.err"
	cmd_text "$@" > "$dir/$id.tmp"
	mv "$dir/$id.tmp" "$dir/$id.sh"
	echo >> "$dir/../bell"

	_run_waiter "$vm" "$id" "$timeout" &
	waiter=$!
	# tail -f --pid reads the files once more after the waiter exits, so nothing is lost; but
	# only when polling: in guests, the files are on 9p, where inotify sees no remote writes.
	local tailopt=(-n +1 -s "$LAB_POLL" -f --pid="$waiter")
	[[ -z ${CHORUS_VM_ID:-} ]] || tailopt+=(---disable-inotify)
	tail "${tailopt[@]}" "$dir/$id.out" &
	t1=$!
	tail "${tailopt[@]}" "$dir/$id.err" >&2 &
	t2=$!
	# Interrupted: ask the agent to kill the command, stop streaming, report 130/143. (The traps
	# are expanded now, SC2064: these are this call's pids and paths.)
	local stop=": > '$dir/$id.kill'; echo >> '$dir/../bell'; kill $waiter $t1 $t2 2>/dev/null"
	# shellcheck disable=SC2064
	trap "$stop; exit 130" INT
	# shellcheck disable=SC2064
	trap "$stop; exit 143" TERM
	rc=0
	wait "$waiter" || rc=$?
	wait "$t1" "$t2" || true
	trap - INT TERM
	# Normally the agent is done with ID.*; after a kill it cleans up itself (if the VM is gone,
	# `lab down` removes everything).
	((rc == 124 || rc == 125)) || rm -f "$dir/$id".*
	return "$rc"
}

# run_all TIMEOUT CMD...: run_on each VM in turn, output prefixed "[vmN] "; 1 if any failed.
run_all() {
	local timeout=$1 n vm rc fail=0
	shift
	n=$(lab_count)
	((n > 0)) || die "no lab is up in $LAB_DIR"
	for ((vm = 1; vm <= n; vm++)); do
		# stdout and stderr each get the prefix and stay apart; with pipefail the pipelines'
		# status is run_on's (sed succeeds).
		rc=0
		{ run_on "$vm" "$timeout" "$@" 2>&1 1>&3 3>&- | sed -u "s/^/[vm$vm] /" >&2 3>&-; } 3>&1 \
			| sed -u "s/^/[vm$vm] /" || rc=$?
		((rc == 0)) || fail=1
	done
	return "$fail"
}
