#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# devtools/bench-compare --quick (issue 14): it installs its peers, runs every
# workload once with few iterations, and its JSON parses and holds figures
# from droce and from every peer installed here (ucx_perftest, fi_pingpong,
# sockperf, the memcpy and xcopy ceilings, the memif and net_shm ports alone),
# each measure once, and the machine's own stops (bench_jitter) with the tails
# read against them; its report names the commands and says what droce adds
# over each port, and, redrawn from the JSON with a second repeat whose
# cache line is slower, that the machine changed speed. Asserts nothing about
# speed. Exit 77 when a peer package cannot be installed.
#
# Usage: run_bench_compare.sh <droce-perf> <source root>
set -u
PERF=${1:?usage: run_bench_compare.sh <droce-perf> <source root>}
TOP=${2:?usage: run_bench_compare.sh <droce-perf> <source root>}
PY=/usr/bin/python3
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

timeout -k 5 900 "$TOP/devtools/bench-compare" --quick --perf "$PERF" --out "$OUT" \
	>"$OUT/stdout" 2>"$OUT/stderr"
rc=$?
if [ $rc = 77 ]; then
	echo "SKIP: a peer package cannot be installed: $(tail -n2 "$OUT/stderr")"
	exit 77
fi
if [ $rc != 0 ]; then
	echo "FAIL: bench-compare exit $rc"
	tail -n 20 "$OUT/stderr"
	exit 1
fi
grep 'FAILED' "$OUT/stderr"	# a measure that failed (fi-udp at 4 KiB is expected)
tail -n1 "$OUT/stderr"

# the transports installed here, each with the workloads it measures
want=()
for t in inline lcore inline-loss0.001 inline-loss0.01; do
	want+=("droce-$t:send_lat/8,send_lat/4096,write_lat/8,write_lat/4096,send_bw/64,write_bw/65536")
done
# two processes, one core each (net_shm is droce's own: always there)
want+=("droce-shm:send_lat/8,write_lat/8,send_bw/64,write_bw/65536" "droce-shm-l16:send_bw/64")
# each port alone (devtools/bench_link, built with droce-perf)
want+=("link-shm:send_lat/8,send_bw/64" "link-memif:send_lat/8,send_bw/64")
if command -v ucx_perftest >/dev/null; then
	for t in tcp posix; do
		want+=("ucx-$t:send_lat/8,send_lat/4096,write_lat/8,write_lat/4096,send_bw/64,write_bw/65536,write_bw/4194304")
	done
fi
if command -v fi_pingpong >/dev/null; then
	# fi_pingpong's udp provider refuses 4 KiB datagrams: one figure is enough there
	want+=("fi-tcp:send_lat/8,send_lat/4096" "fi-udp:send_lat/8" "fi-shm:send_lat/8,send_lat/4096")
fi
if command -v sockperf >/dev/null; then
	for t in tcp udp; do
		want+=("sockperf-$t:send_lat/8,send_bw/64,write_bw/65536")
	done
fi
command -v cc >/dev/null && want+=("memcpy:write_bw/65536,write_bw/4194304" "pingpong:send_lat/8"
				   "xcopy:write_bw/65536,write_bw/4194304")

"$PY" - "$OUT" "${want[@]}" <<'PYEOF'
import json, os, sys
out = sys.argv[1]
try:
    d = json.load(open(os.path.join(out, "bench-compare.json")))
except ValueError as e:
    print("FAIL: the JSON does not parse: %s" % e); sys.exit(1)
bad = []
m = d["machine"]
for k in ("cpu", "cores", "kernel", "dpdk", "droce_commit", "date"):
    if not m.get(k):
        bad.append("machine.%s is missing" % k)
if m.get("repeats") != 1 or not m.get("quick"):
    bad.append("machine says repeats %s, quick %s" % (m.get("repeats"), m.get("quick")))
