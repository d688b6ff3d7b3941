# shellcheck shell=bash disable=SC2034   # (variables used by the files sourcing this one)
# Shared settings and helpers of the VM lab. Sourced by tools/vm/lab and tools/vm/guest/lab-run,
# on the host and inside guests (where the lab dir is the same path, bind-mounted from /lab).

# Locations. VM_TOOLS = tools/vm, ROOT = the project checkout. Found with cd and no subshell:
# forks and execs cost tens of ms each in a loaded TCG guest, and lab-run starts this often.
unset CDPATH
_lab_here=$PWD
_lab_src=${BASH_SOURCE[0]}
[[ $_lab_src == */* ]] || _lab_src=./$_lab_src
cd -P "${_lab_src%/*}/.." && VM_TOOLS=$PWD
cd -P ../.. && ROOT=$PWD
cd "$_lab_here" 2>/dev/null || cd /
unset _lab_here _lab_src
LAB_DIR=${CHORUS_LAB_DIR:-$ROOT/build/lab}

LAB_MAX_VMS=4
LAB_SUBNET=10.99.0               # vmN is $LAB_SUBNET.N/24
LAB_POLL=0.05                    # host/guest polling interval for command results (s)

log() { printf 'lab: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Microseconds since the epoch; seconds (one decimal) elapsed since such a time ("ready in 4.1 s").
now() { printf '%s' "${EPOCHREALTIME/./}"; }
elapsed() {
	local d=$(($(now) - $1))
	printf '%d.%d' $((d / 1000000)) $((d / 100000 % 10))
}

# Sleep without forking (matters in guests, where every fork+exec goes through 9p under TCG).
_lab_tick_fd=
nap() {
	if [[ -z $_lab_tick_fd ]]; then
		exec {_lab_tick_fd}<> <(:)
	fi
	read -r -t "$1" -u "$_lab_tick_fd" _ || true
}

# Per-VM paths. The lab dir is shared read-write with every guest (/lab, bind-mounted over
# the same path as on the host), so VM dirs double as the command mailbox.
vm_dir() { printf '%s/vm%s' "$LAB_DIR" "$1"; }
vm_console() { printf '%s/logs/vm%s.console.log' "$LAB_DIR" "$1"; }

# Number of VMs of the lab that is up (0 if none).
lab_count() {
	local c=0
	[[ -r $LAB_DIR/state/count ]] && read -r c < "$LAB_DIR/state/count"
	printf '%s' "${c:-0}"
}

# True if VM N is running: its agent reported ready and qemu has not exited. On the host we also
# check the qemu pid (covers a host-side watcher killed with kill -9); guests only see files.
vm_alive() {
	local d=$LAB_DIR/vm$1 pid   # (no $(vm_dir): this is polled, forks are slow in guests)
	[[ -e $d/ready && ! -e $d/exited ]] || return 1
	if [[ -z ${CHORUS_VM_ID:-} && -r $d/qemu.pid ]]; then
		read -r pid < "$d/qemu.pid" || return 1
		kill -0 "$pid" 2>/dev/null || return 1
	fi
	return 0
}

# Validate a VM number against the lab that is up; prints nothing, dies with a message.
check_vm() {
	local n
	n=$(lab_count)
	[[ $1 =~ ^[1-9][0-9]*$ ]] || die "bad VM '$1' (expected 1..$n or 'all')"
	((n > 0)) || die "no lab is up in $LAB_DIR"
	(($1 <= n)) || die "vm$1 does not exist (the lab has $n VMs)"
}
