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
# The caller sets ME (its name, for messages), PFX (two letters naming its
# namespaces, links and EAL file prefixes), NET (a /24 prefix, e.g. 10.98.0)
# and DROPIN (the drop-in directory, absolute). It may set SERVER_LCORES (default 0) and
# CLIENT_LCORES (default: lcore 1 when there are two CPUs) before calling
# eal_server/eal_client. Exits 77 if namespaces cannot be created.

# A sanitized build links the drop-in with ASan: load its runtime first.
DROPIN_ENV=(env LD_LIBRARY_PATH="$DROPIN")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	DROPIN_ENV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi

ID=$$
NS_S=${PFX}S$ID NS_C=${PFX}C$ID
VS=${PFX}vS$ID VC=${PFX}vC$ID
KIP_S=$NET.1 KIP_C=$NET.2
RIP_S=$NET.11 RIP_C=$NET.12
PORT=$((20000 + ID % 20000))
LOGDIR=$(mktemp -d /tmp/droce-$PFX-$ID.XXXXXX)
SPID= CPID=
NS_MADE=
if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=${CLIENT_LCORE:-1}; else CLIENT_LCORE=0; fi
SERVER_LCORES=${SERVER_LCORES:-0}

cleanup() {
	for p in $SPID $CPID; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	[ -n "$NS_MADE" ] && ip netns del "$NS_S" 2>/dev/null
	[ -n "$NS_MADE" ] && ip netns del "$NS_C" 2>/dev/null
	ip link del "$VS" 2>/dev/null
	rm -rf /var/run/dpdk/${PFX}S${ID}_* /var/run/dpdk/${PFX}C${ID}_* "$LOGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "$ME: $*"; exit 1; }

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
EAL_COMMON="--no-huge -m 256 --no-pci --no-telemetry"
eal_server() { echo "--lcores=$SERVER_LCORES $EAL_COMMON --file-prefix=${PFX}S${ID}_$1 --vdev=net_af_packet0,iface=$VS,$AF --vdev=droce0,ethdev=net_af_packet0,ip=$RIP_S"; }
eal_client() { echo "--lcores=${CLIENT_LCORES:-$CLIENT_LCORE} $EAL_COMMON --file-prefix=${PFX}C${ID}_$1 --vdev=net_af_packet0,iface=$VC,$AF --vdev=droce0,ethdev=net_af_packet0,ip=$RIP_C"; }

show() {
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: No free' "$1" | sed "s/^/    $2 | /"
}

listening() { ip netns exec "$NS_S" ss -ltnH 2>/dev/null | awk '{ print $4 }' | grep -qE ":$1\$"; }
