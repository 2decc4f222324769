#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A peer process killed mid-transfer, then replaced: one survivor process
# runs three RC sessions of mp_stress (--sessions 3 --peer-may-die 2) over a
# net_shm link (one link name for everything), against three peer processes
# of the other role started one after another:
#
#   peer 1  runs to completion                            must exit 0
#   peer 2  a long plan (--ops 200000), SIGKILLed ~0.4 s  (the survivor's
#           after it connected its QP                      session 2 must end)
#   peer 3  runs to completion                            must exit 0
#
# The survivor must end every session (1 and 3 passed, 2 passed or "peer
# gone") and exit 0: no crash (exit > 128), no hang (bounded by timeout -k).
# Peer 3 takes over the side of the link peer 2's process held, with a new
# MAC; the survivor must reach it.
#
# The survivor runs with --leak-check: its droce objects (contexts, PDs, MRs,
# CQs, SRQs, QPs, AHs), its mbuf pool level and DPDK's memory (mempools,
# memzones, rte_malloc objects) after every session's teardown, session 2's
# included, must be where they were before session 1 ("leak check after
# session K: PASS").
#
# A survivor client, which has WRs in flight when its server dies, must get
# its first error completion within twice its RC retry budget, timeout x
# (retry_cnt + 1) (33.6 ms), plus 1 s, plus 0.8 s, of the SIGKILL (the
# measured time is printed): a packet that cannot leave (a port that takes
# nothing, as a memif port whose peer left, or one that no longer drains it)
# waits at least 100 ms per retry, (retry_cnt + 1) x 100 ms; a survivor
# server only receives, so no timer of its runs out: its session ends on TCP
# EOF and its receives are flushed (printed).
#
# Scenarios (one line each), then "mp_reconnect: S scenarios, F failed":
#   survivor=server  the killed client was sending: the survivor, which
#                    mostly receives, sees the TCP connection close
#   survivor=client  the killed server was receiving while the survivor was
#                    busy sending: its RC QP must report the dead peer
#                    (IBV_WC_RETRY_EXC_ERR), then flush
#
# --memif: the same over a net_memif pair instead of net_shm, each process
# the memif role of its TCP role (the survivor server is the memif server its
# clients come and go from; the survivor client loses its memif server, and
# droce restarts its port until the next server is there). DPDK 22.11's memif
# unmaps its rings when the peer leaves, under a burst droce may be running:
# the survivor must not crash (droce holds the port's own lock around its
# bursts), and memif never reconnects a client by itself.
#
# Usage: run_mp_reconnect.sh <path to mp_stress> [--memif]
# Environment:
#   MP_RECONNECT_TIMEOUT  mp_stress --timeout (default 10)
#   MP_RECONNECT_VERBOSE  1: show the survivor's session lines of every scenario
#   MP_RECONNECT_SCENARIOS  the survivor roles to run (default "server client")
#   MP_RECONNECT_MEMIF_SWAP 1: with --memif, each process takes the memif role
#                         opposite to its TCP role (a survivor client that sends
#                         hard is the memif server its peers leave)
set -u

MP_STRESS=${1:?usage: run_mp_reconnect.sh <path to mp_stress> [--memif]}
[ -x "$MP_STRESS" ] || { echo "run_mp_reconnect: $MP_STRESS is not executable"; exit 1; }
MEMIF=0 LEAK=--leak-check
[ "${2:-}" = --memif ] && MEMIF=1 LEAK=--leak-check-droce

TIMEOUT=${MP_RECONNECT_TIMEOUT:-10}
VERBOSE=${MP_RECONNECT_VERBOSE:-0}
OPS=3000 BIG_OPS=200000 KILL_DELAY=0.4
PEER_BOUND=$((TIMEOUT * 3 + 20))	# one peer process
SURV_BOUND=$((TIMEOUT * 6 + 40))	# the survivor: three sessions
. "$(dirname "${BASH_SOURCE[0]}")/port_lib.sh"
PORT=$(free_port)
LINK=mpr$$
LOGDIR=$(mktemp -d /tmp/droce-mpr-$$.XXXXXX)
SURV_PID= PEER_PID=

