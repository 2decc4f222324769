#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's python3-pyverbs between two processes on one host joined by a
# net_shm link (dropin_shm_lib.sh; the program is dropin_pyverbs_pair.py
# next to this script), started in both orders (the client retries its TCP
# connect), twice each, on one link name.
#
# Usage: run_dropin_pyverbs_pair.sh <dropin dir>
# Exit 0 if every run passed, 77 if python3-pyverbs is missing.
set -u

DROPIN=${1:?usage: run_dropin_pyverbs_pair.sh <dropin dir>}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
[ -n "$PY" ] && "$PY" -c "import pyverbs" 2>/dev/null ||
	{ echo "SKIP: python3-pyverbs is missing"; exit 77; }
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }
DROPIN=$(cd "$DROPIN" && pwd)
ME=run_dropin_pyverbs_pair PFX=pv NET=10.94.0 SHM_LINK=pv$$ SERVER_LCORES=0
. "$HERE/dropin_shm_lib.sh"
DROPIN_ENV+=(PYTHONPATH="$HERE")
trap 'cleanup; rm -f /dev/shm/droce-shm.$SHM_LINK' EXIT

start() {	# role eal log -> pid in $!
	"${DROPIN_ENV[@]}" DROCE_EAL="$2" timeout -k 5 60 "$PY" "$HERE/dropin_pyverbs_pair.py" \
		$1 $PORT >"$3" 2>&1 &
}

fails=0 n=0
for order in server-first client-first server-first client-first; do
	n=$((n + 1))
	slog=$LOGDIR/$n.server clog=$LOGDIR/$n.client
	if [ $order = server-first ]; then
		start server "$(eal_server $n)" "$slog"; SPID=$!
		for _ in $(seq 1 200); do grep -qs listening "$slog" && break; sleep 0.05; done
		start client "$(eal_client $n)" "$clog"; CPID=$!
	else
		start client "$(eal_client $n)" "$clog"; CPID=$!
		sleep 0.5
		start server "$(eal_server $n)" "$slog"; SPID=$!
	fi
	wait $CPID; crc=$?; CPID=
	wait $SPID; src=$?; SPID=
	if [ $src -eq 0 ] && [ $crc -eq 0 ] && grep -q PASS "$slog" && grep -q PASS "$clog"; then
		echo "run $n ($order): PASS ($(grep -h 'PASS' "$clog"))"
	else
		fails=$((fails + 1))
		echo "run $n ($order): FAIL (server exit $src, client exit $crc)"
		show "$slog" server | tail -n 8
		show "$clog" client | tail -n 8
	fi
	PORT=$((PORT + 1))
done
echo "run_dropin_pyverbs_pair: $((n - fails))/$n runs passed"
[ $fails -eq 0 ]
