#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# RC stress between two processes on one host: N back-to-back runs of
# mp_stress (server + client, verbs API only, each with its own DROCE_EAL),
# one line per failing run (with the last lines of both logs), then
#   mp_stress (<transport>, order <order>): R runs, F failed, ops/run O, T s
# Exit 0 only if every run passed.
#
# Usage: run_mp_stress.sh <path to mp_stress> [--runs N] [--ops N]
#            [--transport shm|memif] [--order alt|server-first|client-first]
#
#   --transport shm (default): a net_shm link (drivers/net/shm), ONE link name
#        for all runs of an invocation, as a user who runs the same command
#        again would have: each run's two processes take over the sides the
#        previous run left. memif: a memif pair, a fresh socket per run.
#   --order: which process starts first. server-first: the client starts
#        once the server printed "listening" (its device is open).
#        client-first: the client starts, then (0.3 s later, if it is still
#        alive) the server; the client's TCP connect retry covers the gap.
#        alt (default): odd runs server first, even runs client first.
#        memif's client cannot start before its server (DPDK's memif PMD
#        fails the probe), so --transport memif defaults to server-first.
# Environment:
#   MP_STRESS_TIMEOUT     mp_stress --timeout: seconds without a completion
#                         before a side reports a stall (default 60)
#   MP_STRESS_SEED        base seed; run k uses base + k (default 1000)
#   MP_STRESS_KEEP_GOING  1 (default): go on after a failed run and count it;
#                         0: stop at the first failed run
#   MP_STRESS_VERBOSE     1: show both logs of every run
#
# Transports: a function transport_<name> <run> sets EAL_SERVER / EAL_CLIENT
# (and may set TRANSPORT_CLEANUP, a command run after the run, and
# TRANSPORT_FINAL, one run at the end). See run_memif.sh for notes on memif.
set -u

USAGE="usage: run_mp_stress.sh <path to mp_stress> [--runs N] [--ops N] [--transport shm|memif] [--order alt|server-first|client-first]"
MP_STRESS=${1:?$USAGE}
shift
[ -x "$MP_STRESS" ] || { echo "run_mp_stress: $MP_STRESS is not executable"; exit 1; }

RUNS=50 OPS=3000 TRANSPORT=shm ORDER=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) RUNS=${2:?}; shift 2 ;;
	--ops) OPS=${2:?}; shift 2 ;;
	--transport) TRANSPORT=${2:?}; shift 2 ;;
	--order) ORDER=${2:?}; shift 2 ;;
	*) echo "run_mp_stress: unknown argument $1"; echo "$USAGE"; exit 1 ;;
	esac
done
if [ -z "$ORDER" ]; then
	if [ "$TRANSPORT" = memif ]; then ORDER=server-first; else ORDER=alt; fi
fi
case $ORDER in
alt|server-first|client-first) ;;
*) echo "run_mp_stress: unknown order $ORDER (alt, server-first or client-first)"; exit 1 ;;
esac

TIMEOUT=${MP_STRESS_TIMEOUT:-60}
SEED_BASE=${MP_STRESS_SEED:-1000}
KEEP_GOING=${MP_STRESS_KEEP_GOING:-1}
VERBOSE=${MP_STRESS_VERBOSE:-0}
# hard bound on one process: set-up phases + a stall report + slack
KILL_AFTER=$((TIMEOUT * 3 + 60))
. "$(dirname "${BASH_SOURCE[0]}")/port_lib.sh"
PORT=$(free_port)
LOGDIR=$(mktemp -d /tmp/droce-mps-$$.XXXXXX)
SPID= CPID= TRANSPORT_CLEANUP= TRANSPORT_FINAL=
PREFIX_S=mpsS$$ PREFIX_C=mpsC$$
SHM_LINK=mps$$

if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=1; else CLIENT_LCORE=0; fi
EAL_COMMON="--no-huge -m 256 --no-pci --no-telemetry"

