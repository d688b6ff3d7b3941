# shellcheck shell=bash
# Starting, waiting for and stopping the lab's qemu processes.

DISK_SIZE=1G
BOOT_TIMEOUT=${CHORUS_LAB_BOOT_TIMEOUT:-90}   # per VM, from the start of its qemu (s)

# Unix sockets need short paths (108 bytes): use the VM dir if it is short enough, else /tmp.
vm_sock() {
	local p
	p="$(vm_dir "$1")/$2.sock"
	if ((${#p} > 100)); then
		p=${TMPDIR:-/tmp}/$(lab_netns)/vm$1-$2.sock
		mkdir -p "${p%/*}"
	fi
	printf '%s' "$p"
}

# Accelerator arguments. TCG unless CHORUS_LAB_KVM=1 (use KVM) or =auto (use KVM if a bounded
# probe boot under KVM reaches the initramfs; the result is cached in cache/kvm-probe, delete it
# to probe again). Nested KVM on the build machines hangs the guest, hence TCG by default.
accel_args() {
	local kver=$1 initrd=$2 mode=${CHORUS_LAB_KVM:-0}
	if [[ $mode == auto ]]; then
		mode=0
		if [[ -w /dev/kvm ]]; then
			local cache=$LAB_DIR/cache/kvm-probe
			if [[ ! -r $cache ]]; then
				log "probing KVM (bounded, 20 s)"
				if timeout -k 2 20 qemu-system-x86_64 -accel kvm -cpu host -m 256 -nodefaults \
					-no-user-config -display none -no-reboot -serial stdio \
					-kernel "$(guest_kernel_image "$kver")" -initrd "$initrd" \
					-append "console=ttyS0 quiet lab_probe=1" </dev/null 2>/dev/null \
					| grep -q LAB-PROBE-OK; then
					echo 1 > "$cache"
				else
					echo 0 > "$cache"
				fi
			fi
			read -r mode < "$cache"
		fi
		log "KVM probe: $( ((mode)) && echo works || echo "does not work, using TCG")"
	fi
	if [[ $mode == 1 ]]; then
		printf '%s\n' -accel kvm -cpu host
	else
		# One host thread per VM: with thread=multi a vCPU sometimes stopped
		# taking IPIs and timer interrupts after cross-CPU text patching
		# (module load/unload, tracepoint toggling), wedging the guest in
		# text_poke_bp (seen twice in the VM suite, once on a quiet host).
		printf '%s\n' -accel "tcg,thread=${CHORUS_LAB_TCG_THREAD:-single}" -cpu max
	fi
}

# Host-only state of the lab: not under $LAB_DIR, which every guest can write, and removed by
# `lab down`. It holds what the host runs as root again later (each VM's qemu argv) and the pid
# of the lab-ctl server. Created by lab_private_init.
lab_private() {
	printf '%s/%s' "${TMPDIR:-/tmp}" "$(lab_netns)"
}
lab_private_init() {
	local p
	p=$(lab_private)
	[[ -d $p ]] || mkdir -m 700 "$p"
}

# Start VM $1 (of $2) in the background: build its qemu command line, save it (qemu.cmdline in
# the VM dir for people; the argv NUL-separated in lab_private, which `lab start` boots again)
# and launch it.
vm_start() {
	local i=$1 n=$2 mem=$3 smp=$4 kver=$5 initrd=$6 d
	d=$(vm_dir "$i")
	mkdir -p "$d/cmd" "$LAB_DIR/disks"
	local disk append args=()
	append="console=ttyS0 loglevel=7 oops=panic panic=1 panic_on_warn=0"
	append+=" lab_vm=$i lab_count=$n lab_src=$ROOT lab_dir=$LAB_DIR lab_agent=$VM_TOOLS/guest/agent"
	# Under TCG the guest marks the TSC of `-cpu max` unstable (an AMD family 0xf without the
	# invariant-TSC bit, on 2 CPUs) and falls back to HPET: every clock read in the guest, the
	# vDSO's included, becomes a syscall plus an MMIO exit. TCG's TSC is the host's (invariant,
	# one counter for every vCPU; the guest's refined calibration matched the host's to 0.4 ppm
	# and 90 s of guest uptime matched the host's), so trust it. Measured (stop 42, one VM):
	# clock_gettime 1.4-2.7 us -> 0.1-0.17 us, 4K QD1 reads of null_blk 17.8k -> 39k IOPS.
	[[ " ${LAB_ACCEL[*]} " == *" tcg"* ]] && append+=" tsc=reliable"
	append+=" $(guest_kernel_args "$kver") ${CHORUS_LAB_KERNEL_ARGS:-}"
	args=("${LAB_ACCEL[@]}")   # from accel_args, once per `lab up`
	# shellcheck disable=SC2054   # commas belong to qemu option values
	args+=(
		-name "vm$i" -machine pc -smp "$smp" -m "$mem"
		-nodefaults -no-user-config -display none -no-reboot
		-pidfile "$d/qemu.pid"
		-kernel "$(guest_kernel_image "$kver")" -initrd "$initrd"
		-append "$append"
		# ttyS0: kernel log to a file, appended to (a VM booted again by `lab start` keeps
		# the log of its earlier boots, and `lab mark` offsets stay valid); ttyS1: root
		# shell (lab shell); a monitor socket.
		-chardev "file,id=con0,path=$(vm_console "$i"),append=on" -serial chardev:con0
		-chardev "socket,id=sh0,path=$(vm_sock "$i" shell),server=on,wait=off"
		-serial chardev:sh0
		-chardev "socket,id=mon0,path=$(vm_sock "$i" monitor),server=on,wait=off"
		-mon chardev=mon0,mode=readline
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$LAB_DIR,mount_tag=lab,security_model=none,multidevs=remap"
		-device virtio-rng-pci
		-netdev "tap,id=n0,ifname=tap$i,script=no,downscript=no"
		-device "virtio-net-pci,netdev=n0,mac=52:54:00:99:00:0$i"
	)
	for disk in vda vdb; do
		truncate -s "$DISK_SIZE" "$LAB_DIR/disks/vm$i-$disk.img"
		args+=(
			-drive "if=none,id=$disk,file=$LAB_DIR/disks/vm$i-$disk.img,format=raw,discard=unmap,detect-zeroes=unmap,cache=writeback"
			-device "virtio-blk-pci,drive=$disk"
		)
	done
	# Instruction counts per guest code address (tools/vm/insn-profile/README.md).
	if [[ -n ${CHORUS_LAB_INSN_PROFILE:-} ]]; then
		[[ -r $CHORUS_LAB_INSN_PROFILE ]] ||
			die "CHORUS_LAB_INSN_PROFILE: no plugin at '$CHORUS_LAB_INSN_PROFILE' (make insn-profile)"
		args+=(-plugin "$CHORUS_LAB_INSN_PROFILE,out=$d/insn-profile")
	fi
	printf '%q ' qemu-system-x86_64 "${args[@]}" > "$d/qemu.cmdline"
	lab_private_init
	printf '%s\0' qemu-system-x86_64 "${args[@]}" > "$(lab_private)/vm$i.argv"
	vm_launch "$i"
}

# Run VM $1's saved qemu argv in the background, inside the lab's network namespace. A watcher
# shell (own session, so it survives the caller's terminal) writes vmN/exited when qemu
# terminates. Clears what belongs to the previous boot: ready, exited, the pid file, commands
# left in the mailbox (the submitters got 125 when the VM went away) and the bell.
vm_launch() {
	local i=$1 d ns argv args=()
	d=$(vm_dir "$i")
	ns=$(lab_netns)
	argv=$(lab_private)/vm$i.argv
	[[ -s $argv ]] || die "no saved qemu command line for vm$i ($argv)"
	mapfile -d '' -t args < "$argv"
	rm -f "$d/ready" "$d/exited" "$d/qemu.pid" "$d/bell"
	rm -rf "$d/cmd"
	mkdir -p "$d/cmd"
	# The subshell drops the lab lock's fd, which qemu must not inherit (it would hold the lock).
	(
		[[ -z ${_lock_fd:-} ]] || exec {_lock_fd}>&-
		# shellcheck disable=SC2016   # expanded by the watcher shell
		setsid bash -c '"$@"; echo "$?" > "$0"' "$d/exited" \
			ip netns exec "$ns" "${args[@]}" </dev/null >"$d/qemu.stderr" 2>&1 &
	)
}

# A TCG guest of the debug kernel used to stall early in its boot, in the RCU-tasks self tests
# (before SMP bring-up): its console's last line was BOOT_STALL_LINE and nothing followed for
# minutes (about half the boots of a 2-VM lab on a 2-core host). The debug kernel is now built
# without PREEMPT_DYNAMIC and so without RCU-tasks (debug-kernel/debug.config), whose self test
# then waits for nothing; this stays as the safety net for a kernel built otherwise. Such a VM
# is booted again in place, at most BOOT_STALL_RETRIES times, once its console has been still
# for BOOT_STALL_S seconds (a healthy debug boot is silent up to about 26 s, but never on that
# line).
BOOT_STALL_LINE='Running RCU-tasks wait API self tests'
BOOT_STALL_S=${CHORUS_LAB_BOOT_STALL:-15}
BOOT_STALL_RETRIES=4

# Whether VM $1's boot is stalled on BOOT_STALL_LINE.
vm_boot_stalled() {
	local f
	f=$(vm_console "$1")
	[[ -f $f ]] || return 1
	(($(date +%s) - $(stat -c %Y "$f") >= BOOT_STALL_S)) || return 1
	[[ $(tail -n 1 "$f") == *"$BOOT_STALL_LINE"* ]]
}

# Wait until the agents of VMs $2... are ready (boot started at time $1); report each boot time.
# Bounded: BOOT_TIMEOUT, plus 15 s per VM after the first, plus BOOT_TIMEOUT per stalled boot
# started again. Returns 1 on timeout or death.
vms_wait_ready() {
	local t0=$1 i d pending deadline
	local -A restarts=()
	shift
	deadline=$((t0 + (BOOT_TIMEOUT + 15 * ($# - 1)) * 1000000))
	pending=$*
	while [[ -n $pending ]]; do
		local still=""
		for i in $pending; do
			d=$(vm_dir "$i")
			if [[ -e $d/ready ]]; then
				log "vm$i ready in $(elapsed "$t0") s"
			elif ((${restarts[$i]:-0} < BOOT_STALL_RETRIES)) && vm_boot_stalled "$i"; then
				restarts[$i]=$((${restarts[$i]:-0} + 1))
				log "vm$i stalled in early boot (\"$BOOT_STALL_LINE\"); booting it again"
				vm_kill "$i" > /dev/null 2>&1 || true
				console_note "$i" "vm$i booted again after an early-boot stall"
				vm_launch "$i"
				deadline=$((deadline + BOOT_TIMEOUT * 1000000))
				still+=" $i"
			elif [[ -e $d/exited ]]; then
				log "vm$i died while booting; qemu: $(tr '\n' ' ' < "$d/qemu.stderr")"
				log "last lines of its console ($(vm_console "$i")):"
				tail -n 25 "$(vm_console "$i")" >&2
				return 1
			else
				still+=" $i"
			fi
		done
		pending=$still
		[[ -z $pending ]] && break
		if (($(now) > deadline)); then
			for i in $pending; do
				log "vm$i not ready after $(elapsed "$t0") s; last lines of its console:"
				tail -n 25 "$(vm_console "$i")" >&2
			done
			return 1
		fi
		nap 0.2
	done
}

# Print the pid of VM $1's qemu if it is running: the pid file names a live qemu process whose
# command line has this VM's pid file (qemu runs as root: never signal a recycled pid).
vm_qemu_pid() {
	local d pid
	d=$(vm_dir "$1")
	[[ -r $d/qemu.pid ]] && read -r pid < "$d/qemu.pid" || return 1
	[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
	grep -q qemu "/proc/$pid/comm" 2>/dev/null || return 1
	grep -qaF -- "$d/qemu.pid" "/proc/$pid/cmdline" 2>/dev/null || return 1
	printf '%s' "$pid"
}

# Append a line of the lab's own to VM $1's console log (where a boot ends or starts again).
# Outside every boot, and free of the words check-log looks for.
console_note() {
	local f
	f=$(vm_console "$1")
	[[ -f $f && ! -L $f ]] || return 0
	printf '\n=== lab: %s (%s) ===\n' "$2" "$(date '+%F %T')" >> "$f"
}

# Kill VM $1 like a crash: SIGKILL to its qemu, no shutdown (the guest's caches are lost; what
# reached the disk images stays). Waits, bounded, until qemu is gone and its watcher wrote
# vmN/exited. Disks, tap and console log are kept: `lab start` boots it again. Returns 1 if the
# VM is not running or qemu does not go away.
vm_kill() {
	local d pid t
	d=$(vm_dir "$1")
	pid=$(vm_qemu_pid "$1") || { log "vm$1 is not running"; return 1; }
	# Not ready any more: `lab run` and lab-run (which only see files, in guests) stop at once.
	rm -f "$d/ready"
	kill -KILL "$pid" 2>/dev/null
	for ((t = 0; t < 100; t++)); do
		kill -0 "$pid" 2>/dev/null || break
		nap 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		log "vm$1: qemu ($pid) still alive 10 s after SIGKILL"
		return 1
	fi
	for ((t = 0; t < 50; t++)); do
		[[ -e $d/exited ]] && break
		nap 0.1
	done
	# A watcher that is gone (killed by hand) cannot write it: the VM is down all the same.
	[[ -e $d/exited ]] || echo 137 > "$d/exited"
	console_note "$1" "vm$1 killed (SIGKILL)"
	log "vm$1 killed (qemu $pid), disks kept"
}

# Stop VM $1: SIGTERM (qemu exits cleanly), then SIGKILL, each bounded. Nothing in a guest needs
# an orderly shutdown: its root is a tmpfs overlay and its disks are deleted afterwards.
vm_stop() {
	local pid t
	pid=$(vm_qemu_pid "$1") || return 0
	kill -TERM "$pid" 2>/dev/null
	for ((t = 0; t < 10; t++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		nap 0.2
	done
	log "vm$1: qemu ($pid) did not exit on SIGTERM, killing it"
	kill -KILL "$pid" 2>/dev/null
	for ((t = 0; t < 10; t++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		nap 0.2
	done
	log "warning: vm$1: qemu ($pid) still alive"
	return 0
}
