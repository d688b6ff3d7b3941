# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Shared by the plain-nvmet targets, no chorus anywhere: one node exports a device over nvmet,
# the other connects with nvme-cli and runs fio on the namespace.
#   nvmet-*-ram:  node 1 exports a brd ramdisk (256 MiB), fio on node 2: the link's own cost.
#   nvmet-*-disk: node 2 exports its backing disk ($BENCH_DISK), fio on node 1: one link round
#                 trip plus a remote disk write, the least any replicated write can cost (the
#                 floor of chorus-2r, whose fio runs on node 1 and whose replica is node 2's
#                 disk).

NVMET_NQN=nqn.2026-11.org.chorus:bench-plain
NVMET_CFG=/sys/kernel/config/nvmet
NVMET_EXPORTER=1

# nvmet_plain_setup TRANSPORT SOURCE: TRANSPORT tcp or rdma, SOURCE ram or disk.
nvmet_plain_setup() {
	local tr=$1 src=$2 a dev
	if [[ $src == ram ]]; then
		NVMET_EXPORTER=1 FIO_NODE=2 dev=/dev/ram0
	else
		NVMET_EXPORTER=2 FIO_NODE=1 dev=$BENCH_DISK
	fi
	a=$(addr "$NVMET_EXPORTER")
	on "$NVMET_EXPORTER" -- "set -e
		[ $src != ram ] || modprobe brd rd_nr=1 rd_size=262144
		test -b $dev
		modprobe -a nvmet nvmet-$tr
		d=$NVMET_CFG/subsystems/$NVMET_NQN
		mkdir \$d
		echo 1 > \$d/attr_allow_any_host
		mkdir \$d/namespaces/1
		echo $dev > \$d/namespaces/1/device_path
		echo 1 > \$d/namespaces/1/enable
		p=$NVMET_CFG/ports/1
		mkdir \$p
		echo $tr > \$p/addr_trtype
		echo ipv4 > \$p/addr_adrfam
		echo $a > \$p/addr_traddr
		echo 4420 > \$p/addr_trsvcid
		ln -s \$d \$p/subsystems/$NVMET_NQN"
	on "$FIO_NODE" -- "modprobe nvme-$tr && nvme connect -t $tr -a $a -s 4420 -n $NVMET_NQN >/dev/null"
	FIO_DEV=$(on "$FIO_NODE" --timeout 60 -- "for i in \$(seq 100); do
			for s in /sys/class/nvme-subsystem/*; do
				[ \"\$(cat \$s/subsysnqn 2>/dev/null)\" = $NVMET_NQN ] || continue
				for n in \$s/nvme*n*; do [ -e \$n ] && echo /dev/\${n##*/} && exit 0; done
			done
			sleep 0.2
		done; exit 1")
}

# Best effort, also after a half-done setup.
nvmet_plain_teardown() {
	[[ -z ${FIO_NODE:-} ]] || on "$FIO_NODE" -- "nvme disconnect -n $NVMET_NQN >/dev/null" || true
	on "$NVMET_EXPORTER" -- "p=$NVMET_CFG/ports/1; d=$NVMET_CFG/subsystems/$NVMET_NQN
		rm -f \$p/subsystems/$NVMET_NQN; rmdir \$p
		echo 0 > \$d/namespaces/1/enable; rmdir \$d/namespaces/1 \$d
		! grep -q '^brd ' /proc/modules || rmmod brd" || true
}

# nvmet_plain_check TRANSPORT SOURCE: whether the exporting node has nvmet (and brd for a
# ramdisk), the other node the NVMe host, and for RDMA both an RDMA device.
nvmet_plain_check() {
	local tr=$1 src=$2 exporter=1 mods node
	mods="nvmet-$tr"
	[[ $src == ram ]] && mods+=" brd"
	[[ $src == disk ]] && exporter=2
	on "$exporter" -- "modinfo -F name $mods >/dev/null" ||
		{ echo "node $exporter: $mods missing"; return 1; }
	on "$((3 - exporter))" -- "modinfo -F name nvme-$tr >/dev/null" ||
		{ echo "node $((3 - exporter)): nvme-$tr missing"; return 1; }
	if [[ $tr == rdma ]]; then
		for node in 1 2; do
			on "$node" -- "rdma link show | grep -q ." || { echo "no RDMA device on node $node"; return 1; }
		done
	fi
}
