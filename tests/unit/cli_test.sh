#!/bin/sh
# Command-line checks of chorusctl and chorusd that need no kernel module:
# exit codes of usage errors, and a chorusd apply/teardown round trip on a
# temporary directory standing in for configfs.
# Usage: cli_test.sh CHORUSCTL CHORUSD CONFIG
set -u
ctl=$1 daemon=$2 conf=$3
fail=0

expect() {  # expect CODE CMD...
	want=$1; shift
	"$@" >/dev/null 2>&1
	got=$?
	if [ "$got" -ne "$want" ]; then
		echo "FAIL: exit $got, expected $want: $*"
		fail=1
	fi
}

expect 0 "$ctl" --version
expect 0 "$ctl" --help
expect 2 "$ctl"
expect 2 "$ctl" volume
expect 2 "$ctl" volume frobnicate
expect 2 "$ctl" volume create vol0
expect 2 "$ctl" volume create 'bad/name' --backing /dev/vdb
expect 2 "$ctl" volume create .hidden --backing /dev/vdb
expect 2 "$ctl" volume create "$(printf '%064d' 0)" --backing /dev/vdb
expect 2 "$ctl" volume create vol0 --backing dev/vdb
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --size 1x
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --size 0
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --size 1000
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --size 6k --block-size 4k
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --block-size 3000
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --uuid not-a-uuid
expect 2 "$ctl" volume status
expect 2 "$ctl" volume format
expect 2 "$ctl" volume format --backing dev/vdb
expect 2 "$ctl" volume format --backing /dev/vdb --size 0
expect 2 "$ctl" volume format --backing /dev/vdb --size 1x
expect 2 "$ctl" volume format --backing /dev/vdb --size 1000
expect 2 "$ctl" volume format --backing /dev/vdb --size 6k --block-size 4k
expect 2 "$ctl" volume format --backing /dev/vdb --block-size 3000
expect 2 "$ctl" volume format --backing /dev/vdb --uuid not-a-uuid
expect 2 "$ctl" volume format --backing /dev/vdb --uuid 00000000-0000-0000-0000-000000000000
expect 2 "$ctl" volume inspect
expect 2 "$ctl" volume inspect --backing vdb
expect 2 "$ctl" events --count 0
expect 2 "$ctl" events --timeout -1

# Replication commands: node ids 1..32, connections 1..8, ports 1..65535,
# IPv4/IPv6 literals only, owner needs an epoch, volume set needs an option.
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --node-id 0
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --node-id 33
expect 2 "$ctl" volume create vol0 --backing /dev/vdb --node-id x
expect 2 "$ctl" listen
expect 2 "$ctl" listen node1
expect 2 "$ctl" listen '[::1]'
expect 2 "$ctl" listen 10.0.0.1:7788
expect 2 "$ctl" listen 10.0.0.1 --port 0
expect 2 "$ctl" listen 10.0.0.1 --port 65536
expect 2 "$ctl" listen 10.0.0.1 --port http
expect 2 "$ctl" unlisten 10.0.0.1
expect 2 "$ctl" peer
expect 2 "$ctl" peer frobnicate
expect 2 "$ctl" peer add vol0 2
expect 2 "$ctl" peer add vol0 0 10.0.0.2
expect 2 "$ctl" peer add vol0 33 10.0.0.2
expect 2 "$ctl" peer add vol0 two 10.0.0.2
expect 2 "$ctl" peer add vol0 -1 10.0.0.2
expect 2 "$ctl" peer add 'bad/name' 2 10.0.0.2
expect 2 "$ctl" peer add vol0 2 node2.example.com
expect 2 "$ctl" peer add vol0 2 10.0.0.256
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --port 0
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --port 70000
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --transport udp
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --transport rdma-tcp
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --transport RDMA
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --transport ''
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --conns 0
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --conns 9
expect 2 "$ctl" peer add vol0 2 10.0.0.2 --initial-sync partial
for sub in del connect disconnect; do
	expect 2 "$ctl" peer $sub vol0
	expect 2 "$ctl" peer $sub vol0 0
	expect 2 "$ctl" peer $sub vol0 33
	expect 2 "$ctl" peer $sub .vol0 2
done
expect 2 "$ctl" writeset
expect 2 "$ctl" writeset remove vol0
expect 2 "$ctl" writeset remove vol0 33
expect 2 "$ctl" volume role vol0
expect 2 "$ctl" volume role vol0 leader --epoch 1
expect 2 "$ctl" volume role vol0 owner
expect 2 "$ctl" volume role vol0 owner --epoch -1
expect 2 "$ctl" volume role vol0 owner --epoch 1.5
expect 2 "$ctl" volume role vol0 owner --epoch 18446744073709551616
expect 2 "$ctl" volume verify vol0
expect 2 "$ctl" volume verify vol0 33
expect 2 "$ctl" volume set vol0
expect 2 "$ctl" volume set --resync-rate 10M
expect 2 "$ctl" volume set vol0 --resync-rate 10x
expect 2 "$ctl" volume set vol0 --request-timeout-ms -5
expect 2 "$ctl" volume set vol0 --ping-interval-ms 4294967296
expect 2 "$ctl" volume set vol0 --ping-timeout-ms 1s
expect 2 "$ctl" volume set vol0 --auto-degrade maybe
expect 2 "$ctl" volume set vol0 --disk-timeout-ms 5s
msg=$("$ctl" peer add vol0 33 10.0.0.2 2>&1)
case $msg in
*"node id 33 is not in 1..32"*) ;;
*) echo "FAIL: unexpected message: $msg"; fail=1 ;;
esac
msg=$("$ctl" peer add vol0 2 node2 2>&1)
case $msg in
*"address 'node2' is not an IPv4 or IPv6 address literal"*) ;;
*) echo "FAIL: unexpected message: $msg"; fail=1 ;;
esac
msg=$("$ctl" peer add vol0 2 10.0.0.2 --transport udp 2>&1)
case $msg in
"chorusctl: --transport: transport 'udp' is not tcp, rdma or rdma+tcp"*) ;;
*) echo "FAIL: unexpected message: $msg"; fail=1 ;;
esac
case $("$ctl" peer add --help 2>&1) in
*"rdma+tcp (RDMA with TCP fallback)"*) ;;
*) echo "FAIL: peer add --help does not describe rdma+tcp"; fail=1 ;;
esac
msg=$("$ctl" volume role vol0 owner 2>&1)
case $msg in
"chorusctl: volume role vol0 owner: --epoch E is required"*) ;;
*) echo "FAIL: unexpected message: $msg"; fail=1 ;;
esac
msg=$("$ctl" volume set vol0 2>&1)
case $msg in
*"nothing to change"*) ;;
*) echo "FAIL: unexpected message: $msg"; fail=1 ;;
esac

