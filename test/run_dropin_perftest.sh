#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's unmodified perftest (4.5) over the drop-in libibverbs, a server
# and a client process in one of two topologies:
#
#   default: two network namespaces joined by a veth pair, each side's droce
#     device on net_af_packet (dropin_netns_lib.sh):
#       server ns: veth 10.97.0.1/24 (kernel, TCP control), droce 10.97.0.11
#       client ns: veth 10.97.0.2/24 (kernel, TCP control), droce 10.97.0.12
#   --shm: one host, two processes joined directly by a net_shm link
#     (dropin_shm_lib.sh), nothing else running; droce 10.95.0.11 and
#     10.95.0.12, TCP over 127.0.0.1.
#   --memif: one host, each side's droce device on a memif client port of
#     dpdk-testpmd, which forwards between its two memif server ports
#     (dropin_memif_lib.sh); droce 10.96.0.11 and 10.96.0.12, TCP over
#     127.0.0.1.
#
# perftest's servers refuse a port that is not ACTIVE: af_packet on an up
# veth is from the start, a memif client of a running testpmd once connected
# (its device's link_wait= holds the probe until then). The server starts
# first; the client once the server listens on its TCP port. Both run
# `<test> -d droce0 -x 0 -F -p <port> <args>`, the client with the server's
# address; the latency tests with -C too (their table in CPU cycles: perftest
# otherwise calibrates its clock against gettimeofday(), ~0.4 s of busy
# waiting per side before each row, half the time of an -a sweep; droce does
# the same work either way). The ways each test runs (PT_VARIANTS, default
# "plain all srq"):
#   plain    -n <iters>, the test's default size
#   all      -a -n <few>: every size 2 B .. 8 MiB, one row each (not for the
#            atomics: perftest refuses -a for them, "Message size cannot be
#            changed for Atomic tests")
#   srq      ib_send_bw --use-srq -n <iters> (perftest 4.5 spells it so)
#   srq-all  ib_send_bw --use-srq -a -n <few> (not by default)
# Lcores (set_lcores), one busy-polling thread per CPU where possible: the
# send tests poll their CQs on both sides, inline progress on CPU 0
# (server) and CPU 1 (client). The passive side of RDMA WRITE/READ and
# atomics waits in a TCP read() and gives an inline device no progress: the
# server gets an engine lcore next to its sleeping main lcore, both on
# CPU 0. ib_write_lat polls its buffer, outside verbs, on both sides: both
# get an engine, crosswise.
#
# A run passes when both sides exit 0, neither prints an error, and the
# client's result table (and the server's, when it prints one) is sane
# (check_table): the sizes asked for, each once, with the iteration count
# asked for, finite latencies with 0 < t_min <= t_avg <= t_max, non-zero
# bandwidth or message rate. No timing is asserted: the values are whatever
# two shared CPUs give.
#
# Usage: run_dropin_perftest.sh <dropin dir> [--memif|--shm] [test ...]
#   default tests: PT_TESTS or all eight ib_{send,write,read,atomic}_{lat,bw};
#   PT_ITERS and PT_ITERS_ALL: the iteration counts (plain / -a), and
#   PT_ITERS_WRITE_LAT ib_write_lat's plain one (WLAT_ITERS); PT_TIMEOUT:
#   seconds a run may take; PT_SERVER_LCORES, PT_CLIENT_LCORES override
#   set_lcores.
# Exit 0 if every run passed, 77 if perftest is missing or the topology
# cannot be built here.
set -u

DROPIN=${1:?usage: run_dropin_perftest.sh <dropin dir> [--memif|--shm] [test ...]}
shift
TOPO=netns
case ${1:-} in --memif) TOPO=memif; shift ;; --shm) TOPO=shm; shift ;; esac
ALL="ib_send_lat ib_send_bw ib_write_lat ib_write_bw ib_read_lat ib_read_bw ib_atomic_lat ib_atomic_bw"
if [ $# -gt 0 ]; then TESTS="$*"; else TESTS=${PT_TESTS:-$ALL}; fi
[ "$TESTS" = all ] && TESTS=$ALL
VARIANTS=${PT_VARIANTS:-plain all srq}
for p in $TESTS ss ip timeout awk; do
	command -v $p >/dev/null || { echo "SKIP: $p is missing (Debian perftest / iproute2)"; exit 77; }
done
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }
DROPIN=$(cd "$DROPIN" && pwd)

