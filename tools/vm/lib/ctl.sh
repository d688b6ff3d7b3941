# shellcheck shell=bash
# lab-ctl: guests asking the host to kill or boot again a VM of the lab (`lab kill N`, `lab start
# N`), through the shared lab dir like the command mailbox (lib/run.sh). The server is a host
# process that `lab up` starts and `lab down` stops; requests are files in $LAB_DIR/ctl/:
#
# ID.out, ID.err  created empty by the client, then the host's `lab OP VM` appends its stdout and
#                 stderr to them (the client streams them)
# ID.req          "OP VM FROM": OP kill or start, VM the target, FROM the client's VM (0 = host);
#                 written atomically (by rename). The server claims it by renaming it ID.taken.
# ID.rc           the exit status of `lab OP VM` (written atomically); the client then removes ID.*
# ID.abandoned    the client gave up (timeout, interrupted): the server removes ID.* when done
#
# Everything in $LAB_DIR is writable by the guests, so the server trusts nothing it reads there:
# it only ever runs `lab kill|start N` for a VM number of the lab, refuses a VM killing itself
# (the request would never be answered and the VM's caller would hang), and appends output only
# to regular files. Its pid lives in lab_private (lib/qemu.sh), out of the guests' reach.

CTL_CLAIM_TIMEOUT=10   # s for the server to take a request before the client gives up

ctl_dir() { printf '%s/ctl' "$LAB_DIR"; }

# --- host side -----------------------------------------------------------------------------------

# Start the server in a session of its own (it outlives `lab up`), without the lab lock's fd.
ctl_server_start() {
	mkdir -p "$(ctl_dir)"
	(
		[[ -z ${_lock_fd:-} ]] || exec {_lock_fd}>&-
		setsid "$VM_TOOLS/lab" ctl-server </dev/null >>"$LAB_DIR/logs/ctl.log" 2>&1 &
	)
}

