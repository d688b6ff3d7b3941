# shellcheck shell=bash
# Guest kernel selection and the initramfs (busybox + the modules needed to mount the host root).

# Modules the initramfs loads before switching root: PCI virtio transport, virtio disks and NIC,
# the 9p filesystem with its virtio transport, overlayfs. Dependencies come from modules.dep.
INITRAMFS_MODULES=(virtio_pci virtio_blk virtio_net 9pnet_virtio 9p overlay)

# The guest kernel: the one chorus.ko is built for (tools/kver: $KVER, else the newest 6.1).
guest_kver() {
	"$ROOT/tools/kver" || die "no guest kernel (apt-get install linux-image-amd64), or set KVER="
}

# vm_kver_of VM DEFAULT: VM's kernel release, DEFAULT unless CHORUS_LAB_VM_KVER ("3=REL 4=REL")
# names another for it: a lab of the debug kernel whose etcd and host VMs run Debian's.
vm_kver_of() {
	local item
	for item in ${CHORUS_LAB_VM_KVER:-}; do
		[[ $item =~ ^[1-9]=[^=[:space:]]+$ ]] ||
			die "CHORUS_LAB_VM_KVER: '$item' is not VM=RELEASE (for example 3=6.1.0-57-amd64)"
		[[ ${item%%=*} == "$1" ]] && { printf '%s' "${item#*=}"; return 0; }
	done
	printf '%s' "$2"
}

# The guest kernel's image: Debian's in /boot, else one in its modules directory (as Fedora
# installs them, and as tools/vm/debug-kernel/build installs the debug lab kernel).
guest_kernel_image() {
	local kver=$1 f
	for f in "/boot/vmlinuz-$kver" "/lib/modules/$kver/vmlinuz"; do
		[[ -r $f ]] && { printf '%s' "$f"; return 0; }
	done
	return 1
}

# Extra kernel arguments a lab kernel asks for, from lab.cmdline beside its modules (the debug
# kernel's build writes one; Debian's kernel has none). Comment lines are skipped.
guest_kernel_args() {
	local f="/lib/modules/$1/lab.cmdline"
	[[ -r $f ]] || return 0
	grep -v '^[[:space:]]*#' "$f" | tr '\n' ' '
}

# Module files for INITRAMFS_MODULES and their dependencies, in load order, deduplicated.
initramfs_module_files() {
	local kver=$1
	modprobe -a -S "$kver" --show-depends "${INITRAMFS_MODULES[@]}" \
		| awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

# Print the path of an initramfs for $kver, building it if its inputs changed. The cache key
# hashes the kernel version, the module files, busybox and the init script.
initramfs_build() {
	local kver=$1 cache=$LAB_DIR/cache init=$VM_TOOLS/lib/init
	local -a mods
	mapfile -t mods < <(initramfs_module_files "$kver")
	# Built-in modules have no file: the set is empty when all are built in.
	[[ -r /lib/modules/$kver/modules.dep ]] || die "no /lib/modules/$kver/modules.dep"
	modprobe -a -S "$kver" --show-depends "${INITRAMFS_MODULES[@]}" > /dev/null \
		|| die "cannot resolve modules for $kver (is /lib/modules/$kver there?)"
	local busybox
	busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
	# A dynamic busybox would not run in the initramfs (no libc there).
	! ldd "$busybox" >/dev/null 2>&1 || die "$busybox is not static (apt-get install busybox-static)"

	local key out
	key=$( { printf '%s\n' "$kver"; stat -L -c '%n %s %Y' "$busybox" ${mods[@]+"${mods[@]}"}; cat "$init"; } \
		| sha256sum | cut -c1-16)
	out=$cache/initramfs-$kver-$key.cpio.gz
	if [[ -s $out ]]; then
		printf '%s' "$out"
		return
	fi

	log "building initramfs for $kver (${#mods[@]} modules)"
	mkdir -p "$cache"
	local tmp
	tmp=$(mktemp -d "$cache/initramfs.XXXXXX")
	mkdir -p "$tmp"/{bin,dev,proc,sys,mnt,newroot,lib/modules}
	cp "$busybox" "$tmp/bin/busybox"
	cp "$init" "$tmp/init"
	chmod 755 "$tmp/init"
	local m base i=0
	for m in ${mods[@]+"${mods[@]}"}; do
		# Numbered so that the init loads them in dependency order; decompressed here because
		# busybox insmod may not understand compressed modules.
		base=$(printf '%02d-%s' "$i" "$(basename "$m")")
		i=$((i + 1))
		case $m in
		*.ko.xz) xz -dc "$m" > "$tmp/lib/modules/${base%.xz}" ;;
		*.ko.zst) zstd -qdc "$m" > "$tmp/lib/modules/${base%.zst}" ;;
		*.ko.gz) gzip -dc "$m" > "$tmp/lib/modules/${base%.gz}" ;;
		*) cp "$m" "$tmp/lib/modules/$base" ;;
		esac
	done
	(cd "$tmp" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out.tmp"
	rm -rf "$tmp"
	# Drop older images of this kernel, keep the cache small.
	find "$cache" -maxdepth 1 -name "initramfs-$kver-*.cpio.gz" ! -name "$(basename "$out")" -delete
	mv "$out.tmp" "$out"
	printf '%s' "$out"
}
