#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rsockets over the drop-in librdmacm, not supported yet (issue 11): they
# must fail at once and clearly, never hang or crash.
#   1. every rsocket entry point librdmacm.so.1 exports (the r* names of
#      dropin/librdmacm.symbols), called through ctypes, returns -1
#      (riowrite: (size_t)-1) with errno EOPNOTSUPP, and the library prints
#      one line about it, once per process;
#   2. Debian's rstream, riostream, rcopy and udpong, as server and as
#      client, exit non-zero within 10 s with "Operation not supported" and
#      that one line;
#   3. a program under librspreload still gets its socket (librspreload
#      falls back to the kernel's when rsocket fails), with the same line.
# Usage: run_dropin_rsockets.sh <dropin dir> <librdmacm.symbols>
# Exit 0 on success, 77 if python3 is missing.
set -u

DROPIN=$(cd "${1:?usage: run_dropin_rsockets.sh <dropin dir> <librdmacm.symbols>}" && pwd)
CM_LIST=${2:?}
NOTE='^droce: rsockets .* are not supported by droce.s librdmacm yet: they fail with EOPNOTSUPP$'
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Debian's python3: the first in PATH may be a shim (pyenv's takes a second to
# start, and would run under the preloaded libraries too)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
[ -n "$PY" ] || { echo "SKIP: python3 is missing"; exit 77; }

TMP=$(mktemp -d /tmp/droce-rsockets.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# a looped device, as test_cm's: the programs may open it before their rsocket call
export LD_LIBRARY_PATH=$DROPIN
export DROCE_EAL="-l 0 --no-huge -m 256 --no-pci --no-telemetry --file-prefix=rsk$$ --vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1"
# a sanitized build: its runtime first, as the other drop-in scripts (dropin_lib.sh)
SAN_RT=$(ldd "$DROPIN/librdmacm.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	export LD_PRELOAD=$SAN_RT ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fi

# 1. the entry points
names=$(sed -n 's/^\(r[a-z]*\)@@RDMACM_1\.0$/\1/p' "$CM_LIST" | grep -v '^rdma_')
[ "$(echo "$names" | wc -l)" -ge 27 ] || fail "only $(echo "$names" | wc -l) rsocket names in $CM_LIST"
"$PY" - "$DROPIN/librdmacm.so.1" $names >"$TMP/calls.out" 2>"$TMP/calls.err" <<'EOF'
import ctypes, errno, sys

cm = ctypes.CDLL(sys.argv[1], use_errno=True)
# return types as rsocket.h declares them; int for the others
rtype = {n: ctypes.c_ssize_t for n in ("rrecv", "rrecvfrom", "rrecvmsg", "rsend", "rsendto",
                                        "rsendmsg", "rread", "rreadv", "rwrite", "rwritev")}
rtype["riomap"] = ctypes.c_int64
rtype["riowrite"] = ctypes.c_size_t
bad = 0
for name in sys.argv[2:]:
    f = getattr(cm, name)
    f.restype = rtype.get(name, ctypes.c_int)
    ctypes.set_errno(0)
    r = f(3, None, 0, 0, 0, 0)   # arguments never read: every call fails first
    e = ctypes.get_errno()
    want = -1 if name != "riowrite" else ctypes.c_size_t(-1).value
    if r != want or e != errno.EOPNOTSUPP:
        print("FAIL: %s -> %d, errno %d (want %d, EOPNOTSUPP)" % (name, r, e, want))
        bad += 1
print("%d calls" % (len(sys.argv) - 2))
sys.exit(1 if bad else 0)
EOF
[ $? -eq 0 ] || fail "the entry points: $(grep FAIL "$TMP/calls.out" | head -3)"
[ "$(grep -cE "$NOTE" "$TMP/calls.err")" = 1 ] && [ "$(wc -l < "$TMP/calls.err")" = 1 ] ||
	fail "the calls printed $(wc -l < "$TMP/calls.err") line(s), not the one note: $(head -3 "$TMP/calls.err")"

# 2. the programs
run_prog() {
	local out=$TMP/prog.out rc

	timeout -k 2 10 "$@" >"$out" 2>&1 </dev/null
	rc=$?
	# (they exit(-1): 255; 129 to 159 would be a signal)
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		fail "$*: still running after 10 s"
	elif [ $rc -eq 0 ] || { [ $rc -gt 128 ] && [ $rc -lt 160 ]; }; then
		fail "$*: exit $rc (a failure was expected, not a success or a signal)"
	fi
	grep -q 'Operation not supported' "$out" || fail "$*: no 'Operation not supported': $(head -3 "$out")"
	[ "$(grep -cE "$NOTE" "$out")" = 1 ] || fail "$*: the droce note $(grep -cE "$NOTE" "$out") times"
	echo "ok   $* (exit $rc): $(grep -v -E "$NOTE" "$out" | grep -m1 'not supported')"
}

progs=0
for p in rstream riostream udpong; do
	command -v $p >/dev/null || { echo "SKIP $p: not installed"; continue; }
	run_prog $p
	run_prog $p -s 10.0.0.1
	progs=$((progs + 1))
done
if command -v rcopy >/dev/null; then
	echo data >"$TMP/src"
	run_prog rcopy
	run_prog rcopy "$TMP/src" "10.0.0.1:$TMP/dst"
	progs=$((progs + 1))
else
	echo "SKIP rcopy: not installed"
fi

# 3. librspreload: the kernel's socket, and the note
PRELOAD=
for d in /usr/lib/*/rsocket /usr/lib/rsocket /usr/lib64/rsocket; do
	[ -e "$d/librspreload.so.1" ] && PRELOAD=$d/librspreload.so.1 && break
done
if [ -n "$SAN_RT" ]; then
	# (python under the sanitizer's runtime and librspreload's interposers hangs)
	echo "SKIP librspreload: a sanitized build"
elif [ -n "$PRELOAD" ]; then
	LD_PRELOAD=$PRELOAD timeout -k 2 10 "$PY" -c \
		'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print("socket", s.getsockname()[1] > 0)' \
		>"$TMP/pre.out" 2>"$TMP/pre.err"
	if ! grep -q '^socket True$' "$TMP/pre.out"; then
		fail "librspreload: no socket: $(head -3 "$TMP/pre.out" "$TMP/pre.err")"
	elif [ "$(grep -cE "$NOTE" "$TMP/pre.err")" -gt 1 ]; then
		fail "librspreload: the note more than once"
	else
		echo "ok   librspreload: a kernel socket ($(grep -cE "$NOTE" "$TMP/pre.err") note)"
	fi
else
	echo "SKIP librspreload: not installed"
fi

if [ $fails -eq 0 ]; then
	echo "run_dropin_rsockets: passed ($(echo "$names" | wc -l) entry points, $progs programs)"
	exit 0
fi
echo "run_dropin_rsockets: $fails failure(s)"
exit 1