if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=1; else CLIENT_LCORE=0; fi
EAL_COMMON="--no-huge -m 256 --no-pci --no-telemetry"

cleanup() {
	local p

	for p in $SURV_PID $PEER_PID; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	rm -f "/dev/shm/droce-shm.$LINK"
	rm -rf /var/run/dpdk/mprS$$_* /var/run/dpdk/mprP$$_*
	rm -rf "$LOGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# eal <role> <file prefix>
eal() {
	local port=net_shm0 vdev="net_shm0,link=$LINK"

	if [ $MEMIF = 1 ]; then
		local role=$1

		if [ "${MP_RECONNECT_MEMIF_SWAP:-0}" = 1 ]; then
			[ "$1" = server ] && role=client || role=server
		fi
		port=net_memif0
		vdev="net_memif0,role=$role,socket=/tmp/droce-mpr-$LINK.sock"
	fi
	if [ "$1" = server ]; then
		echo "-l 0 $EAL_COMMON --file-prefix=$2 --vdev=$vdev --vdev=droce0,ethdev=$port,ip=10.0.0.1"
	else
		echo "-l $CLIENT_LCORE $EAL_COMMON --file-prefix=$2 --vdev=$vdev --vdev=droce0,ethdev=$port,ip=10.0.0.2"
	fi
}

show_tail() {
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: No free' \
		-e '^EAL: Detected shared linkage' "$1" 2>/dev/null | tail -n "${3:-12}" | sed "s/^/    $2 | /"
}

# exit code -> words
how_exit() {
	case $1 in
	0) echo "exit 0" ;;
	124|137) echo "killed by timeout -k (hung), exit $1" ;;
	3) echo "watchdog expired (hung inside a call), exit 3" ;;
	2) echo "stalled, exit 2" ;;
	*) if [ "$1" -gt 128 ]; then echo "killed by signal $(($1 - 128)) (crash?), exit $1"
	   else echo "exit $1"; fi ;;
	esac
}

# the mp_stress process under a "timeout" wrapper
child_of() { pgrep -P "$1" 2>/dev/null | head -n 1; }

