# shellcheck shell=bash disable=SC2034   # (FIO_NODE, FIO_DEV: read by tools/bench/run)
# Shared by the nvmet-*-ram targets: plain nvmet on node 1 exporting a brd ramdisk (256 MiB),
# node 2 connects with nvme-cli and runs fio on the namespace: the cost of the link alone.

NVMET_NQN=nqn.2026-11.org.chorus:bench-ram
NVMET_CFG=/sys/kernel/config/nvmet

# nvmet_ram_setup TRANSPORT (tcp or rdma)
nvmet_ram_setup() {
	local tr=$1 a
	a=$(addr 1)
	FIO_NODE=2
	on 1 -- "set -e
		modprobe brd rd_nr=1 rd_size=262144
		modprobe -a nvmet nvmet-$tr
		d=$NVMET_CFG/subsystems/$NVMET_NQN
		mkdir \$d
		echo 1 > \$d/attr_allow_any_host
		mkdir \$d/namespaces/1
		echo /dev/ram0 > \$d/namespaces/1/device_path
		echo 1 > \$d/namespaces/1/enable
		p=$NVMET_CFG/ports/1
		mkdir \$p
		echo $tr > \$p/addr_trtype
		echo ipv4 > \$p/addr_adrfam
		echo $a > \$p/addr_traddr
		echo 4420 > \$p/addr_trsvcid
		ln -s \$d \$p/subsystems/$NVMET_NQN"
	on 2 -- "modprobe nvme-$tr && nvme connect -t $tr -a $a -s 4420 -n $NVMET_NQN >/dev/null"
	FIO_DEV=$(on 2 --timeout 60 -- "for i in \$(seq 100); do
			for s in /sys/class/nvme-subsystem/*; do
				[ \"\$(cat \$s/subsysnqn 2>/dev/null)\" = $NVMET_NQN ] || continue
				for n in \$s/nvme*n*; do [ -e \$n ] && echo /dev/\${n##*/} && exit 0; done
			done
			sleep 0.2
		done; exit 1")
}

nvmet_ram_teardown() {
	on 2 -- "nvme disconnect -n $NVMET_NQN >/dev/null" || true
	on 1 -- "p=$NVMET_CFG/ports/1; d=$NVMET_CFG/subsystems/$NVMET_NQN
		rm -f \$p/subsystems/$NVMET_NQN; rmdir \$p
		echo 0 > \$d/namespaces/1/enable; rmdir \$d/namespaces/1 \$d
		rmmod brd" || true
}
