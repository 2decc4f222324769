#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's unmodified perftest (4.5) over the drop-in libibverbs, between two
# network namespaces joined by a veth pair, each side's droce device on
# net_af_packet (the topology of run_dropin_netns.sh / run_wire.sh):
#
#   server ns: veth 10.97.0.1/24 (kernel, TCP control), droce 10.97.0.11
#   client ns: veth 10.97.0.2/24 (kernel, TCP control), droce 10.97.0.12
#
# perftest's servers refuse a port that is not ACTIVE, which af_packet on an
# up veth is from the start. Both run `<test> -d droce0 -x 0 -F -n <iters>
# -p <port>`; the client adds the server's kernel IP. The server gets an
# engine lcore (-l 0,1, lcore=auto): the passive side of RDMA WRITE/READ and
# atomics waits in a TCP read() and gives an inline device no progress. The
# client runs inline (-l 1), except for ib_write_lat, whose client also waits
# outside verbs (it polls its buffer for the server's RDMA WRITE): -l 0,1.
#
# A run passes when both sides exit 0 and the client prints perftest's
# result table (the "#bytes" header and a numeric row after it).
#
# Usage: run_dropin_perftest.sh <dropin dir> [test ...]
#   default tests: PT_TESTS or the ones known to pass (below); "all" tries
#   ib_{send,write,read,atomic}_{lat,bw}.
# Exit 0 if every run passed, 77 if perftest is missing or network
# namespaces cannot be created here.
set -u

DROPIN=${1:?usage: run_dropin_perftest.sh <dropin dir> [test ...]}
shift
ALL="ib_send_lat ib_send_bw ib_write_lat ib_write_bw ib_read_lat ib_read_bw ib_atomic_lat ib_atomic_bw"
# all eight passed 3 runs in a row (2 CPUs)
PASSING=$ALL
if [ $# -gt 0 ]; then TESTS="$*"; else TESTS=${PT_TESTS:-$PASSING}; fi
[ "$TESTS" = all ] && TESTS=$ALL
for p in $TESTS ss ip timeout; do
	command -v $p >/dev/null || { echo "SKIP: $p is missing (Debian perftest / iproute2)"; exit 77; }
done
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }
DROPIN=$(cd "$DROPIN" && pwd)

if [ "$(nproc)" -ge 2 ]; then SERVER_LCORES=${PT_SERVER_LCORES:-0,1}; else SERVER_LCORES=${PT_SERVER_LCORES:-0,1@0}; fi
CLIENT_LCORE=${PT_CLIENT_LCORE:-}
ME=run_dropin_perftest PFX=dp NET=10.97.0
. "$(dirname "$0")/dropin_netns_lib.sh"
RUN_TIMEOUT=${PT_TIMEOUT:-60}

# result table: the "#bytes" header, then a row of numbers
check_out() {
	awk '/^ *#bytes/ { h = 1; next } h && /^ *[0-9]+ +[0-9]+ +[0-9.]+/ { ok = 1 } END { exit !ok }' "$1"
}

# first_error <log>: the first line that looks like an error
first_error() {
	grep -v -e '^EAL: ' "$1" | grep -m1 -iE 'err|fail|unable|couldn|not supported|invalid|timed? ?out|abort|segm' ||
		grep -v -e '^EAL: ' "$1" | tail -n1
}

# line-buffered stdout, so that a run killed by timeout leaves its output
LINEBUF=()
command -v stdbuf >/dev/null && LINEBUF=(stdbuf -oL)

n=0
# run_case <test> <args...>
run_case() {
	local prog=$1 i src crc ok=1 t0 t1
	shift
	n=$((n + 1))
	local port=$((PORT + n)) slog=$LOGDIR/$n.server clog=$LOGDIR/$n.client
	echo "== $prog -d droce0 -x 0 -F $* (server $NS_S <-veth/af_packet-> client $NS_C, TCP $KIP_S:$port)"
	t0=$(date +%s.%N)
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_server $n)" timeout -k 5 $RUN_TIMEOUT \
		ip netns exec "$NS_S" "${LINEBUF[@]}" $prog -d droce0 -x 0 -F -p $port "$@" >"$slog" 2>&1 &
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
		echo "   FAIL $prog: server: $(first_error "$slog")"
		return 1
	fi
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_client $n)" timeout -k 5 $RUN_TIMEOUT \
		ip netns exec "$NS_C" "${LINEBUF[@]}" $prog -d droce0 -x 0 -F -p $port "$@" $KIP_S >"$clog" 2>&1 &
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
	rm -rf /var/run/dpdk/dpS${ID}_$n /var/run/dpdk/dpC${ID}_$n
	check_out "$clog" || { echo "   client output lacks the result table"; ok=0; }
	printf '   %s: server exit %d, client exit %d, %.1f s\n' "$prog $*" $src $crc \
		"$(awk "BEGIN { print $t1 - $t0 }")"
	if [ $src -eq 0 ] && [ $crc -eq 0 ] && [ $ok -eq 1 ]; then
		echo "   PASS $prog"
		return 0
	fi
	[ $crc -ne 0 ] || [ $ok -eq 0 ] && echo "   FAIL $prog: client: $(first_error "$clog")"
	[ $src -ne 0 ] && echo "   FAIL $prog: server: $(first_error "$slog")"
	return 1
}

fails=0
T0=$(date +%s)
ITERS=${PT_ITERS:-200}
for t in $TESTS; do
	# ib_write_lat: both sides wait for the peer's RDMA WRITE by polling
	# their buffer, outside verbs, so the client needs an engine lcore too
	CLIENT_LCORES=
	[ $t = ib_write_lat ] && [ "$(nproc)" -ge 2 ] && CLIENT_LCORES=${PT_CLIENT_LCORES_WLAT:-0,1}
	[ $t = ib_write_lat ] && [ "$(nproc)" -lt 2 ] && CLIENT_LCORES=${PT_CLIENT_LCORES_WLAT:-0,1@0}
	run_case $t -n $ITERS || fails=$((fails + 1))
done

echo "run_dropin_perftest: $((n - fails))/$n runs passed in $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ]
