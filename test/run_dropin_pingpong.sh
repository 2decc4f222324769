#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's unmodified ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong,
# ibv_srq_pingpong and ibv_xsrq_pingpong (XRC) over the drop-in libibverbs,
# between two processes joined by memif (as run_memif.sh joins mp_peer):
#   server: droce0 on net_memif0 (role=server), 10.0.0.1
#   client: droce0 on net_memif0 (role=client), 10.0.0.2
# Both are `<prog> -d droce0 -g 0 -p <port> ...`; the client connects to the
# server's TCP port on localhost once the server listens (ss -ltn). Several
# sizes, completion events (-e) at least once per program. Each run must
# exit 0 on both sides and print the GID exchange and its "bytes in ...
# seconds" / "iters in ... seconds" lines (ibv_xsrq_pingpong: the exchange,
# with the peer's XRC SRQ number, and "success").
#
# memif's frames are at most 1518 B, so the port MTU is 1500 and the IB MTU
# 1024: -m 1024 (the programs' default, given explicitly), and UD messages
# of at most 1024 B (ibv_ud_pingpong caps its size to the active MTU).
# With one lcore (-l 0) droce progresses inline: a blocking
# ibv_get_cq_event() sleeps on the channel fd while droce's waker thread
# drives the device, so -e works.
# The server sends the last UC/UD message and exits: droce lingers 100 ms
# at exit (DROCE_EXIT_LINGER_MS) so that the client reads it before the
# memif connection closes and memif discards what is unread.
#
# With --shm, the two processes are joined by a net_shm link instead
# (drivers/net/shm: no server side, the port is up from the start, frames up
# to 4288 B): the same runs, plus RC/UC/SRQ at -m 4096 and UD at 4096 B.
#
# Usage: run_dropin_pingpong.sh <dropin dir> [--shm]
# Exit 0 if every run passed, 77 if ibverbs-utils or ss is missing.
set -u

DROPIN=${1:?usage: run_dropin_pingpong.sh <dropin dir> [--shm]}
TOPO=memif
[ "${2:-}" = --shm ] && TOPO=shm
for p in ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ibv_xsrq_pingpong \
	ss timeout; do
	command -v $p >/dev/null || { echo "SKIP: $p is missing (Debian ibverbs-utils / iproute2)"; exit 77; }
done
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }

# A sanitized build (-Dsanitize=true) links the drop-in with ASan: an
# unsanitized program must load the ASan runtime first, and its own leaks
# are not ours to report.
DROPIN_ENV=(env LD_LIBRARY_PATH="$DROPIN")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	DROPIN_ENV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi

SOCK=/tmp/droce-pp-$$.sock
LOGDIR=$(mktemp -d /tmp/droce-pp-$$.XXXXXX)
# each case's TCP port: free, below the ephemeral range (a port in it was
# once some connection's source port, and the server could not listen)
. "$(dirname "${BASH_SOURCE[0]}")/port_lib.sh"
RUN_TIMEOUT=${PP_TIMEOUT:-60}
SPID= CPID=
if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=1; else CLIENT_LCORE=0; fi

cleanup() {
	for p in $SPID $CPID; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	rm -f "$SOCK" /dev/shm/droce-shm.pp$$
	rm -rf /var/run/dpdk/ppS$$* /var/run/dpdk/ppC$$* "$LOGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

EAL_COMMON="--no-huge -m 256 --no-pci --no-telemetry"
if [ $TOPO = shm ]; then
	# one link name for every run, as a user repeating a command would have
	PORT_S="--vdev=net_shm0,link=pp$$" PORT_C="--vdev=net_shm0,link=pp$$" ETH=net_shm0
else
	PORT_S="--vdev=net_memif0,role=server,socket=$SOCK" PORT_C="--vdev=net_memif0,role=client,socket=$SOCK"
	ETH=net_memif0
fi
eal_server() { echo "-l 0 $EAL_COMMON --file-prefix=ppS$$_$1 $PORT_S --vdev=droce0,ethdev=$ETH,ip=10.0.0.1"; }
eal_client() { echo "-l $CLIENT_LCORE $EAL_COMMON --file-prefix=ppC$$_$1 $PORT_C --vdev=droce0,ethdev=$ETH,ip=10.0.0.2"; }

show() {
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: No free' "$1" | sed "s/^/    $2 | /"
}

listening() { ss -ltnH 2>/dev/null | awk '{ print $4 }' | grep -qE ":$1\$"; }

# check_out <log> <peer ip> <program>: the usual output of a successful run
check_out() {
	if [ "$3" = ibv_xsrq_pingpong ]; then
		grep -qE "^ *remote: LID [0-9a-f]+, QPN RECV [0-9a-f]+ SEND [0-9a-f]+, PSN [0-9a-f]+, SRQN [0-9a-f]+, GID ::ffff:$2\$" "$1" &&
		grep -qE '^success$' "$1"
		return
	fi
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
	local port slog=$LOGDIR/$n.server clog=$LOGDIR/$n.client
	port=$(free_port)
	rm -f "$SOCK"
	echo "== $prog $* (server 10.0.0.1 <-$TOPO-> client 10.0.0.2, TCP port $port)"
	t0=$(date +%s.%N)
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_server $n)" timeout -k 5 $RUN_TIMEOUT \
		$prog -d droce0 -g 0 -p $port "$@" >"$slog" 2>&1 &
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
		$prog -d droce0 -g 0 -p $port "$@" 127.0.0.1 >"$clog" 2>&1 &
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
	rm -rf /var/run/dpdk/ppS$$_$n /var/run/dpdk/ppC$$_$n
	check_out "$slog" 10.0.0.2 $prog || { echo "   server output lacks the GID exchange or the result lines"; ok=0; }
	check_out "$clog" 10.0.0.1 $prog || { echo "   client output lacks the GID exchange or the result lines"; ok=0; }
	printf '   %s: server exit %d, client exit %d, %.1f s\n' "$prog $*" $src $crc \
		"$(awk "BEGIN { print $t1 - $t0 }")"
	[ $src -eq 0 ] && [ $crc -eq 0 ] && [ $ok -eq 1 ]
}

