#!/bin/bash
# The bash completion of chorusctl (tools/completion/chorusctl) against the
# real binary's --help. Volume names come from `chorusctl --json volume
# list`, which needs the kernel module: a wrapper answers that one command
# with a fixed list and hands every other to the real chorusctl.
# Usage: completion_test.sh CHORUSCTL COMPLETION
set -u
real=$1
completion=$2
fail=0
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/chorusctl" <<WRAP
#!/bin/sh
case "\$*" in
"--json volume list") echo '[{"name":"repl0","size":1},{"name":"db1","size":2}]' ;;
"--json cluster volume list") echo '[{"name": "shared9"}]' ;;
*) exec "$real" "\$@" ;;
esac
WRAP
chmod +x "$dir/chorusctl"
# shellcheck source=/dev/null
. "$completion"

expect() {  # expect "WANT" WORD... : complete the last word of "chorusctl WORD..."
	local want=$1 got
	shift
	COMP_WORDS=("$dir/chorusctl" "$@")
	COMP_CWORD=$#
	COMPREPLY=()
	_chorusctl
	got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
	got=${got% }
	if [[ $got != "$want" ]]; then
		echo "FAIL: chorusctl $*<TAB>: got '$got', expected '$want'"
		fail=1
	fi
}

expect "volume" vol
expect "peer" pe
expect "delete destroy" volume de
expect "attach-disk create delete destroy format inspect list role set status verify" volume ""
expect "--json" --js
expect "--backing" volume create vol0 --back
expect "db1 repl0" volume status ""
expect "repl0" volume destroy re
expect "shared9" cluster volume status ""
expect "remove" writeset r
expect "" volume create ""
expect "/dev/null" volume create vol0 --backing /dev/nul
exit $fail
