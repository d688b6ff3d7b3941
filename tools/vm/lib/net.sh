# shellcheck shell=bash
# The lab's private network: a network namespace of its own holding a bridge and one tap per VM.
# qemu runs inside the namespace, so guest traffic can go nowhere but the bridge. Deleting the
# namespace deletes the bridge and the taps with it.

# Namespace name, unique per lab dir (several labs, e.g. several checkouts, can coexist).
lab_netns() {
	printf 'chorus-lab-%s' "$(printf '%s' "$LAB_DIR" | sha256sum | cut -c1-10)"
}

# Create the namespace, bridge br0 (10.99.0.254/24, so the host can reach the VMs with
# `ip netns exec NS ...`) and taps tap1..tapN.
net_up() {
	local n=$1 ns i
	ns=$(lab_netns)
	ip netns add "$ns" || die "cannot create network namespace $ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" link add br0 type bridge stp_state 0 forward_delay 0
	ip -n "$ns" addr add "$LAB_SUBNET.254/24" dev br0
	ip -n "$ns" link set br0 up
	for ((i = 1; i <= n; i++)); do
		ip -n "$ns" tuntap add dev "tap$i" mode tap
		ip -n "$ns" link set "tap$i" master br0
		ip -n "$ns" link set "tap$i" up
	done
	printf '%s\n' "$ns" > "$LAB_DIR/state/netns"
}

# Remove the namespace if it exists (taps and bridge go with it). Idempotent.
net_down() {
	local ns
	ns=$(lab_netns)
	if ip netns list | awk '{ print $1 }' | grep -qx "$ns"; then
		ip netns del "$ns" || log "warning: cannot delete network namespace $ns"
	fi
}