# scenario <survivor role>: 0 if it passed; prints one line (and logs when it failed)
scenario() {
	local surv=$1 peer t0 i rc src=-1 why= gone slog plog ops cpid kill_rt= errline extra=
	local name="survivor=$1"

	if [ "$surv" = server ]; then
		peer=client
		name="$name (its client killed while sending)"
	else
		peer=server
		name="$name (its server killed while the survivor sends)"
	fi
	slog=$LOGDIR/$surv.survivor.log
	t0=$(date +%s.%N)
	DROCE_EAL=$(eal "$surv" "mprS$$_$surv") timeout -k 5 $SURV_BOUND "$MP_STRESS" "$surv" $PORT \
		--sessions 3 --peer-may-die 2 --ops $OPS --timeout "$TIMEOUT" $LEAK \
		>"$slog" 2>&1 &
	SURV_PID=$!
	if [ "$surv" = server ]; then
		for i in $(seq 1 300); do
			grep -qs "listening on TCP port" "$slog" && break
			kill -0 $SURV_PID 2>/dev/null || break
			sleep 0.1
		done
		grep -qs "listening on TCP port" "$slog" || why="the survivor did not come up"
	fi

	for i in 1 2 3; do
		[ -z "$why" ] || break
		plog=$LOGDIR/$surv.peer$i.log
		ops=$OPS
		[ $i = 2 ] && ops=$BIG_OPS
		DROCE_EAL=$(eal "$peer" "mprP$$_${surv}_$i") timeout -k 5 $PEER_BOUND "$MP_STRESS" "$peer" \
			$PORT --ops $ops --timeout "$TIMEOUT" >"$plog" 2>&1 &
		PEER_PID=$!
		if [ $i = 2 ]; then
			# its QP is about to be connected: data moves right after
			for _ in $(seq 1 300); do
				grep -qs "RC QPN" "$plog" && break
				kill -0 $PEER_PID 2>/dev/null || break
				sleep 0.1
			done
			if grep -qs "RC QPN" "$plog"; then
				sleep $KILL_DELAY
				cpid=$(child_of $PEER_PID)
				kill_rt=$(date +%s.%N)
				kill -KILL "$cpid" 2>/dev/null
			fi
		fi
		wait $PEER_PID 2>/dev/null	# no "Killed" notice for peer 2
		rc=$?
		PEER_PID=
		if [ $i = 2 ]; then
			[ $rc -eq 137 ] ||
				why="peer 2 was not killed mid-transfer ($(how_exit $rc)): see its log"
		elif [ $rc -ne 0 ]; then
			why="peer $i ($peer) failed: $(how_exit $rc)"
		fi
		if [ -z "$why" ] && [ $i -lt 3 ] && ! kill -0 $SURV_PID 2>/dev/null; then
			wait $SURV_PID
			src=$?
			SURV_PID=
			why="the survivor exited after peer $i: $(how_exit $src)"
		fi
	done

	if [ -n "$SURV_PID" ]; then
		if [ -n "$why" ]; then
			# something failed already: give the survivor a moment, then stop it
			for _ in $(seq 1 20); do kill -0 $SURV_PID 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$(child_of $SURV_PID)" 2>/dev/null
		fi
		wait $SURV_PID
		src=$?
		SURV_PID=
	fi
	if [ -z "$why" ]; then
		if [ $src -ne 0 ]; then
			why="the survivor failed: $(how_exit $src)"
		elif ! grep -q "session 1: PASS" "$slog" || ! grep -q "session 3: PASS" "$slog" ||
		     ! grep -qE "session 2: (PASS|peer gone)" "$slog"; then
			why="the survivor exited 0 without three ended sessions"
		else
			for i in 1 2 3; do
				grep -q "leak check after session $i: PASS" "$slog" ||
					why="no passed leak check after the survivor's session $i"
			done
		fi
	fi
	# the survivor client's first error completion, against the SIGKILL
	if [ -z "$why" ] && [ "$surv" = client ]; then
		errline=$(grep -m1 "session 2: first error completion" "$slog")
		if [ -z "$errline" ]; then
			why="the survivor client got no error completion after its server was killed"
		else
			# "... at realtime T, D s after ...; RC budget B ms; status S"
			extra=$(echo "$errline" | awk -v k="$kill_rt" '{
				for (i = 1; i <= NF; i++) {
					if ($i == "realtime") t = $(i + 1)
					if ($i == "budget") b = $(i + 1)
				}
				sub(/,$/, "", t)
				st = $0
				sub(/.*; status /, "", st)
				d = t - k
				bound = 2 * b / 1000 + 1 + 0.8
				printf "first error completion (%s) %.3f s after the SIGKILL, RC budget %.1f ms, " \
				       "bound %.3f s%s", st, d, b, bound, d <= bound ? "" : ": too late"
			}')
			case $extra in
			*"too late"*) why=$extra ;;
			esac
		fi
	elif [ -z "$why" ]; then
		extra=$(grep -m1 -o "session 2: of the .*" "$slog")
	fi
	gone=$(grep -m1 -oE "session 2: (PASS|peer gone).*" "$slog")
	if [ -z "$why" ]; then
		printf 'mp_reconnect %s: PASS, %.1f s; %s\n' "$name" \
			"$(awk "BEGIN { print $(date +%s.%N) - $t0 }")" "$gone"
		printf '    survivor: %s; leak checks after sessions 1, 2, 3 passed\n' "$extra"
		if [ "$VERBOSE" = 1 ]; then
			grep -h "session [0-9]*:" "$slog" | sed "s/^/    survivor | /"
		fi
		return 0
	fi
	printf 'mp_reconnect %s: FAILED (%.1f s): %s\n' "$name" \
		"$(awk "BEGIN { print $(date +%s.%N) - $t0 }")" "$why"
	show_tail "$slog" "survivor $surv" 20
	for i in 1 2 3; do
		[ -f "$LOGDIR/$surv.peer$i.log" ] && show_tail "$LOGDIR/$surv.peer$i.log" "peer $i $peer" 8
	done
	return 1
}

n=0 fails=0
for s in ${MP_RECONNECT_SCENARIOS:-server client}; do
	n=$((n + 1))
	scenario $s || fails=$((fails + 1))
done
echo "mp_reconnect: $n scenarios, $fails failed"
[ $fails -eq 0 ]
