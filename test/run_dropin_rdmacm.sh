#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's unmodified rdmacm-utils and perftest's rdma_cm mode over the
# drop-in librdmacm.so.1 and libibverbs.so.1, a server and a client process
# joined by a net_shm link (dropin_shm_lib.sh), with --memif as memif
# clients of a forwarding dpdk-testpmd (dropin_memif_lib.sh), or with
# --netns in two network namespaces, each device on net_af_packet bound to
# its end of a veth pair (dropin_netns_lib.sh):
#   server: droce $NET.11       client: droce $NET.12
# Every connection is the CM's, over the droce link: no TCP, no kernel
# address. The programs take their EAL arguments from DROCE_EAL.
#
# The cases (each a server and a client run, or two for both orders):
#   rping          rping -s -a <server ip> -p P -C 10 -v (and -d: its
#                  "rdma_listen" says the server is ready) /
#                  rping -c -a <server ip> -p P -C 10 -v -V; every ping's
#                  line, on both sides, byte for byte as rping fills it
#   rping_s4000    the same, -S 4000 (beyond memif's 1024 B path MTU)
#   rping_s20000   the same, -S 20000 (beyond net_shm's 4096 B path MTU too)
#   rping_noport   rping -c to a port where nothing listens, the server
#                  listening on another: the client must fail within
#                  NOPORT_LIMIT (10) s with RDMA_CM_EVENT_REJECTED (as Linux's
#                  rdma_cm answers a REQ for an unknown service ID), and the
#                  server must live on
#   rdma_server    rdma_server -p P (binds 0.0.0.0) / rdma_client -s <ip> -p P:
#                  "end 0" on both sides
#   rdma_xserver   rdma_xserver -c x -p P / rdma_xclient -c x -s <ip> -p P: XRC
#                  through the CM (RDMA_PS_IB, an XRC_SEND QP connecting to
#                  an XRC_RECV QP, the SRQ number in the REP's private data,
#                  one inline SEND into the XRC SRQ): "end 0" on both sides
#   ucmatose       ucmatose -p P -c 8 (wildcard) / ucmatose -s <ip> -p P -c 8:
#                  8 connections, 10 messages each way on each
#   udaddy         udaddy -c 2 / udaddy -s <ip> -c 2: UD through SIDR; udaddy
#                  has no port option (its -p is the port space): port 7174
#   cmtime         cmtime -b <ip> -p P / cmtime -s <ip> -p P -c 20: the
#                  client's table of steps and no error; the server never
#                  exits by itself (a loop on rdma_get_cm_event): it must be
#                  alive when the client is done, and is then killed
#   ib_send_lat, ib_write_bw, ib_read_lat
#                  `<test> -d droce0 -F -R -p P -n ITERS` [<server ip>]: -R is
#                  rdma_cm for the QPs and for perftest's own exchange; the
#                  client's result table, both sides exit 0
# Every program runs under timeout; a case passes when both exit 0 (but
# where said) and their output is what the program prints on success.
#
# Over memif the ib_* cases run only when named: perftest's own race
# (case_perftest) is lost there in most runs, 17 of 20 ib_send_lat and
# ib_read_lat runs (against 0 of 60 over net_shm and af_packet). In every
# lost run the CM trace (DROCE_CM_DEBUG=1) shows the server's second
# rdma_listen in the same millisecond as the REJ it sent for the client's
# REQ, 7 to 12 ms after the first connection's RTU (over net_shm: 1 ms):
# on two CPUs that testpmd's forwarding lcore keeps busy, the server's
# threads wait for time slices while the client connects at once. perftest
# -R over memif tests that race more than droce.
#
# Order: the server first, the client once the server is ready (its output
# shows it: the EAL's "Selected IOVA mode" line, the program's own line where
# it prints one, and for a server that listens, the CM's trace of that
# rdma_listen on its port: the server runs with DROCE_CM_DEBUG=1, and the
# trace is written once the listener is in place. A server that does not
# listen (mckey) gets GRACE s more after its line.)
# A client that finds no listener is rejected (REJ, "invalid service ID",
# as from Linux) and none of these programs retries a rejected connect, so
# on RoCE hardware as here they only work server first: no case runs the
# client first (case_cmtime and case_perftest can, with the order "cs",
# for trying by hand: the client, then CLIENT_LEAD s later the server; it
# passes only when the client's REQ retransmission reaches the server
# after its rdma_listen).
#
# Usage: run_dropin_rdmacm.sh <dropin dir> [--shm|--memif|--netns] [case ...]
#   case: a name above or a shell pattern ('rping*', 'ib_*'); default all.
#   RCM_TIMEOUT: seconds a program may run (60); RCM_ITERS: perftest's -n;
#   RCM_TRIES: runs of a perftest case whose client was rejected (3).
#   DROCE_CM_DEBUG=1 puts the CM's trace (every MAD, every listen) in both
#   programs' output, and TAIL_LINES=<n> shows more of it after a failure.
# One line per case: "ok   <case> (<order>) <secs> s" or
# "FAIL <case> (<order>): <reason>", the last lines of both programs' output
# after a failure. Exit 0 if every case passed, 77 if a program is missing.
set -u