cleanup() {
	for p in $SPID $CPID; do
		kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
	done
	sleep 0.2
	for p in $SPID $CPID; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	[ -n "$TRANSPORT_CLEANUP" ] && eval "$TRANSPORT_CLEANUP"
	[ -n "$TRANSPORT_FINAL" ] && eval "$TRANSPORT_FINAL"
	rm -rf "/var/run/dpdk/$PREFIX_S" "/var/run/dpdk/$PREFIX_C"
	rm -rf "$LOGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- transports: set EAL_SERVER and EAL_CLIENT for run $1 ---

# net_shm link, the same name for every run: server 10.0.0.1, client 10.0.0.2
transport_shm() {
	EAL_SERVER="-l 0 $EAL_COMMON --file-prefix=$PREFIX_S --vdev=net_shm0,link=$SHM_LINK --vdev=droce0,ethdev=net_shm0,ip=10.0.0.1"
	EAL_CLIENT="-l $CLIENT_LCORE $EAL_COMMON --file-prefix=$PREFIX_C --vdev=net_shm0,link=$SHM_LINK --vdev=droce0,ethdev=net_shm0,ip=10.0.0.2"
	TRANSPORT_FINAL="rm -f /dev/shm/droce-shm.$SHM_LINK"
}

# memif pair, a fresh (abstract) socket name per run: server role=server 10.0.0.1,
# client role=client 10.0.0.2
transport_memif() {
	local sock=/tmp/droce-mps-$$-$1.sock
	EAL_SERVER="-l 0 $EAL_COMMON --file-prefix=$PREFIX_S --vdev=net_memif0,role=server,socket=$sock --vdev=droce0,ethdev=net_memif0,ip=10.0.0.1"
	EAL_CLIENT="-l $CLIENT_LCORE $EAL_COMMON --file-prefix=$PREFIX_C --vdev=net_memif0,role=client,socket=$sock --vdev=droce0,ethdev=net_memif0,ip=10.0.0.2"
	TRANSPORT_CLEANUP="rm -f $sock"
}

declare -F "transport_$TRANSPORT" >/dev/null ||
	{ echo "run_mp_stress: unknown transport $TRANSPORT"; exit 1; }

# Show a log's last lines without EAL's start-up chatter.
show_tail() {
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: No free' \
		-e '^EAL: Detected shared linkage' "$1" | tail -n "${3:-15}" | sed "s/^/    $2 | /"
}

# Classify a failed run from the exit codes and the logs (client's view first).
verdict() {
	local src=$1 crc=$2 slog=$3 clog=$4 line= logs
	case $crc in
	124|137) line="client killed by timeout -k (hung)" ;;
	3) line="client watchdog expired (hung inside a call)" ;;
	2) line=$(grep -m1 -h 'stalled:' "$clog") ;;
	0) ;;
	*) [ "$crc" -gt 128 ] && line="client killed by signal $((crc - 128))" ;;
	esac
	logs="$clog $slog"
	[ "$crc" -eq 0 ] && logs=$slog
	[ -z "$line" ] && line=$(grep -h -e 'failed:' -e 'failed during' -e 'differs' -e 'server reports' \
		-e 'stalled:' -e 'went away' -e 'out of order' -e 'completed with' -e 'expected' $logs | head -n 1)
	[ -z "$line" ] && [ "$src" -gt 128 ] && line="server killed by signal $((src - 128))"
	[ -z "$line" ] && line=$(grep -v '^EAL' "$clog" | tail -n 1)
	echo "${line#mp_stress }"
}

# start_server / start_client <k> <seed> <log>: in the background, pid in SPID / CPID
start_server() {
	DROCE_EAL=$EAL_SERVER timeout -k 5 $KILL_AFTER "$MP_STRESS" server $PORT \
		--ops "$OPS" --seed "$2" --timeout "$TIMEOUT" >"$3" 2>&1 &
	SPID=$!
}
start_client() {
	DROCE_EAL=$EAL_CLIENT timeout -k 5 $KILL_AFTER "$MP_STRESS" client $PORT \
		--ops "$OPS" --seed "$2" --timeout "$TIMEOUT" >"$3" 2>&1 &
	CPID=$!
}

