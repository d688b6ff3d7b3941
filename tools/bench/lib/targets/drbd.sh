# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Target "drbd": DRBD 8.4 (the kernel's drbd module) protocol C, primary on node 1, secondary on
# node 2, on the backing disk of each; fio on /dev/drbd0 of node 1. Debian's drbd-utils 9.x
# drives the 8.4 module through drbdadm-84 by itself. The initial sync is skipped with
# new-current-uuid --clear-bitmap (both disks are declared identical, which is fine here since
# run writes the working set before measuring).

DRBD_RES=chorusbench

target_check() {
	command -v drbdadm >/dev/null || { echo "drbdadm missing: install drbd-utils (make deps)"; return 1; }
	on 1 -- "modprobe drbd && grep -q '^version: 8.4' /proc/drbd" ||
		{ echo "the kernel's drbd module is not 8.4"; return 1; }
}

target_setup() {
	local n conf names=()
	FIO_NODE=1
	FIO_DEV=/dev/drbd0
	for n in 1 2; do names+=("$(on "$n" -- "uname -n")"); done
	# Network timeouts in 0.1 s: generous, TCG guests under load miss the default 0.5 s ping.
	conf="resource $DRBD_RES {
	protocol C;
	net { timeout 60; ping-timeout 30; ping-int 10; connect-int 10; }
	on ${names[0]} { device /dev/drbd0; disk $BENCH_DISK; address $(addr 1):7789; meta-disk internal; }
	on ${names[1]} { device /dev/drbd0; disk $BENCH_DISK; address $(addr 2):7789; meta-disk internal; }
}"
	for n in 1 2; do
		on "$n" -- "modprobe drbd && mkdir -p /run/lock /var/lib/drbd /etc/drbd.d &&
			printf '%s\n' '$conf' > /etc/drbd.d/$DRBD_RES.res &&
			drbdadm create-md --force $DRBD_RES >/dev/null 2>&1 && drbdadm up $DRBD_RES"
	done
	on 1 --timeout 120 -- "for i in \$(seq 100); do grep -q 'cs:Connected' /proc/drbd && exit 0; sleep 1; done
		cat /proc/drbd; exit 1"
	on 1 -- "drbdadm -- --clear-bitmap new-current-uuid $DRBD_RES && drbdadm primary $DRBD_RES"
	on 1 --timeout 60 -- "for i in \$(seq 50); do
			grep -q 'cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate' /proc/drbd && exit 0
			sleep 1
		done; cat /proc/drbd; exit 1"
}

# Fails (and the run marks the target failed) if DRBD is not Connected/UpToDate any more.
target_check_healthy() {
	on 1 -- "grep -q 'cs:Connected ro:Primary/Secondary ds:UpToDate/UpToDate' /proc/drbd || { cat /proc/drbd; exit 1; }"
}

target_teardown() {
	local n
	for n in 1 2; do
		on "$n" -- "drbdadm down $DRBD_RES; rm -f /etc/drbd.d/$DRBD_RES.res; rmmod drbd" || true
	done
}
