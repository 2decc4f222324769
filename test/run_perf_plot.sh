#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# devtools/plot draws droce-perf's JSON: of a --server/--client run over
# memif (or net_shm: --shm), of the embedded default, both named in a
# comparison JSON, and both as a list of files. Each plot is a non-empty
# PNG (its signature) or SVG. Needs Debian's python3-matplotlib: installed
# if missing (as root), else the test is skipped (exit 77).
#
# Usage: run_perf_plot.sh <droce-perf> <devtools/plot> [--memif|--shm]
set -u
PERF=${1:?usage: run_perf_plot.sh <droce-perf> <devtools/plot> [--memif|--shm]}
PLOT=${2:?usage: run_perf_plot.sh <droce-perf> <devtools/plot> [--memif|--shm]}
TOPO=${3:---memif}
PY=/usr/bin/python3
HERE=$(dirname "$0")
DIR=$(mktemp -d /tmp/droce-perf-plot.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
fails=0

if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			python3-matplotlib >"$DIR/apt.log" 2>&1 ||
			{ apt-get update -q >/dev/null 2>&1 &&
			  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
				python3-matplotlib >"$DIR/apt.log" 2>&1; }
	fi
	if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
		echo "run_perf_plot: SKIP: no python3-matplotlib, and it could not be installed"
		exit 77
	fi
fi

PERF_REMOTE_KEEP=$DIR/remote.json bash "$HERE/run_perf_remote.sh" "$PERF" "$TOPO" ||
	{ echo "FAIL: the --server/--client run"; exit 1; }
timeout -k 5 120 "$PERF" send_lat tag_lat send_bw tag_bw -n 100 -j >"$DIR/embedded.json" 2>"$DIR/e.err" ||
	{ echo "FAIL: the embedded run: $(tail -n2 "$DIR/e.err")"; exit 1; }
"$PY" - "$DIR" <<'PYEOF' || exit 1
import json, sys
d = sys.argv[1]
runs = {n: json.load(open(f"{d}/{n}.json")) for n in ("remote", "embedded")}
json.dump(runs, open(f"{d}/compare.json", "w"))
PYEOF

# plot <label> <output> <inputs...>: it exits 0 and writes a file of that format
plot() {
	local label=$1 out=$2
	shift 2
	if ! "$PLOT" -o "$out" "$@" >"$DIR/plot.log" 2>&1; then
		echo "FAIL: $label: $(tail -n3 "$DIR/plot.log")"
		fails=$((fails + 1))
		return
	fi
	case $out in
	*.png) head -c 8 "$out" | od -An -tx1 | tr -d ' \n' | grep -q '^89504e470d0a1a0a$' ;;
	*.svg) [ -s "$out" ] && grep -q '<svg' "$out" ;;
	esac || { echo "FAIL: $label: $out is no ${out##*.}"; fails=$((fails + 1)); return; }
	[ "$(stat -c %s "$out")" -gt 1000 ] || { echo "FAIL: $label: $out is nearly empty"; fails=$((fails + 1)); return; }
	echo "ok: $label: $(cat "$DIR/plot.log")"
}

plot "the --client run's JSON" "$DIR/remote.png" "$DIR/remote.json"
plot "a comparison JSON, keyed by name" "$DIR/compare.svg" "$DIR/compare.json"
plot "a list of files, NAME=FILE" "$DIR/list.png" "${TOPO#--}=$DIR/remote.json" "ring=$DIR/embedded.json"
# and a file that is not droce-perf's JSON is refused
echo '{"x": 1}' >"$DIR/bad.json"
if "$PLOT" -o "$DIR/bad.png" "$DIR/bad.json" >/dev/null 2>&1; then
	echo "FAIL: a JSON that is not droce-perf's was plotted"
	fails=$((fails + 1))
fi
[ $fails = 0 ] && { echo "run_perf_plot: PASS"; exit 0; }
echo "run_perf_plot: $fails failure(s)"
exit 1
