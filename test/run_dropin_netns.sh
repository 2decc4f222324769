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

ME=run_dropin_netns PFX=dn NET=10.98.0
. "$(dirname "$0")/dropin_netns_lib.sh"
RUN_TIMEOUT=${PP_TIMEOUT:-60}

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
