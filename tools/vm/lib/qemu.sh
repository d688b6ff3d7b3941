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
					-kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
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

# Start VM $1 (of $2) in the background, inside the lab's network namespace. A watcher shell
# (own session, so it survives the caller's terminal) writes vmN/exited when qemu terminates.
vm_start() {
	local i=$1 n=$2 mem=$3 smp=$4 kver=$5 initrd=$6 d ns
	d=$(vm_dir "$i")
	ns=$(lab_netns)
	mkdir -p "$d/cmd" "$LAB_DIR/disks"
	rm -f "$d/ready" "$d/exited" "$d/qemu.pid"
	local disk append args=()
	append="console=ttyS0 loglevel=7 oops=panic panic=1 panic_on_warn=0"
	append+=" lab_vm=$i lab_count=$n lab_src=$ROOT lab_dir=$LAB_DIR lab_agent=$VM_TOOLS/guest/agent"
	args=("${LAB_ACCEL[@]}")   # from accel_args, once per `lab up`
	# shellcheck disable=SC2054   # commas belong to qemu option values
	args+=(
		-name "vm$i" -machine pc -smp "$smp" -m "$mem"
		-nodefaults -no-user-config -display none -no-reboot
		-pidfile "$d/qemu.pid"
		-kernel "/boot/vmlinuz-$kver" -initrd "$initrd"
		-append "$append"
		# ttyS0: kernel log to a file; ttyS1: root shell (lab shell); a monitor socket.
		-chardev "file,id=con0,path=$(vm_console "$i")" -serial chardev:con0
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
	printf '%q ' qemu-system-x86_64 "${args[@]}" > "$d/qemu.cmdline"
	# The subshell drops the lab lock's fd, which qemu must not inherit (it would hold the lock).
	(
		[[ -z ${_lock_fd:-} ]] || exec {_lock_fd}>&-
		# shellcheck disable=SC2016   # expanded by the watcher shell
		setsid bash -c '"$@"; echo "$?" > "$0"' "$d/exited" \
			ip netns exec "$ns" qemu-system-x86_64 "${args[@]}" \
			</dev/null >"$d/qemu.stderr" 2>&1 &
	)
}

# Wait until every VM's agent is ready; report each boot time. Returns 1 on timeout or death.
vms_wait_ready() {
	local n=$1 t0=$2 i d pending deadline
	deadline=$((t0 + (BOOT_TIMEOUT + 15 * (n - 1)) * 1000000))
	pending=$(seq 1 "$n")
	while [[ -n $pending ]]; do
		local still=""
		for i in $pending; do
			d=$(vm_dir "$i")
			if [[ -e $d/ready ]]; then
				log "vm$i ready in $(elapsed "$t0") s"
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

# Stop VM $1: SIGTERM (qemu exits cleanly), then SIGKILL, each bounded. Nothing in a guest needs
# an orderly shutdown: its root is a tmpfs overlay and its disks are deleted afterwards.
vm_stop() {
	local d pid t
	d=$(vm_dir "$1")
	[[ -r $d/qemu.pid ]] && read -r pid < "$d/qemu.pid" || return 0
	[[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
	# qemu runs as root; make sure the pid is really our qemu before signalling it.
	grep -q qemu "/proc/$pid/comm" 2>/dev/null || return 0
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
