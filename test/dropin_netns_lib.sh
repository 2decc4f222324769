#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by the drop-in tests that run two processes in two network
# namespaces joined by a veth pair, each process's droce device on
# net_af_packet bound to its end (as run_wire.sh sets up):
#
#   server ns: veth $NET.1/24 (kernel, TCP control), droce $NET.11
#   client ns: veth $NET.2/24 (kernel, TCP control), droce $NET.12
#
# The caller sets what dropin_lib.sh asks for (ME, PFX, DROPIN, optionally
# SERVER_LCORES and CLIENT_LCORES) and NET (a /24 prefix, e.g. 10.98.0).
# Exits 77 if namespaces cannot be created.

. "$(dirname "${BASH_SOURCE[0]}")/dropin_lib.sh"

NS_S=${PFX}S$ID NS_C=${PFX}C$ID
VS=${PFX}vS$ID VC=${PFX}vC$ID
KIP_S=$NET.1 KIP_C=$NET.2
RIP_S=$NET.11 RIP_C=$NET.12
IN_S=(ip netns exec "$NS_S") IN_C=(ip netns exec "$NS_C")
NS_MADE=

topo_cleanup() {
	[ -n "$NS_MADE" ] && ip netns del "$NS_S" 2>/dev/null
	[ -n "$NS_MADE" ] && ip netns del "$NS_C" 2>/dev/null
	ip link del "$VS" 2>/dev/null
}

# --- topology ---
for ns in "$NS_S" "$NS_C"; do
	if ! ip netns add "$ns" 2>"$LOGDIR/netns.err"; then
		echo "$ME: SKIP: cannot create a network namespace: $(cat "$LOGDIR/netns.err")"
		exit 77
	fi
	NS_MADE=1
done
ip link add "$VS" type veth peer name "$VC" || fail "cannot create the veth pair"
ip link set "$VS" netns "$NS_S" || fail "cannot move $VS"
ip link set "$VC" netns "$NS_C" || fail "cannot move $VC"
for x in "$NS_S $VS $KIP_S" "$NS_C $VC $KIP_C"; do
	set -- $x
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
	ip netns exec "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
	ip -n "$1" link set lo up
	ip -n "$1" link set "$2" mtu 1500
	ip -n "$1" addr add "$3/24" dev "$2" || fail "cannot address $2"
	ip -n "$1" link set "$2" up || fail "cannot bring $2 up"
done
for i in $(seq 1 50); do
	ip -n "$NS_S" -o link show "$VS" | grep -q "state UP" &&
		ip -n "$NS_C" -o link show "$VC" | grep -q "state UP" && break
	sleep 0.1
done
echo "$ME: $NS_S:$VS ($KIP_S, droce $RIP_S) <-veth-> $NS_C:$VC ($KIP_C, droce $RIP_C)"

AF="qpairs=1,blocksz=4096,framesz=2048,framecnt=512,qdisc_bypass=0"
eal_server() { echo "--lcores=$SERVER_LCORES $EAL_COMMON --file-prefix=${PFX}S${ID}_$1 --vdev=net_af_packet0,iface=$VS,$AF --vdev=droce0,ethdev=net_af_packet0,ip=$RIP_S"; }
eal_client() { echo "--lcores=${CLIENT_LCORES:-$CLIENT_LCORE} $EAL_COMMON --file-prefix=${PFX}C${ID}_$1 --vdev=net_af_packet0,iface=$VC,$AF --vdev=droce0,ethdev=net_af_packet0,ip=$RIP_C"; }

listening() { ip netns exec "$NS_S" ss -ltnH 2>/dev/null | awk '{ print $4 }' | grep -qE ":$1\$"; }