USAGE="usage: run_dropin_rdmacm.sh <dropin dir> [--shm|--memif|--netns] [case ...]"
DROPIN=${1:?$USAGE}
shift
TOPO=shm
case ${1:-} in --shm) shift ;; --memif) TOPO=memif; shift ;; --netns) TOPO=netns; shift ;; esac

ALL_CASES="rping rping_s4000 rping_s20000 rping_noport rdma_server rdma_xserver ucmatose udaddy cmtime
ib_send_lat ib_write_bw ib_read_lat exit_no_disconnect killed_peer mckey"
CASES=
for c in $ALL_CASES; do
	if [ $# -eq 0 ]; then
		# over memif, by name only: see the header
		[ $TOPO = memif ] && [[ $c == ib_* ]] && continue
		CASES="$CASES $c"
		continue
	fi
	for pat in "$@"; do
		[[ $c == $pat ]] && { CASES="$CASES $c"; break; }
	done
done
[ -n "$CASES" ] || { echo "run_dropin_rdmacm: no case matches '$*'; cases:" $ALL_CASES; exit 1; }

programs_of() {
	case $1 in
	rping*) echo rping ;;
	rdma_server) echo rdma_server rdma_client ;;
	rdma_xserver) echo rdma_xserver rdma_xclient ;;
	exit_no_disconnect|killed_peer) ;;	# test/cm_peer, built with the tests
	*) echo "$1" ;;
	esac
}
NEED=
[ $TOPO = netns ] && NEED="ip ss"
for p in timeout awk $NEED $(for c in $CASES; do programs_of $c; done); do
	command -v $p >/dev/null ||
		{ echo "SKIP: $p is missing (Debian rdmacm-utils / perftest / coreutils / iproute2)"; exit 77; }
done
for l in librdmacm.so.1 libibverbs.so.1; do
	[ -e "$DROPIN/$l" ] || { echo "FAIL: $DROPIN/$l was not built"; exit 1; }
done
DROPIN=$(cd "$DROPIN" && pwd)

ME=run_dropin_rdmacm NET=10.93.0
if [ $TOPO = memif ]; then
	PFX=cf
	. "$(dirname "$0")/dropin_memif_lib.sh"
	ITERS=${RCM_ITERS:-100}
elif [ $TOPO = netns ]; then
	# veth $NET.1 and $NET.2 in the namespaces (unused: no TCP here)
	PFX=cn
	. "$(dirname "$0")/dropin_netns_lib.sh"
	ITERS=${RCM_ITERS:-200}
else
	PFX=cs
	. "$(dirname "$0")/dropin_shm_lib.sh"
	ITERS=${RCM_ITERS:-1000}
fi
trap 'kill_tree $SPID $CPID; cleanup' EXIT
RUN_TIMEOUT=${RCM_TIMEOUT:-60}
READY_TIMEOUT=30	# s for a server to be ready
GRACE=1			# s after the ready line of a server that does not listen
CLIENT_LEAD=1		# s between a client started first and its server
SERVER_TAIL=20		# s a server may take to exit after its client
NOPORT_LIMIT=10		# s within which a connect to a port without listener fails

# Every program must load the drop-in librdmacm, and libibverbs (when it
# loads one: cmtime only through librdmacm) from there too.
for p in $(for c in $CASES; do programs_of $c; done); do
	for l in librdmacm.so.1 libibverbs.so.1; do
		got=$("${DROPIN_ENV[@]}" ldd "$(command -v $p)" 2>/dev/null | awk -v l=$l '$1 == l { print $3 }')
		[ -z "$got" ] && [ $l = libibverbs.so.1 ] && continue
		[ "$got" = "$DROPIN/$l" ] || fail "$p loads $l from '$got', not from $DROPIN"
	done
