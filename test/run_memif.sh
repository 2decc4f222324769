#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two mp_peer processes (verbs API only) joined by a memif pair:
#   server: droce0 on net_memif0 (role=server), 10.0.0.1
#   client: droce0 on net_memif0 (role=client), 10.0.0.2
# Cases: RC over an SRQ (1 B .. 1 MiB), RC with its own RQ, UD over an SRQ.
# Usage: run_memif.sh <path to mp_peer>. Exit 0 only if every case passed.
#
# Notes on Debian's DPDK 22.11 memif:
# - --no-huge works as is: in the default (copy) mode memif shares its own
#   memfd-backed regions, not EAL memory, so neither --single-file-segments
#   nor --in-memory is needed (those matter only for zero-copy=yes).
# - The socket is abstract by default (socket-abstract=yes): no file appears
#   at the socket path; the rm below is for socket-abstract=no.
# - memif's max frame is 1518 B, so the port MTU stays 1500 (IB MTU 1024):
#   mtu=4200 is refused by rte_eth_dev_configure.
# - memif itself never retries a client: one that connects before the
#   server exists fails to start, and one that connects while the server's
#   memif is half-probed gets "ID 0 not found" (the link stays down). droce
#   restarts such a port every DROCE_PORT_REVIVE_MS until it connects, so
#   either may start first: the first three cases start the server first
#   (the client after it printed "listening"), the last the client first.
# - With 2 or more CPUs the client gets its own core (-l 1): each side
#   busy-polls, and two pollers time-sharing one core is much slower.
set -u

MP_PEER=${1:?usage: run_memif.sh <path to mp_peer>}
[ -x "$MP_PEER" ] || { echo "run_memif: $MP_PEER is not executable"; exit 1; }

SOCK=/tmp/droce-mp-$$.sock
. "$(dirname "${BASH_SOURCE[0]}")/port_lib.sh"
PORT=$(free_port)
LOGDIR=$(mktemp -d /tmp/droce-mp-$$.XXXXXX)
CASE_TIMEOUT=${MP_CASE_TIMEOUT:-60}	# mp_peer's --timeout, per phase
KILL_AFTER=$((CASE_TIMEOUT * 2 + 20))	# hard bound on one process
SPID= CPID=

if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=1; else CLIENT_LCORE=0; fi

cleanup() {
	for p in $SPID $CPID; do
		kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
	done
	sleep 0.2
	for p in $SPID $CPID; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	rm -f "$SOCK"
	rm -rf "/var/run/dpdk/mpS$$" "/var/run/dpdk/mpC$$"
	rm -rf "$LOGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

EAL_COMMON="--no-huge -m 256 --no-pci --no-telemetry"
EAL_SERVER="-l 0 $EAL_COMMON --file-prefix=mpS$$ --vdev=net_memif0,role=server,socket=$SOCK --vdev=droce0,ethdev=net_memif0,ip=10.0.0.1"
EAL_CLIENT="-l $CLIENT_LCORE $EAL_COMMON --file-prefix=mpC$$ --vdev=net_memif0,role=client,socket=$SOCK --vdev=droce0,ethdev=net_memif0,ip=10.0.0.2"

# Show a log without EAL's start-up chatter.
show() {
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: No free' \
		-e '^EAL: Detected shared linkage' "$1" | sed "s/^/    $2 | /"
}

# run_case <name> <mp_peer args...>: returns 0 if both sides passed.
# CLIENT_FIRST=1: the client starts a second before the server.
run_case() {
	local name=$1 t0 t1 src crc i
	shift
	local slog=$LOGDIR/$name.server.log clog=$LOGDIR/$name.client.log

	echo "== $name: mp_peer $* (server 10.0.0.1 <-memif-> client 10.0.0.2)"
	t0=$(date +%s.%N)
	CPID=
	if [ "${CLIENT_FIRST:-0}" = 1 ]; then
		DROCE_EAL=$EAL_CLIENT timeout -k 5 $KILL_AFTER "$MP_PEER" client $PORT "$@" \
			--timeout "$CASE_TIMEOUT" >"$clog" 2>&1 &
		CPID=$!
		sleep 1
	fi
	DROCE_EAL=$EAL_SERVER timeout -k 5 $KILL_AFTER "$MP_PEER" server $PORT "$@" \
		--timeout "$CASE_TIMEOUT" >"$slog" 2>&1 &
	SPID=$!
	# the server is up (EAL, memif listener, droce device open) when it listens
	for i in $(seq 1 300); do
		grep -qs "listening on TCP port" "$slog" && break
		kill -0 $SPID 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -qs "listening on TCP port" "$slog"; then
		echo "   server did not come up"
		kill -KILL $SPID 2>/dev/null
		wait $SPID 2>/dev/null
		SPID=
		show "$slog" server
		return 1
	fi
	if [ -z "$CPID" ]; then
		DROCE_EAL=$EAL_CLIENT timeout -k 5 $KILL_AFTER "$MP_PEER" client $PORT "$@" \
			--timeout "$CASE_TIMEOUT" >"$clog" 2>&1 &
		CPID=$!
	fi
	wait $CPID
	crc=$?
	CPID=
	wait $SPID
	src=$?
	SPID=
	t1=$(date +%s.%N)
	show "$slog" server
	show "$clog" client
	rm -rf "/var/run/dpdk/mpS$$" "/var/run/dpdk/mpC$$"
	printf '   %s: server exit %d, client exit %d, %.1f s\n' "$name" $src $crc \
		"$(awk "BEGIN { print $t1 - $t0 }")"
	[ $src -eq 0 ] && [ $crc -eq 0 ]
}

# 27 sizes; 4 x 27 messages so each size is sent with each i % 4 variant
# (immediate data on i % 4 == 3) and a spread of the inline / 2-SGE variants.
RC_SIZES=1,2,3,4,7,8,63,64,65,255,256,1000,1023,1024,1025,1500,2047,2048,4095,4096,4097,8192,65535,65536,262143,1048575,1M
UD_SIZES=1,2,3,4,39,40,41,63,64,65,255,256,1000,1023,mtu

fails=0
T0=$(date +%s)
run_case rc_srq --qp rc --srq --msgs 108 --sizes $RC_SIZES --seed 11 || fails=$((fails + 1))
run_case rc     --qp rc --msgs 108 --sizes $RC_SIZES --seed 12 || fails=$((fails + 1))
run_case ud_srq --qp ud --srq --msgs 300 --sizes $UD_SIZES --seed 13 || fails=$((fails + 1))
CLIENT_FIRST=1 run_case rc_client_first --qp rc --msgs 108 --sizes $RC_SIZES --seed 14 ||
	fails=$((fails + 1))
echo "run_memif: $((4 - fails))/4 cases passed in $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ]
