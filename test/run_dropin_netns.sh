#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's unmodified ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong and
# ibv_srq_pingpong over the drop-in libibverbs, on a real (virtual) wire: two
# network namespaces joined by a veth pair, each process's droce device on
# net_af_packet bound to its namespace's veth end (as run_wire.sh sets up):
#
#   server ns: veth 10.98.0.1/24 (kernel, TCP control), droce 10.98.0.11
#   client ns: veth 10.98.0.2/24 (kernel, TCP control), droce 10.98.0.12
#
# The client connects to the server's TCP port over the kernel IPs; RoCE
# goes between the droce IPs (af_packet hands droce every frame, it keeps
# RoCE and ARP for its own IP). af_packet in DPDK 22.11: port MTU 1500, IB
# MTU 1024, so -m 1024 and UD messages of at most 1024 B. framesz=2048,
# qdisc_bypass=0 as in run_wire.sh.
#
# Each program runs with and without -e at two sizes. A run passes when both
# sides exit 0 and print the GID exchange and the "bytes in" / "iters in"
# lines.
#
# Usage: run_dropin_netns.sh <dropin dir>
# Exit 0 if every run passed, 77 if ibverbs-utils is missing or network
# namespaces cannot be created here.
set -u

DROPIN=${1:?usage: run_dropin_netns.sh <dropin dir>}
for p in ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ss ip timeout; do
	command -v $p >/dev/null || { echo "SKIP: $p is missing (Debian ibverbs-utils / iproute2)"; exit 77; }
done
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }
DROPIN=$(cd "$DROPIN" && pwd)

# A sanitized build links the drop-in with ASan: load its runtime first.
DROPIN_ENV=(env LD_LIBRARY_PATH="$DROPIN")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	DROPIN_ENV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi

ID=$$
NS_S=dnS$ID NS_C=dnC$ID
VS=dnvS$ID VC=dnvC$ID
KIP_S=10.98.0.1 KIP_C=10.98.0.2
RIP_S=10.98.0.11 RIP_C=10.98.0.12
PORT=$((20000 + ID % 20000))
RUN_TIMEOUT=${PP_TIMEOUT:-60}
LOGDIR=$(mktemp -d /tmp/droce-dn-$ID.XXXXXX)
SPID= CPID=
NS_MADE=
if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=1; else CLIENT_LCORE=0; fi

cleanup() {
	for p in $SPID $CPID; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	[ -n "$NS_MADE" ] && ip netns del "$NS_S" 2>/dev/null
	[ -n "$NS_MADE" ] && ip netns del "$NS_C" 2>/dev/null
	ip link del "$VS" 2>/dev/null
	rm -rf /var/run/dpdk/dnS${ID}_* /var/run/dpdk/dnC${ID}_* "$LOGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "run_dropin_netns: $*"; exit 1; }

# --- topology ---
if ! ip netns add "$NS_S" 2>"$LOGDIR/netns.err"; then
	echo "run_dropin_netns: SKIP: cannot create a network namespace: $(cat "$LOGDIR/netns.err")"
	exit 77
fi
NS_MADE=1
if ! ip netns add "$NS_C" 2>"$LOGDIR/netns.err"; then
	echo "run_dropin_netns: SKIP: cannot create a network namespace: $(cat "$LOGDIR/netns.err")"
	exit 77
fi
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
echo "run_dropin_netns: $NS_S:$VS ($KIP_S, droce $RIP_S) <-veth-> $NS_C:$VC ($KIP_C, droce $RIP_C)"

AF="qpairs=1,blocksz=4096,framesz=2048,framecnt=512,qdisc_bypass=0"
EAL_COMMON="--no-huge -m 256 --no-pci --no-telemetry"
eal_server() { echo "-l 0 $EAL_COMMON --file-prefix=dnS${ID}_$1 --vdev=net_af_packet0,iface=$VS,$AF --vdev=droce0,ethdev=net_af_packet0,ip=$RIP_S"; }
eal_client() { echo "-l $CLIENT_LCORE $EAL_COMMON --file-prefix=dnC${ID}_$1 --vdev=net_af_packet0,iface=$VC,$AF --vdev=droce0,ethdev=net_af_packet0,ip=$RIP_C"; }

show() {
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: No free' "$1" | sed "s/^/    $2 | /"
}

listening() { ip netns exec "$NS_S" ss -ltnH 2>/dev/null | awk '{ print $4 }' | grep -qE ":$1\$"; }

# check_out <log> <peer droce ip>: the usual output of a successful run
check_out() {
	grep -qE "remote address: .*GID ::ffff:$2\$" "$1" &&
	grep -qE '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$1" &&
	grep -qE '^[0-9]+ iters in [0-9.]+ seconds = [0-9.]+ usec/iter$' "$1"
}

n=0
# run_case <program> <args...>
run_case() {
	local prog=$1 i src crc ok=1 t0 t1
	shift
	n=$((n + 1))
	local port=$((PORT + n)) slog=$LOGDIR/$n.server clog=$LOGDIR/$n.client
	echo "== $prog $* (server $NS_S <-veth/af_packet-> client $NS_C, TCP $KIP_S:$port)"
	t0=$(date +%s.%N)
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_server $n)" timeout -k 5 $RUN_TIMEOUT \
		ip netns exec "$NS_S" $prog -d droce0 -g 0 -p $port "$@" >"$slog" 2>&1 &
	SPID=$!
	for i in $(seq 1 300); do
		listening $port && break
		kill -0 $SPID 2>/dev/null || break
		sleep 0.1
	done
	if ! listening $port; then
		echo "   server did not listen on $port"
		kill -KILL $SPID 2>/dev/null
		wait $SPID 2>/dev/null
		SPID=
		show "$slog" server
		return 1
	fi
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_client $n)" timeout -k 5 $RUN_TIMEOUT \
		ip netns exec "$NS_C" $prog -d droce0 -g 0 -p $port "$@" $KIP_S >"$clog" 2>&1 &
	CPID=$!
	wait $CPID
	crc=$?
	CPID=
	wait $SPID
	src=$?
	SPID=
	t1=$(date +%s.%N)
	show "$slog" server
	show "$clog" client
	rm -rf /var/run/dpdk/dnS${ID}_$n /var/run/dpdk/dnC${ID}_$n
	check_out "$slog" $RIP_C || { echo "   server output lacks the GID exchange or the result lines"; ok=0; }
	check_out "$clog" $RIP_S || { echo "   client output lacks the GID exchange or the result lines"; ok=0; }
	printf '   %s: server exit %d, client exit %d, %.1f s\n' "$prog $*" $src $crc \
		"$(awk "BEGIN { print $t1 - $t0 }")"
	[ $src -eq 0 ] && [ $crc -eq 0 ] && [ $ok -eq 1 ]
}

fails=0
T0=$(date +%s)
ITERS=${PP_ITERS:-500}
for e in "" -e; do
	for s in 1 4096; do
		run_case ibv_rc_pingpong -m 1024 -s $s -n $ITERS $e || fails=$((fails + 1))
	done
	for s in 1 4096; do
		run_case ibv_uc_pingpong -m 1024 -s $s -n $ITERS $e || fails=$((fails + 1))
	done
	for s in 1 1024; do
		run_case ibv_ud_pingpong -s $s -n $ITERS $e || fails=$((fails + 1))
	done
	for s in 1 4096; do
		run_case ibv_srq_pingpong -m 1024 -q 16 -s $s -n $ITERS $e || fails=$((fails + 1))
	done
done

echo "run_dropin_netns: $((n - fails))/$n runs passed in $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ]