done

# line-buffered stdout: a ready line is seen at once, and a program killed
# by timeout leaves what it printed
LINEBUF=()
command -v stdbuf >/dev/null && LINEBUF=(stdbuf -oL)

# start <server|client> <run> <log> <program> <args...>: the program under
# timeout (RUN_TIMEOUT, or CLIENT_TIMEOUT for a client) on that side of run
# n, its pid in $!
start() {
	local side=$1 n=$2 log=$3 eal in t=$RUN_TIMEOUT dbg

	shift 3
	if [ $side = server ]; then
		# (the CM's trace: wait_ready sees its rdma_listen)
		eal=$(eal_server $n) in=("${IN_S[@]}") dbg=(DROCE_CM_DEBUG=1)
	else
		eal=$(eal_client $n) in=("${IN_C[@]}") t=${CLIENT_TIMEOUT:-$RUN_TIMEOUT} dbg=()
	fi
	"${DROPIN_ENV[@]}" DROCE_EAL="$eal" "${dbg[@]}" timeout -k 5 $t \
		"${in[@]}" "${LINEBUF[@]}" "$@" >"$log" 2>&1 &
}

alive() { kill -0 "$1" 2>/dev/null; }

# wait_exit <pid> <secs>: 0 once the process has exited, 1 if it still runs
wait_exit() {
	local i

	for ((i = 0; i < $2 * 10; i++)); do
		alive "$1" || return 0
		sleep 0.1
	done
	! alive "$1"
}

# wait_ready <pid> <log> <ready regex|""> <listen port|"">: the EAL's line,
# the program's (if any) and the CM's trace of its rdma_listen on that port
# in its output; without a port, GRACE s after the lines. WHY says what went
# wrong.
wait_ready() {
	local pid=$1 log=$2 re=$3 port=$4 i lre

	lre="^droce-cm: [0-9.]+ listen port $port backlog"
	for ((i = 0; i < READY_TIMEOUT * 20; i++)); do
		if grep -q '^EAL: Selected IOVA mode' "$log" && { [ -z "$re" ] || grep -qE "$re" "$log"; } &&
		   { [ -z "$port" ] || grep -qE "$lre" "$log"; }; then
			[ -n "$port" ] || sleep $GRACE
			alive $pid && return 0
			break
		fi
		alive $pid || break
		sleep 0.05
	done
	if alive $pid; then
		WHY="server not ready after $READY_TIMEOUT s (no EAL 'Selected IOVA mode'${re:+ or /$re/}${port:+ or /$lre/} line)"
	else
		wait $pid
		WHY="server exited with status $? before it was ready"
	fi
	return 1
}

# tail_of <log> <side>: the last lines a program printed (without the CM's
# trace that wait_ready reads, unless DROCE_CM_DEBUG asked for it)
tail_of() {
	if [ -n "${DROCE_CM_DEBUG:-}" ]; then
		show "$1" "$2"
	else
		show "$1" "$2" | grep -vE '^    [a-z]+ \| droce-cm: [0-9.]+ (tx|rx|listen) '
	fi | tail -n ${TAIL_LINES:-12}
}

n=0 fails=0 passed=0
SLOG= CLOG= SRC= CRC= SECS= CSECS= WHY=

