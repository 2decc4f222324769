#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's python3-pyverbs between two processes on one host joined by a
# net_shm link (dropin_pyverbs_pair.py next to this script), started in both
# orders (the client retries its TCP connect), twice each, on one link name.
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

ENVV=(env LD_LIBRARY_PATH="$DROPIN" PYTHONPATH="$HERE")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	ENVV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi

ID=$$ LINK=pvp$$
PORT=$((20000 + $$ % 20000))
LOGDIR=$(mktemp -d /tmp/droce-pvp-$$.XXXXXX)
if [ "$(nproc)" -ge 2 ]; then C1=1; else C1=0; fi
COMMON="--no-huge -m 256 --no-pci --no-telemetry"
SPID= CPID=
cleanup() {
	for p in $SPID $CPID; do kill -KILL "$p" 2>/dev/null; done
	[ -n "${KEEP_LOGS:-}" ] || rm -rf "$LOGDIR"; rm -rf /dev/shm/droce-shm.$LINK /var/run/dpdk/pvS$ID* /var/run/dpdk/pvC$ID*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start() {	# role lcore ip log -> pid in $!
	"${ENVV[@]}" DROCE_EAL="-l $2 $COMMON --file-prefix=pv${1:0:1}$ID --vdev=net_shm0,link=$LINK --vdev=droce0,ethdev=net_shm0,ip=$3" \
		timeout -k 5 60 "$PY" "$HERE/dropin_pyverbs_pair.py" $1 $PORT >"$4" 2>&1 &
}

fails=0 n=0
for order in server-first client-first server-first client-first; do
	n=$((n + 1))
	slog=$LOGDIR/$n.server clog=$LOGDIR/$n.client
	if [ $order = server-first ]; then
		start server 0 10.0.0.1 "$slog"; SPID=$!
		for _ in $(seq 1 200); do grep -qs listening "$slog" && break; sleep 0.05; done
		start client $C1 10.0.0.2 "$clog"; CPID=$!
	else
		start client $C1 10.0.0.2 "$clog"; CPID=$!
		sleep 0.5
		start server 0 10.0.0.1 "$slog"; SPID=$!
	fi
	wait $CPID; crc=$?; CPID=
	wait $SPID; src=$?; SPID=
	if [ $src -eq 0 ] && [ $crc -eq 0 ] && grep -q PASS "$slog" && grep -q PASS "$clog"; then
		echo "run $n ($order): PASS ($(grep -h 'PASS' "$clog"))"
	else
		fails=$((fails + 1))
		echo "run $n ($order): FAIL (server exit $src, client exit $crc)"
		grep -v '^EAL' "$slog" | tail -n 8 | sed 's/^/    server | /'
		grep -v '^EAL' "$clog" | tail -n 8 | sed 's/^/    client | /'
	fi
	PORT=$((PORT + 1))
done
echo "run_dropin_pyverbs_pair: $((n - fails))/$n runs passed"
[ $fails -eq 0 ]