# Stop the server and whatever it runs (its session), if it is ours. Idempotent.
ctl_server_stop() {
	local f pid t
	f=$(lab_private)/ctl-server.pid
	[[ -r $f ]] && read -r pid < "$f" || return 0
	rm -f "$f"
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 0
	grep -qa ctl-server "/proc/$pid/cmdline" 2>/dev/null || return 0
	kill -TERM -- "-$pid" 2>/dev/null
	for ((t = 0; t < 20; t++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		nap 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || true
}

# Handle one claimed request ID (ID.taken).
ctl_handle() {
	local dir id=$1 op vm from rc n
	dir=$(ctl_dir)
	n=$(lab_count)
	read -r op vm from _ < "$dir/$id.taken" || op=
	rm -f "$dir/$id.taken"
	if [[ ! -f $dir/$id.out || -L $dir/$id.out || ! -f $dir/$id.err || -L $dir/$id.err ]]; then
		log "request $id: no output files, ignored"
		return
	fi
	if [[ ! $op =~ ^(kill|start)$ || ! $vm =~ ^[1-9]$ || ! $from =~ ^[0-9]$ ]] || ((vm > n)); then
		rc=2
		log "request $id: refused '$op $vm' from vm$from (the lab has $n VMs)" 2>>"$dir/$id.err"
	elif [[ $op == kill && $vm == "$from" ]]; then
		rc=2
		log "vm$from cannot kill itself through lab-ctl (nobody would get the answer)" \
			2>>"$dir/$id.err"
	else
		log "vm$from: lab $op $vm"
		rc=0
		"$VM_TOOLS/lab" "$op" "$vm" >>"$dir/$id.out" 2>>"$dir/$id.err" || rc=$?
		log "vm$from: lab $op $vm: exit code $rc"
	fi
	echo "$rc" > "$dir/$id.rc.tmp" && mv -f "$dir/$id.rc.tmp" "$dir/$id.rc"
	[[ -e $dir/$id.abandoned ]] && rm -f "$dir/$id".*
	return 0
}

# The server loop (`lab ctl-server`, started by ctl_server_start): one request at a time, until
# the lab is gone.
ctl_serve() {
	local dir f id
	dir=$(ctl_dir)
	# (Not after a `lab down` that came first: it removed the private dir, which stays removed.)
	[[ -d $(lab_private) ]] && echo "$$" > "$(lab_private)/ctl-server.pid"
	log "lab-ctl server $$ for $LAB_DIR"
	trap 'log "lab-ctl server $$ stopped"; exit 0' TERM INT
	shopt -s nullglob
	while [[ -d $LAB_DIR/state && -d $dir ]]; do
		for f in "$dir"/*.req; do
			id=${f##*/}
			id=${id%.req}
			if [[ ! $id =~ ^[A-Za-z0-9_.-]{1,100}$ ]]; then
				rm -f "$f"
				continue
			fi
			mv -f "$f" "$dir/$id.taken" 2>/dev/null || continue
			ctl_handle "$id"
		done
		nap 0.1
	done
	log "lab-ctl server $$: the lab is gone, exiting"
}

# --- client side (guests; works on the host too) -------------------------------------------------

# Wait for ID.rc; exit with it, 125 if the request was not claimed in time, 124 on timeout.
_ctl_waiter() {
	local dir=$1 id=$2 timeout=$3 rc claim deadline
	claim=$((${EPOCHREALTIME/./} + CTL_CLAIM_TIMEOUT * 1000000))
	deadline=$((${EPOCHREALTIME/./} + timeout * 1000000))
	while :; do
		if [[ -s $dir/$id.rc ]] && read -r rc < "$dir/$id.rc" && [[ -n $rc ]]; then
			exit "$rc"
		fi
		if [[ -e $dir/$id.req ]] && ((${EPOCHREALTIME/./} >= claim)); then
			rm -f "$dir/$id".*
			log "no lab-ctl server took the request within ${CTL_CLAIM_TIMEOUT}s (it runs" \
				"while a lab is up: lab up starts it)"
			exit 125
		fi
		if ((${EPOCHREALTIME/./} >= deadline)); then
			: > "$dir/$id.abandoned"
			log "timeout after ${timeout}s waiting for the host"
			exit 124
		fi
		nap "$LAB_POLL"
	done
}

# ctl_request OP VM TIMEOUT: ask the host for `lab OP VM`, stream its output, return its status.
ctl_request() {
	local op=$1 vm=$2 timeout=$3 dir id waiter t1 t2 rc
	dir=$(ctl_dir)
	[[ -d $dir ]] || { log "no lab-ctl channel in $LAB_DIR (is a lab up?)"; return 125; }
	id=vm${CHORUS_VM_ID:-0}-$$-$BASHPID-$RANDOM$RANDOM
	: > "$dir/$id.out"
	: > "$dir/$id.err"
	printf '%s %s %s\n' "$op" "$vm" "${CHORUS_VM_ID:-0}" > "$dir/$id.tmp"
	mv "$dir/$id.tmp" "$dir/$id.req"

	_ctl_waiter "$dir" "$id" "$timeout" &
	waiter=$!
	local tailopt=(-n +1 -s "$LAB_POLL" -f --pid="$waiter")
	[[ -z ${CHORUS_VM_ID:-} ]] || tailopt+=(---disable-inotify)
	tail "${tailopt[@]}" "$dir/$id.out" 2>/dev/null &
	t1=$!
	tail "${tailopt[@]}" "$dir/$id.err" >&2 2>/dev/null &
	t2=$!
	local stop=": > '$dir/$id.abandoned'; kill $waiter $t1 $t2 2>/dev/null"
	# shellcheck disable=SC2064   # this call's pids and paths
	trap "$stop; exit 130" INT
	# shellcheck disable=SC2064
	trap "$stop; exit 143" TERM
	rc=0
	wait "$waiter" || rc=$?
	wait "$t1" "$t2" || true
	trap - INT TERM
	((rc == 124)) || rm -f "$dir/$id".*
	return "$rc"
}