fails=0
T0=$(date +%s)
# one CPU: the two busy-polling processes time-share it, ~10 ms a round trip
# (a sanitized drop-in: 300 round trips, the same code paths through the
# sanitizers, which slow each one down)
if [ "$(nproc)" -lt 2 ]; then ITERS=${PP_ITERS:-200}
elif [ -n "$SAN_RT" ]; then ITERS=${PP_ITERS:-300}
else ITERS=${PP_ITERS:-1000}; fi
for s in 1 1024 4096; do
	run_case ibv_rc_pingpong -m 1024 -s $s -n $ITERS || fails=$((fails + 1))
done
run_case ibv_rc_pingpong -m 1024 -s 65536 -n 200 || fails=$((fails + 1))
run_case ibv_rc_pingpong -m 1024 -s 4096 -n $ITERS -e || fails=$((fails + 1))
# -N: ibv_create_qp_ex with send ops and the ibv_wr_* API
run_case ibv_rc_pingpong -m 1024 -s 4096 -n $ITERS -N || fails=$((fails + 1))
run_case ibv_rc_pingpong -m 1024 -s 65536 -n 200 -N -e || fails=$((fails + 1))
for s in 1 1024 4096; do
	run_case ibv_uc_pingpong -m 1024 -s $s -n $ITERS || fails=$((fails + 1))
done
run_case ibv_uc_pingpong -m 1024 -s 1024 -n $ITERS -e || fails=$((fails + 1))
for s in 1 512 1024; do
	run_case ibv_ud_pingpong -s $s -n $ITERS || fails=$((fails + 1))
done
run_case ibv_ud_pingpong -s 1024 -n $ITERS -e || fails=$((fails + 1))
for s in 1 1024 4096; do
	run_case ibv_srq_pingpong -m 1024 -s $s -n $ITERS || fails=$((fails + 1))
done
run_case ibv_srq_pingpong -m 1024 -s 4096 -n $ITERS -e || fails=$((fails + 1))
# XRC: SENDs from the XRC_SEND QP through the peer's XRC_RECV QP into its
# XRC SRQ of one WQE (RNR NAKs whenever the next SEND comes first)
for s in 1 4096; do
	run_case ibv_xsrq_pingpong -m 1024 -s $s -n $ITERS || fails=$((fails + 1))
done
run_case ibv_xsrq_pingpong -m 1024 -s 65536 -n 200 -e || fails=$((fails + 1))
if [ $TOPO = shm ]; then
	run_case ibv_rc_pingpong -m 4096 -s 65536 -n 200 || fails=$((fails + 1))
	run_case ibv_uc_pingpong -m 4096 -s 4096 -n $ITERS || fails=$((fails + 1))
	run_case ibv_ud_pingpong -s 4096 -n $ITERS || fails=$((fails + 1))
	run_case ibv_srq_pingpong -m 4096 -s 8192 -n $ITERS -e || fails=$((fails + 1))
	run_case ibv_xsrq_pingpong -m 4096 -s 8192 -n $ITERS || fails=$((fails + 1))
fi

echo "run_dropin_pingpong ($TOPO): $((n - fails))/$n runs passed in $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ]