# pair <order> <ready regex|""> <server stays> <server cmd...> -- <client cmd...>
# Runs one server and one client, in that order (sc) or the client first
# (cs); LISTEN: the port the server listens on (its readiness), if it does. Sets SRC and CRC (exit statuses; SRC "alive" for a server that
# stays and was still running), SECS (the run), CSECS (the client), SLOG and
# CLOG; returns 1 with WHY when the run could not complete.
pair() {
	local order=$1 ready=$2 stays=$3 t0 t1 c0 c1 scmd=() ccmd=()

	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	ccmd=("$@")
	n=$((n + 1))
	SLOG=$LOGDIR/$n.server CLOG=$LOGDIR/$n.client SRC= CRC= WHY=
	: >"$SLOG"
	: >"$CLOG"
	topo_run_start $n || { WHY="the topology could not be set up"; return 1; }
	t0=$(date +%s.%N)
	if [ $order = sc ]; then
		start server $n "$SLOG" "${scmd[@]}"
		SPID=$!
		if ! wait_ready $SPID "$SLOG" "$ready" "${LISTEN:-}"; then
			kill_tree $SPID
			SPID=
			topo_run_end
			return 1
		fi
		c0=$(date +%s.%N)
		start client $n "$CLOG" "${ccmd[@]}"
		CPID=$!
	else
		c0=$(date +%s.%N)
		start client $n "$CLOG" "${ccmd[@]}"
		CPID=$!
		sleep $CLIENT_LEAD
		start server $n "$SLOG" "${scmd[@]}"
		SPID=$!
	fi
	wait $CPID
	CRC=$?
	CPID=
	c1=$(date +%s.%N)
	CSECS=$(awk "BEGIN { printf \"%.1f\", $c1 - $c0 }")
	if [ "$CRC" != 0 ] && [ -n "${RETRY_RE:-}" ] && grep -qE "$RETRY_RE" "$CLOG"; then
		# rejected: its server waits for a connection that will not come
		kill_tree $SPID
		wait $SPID 2>/dev/null
		SRC="killed: its client was rejected"
	elif [ $stays = 1 ]; then
		if alive $SPID; then
			SRC=alive
		else
			wait $SPID
			SRC=$?
		fi
		kill_tree $SPID
		wait $SPID 2>/dev/null
	elif wait_exit $SPID $SERVER_TAIL; then
		wait $SPID
		SRC=$?
	else
		kill_tree $SPID
		wait $SPID 2>/dev/null
		SRC="still running $SERVER_TAIL s after the client"
	fi
	SPID=
	t1=$(date +%s.%N)
	SECS=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")
	topo_run_end
	rm -rf /var/run/dpdk/${PFX}S${ID}_$n /var/run/dpdk/${PFX}C${ID}_$n
	return 0
}

# status_str <status>: an exit status in words
status_str() {
	case $1 in
	124) echo "killed by timeout" ;;
	137) echo "killed (SIGKILL, by timeout or the script)" ;;
	[0-9]*) echo "exit status $1" ;;
	*) echo "$1" ;;
	esac
}

# exit_reasons [alive]: a reason per side that did not exit 0 (or, with
# "alive", a server that stays and had died before the client was done)
exit_reasons() {
	if [ "${1:-}" = alive ]; then
		[ "$SRC" = alive ] || echo "server: gone before the client was done ($(status_str $SRC))"
	else
		[ "$SRC" = 0 ] || echo "server: $(status_str "$SRC")"
	fi
	[ "$CRC" = 0 ] || echo "client: $(status_str $CRC)"
}

# need <side> <log> <regex>...: a reason for each line missing from the output
need() {
	local side=$1 log=$2 re

	shift 2
	for re in "$@"; do
		grep -qE "$re" "$log" || echo "$side: no /$re/ line in its output"
	done
}

# refuse <side> <log> <regex>: a reason if the output has such a line
refuse() {
	local l

	l=$(grep -v '^EAL: ' "$2" | grep -m1 -E "$3") && echo "$1: $l"
}

# check_pings <log> <line prefix> <count> <size>: every line of ping data as
# rping fills its buffer: "rdma-ping-<i>: " then letters from 'A' + i % 58
# cycling through 'A'..'z', size - 1 characters in all
check_pings() {
	awk -v pfx="$2" -v count="$3" -v size="$4" -v side="$5" '
	BEGIN {
		for (c = 65; c <= 122; c++)
			abc = abc sprintf("%c", c)
		rep = abc
		while (length(rep) < size + 58)
			rep = rep rep
	}
	index($0, pfx) == 1 {
		data = substr($0, length(pfx) + 1)
		head = "rdma-ping-" (i + 0) ": "
		want = head substr(rep, i % 58 + 1, size - 1 - length(head))
		if (data != want && !bad) {
			if (length(data) != length(want))
				bad = "ping " (i + 0) ": " length(data) " characters, not " length(want)
			else
				bad = "ping " (i + 0) ": data differ from what rping sent"
		}
		i++
	}
	END {
		if (bad)
			print side ": " bad
		else if (i != count)
			print side ": " (i + 0) " lines of ping data, not " count
	}' "$1"
}

