#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's python3-pyverbs over the drop-in libibverbs: dropin_pyverbs.py
# (next to this script) in one process, one droce device on a net_ring port
# that loops back to itself, two RC QPs and two UD QPs talking through it.
#
# Usage: run_dropin_pyverbs.sh <dropin dir>
# Exit 0 if every step passed, 77 if python3-pyverbs is missing.
set -u

DROPIN=${1:?usage: run_dropin_pyverbs.sh <dropin dir>}
HERE=$(cd "$(dirname "$0")" && pwd)
# Debian's pyverbs is built for Debian's python3, not whatever python3
# comes first in PATH.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
[ -n "$PY" ] && "$PY" -c "import pyverbs" 2>/dev/null ||
	{ echo "SKIP: python3-pyverbs is missing"; exit 77; }
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }

ENVV=(env LD_LIBRARY_PATH="$DROPIN")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	ENVV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi

PREFIX=pyv$$
trap 'rm -rf /var/run/dpdk/$PREFIX' EXIT
EAL="-l 0 --no-huge -m 256 --no-pci --no-telemetry --file-prefix=$PREFIX \
--vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1"

# pyverbs must load the drop-in, not the system's libibverbs
LIB=$("${ENVV[@]}" "$PY" -c "import pyverbs.device, re; \
print([l.split()[-1] for l in open('/proc/self/maps') if 'libibverbs.so' in l][0])" 2>/dev/null)
echo "run_dropin_pyverbs: pyverbs loads $LIB"
case $LIB in
"$(cd "$DROPIN" && pwd)"/*) ;;
*) echo "FAIL: pyverbs did not load the drop-in from $DROPIN"; exit 1 ;;
esac

T0=$(date +%s.%N)
"${ENVV[@]}" DROCE_EAL="$EAL" timeout -k 5 ${PYV_TIMEOUT:-60} "$PY" "$HERE/dropin_pyverbs.py" 2>&1 |
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: No free'
rc=${PIPESTATUS[0]}
printf 'run_dropin_pyverbs: exit %d in %.1f s\n' $rc "$(awk "BEGIN { print $(date +%s.%N) - $T0 }")"
exit $rc