if [ ! -d /sys/module/chorus ]; then
	expect 3 "$ctl" volume list
	expect 3 "$ctl" --json volume status vol0
	expect 3 "$ctl" events --timeout 1
	msg=$("$ctl" volume list 2>&1)
	case $msg in
	"chorusctl: volume list: chorus kernel module is not loaded (generic netlink family 'chorus' not found)") ;;
	*) echo "FAIL: unexpected message: $msg"; fail=1 ;;
	esac
	# Valid replication commands get as far as the kernel.
	expect 3 "$ctl" volume create vol0 --backing /dev/vdb --node-id 1
	expect 3 "$ctl" listen 10.0.0.1
	expect 3 "$ctl" listen :: --port 7789 --json
	expect 3 "$ctl" unlisten
	expect 3 "$ctl" peer add vol0 2 10.0.0.2
	expect 3 "$ctl" peer add vol0 32 fd00::2 --port 7789 --transport rdma --conns 8 \
		--initial-sync none --json
	expect 3 "$ctl" peer add vol0 2 10.0.0.2 --transport rdma+tcp
	expect 3 "$ctl" peer add vol0 2 10.0.0.2 --transport tcp
	expect 3 "$ctl" peer del vol0 2
	expect 3 "$ctl" peer connect vol0 2
	expect 3 "$ctl" --json peer disconnect vol0 2
	expect 3 "$ctl" writeset remove vol0 2
	expect 3 "$ctl" volume role vol0 owner --epoch 0
	expect 3 "$ctl" volume role vol0 owner --epoch 18446744073709551615
	expect 3 "$ctl" volume role vol0 replica
	expect 3 "$ctl" volume verify vol0 2
	expect 3 "$ctl" volume set vol0 --resync-rate 0
	expect 3 "$ctl" volume set vol0 --request-timeout-ms 30000 --ping-interval-ms 500 \
		--ping-timeout-ms 2500 --resync-rate 10M --auto-degrade off
	msg=$("$ctl" peer connect vol0 2 2>&1)
	case $msg in
	"chorusctl: peer connect vol0 2: chorus kernel module is not loaded"*) ;;
	*) echo "FAIL: unexpected message: $msg"; fail=1 ;;
	esac
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/cfs"
printf '[node]\nid = 99\n' >"$tmp/bad.conf"
expect 2 "$daemon" --config "$tmp/bad.conf" --configfs "$tmp/cfs" --state-file "$tmp/s.json" --once
expect 2 "$daemon" --once --teardown
expect 0 "$daemon" --config "$conf" --print-plan
expect 0 "$daemon" --config "$conf" --configfs "$tmp/cfs" --state-file "$tmp/s.json" --once
[ -L "$tmp/cfs/nvmet/ports/2/subsystems/nqn.2026-11.org.chorus:demo" ] || { echo "FAIL: no port link"; fail=1; }
expect 0 "$daemon" --config "$conf" --configfs "$tmp/cfs" --state-file "$tmp/s.json" --once
expect 0 "$daemon" --configfs "$tmp/cfs" --state-file "$tmp/s.json" --teardown
if [ -n "$(ls -A "$tmp/cfs")" ] || [ -e "$tmp/s.json" ]; then
	echo "FAIL: teardown left something behind"; fail=1
fi

# format needs a block device; inspect also reads an image file, and an
# unformatted one is refused.
truncate -s 1M "$tmp/img" "$tmp/zeros"
expect 1 "$ctl" volume format --backing "$tmp/img"
expect 1 "$ctl" volume inspect --backing "$tmp/img"
msg=$("$ctl" volume inspect --backing "$tmp/img" 2>&1)
case $msg in
*": not formatted: "*) ;;
*) echo "FAIL: unexpected message: $msg"; fail=1 ;;
esac
cmp -s "$tmp/img" "$tmp/zeros" || { echo "FAIL: format or inspect wrote"; fail=1; }

# Default mode: apply, wait for SIGTERM, tear down, exit 0.
"$daemon" --config "$conf" --configfs "$tmp/cfs" --state-file "$tmp/s.json" 2>"$tmp/log" &
pid=$!
i=0
while ! grep -qs ready "$tmp/log" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: chorusd exited $rc after SIGTERM"; cat "$tmp/log"; fail=1; }
[ -z "$(ls -A "$tmp/cfs")" ] || { echo "FAIL: SIGTERM teardown left something"; fail=1; }

[ $fail -eq 0 ] && echo "all command-line checks passed"
exit $fail