# set_lcores <test>: each side's EAL lcores (SERVER_LCORES, CLIENT_LCORES),
# one busy-polling thread per CPU where the test allows it
set_lcores() {
	local c1=1
	[ "$(nproc)" -lt 2 ] && c1=0
	case $1 in
	ib_send_*)	# both sides poll their CQ: inline progress
		SERVER_LCORES=0@0 CLIENT_LCORES=0@$c1 ;;
	ib_write_lat)	# both sides poll their buffer, outside verbs: engines
		SERVER_LCORES="0@0,1@$c1" CLIENT_LCORES="0@$c1,1@0" ;;
	*)		# the server waits in read(): an engine next to it
		SERVER_LCORES="(0,1)@0" CLIENT_LCORES=0@$c1 ;;
	esac
	SERVER_LCORES=${PT_SERVER_LCORES:-$SERVER_LCORES}
	CLIENT_LCORES=${PT_CLIENT_LCORES:-$CLIENT_LCORES}
}
if [ $TOPO = shm ]; then
	ME=run_dropin_perftest PFX=ds NET=10.95.0
	. "$(dirname "$0")/dropin_shm_lib.sh"
	ITERS=${PT_ITERS:-1000} ITERS_ALL=${PT_ITERS_ALL:-20}
elif [ $TOPO = memif ]; then
	ME=run_dropin_perftest PFX=dm NET=10.96.0
	. "$(dirname "$0")/dropin_memif_lib.sh"
	# every frame crosses testpmd, a third busy-polling thread: fewer iterations
	ITERS=${PT_ITERS:-100} ITERS_ALL=${PT_ITERS_ALL:-5}
else
	ME=run_dropin_perftest PFX=dp NET=10.97.0
	. "$(dirname "$0")/dropin_netns_lib.sh"
	ITERS=${PT_ITERS:-200} ITERS_ALL=${PT_ITERS_ALL:-5}
fi
RUN_TIMEOUT=${PT_TIMEOUT:-240}
# ib_write_lat polls its buffer on both sides, each side's main lcore on the
# CPU of the other side's engine (set_lcores): every iteration waits for
# time slices, ~12 ms on two CPUs (1000 took 12 s). A tenth of ITERS (at
# least 50) runs the same code as many times over as it needs.
WLAT_ITERS=${PT_ITERS_WRITE_LAT:-$((ITERS / 10 > 50 ? ITERS / 10 : (ITERS < 50 ? ITERS : 50)))}

# check_table <log> <iters> <sizes|""> [server]: the result table, sane.
# sizes: the #bytes column expected, space-separated ("": a single row).
# Every number finite (but t_stdev: perftest computes it so that one large
# outlier among few iterations can print -nan), the iteration count asked
# for, 0 < t_min <= t_avg <= t_max, bandwidth or message rate non-zero
# (they are printed with 2 and 6 decimals: 4 B at 700 msg/s is 0.00 MB/s).
# perftest calibrates its clock against gettimeofday() before each row (the
# bandwidth tests; -C spares the latency tests that); when that fails (CPU
# contention) it says "Correlation coefficient r^2: .. < 0.9"
# and computes the row with 0 MHz: that row's values are only checked to be
# there (the size ran, all iterations). "server": no table is fine
# (perftest's servers leave the reporting of RDMA tests to the client) and
# with -a a table may hold only the last size. Prints what is wrong (exit 1)
# or notes.
check_table() {
	awk -v iters="$2" -v sizes="$3" -v server="${4:-}" '
	function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ }
	function bad(msg) { if (!err) err = msg }
	BEGIN { n = split(sizes, want, " "); for (i = 1; i <= n; i++) expect[want[i]] = 1 }
	/^ *#bytes/ { hdr++; lat = /t_min/; bw = /BW average/; rows = 1; next }
	rows && /^-+ *$/ { rows = 0; next }
	/Correlation coefficient r\^2: .* < 0\.9/ { uncal = 1; next }
	rows && NF {
		if (!lat && !bw) { bad("unknown result table: " $0); next }
		if ((lat && NF < 9) || (bw && NF < 5)) { bad("short row: " $0); next }
		if ($1 !~ /^[0-9]+$/ || $2 != iters) bad("row for " $1 " B reports " $2 " iterations, not " iters)
		if (uncal) {
			for (i = 3; i <= NF; i++)
				if (!num($i) && $i !~ /^-?(inf|nan)$/) bad("not a number in row: " $0)
			print "note: perftest could not calibrate its clock for the row of " $1 " B (values unchecked): " $0
			uncal = 0
		} else {
			for (i = 1; i <= NF; i++)
				if (!num($i) && !(lat && i == 7 && $i ~ /^-?nan$/)) { bad("not a finite number in row: " $0); next }
			if (lat && !($3 > 0 && $3 <= $6 && $6 <= $4))
				bad("latencies not 0 < t_min <= t_avg <= t_max: " $0)
			if (bw && !($4 > 0 || $5 > 0)) bad("zero bandwidth and message rate: " $0)
		}
		if (n && !($1 in expect)) bad("a row for " $1 " B, not an -a size: " $0)
		seen[$1]++; got = got " " $1; nrows++
	}
	END {
		if (!hdr) { if (server) exit 0; print "no result table (#bytes header)"; exit 1 }
		if (hdr > 1) bad(hdr " result tables")
		if (!nrows) bad("an empty result table")
		if (!n && nrows > 1) bad(nrows " rows for a single size:" got)
		for (s in seen) if (seen[s] > 1) bad("size " s " reported " seen[s] " times")
		if (n && !server)
			for (i = 1; i <= n; i++)
				if (!(want[i] in seen)) bad("no row for " want[i] " B; rows:" got)
		if (err) { print err; exit 1 }
	}' "$1"
}