# wait_listening <log>: 0 once the server printed "listening" (at most 30 s, or until it exits)
wait_listening() {
	local i

	for i in $(seq 1 300); do
		grep -qs "listening on TCP port" "$1" && return 0
		kill -0 $SPID 2>/dev/null || break
		sleep 0.1
	done
	grep -qs "listening on TCP port" "$1"
}

# abort_run <k> <seed> <order> <what> <log> <role>: a side did not come up
abort_run() {
	local p

	for p in $SPID $CPID; do
		kill_tree "$p"
		wait "$p" 2>/dev/null
	done
	SPID= CPID=
	echo "run $1 (seed $2, $3): $4"
	show_tail "$5" "$6"
	eval "$TRANSPORT_CLEANUP"; TRANSPORT_CLEANUP=
	rm -rf "/var/run/dpdk/$PREFIX_S" "/var/run/dpdk/$PREFIX_C"
	return 1
}

# run_one <k>: 0 if both sides passed.
run_one() {
	local k=$1 seed=$(( SEED_BASE + $1 )) src crc t0 t1 order=$ORDER
	local slog=$LOGDIR/run$k.server.log clog=$LOGDIR/run$k.client.log

	if [ "$order" = alt ]; then
		if [ $((k % 2)) -eq 1 ]; then order=server-first; else order=client-first; fi
	fi
	"transport_$TRANSPORT" "$k"
	PORT=$(free_port)
	t0=$(date +%s.%N)
	if [ "$order" = server-first ]; then
		start_server "$k" "$seed" "$slog"
		wait_listening "$slog" ||
			{ abort_run "$k" "$seed" "$order" "server did not come up" "$slog" server; return 1; }
		start_client "$k" "$seed" "$clog"
	else
		start_client "$k" "$seed" "$clog"
		sleep 0.3
		kill -0 $CPID 2>/dev/null || {
			wait $CPID; crc=$?
			abort_run "$k" "$seed" "$order" "client exited (code $crc) before the server started" \
				"$clog" client
			return 1
		}
		start_server "$k" "$seed" "$slog"
		wait_listening "$slog" ||
			{ abort_run "$k" "$seed" "$order" "server did not come up" "$slog" server; return 1; }
	fi
	wait $CPID
	crc=$?
	CPID=
	wait $SPID
	src=$?
	SPID=
	t1=$(date +%s.%N)
	eval "$TRANSPORT_CLEANUP"; TRANSPORT_CLEANUP=
	rm -rf "/var/run/dpdk/$PREFIX_S" "/var/run/dpdk/$PREFIX_C"
	if [ $src -eq 0 ] && [ $crc -eq 0 ]; then
		if [ "$VERBOSE" = 1 ]; then
			printf 'run %d (seed %d, %s): ok, %.1f s\n' "$k" "$seed" "$order" \
				"$(awk "BEGIN { print $t1 - $t0 }")"
			show_tail "$clog" client 3
		fi
		rm -f "$slog" "$clog"
		return 0
	fi
	printf 'run %d (seed %d, %s): FAILED (server exit %d, client exit %d, %.1f s): %s\n' "$k" \
		"$seed" "$order" $src $crc "$(awk "BEGIN { print $t1 - $t0 }")" \
		"$(verdict $src $crc "$slog" "$clog")"
	show_tail "$slog" server
	show_tail "$clog" client
	return 1
}

fails=0 done_runs=0
T0=$(date +%s)
for k in $(seq 1 "$RUNS"); do
	done_runs=$k
	if ! run_one "$k"; then
		fails=$((fails + 1))
		[ "$KEEP_GOING" = 1 ] || break
	fi
done
echo "mp_stress ($TRANSPORT, order $ORDER): $done_runs runs, $fails failed, ops/run $OPS, $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ]
