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
if [ ! -d /sys/module/chorus ]; then
	expect 3 "$ctl" volume list
	expect 3 "$ctl" --json volume status vol0
	expect 3 "$ctl" events --timeout 1
	msg=$("$ctl" volume list 2>&1)
	case $msg in
	"chorusctl: volume list: chorus kernel module is not loaded (generic netlink family 'chorus' not found)") ;;
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