# errors <log>: the lines that report an error (EAL notices and perftest
# informational lines aside)
errors() {
	grep -v -e '^EAL: ' "$1" |
		grep -iE 'err|fail|couldn|unable|not supported|unsupported|invalid|timed? ?out|abort|segm|mismatch|refus|warn|cannot|can.t' |
		grep -v -e 'Conflicting CPU frequency values detected'
}

# line-buffered stdout, so that a run killed by timeout leaves its output
LINEBUF=()
command -v stdbuf >/dev/null && LINEBUF=(stdbuf -oL)

n=0
# run_case <test> <args...>
run_case() {
	local prog=$1 i src crc ok=1 t0 t1 iters= sizes= e
	shift
	n=$((n + 1))
	local port=$((PORT + n)) slog=$LOGDIR/$n.server clog=$LOGDIR/$n.client
	for ((i = 1; i <= $#; i++)); do [ "${!i}" = -n ] && { e=$((i + 1)); iters=${!e}; }; done
	[[ " $* " = *" -a "* ]] && sizes=$(awk 'BEGIN { for (s = 2; s <= 8388608; s *= 2) printf "%d ", s }')
	echo "== $prog -d droce0 -x 0 -F $* (server lcores $SERVER_LCORES <-$TOPO-> client lcores $CLIENT_LCORES, TCP $KIP_S:$port)"
	topo_run_start $n || { echo "   FAIL $prog $*"; return 1; }
	t0=$(date +%s.%N)
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_server $n)" timeout -k 5 $RUN_TIMEOUT \
		"${IN_S[@]}" "${LINEBUF[@]}" $prog -d droce0 -x 0 -F -p $port "$@" >"$slog" 2>&1 &
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
		topo_run_end
		show "$slog" server
		echo "   FAIL $prog $*: server: $(errors "$slog" | head -n1)"
		return 1
	fi
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_client $n)" timeout -k 5 $RUN_TIMEOUT \
		"${IN_C[@]}" "${LINEBUF[@]}" $prog -d droce0 -x 0 -F -p $port "$@" $KIP_S >"$clog" 2>&1 &
	CPID=$!
	wait $CPID
	crc=$?
	CPID=
	wait $SPID
	src=$?
	SPID=
	t1=$(date +%s.%N)
	topo_run_end
	show "$slog" server
	show "$clog" client
	rm -rf /var/run/dpdk/${PFX}S${ID}_$n /var/run/dpdk/${PFX}C${ID}_$n
	for side in server client; do
		local log=$LOGDIR/$n.$side why opt= rc
		[ $side = server ] && opt=server
		why=$(check_table "$log" "$iters" "$sizes" $opt)
		rc=$?
		[ -n "$why" ] && echo "$why" | sed "s/^/   $side: /"
		[ $rc -eq 0 ] || ok=0
		errors "$log" | head -n3 | sed "s/^/   $side error: /" | grep . && ok=0
	done
	printf '   %s: server exit %d, client exit %d, %.1f s\n' "$prog $*" $src $crc \
		"$(awk "BEGIN { print $t1 - $t0 }")"
	if [ $src -eq 0 ] && [ $crc -eq 0 ] && [ $ok -eq 1 ]; then
		echo "   PASS $prog $*"
		return 0
	fi
	echo "   FAIL $prog $*"
	return 1
}

fails=0
T0=$(date +%s)
for t in $TESTS; do
	set_lcores $t
	# latencies in cycles: no clock calibration before each row (the header)
	cyc=()
	[[ $t = *_lat ]] && cyc=(-C)
	for v in $VARIANTS; do
		case $v in
		plain)
			it=$ITERS
			[ $t = ib_write_lat ] && it=$WLAT_ITERS
			run_case $t "${cyc[@]}" -n $it || fails=$((fails + 1)) ;;
		all)
			if [[ $t = ib_atomic_* ]]; then
				echo "== $t -a: not run, perftest refuses it (\"Message size cannot be changed for Atomic tests\")"
				continue
			fi
			run_case $t "${cyc[@]}" -a -n $ITERS_ALL || fails=$((fails + 1)) ;;
		srq) [ $t = ib_send_bw ] && { run_case $t --use-srq -n $ITERS || fails=$((fails + 1)); } ;;
		srq-all) [ $t = ib_send_bw ] && { run_case $t --use-srq -a -n $ITERS_ALL || fails=$((fails + 1)); } ;;
		*) fail "unknown variant $v (plain, all, srq, srq-all)" ;;
		esac
	done
done

[ $TOPO = memif ] && [ $SW_CRASHES -gt 0 ] &&
	echo "run_dropin_perftest: note: testpmd exited on its own during $SW_CRASHES of the $n runs"
echo "run_dropin_perftest ($TOPO): $((n - fails))/$n runs passed in $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ]