# verdict <case> <order> <reason lines>: the case's line, and after a
# failure the last lines of both programs' output
verdict() {
	local label="$1 ($2)" reasons=$3

	if [ -z "$reasons" ]; then
		passed=$((passed + 1))
		echo "ok   $label $SECS s"
		return
	fi
	fails=$((fails + 1))
	echo "FAIL $label: $(echo "$reasons" | head -n1)"
	echo "$reasons" | sed -n '2,4s/^/     also: /p'
	[ "$(echo "$reasons" | wc -l)" -gt 4 ] && echo "     also: $(( $(echo "$reasons" | wc -l) - 4 )) more"
	[ -s "$SLOG" ] && tail_of "$SLOG" server
	[ -s "$CLOG" ] && tail_of "$CLOG" client
}

# run_pair <case> <order> <checker> <pair args...>: a run and its verdict;
# the checker prints the reasons found in SLOG/CLOG
# With RETRY_RE set, a failed run whose client log matches it runs again,
# RCM_TRIES runs in all at most (see case_perftest).
run_pair() {
	local name=$1 order=$2 checker=$3 try why tries=${RCM_TRIES:-3}

	shift 3
	for ((try = 1; try <= tries; try++)); do
		if ! pair $order "$@"; then
			SECS=
			why=$WHY
		else
			why=$($checker)
		fi
		[ -n "$why" ] && [ -n "${RETRY_RE:-}" ] && [ $try -lt $tries ] &&
			grep -qE "$RETRY_RE" "$CLOG" 2>/dev/null || break
		echo "note $name ($(order_str $order)): $RETRY_WHY; run $((try + 1))"
		n=$((n + 1))
	done
	verdict $name "$(order_str $order)" "$why"
}

order_str() { [ $1 = sc ] && echo "server first" || echo "client first"; }

case_rping() {	# size|""
	local port=$((PORT + n)) size=${1:-64} s=()

	[ -n "$1" ] && s=(-S $1)
	chk() {
		exit_reasons
		check_pings "$SLOG" "server ping data: " 10 $size server
		check_pings "$CLOG" "ping data: " 10 $size client
	}
	LISTEN=$port run_pair rping${1:+_s$1} sc chk '^rdma_listen$' 0 \
		rping -s -a $RIP_S -p $port -C 10 -v -d "${s[@]}" -- \
		rping -c -a $RIP_S -p $port -C 10 -v -V "${s[@]}"
}

# A connect to a port nobody listens on (the server listens on the next):
# rejected within NOPORT_LIMIT s, the server unharmed.
case_rping_noport() {
	local port=$((PORT + n))

	chk() {
		[ "$SRC" = alive ] ||
			echo "server: gone after the rejected connect ($(status_str "$SRC"))"
		case $CRC in
		0) echo "client: exit status 0 for a connect to a port without listener" ;;
		124|137) echo "client: hung, killed by timeout after $CLIENT_TIMEOUT s" ;;
		esac
		awk "BEGIN { exit !($CSECS > $NOPORT_LIMIT) }" &&
			echo "client: took $CSECS s to fail, more than $NOPORT_LIMIT"
		need client "$CLOG" 'cma event RDMA_CM_EVENT_REJECTED'
	}
	CLIENT_TIMEOUT=$((NOPORT_LIMIT + 5))
	LISTEN=$((port + 1)) run_pair rping_noport sc chk '^rdma_listen$' 1 \
		rping -s -a $RIP_S -p $((port + 1)) -v -d -- \
		rping -c -a $RIP_S -p $port -C 1 -v
	CLIENT_TIMEOUT=
}

# mckey: the receiver joins 239.1.2.<n> and waits for 10 datagrams, the
# sender joins (RoCEv2 multicast: the group's MAC) and sends them. Each side
# sleeps 3 s after its join ("to give the SM a chance"): the sender starts
# once the receiver has joined (its line comes after the QP is attached to
# the group, its receives posted before), not after the receiver's sleep.
case_mckey() {
	local g=239.1.2.$((n % 250 + 1))

	chk() {
		exit_reasons
		need server "$SLOG" '^mckey: joined dgid: ::ffff:'"$g" '^data transfers complete' \
			'^return status 0'
		need client "$CLOG" '^mckey: joined dgid: ::ffff:'"$g" '^return status 0'
	}
	GRACE=0 run_pair mckey sc chk '^mckey: joined dgid: ' 0 \
		mckey -m $g -b $RIP_S -C 10 -- mckey -m $g -b $RIP_C -s -C 10
}