got = {}
for r in d["results"]:
    if len(r["raw"]) != 1:
        bad.append("%s %s %s: %d raw figures for 1 repeat" % (r["transport"], r["test"], r["size"],
                                                             len(r["raw"])))
    if r.get("error"):
        continue
    lat = r["test"].endswith("_lat")
    v = r["p50_us"] if lat else r["msg_rate_mps"]
    if not (isinstance(v, (int, float)) and v > 0):
        bad.append("%s %s %s: figure %r" % (r["transport"], r["test"], r["size"], v))
        continue
    if not lat and abs(r["gbit_s"] - r["msg_rate_mps"] * r.get("size_used", r["size"]) * 8 / 1e3) \
            > 0.01 * r["gbit_s"] + 0.002:
        bad.append("%s %s %s: %s Gbit/s for %s M msg/s" % (r["transport"], r["test"], r["size"],
                                                           r["gbit_s"], r["msg_rate_mps"]))
    got.setdefault(r["transport"], set()).add("%s/%d" % (r["test"], r["size"]))
for w in sys.argv[2:]:
    name, keys = w.split(":")
    missing = sorted(set(keys.split(",")) - got.get(name, set()))
    if missing:
        bad.append("%s: no figure for %s" % (name, ", ".join(missing)))
if "droce-memif" not in got:
    bad.append("droce-memif (two processes over memif) gave no figure")
if "droce-shm" not in got:
    bad.append("droce-shm (two processes over net_shm) gave no figure")
# devtools/plot drew the comparison, and the report shows it
png = os.path.join(out, "compare.png")
if not os.path.exists(png) or open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
    bad.append("no compare.png from devtools/plot")
if not d["commands"] or not any("droce-perf" in c for c in d["commands"]):
    bad.append("no droce-perf command recorded")
# the machine's own stops (bench_jitter), which the report reads the tails against
j = d.get("jitter")
if not j or not (isinstance(j.get("per_s"), (int, float)) and j["per_s"] >= 0) or \
        len(j.get("raw", [])) != 1 or not j["raw"][0].get("cpus") or \
        not all(j.get(k, 0) >= 1 for k in ("alu_p99_ratio", "mem_p99_ratio")):
    bad.append("no jitter figures from bench_jitter: %r" % (j,))
for r in d["results"]:
    if r["transport"] in ("droce-inline", "pingpong") and r["test"].endswith("_lat") \
            and not r.get("error") and not (r.get("p999_us") or 0) >= r["p99_us"] >= r["p50_us"]:
        bad.append("%s %s %s: p50 %s p99 %s p99.9 %s" % (r["transport"], r["test"], r["size"],
                                                      r["p50_us"], r["p99_us"], r.get("p999_us")))
md = open(os.path.join(out, "perf.md")).read()
for s in ("## The machine", "## Results", "## Tails", "## droce over its link",
          "## The commands", "| droce-inline |",
          "compare.png", "stops of a busy CPU"):
    if s not in md:
        bad.append("perf.md has no %r" % s)
if bad:
    print("FAIL: " + "\n      ".join(bad)); sys.exit(1)
print("ok: %d figures from %s" % (len(d["results"]), ", ".join(sorted(got))))
PYEOF
rc=$?
[ $rc = 0 ] || exit $rc

# The same run as if it had had a second repeat on a machine 4 times slower
# across cores (pingpong): the report redrawn from it (--from-json) says the
# machine changed speed and lists each repeat; the quick run's own does not.
grep -q "## Each repeat" "$OUT/perf.md" && { echo "FAIL: one repeat, yet an 'Each repeat' section"; exit 1; }
"$PY" - "$OUT/bench-compare.json" "$OUT/two.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    slow = dict(r["raw"][0])
    if r["transport"] == "pingpong":
        slow["p50_us"] = slow["p50_us"] * 4
    r["raw"].append(slow)
json.dump(d, open(sys.argv[2], "w"))
PYEOF
mkdir -p "$OUT/two"
if ! "$TOP/devtools/bench-compare" --from-json "$OUT/two.json" --out "$OUT/two" >"$OUT/two.log" 2>&1; then
	echo "FAIL: bench-compare --from-json"; tail -n 5 "$OUT/two.log"; exit 1
fi
for s in "The machine changed speed during this run" "## Each repeat" "| repeat 1 | repeat 2 |"; do
	grep -qF "$s" "$OUT/two/perf.md" || { echo "FAIL: the redrawn report has no '$s'"; exit 1; }
done
echo "run_bench_compare: PASS"
exit 0
