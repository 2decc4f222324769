#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# droce-perf's tests, each briefly, on its embedded default in both progress
# modes (and the UC/UD variants, ODP buffers, post lists and CQ moderation,
# the tag tests' eager and rendezvous protocols):
# the JSON parses, names every test asked for, and its figures are sane
# (non-zero, percentiles in order, bandwidth consistent with the message
# rate). Asserts nothing about speed.
#
# Usage: run_perf_json.sh <droce-perf> [--tm]   (--tm: the tag tests only)
set -u
PERF=${1:?usage: run_perf_json.sh <droce-perf>}
PY=/usr/bin/python3
CHECK=$(dirname "$0")/perf_json_check.py
OUT=$(mktemp)
trap 'rm -f "$OUT" "$OUT.err"' EXIT
fails=0

check() {	# label, tests (comma-separated), droce-perf arguments...
	local label=$1 tests=$2
	shift 2
	if ! timeout -k 5 120 "$PERF" "$tests" "$@" -j >"$OUT" 2>"$OUT.err"; then
		echo "FAIL: $label: exit $? ($(tail -n2 "$OUT.err"))"
		fails=$((fails + 1))
		return
	fi
	"$PY" "$CHECK" "$label" "$OUT" "$tests" --mode embedded $HDR || fails=$((fails + 1))
}
HDR=''

all=send_lat,write_lat,read_lat,atomic_lat,ud_lat,tag_lat,send_bw,write_bw,read_bw,atomic_bw,srq_bw,ud_bw,tag_bw
if [ "${2:-}" = --tm ]; then
	# (a sanitizer build: the tag tests alone, both protocols, both progress modes)
	for p in lcore inline; do
		check "tag tests, $p progress" tag_lat,tag_bw -p $p -n 300 -s 8,16384
	done
	[ $fails = 0 ] && { echo "run_perf_json: PASS"; exit 0; }
	echo "run_perf_json: $fails failure(s)"
	exit 1
fi
for p in lcore inline; do
	check "every test, $p progress" $all -p $p -n 300 -s 8,4096
	# (either side of the tag tests' eager limit, 8 KiB: eager and rendezvous)
	check "tag tests, $p progress" tag_lat,tag_bw -p $p -n 300 -s 8,16384
done
check "tag tests: eager up to 64 KiB, inline sends" tag_lat,tag_bw --eager-limit 65536 -I 64 -n 200 -s 64,65536
check "tag tests: rendezvous only, a duration" tag_bw --eager-limit 0 -D 0.3 -s 64
check "UC" send_lat,write_lat,send_bw,write_bw -c uc -n 300 -s 64
check "4 QPs, post lists of 8, CQ moderation 16, inline 64" send_bw,write_bw -q 4 -l 8 -Q 16 -I 64 -n 4000 -s 64
check "ODP buffers" write_bw,read_lat,atomic_lat --odp -n 300 -s 64
check "a duration (-D)" send_bw -D 0.3 -s 64
# thread domains and single-threaded CQs (no locks), every WR from one buffer
HDR='--header td=true --header slots=1'
check "thread domains, one buffer" $all -p inline --td -b 1 -n 300 -s 8,4096
HDR=''
# 10,000 QPs, each CQ never empty for long: every poll must still move the
# devices, or the receivers starve and RC runs out of retries
check "10,000 QPs at depth 4, a duration" send_bw -q 10000 -d 4 -D 1 -s 64
# --threads 2 [--queues]: each lcore its pair of devices (lcore=thread), or
# its queue of one pair (queues=2); a table (no JSON): per test and size, one
# line per lcore with every message, then the sum
threads_check() {
	if ! timeout -k 5 120 "$PERF" --threads 2 "$@" send_bw,write_bw -n 3000 -s 64,65536 \
			>"$OUT" 2>"$OUT.err"; then
		echo "FAIL: --threads 2 $*: exit $? ($(tail -n2 "$OUT.err"))"
		fails=$((fails + 1))
	elif ! awk -v what="--threads 2 $*" '
		$1 ~ /_bw$/ && $NF != "lcores" { if ($5 != 3000) bad = bad " " $1 "/" $3 ":" $5; per[$1 " " $3]++ }
		$1 ~ /_bw$/ && $NF == "lcores" { if ($5 != 6000 || $(NF - 1) != 2) bad = bad " sum " $1 "/" $3 ":" $5; sum[$1 " " $3]++ }
		END {
			n = 0
			for (k in per) { n++; if (per[k] != 2 || sum[k] != 1) bad = bad " " k }
			if (n != 4 || bad != "") { print "FAIL: " what ":" bad " (" n " figures)"; exit 1 }
		}' "$OUT"; then
		cat "$OUT"
		fails=$((fails + 1))
	fi
}
threads_check
threads_check --queues
[ $fails = 0 ] && { echo "run_perf_json: PASS"; exit 0; }
echo "run_perf_json: $fails failure(s)"
exit 1