# test/cm_peer (built next to the drop-in): a client that exits without
# rdma_disconnect or rdma_destroy_id; its CM sends the DREQ at exit
case_exit_no_disconnect() {
	local port=$((PORT + n)) peer=$DROPIN/../test/cm_peer

	[ -x "$peer" ] || { echo "SKIP exit_no_disconnect: $peer was not built"; return; }
	chk() {
		exit_reasons
		need client "$CLOG" '^established$'
		need server "$SLOG" '^disconnected$'
	}
	LISTEN=$port run_pair exit_no_disconnect sc chk '^listening$' 0 \
		"$peer" server $RIP_S $port -- "$peer" client $RIP_S $port
}

# test/cm_peer again: a client SIGKILLed while the server's SEND waits for
# its receive (RNR); no DREQ leaves it. The server's QP ends in
# RETRY_EXC_ERR, and its CM must report DISCONNECTED without the server's
# rdma_disconnect, within the DREQ's retries (6 x 536 ms), and let
# rdma_disconnect succeed afterwards, followed by TIMEWAIT_EXIT only.
case_killed_peer() {
	local port=$((PORT + n)) peer=$DROPIN/../test/cm_peer

	[ -x "$peer" ] || { echo "SKIP killed_peer: $peer was not built"; return; }
	chk() {
		local ms

		[ "$SRC" = 0 ] || echo "server: $(status_str "$SRC")"
		[ "$CRC" = 137 ] || echo "client: $(status_str "$CRC"), not its own SIGKILL"
		need client "$CLOG" '^established$'
		need server "$SLOG" '^send completion: transport retry counter exceeded$' \
			'^event: RDMA_CM_EVENT_DISCONNECTED$' '^rdma_disconnect: 0$' \
			'^event: RDMA_CM_EVENT_TIMEWAIT_EXIT$' '^disconnected$'
		refuse server "$SLOG" '^event: RDMA_CM_EVENT_(REJECTED|DEVICE_REMOVAL)'
		ms=$(sed -n 's/.* ms after the send, \([0-9]*\) ms after its completion$/\1/p' "$SLOG")
		[ -n "$ms" ] && [ "$ms" -le 4500 ] ||
			echo "server: DISCONNECTED '${ms:-never}' ms after the completion (bound 4500)"
	}
	LISTEN=$port run_pair killed_peer sc chk '^listening$' 0 \
		"$peer" server-send $RIP_S $port -- "$peer" client-kill $RIP_S $port
	grep -h '^disconnected .* ms after' "$SLOG" | sed 's/^/note killed_peer: /'
}

case_rdma_server() {
	local port=$((PORT + n))

	chk() {
		exit_reasons
		need server "$SLOG" '^rdma_server: end 0$'
		need client "$CLOG" '^rdma_client: end 0$'
	}
	LISTEN=$port run_pair rdma_server sc chk '^rdma_server: start$' 0 \
		rdma_server -p $port -- rdma_client -s $RIP_S -p $port
}

case_rdma_xserver() {
	local port=$((PORT + n))

	chk() {
		exit_reasons
		need server "$SLOG" '^rdma_xserver: end 0$'
		need client "$CLOG" '^rdma_xclient: end 0$'
		refuse server "$SLOG" '^(rdma_[a-z_]+|post_send):+ [A-Z]'
		refuse client "$CLOG" '^(rdma_[a-z_]+|post_send):+ [A-Z]'
	}
	LISTEN=$port run_pair rdma_xserver sc chk '^rdma_xserver: start$' 0 \
		rdma_xserver -c x -p $port -- rdma_xclient -c x -s $RIP_S -p $port
}

case_ucmatose() {
	local port=$((PORT + n))

	chk() {
		exit_reasons
		need server "$SLOG" '^data transfers complete$' '^disconnected$' '^return status 0$'
		need client "$CLOG" '^data transfers complete$' '^return status 0$'
		refuse server "$SLOG" 'cmatose: event:|failing connection request|failed|failure'
		refuse client "$CLOG" 'cmatose: event:|failed|failure'
	}
	LISTEN=$port run_pair ucmatose sc chk '^cmatose: starting server$' 0 \
		ucmatose -p $port -c 8 -- ucmatose -s $RIP_S -p $port -c 8
}

