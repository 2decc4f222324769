#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# droce-perf's tests, each briefly, on its embedded default in both progress
# modes (and the UC/UD variants, ODP buffers, post lists and CQ moderation):
# the JSON parses, names every test asked for, and its figures are sane
# (non-zero, percentiles in order, bandwidth consistent with the message
# rate). Asserts nothing about speed.
#
# Usage: run_perf_json.sh <droce-perf>
set -u
PERF=${1:?usage: run_perf_json.sh <droce-perf>}
PY=/usr/bin/python3
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
fails=0

check() {	# label, tests (comma-separated), droce-perf arguments...
	local label=$1 tests=$2
	shift 2
	if ! timeout -k 5 120 "$PERF" "$tests" "$@" -j >"$OUT" 2>"$OUT.err"; then
		echo "FAIL: $label: exit $? ($(tail -n2 "$OUT.err"))"
		fails=$((fails + 1))
		return
	fi
	if "$PY" - "$OUT" "$tests" "$label" <<'PYEOF'; then :; else fails=$((fails + 1)); fi
import json, sys
label = sys.argv[3]
try:
    d = json.load(open(sys.argv[1]))
except ValueError as e:
    print(f"FAIL: {label}: JSON does not parse: {e}"); sys.exit(1)
want = sys.argv[2].split(",")
res = d["results"]
bad = []
if sorted({r["test"] for r in res}) != sorted(want):
    bad.append(f"tests {sorted({r['test'] for r in res})}, want {sorted(want)}")
for r in res:
    if "lat_us" in r:
        l = r["lat_us"]
        seq = [l["min"], l["p50"], l["p99"], l["p99.9"], l["max"]]
        if not (0 < seq[0] and all(a <= b for a, b in zip(seq, seq[1:]))):
            bad.append(f"{r['test']} {r['size']} B: percentiles {seq}")
    else:
        mps, g, size = r["msg_rate_mps"], r["gbit_s"], r["size"]
        if not (mps > 0 and r["msgs"] > 0 and r["seconds"] > 0):
            bad.append(f"{r['test']} {size} B: rate {mps}, {r['msgs']} msgs")
        elif size and abs(g - mps * size * 8 / 1e3) > 0.01 * g + 0.002:
            bad.append(f"{r['test']} {size} B: {g} Gbit/s for {mps} M msg/s")
if bad:
    print(f"FAIL: {label}: " + "; ".join(bad)); sys.exit(1)
print(f"ok: {label}: {len(res)} figures")
PYEOF
}

all=send_lat,write_lat,read_lat,atomic_lat,ud_lat,send_bw,write_bw,read_bw,atomic_bw,srq_bw,ud_bw
for p in lcore inline; do
	check "every test, $p progress" $all -p $p -n 300 -s 8,4096
done
check "UC" send_lat,write_lat,send_bw,write_bw -c uc -n 300 -s 64
check "4 QPs, post lists of 8, CQ moderation 16, inline 64" send_bw,write_bw -q 4 -l 8 -Q 16 -I 64 -n 4000 -s 64
check "ODP buffers" write_bw,read_lat,atomic_lat --odp -n 300 -s 64
check "a duration (-D)" send_bw -D 0.3 -s 64
[ $fails = 0 ] && { echo "run_perf_json: PASS"; exit 0; }
echo "run_perf_json: $fails failure(s)"
exit 1