case_udaddy() {
	chk() {
		exit_reasons
		need server "$SLOG" '^data transfers complete$' '^return status 0$'
		need client "$CLOG" '^data transfers complete$' '^return status 0$'
		refuse server "$SLOG" 'udaddy: event:|failing connection request|failed|failure'
		refuse client "$CLOG" 'udaddy: event:|failed|failure'
	}
	LISTEN=7174 run_pair udaddy sc chk '^udaddy: starting server$' 0 \
		udaddy -c 2 -- udaddy -s $RIP_S -c 2
}

case_cmtime() {	# order
	local port=$((PORT + n)) retries=()

	# client first: resolution retried (2 s each) until the server's device answers
	[ $1 = cs ] && retries=(-r 20)
	chk() {
		exit_reasons alive
		need client "$CLOG" '^step +total ms' '^create id *:' '^resolve addr *:' \
			'^resolve route *:' '^create qp *:' '^connect *:' '^disconnect *:'
		refuse client "$CLOG" 'event: |_ERROR|failure|failing'
		refuse server "$SLOG" 'failure|failing'
	}
	LISTEN=$port run_pair cmtime $1 chk '' 1 \
		cmtime -b $RIP_S -p $port -- cmtime -s $RIP_S -p $port -c 20 "${retries[@]}"
}

# perftest's lcores as run_dropin_perftest.sh's set_lcores: the send tests
# poll their CQs (inline progress), the passive side of RDMA WRITE/READ
# waits in the CM and needs an engine lcore
perftest_lcores() {
	local c1=1

	[ "$(nproc)" -lt 2 ] && c1=0
	case $1 in
	ib_send_*) SERVER_LCORES=0@0 CLIENT_LCORES=0@$c1 ;;
	*) SERVER_LCORES=0@0 CLIENT_LCORES=0@$c1 ;;
	esac
}

case_perftest() {	# test order
	local t=$1 port=$((PORT + n))

	chk() {
		exit_reasons
		# the client's table: a "#bytes" header, then a row with ITERS iterations
		awk -v iters=$ITERS '/^ *#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ && $2 == iters { ok = 1 }
			END { exit !ok }' "$CLOG" || echo "client: no result row with $ITERS iterations"
		refuse server "$SLOG" 'Unable|[Ff]ailed|[Ee]rror|Couldn|unexpected|Unexpected'
		refuse client "$CLOG" 'Unable|[Ff]ailed|[Ee]rror|Couldn|unexpected|Unexpected'
	}
	perftest_lcores $t
	# perftest 4.5 listens for its test QPs' connection only once it has
	# made them: a client that is quicker gets a REJ (no listener, as from
	# Linux), and Debian's perftest (4.5-0.17) then crashes in its own retry
	# path (fixed upstream in perftest 3d9d8d0, December 2025): run again,
	# RCM_TRIES runs in all at most; the server of a rejected run is killed
	# at once (it waits for a connection that will not come).
	RETRY_RE='RDMA_CM_EVENT_REJECTED; error: 8' \
	RETRY_WHY="perftest's client connected before its server listened (REJ 8)" \
	LISTEN=$port run_pair $t $2 chk 'Waiting for client to connect' 0 \
		$t -d droce0 -F -R -p $port -n $ITERS -- $t -d droce0 -F -R -p $port -n $ITERS $RIP_S
	SERVER_LCORES=0 CLIENT_LCORES=
}

T0=$(date +%s)
for c in $CASES; do
	case $c in
	rping) case_rping "" ;;
	rping_s*) case_rping ${c#rping_s} ;;
	rping_noport) case_rping_noport ;;
	rdma_server) case_rdma_server ;;
	rdma_xserver) case_rdma_xserver ;;
	ucmatose) case_ucmatose ;;
	udaddy) case_udaddy ;;
	cmtime) case_cmtime sc ;;
	ib_*) case_perftest $c sc ;;
	exit_no_disconnect) case_exit_no_disconnect ;;
	killed_peer) case_killed_peer ;;
	mckey) case_mckey ;;
	esac
done

echo "run_dropin_rdmacm ($TOPO): $passed/$((passed + fails)) runs passed in $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ]
