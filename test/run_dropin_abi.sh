#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The drop-in libraries export exactly what rdma-core v44's do:
#   1. `objdump -T` of build/dropin/libibverbs.so.1 and librdmacm.so.1 against
#      the installed libibverbs.so.1 / librdmacm.so.1: every symbol@version
#      of the reference, default (@@) or compat (@) as there, function or
#      data as there, and nothing else; and against the checked-in lists.
#      The one addition: libibverbs' DROCE_PRIVATE_1 node (what the drop-in
#      librdmacm needs of it), which must hold exactly
#      dropin/libibverbs.private.symbols.
#   2. Debian's providers and programs that link libibverbs/librdmacm
#      (BIND_NOW) resolve every symbol against the drop-in (`ldd -r`).
#   3. A few stubs, called through ctypes, fail as documented.
# Usage: run_dropin_abi.sh <dropin dir> <libibverbs.symbols> <librdmacm.symbols> <system libdir>
# Exit 0 on success, 77 if the reference libraries are not installed.
set -u

DROPIN=${1:?usage: run_dropin_abi.sh <dropin dir> <libibverbs.symbols> <librdmacm.symbols> <libdir>}
IBV_LIST=${2:?}
CM_LIST=${3:?}
LIBDIR=${4:?}
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

for f in "$LIBDIR/libibverbs.so.1" "$LIBDIR/librdmacm.so.1"; do
	[ -e "$f" ] || { echo "SKIP: $f is not installed"; exit 77; }
done
command -v objdump >/dev/null || { echo "SKIP: objdump (binutils) is missing"; exit 77; }

TMP=$(mktemp -d /tmp/droce-abi.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

PRIV_LIST=$(dirname "$IBV_LIST")/libibverbs.private.symbols
PRIV=DROCE_PRIVATE_1

# name@@VERSION (default) or name@VERSION (compat), then the type (DF/DO),
# one per line, sorted; version definitions themselves are left out, and
# the private node (checked on its own) unless $2 is "private".
exports() {
	objdump -T "$1" | awk -v priv="$PRIV" -v want="${2:-public}" '
	$0 !~ /\*UND\*/ && NF >= 7 && $NF != $(NF-1) && (($(NF-1) == priv) == (want == "private")) {
		v = $(NF-1); n = $NF; t = $3
		if (v ~ /^\(/) { gsub(/[()]/, "", v); print n "@" v, t } else print n "@@" v, t
	}' | LC_ALL=C sort
}
listed() { grep -v '^#' "$1" | grep -v '^$' | LC_ALL=C sort; }

check_lib() {	# name, reference, drop-in, checked-in list
	local name=$1 ref=$2 mine=$3 list=$4 n
	[ -e "$mine" ] || { fail "$mine was not built"; return; }
	exports "$ref" >"$TMP/$name.ref"
	exports "$mine" >"$TMP/$name.mine"
	n=$(wc -l <"$TMP/$name.ref")
	if ! diff -u "$TMP/$name.ref" "$TMP/$name.mine" >"$TMP/$name.diff"; then
		fail "$name: exports differ from $ref (- reference, + drop-in):"
		grep -E '^[-+][^-+]' "$TMP/$name.diff" | sed 's/^/    /'
	else
		echo "ok: $name: all $n symbol@version of $(basename "$(readlink -f "$ref")") exported, same versions and types, nothing else"
	fi
	if ! diff -u <(cut -d' ' -f1 "$TMP/$name.ref") <(listed "$list") >"$TMP/$name.ldiff"; then
		fail "$name: $list is out of date with $ref (- reference, + list):"
		grep -E '^[-+][^-+]' "$TMP/$name.ldiff" | sed 's/^/    /'
	fi
	if [ "$(objdump -p "$mine" | awk '/SONAME/ { print $2 }')" != "lib$name.so.1" ]; then
		fail "$name: SONAME is not lib$name.so.1"
	fi
	# every version node of the reference is defined (empty ones included)
	diff <(objdump -T "$ref" | awk '/\*ABS\*/ && NF >= 7 && $NF == $(NF-1) { print $NF }' | sort) \
	     <(objdump -T "$mine" | awk -v priv="$PRIV" '/\*ABS\*/ && NF >= 7 && $NF == $(NF-1) && $NF != priv { print $NF }' | sort) >/dev/null ||
		fail "$name: version definitions differ"
}

check_lib ibverbs "$LIBDIR/libibverbs.so.1" "$DROPIN/libibverbs.so.1" "$IBV_LIST"
check_lib rdmacm "$LIBDIR/librdmacm.so.1" "$DROPIN/librdmacm.so.1" "$CM_LIST"
if diff <(exports "$DROPIN/libibverbs.so.1" private | cut -d' ' -f1) <(listed "$PRIV_LIST") >/dev/null &&
   [ -z "$(exports "$DROPIN/librdmacm.so.1" private)" ]; then
	echo "ok: ibverbs: $PRIV holds exactly $(basename "$PRIV_LIST") ($(listed "$PRIV_LIST" | tr '\n' ' '))"
else
	fail "ibverbs: $PRIV differs from $PRIV_LIST: $(exports "$DROPIN/libibverbs.so.1" private | tr '\n' ' ')"
fi

# 2. What Debian links against libibverbs/librdmacm resolves against the
# drop-in: providers (libmlx5/libefa/libmlx4 import ~70 IBVERBS_PRIVATE_34
# symbols), DPDK's mlx PMDs (EAL autoloads them), and the utilities.
checked=0
names=
declare -A seen
for f in "$LIBDIR"/libmlx5.so.1 "$LIBDIR"/libefa.so.1 "$LIBDIR"/libmlx4.so.1 \
	 "$LIBDIR"/dpdk/pmds-*/librte_net_mlx5.so.* "$LIBDIR"/dpdk/pmds-*/librte_common_mlx5.so.* \
	 /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong /usr/bin/ibv_uc_pingpong \
	 /usr/bin/ibv_ud_pingpong /usr/bin/ibv_srq_pingpong /usr/bin/ibv_xsrq_pingpong \
	 /usr/bin/ibv_asyncwatch /usr/bin/rping /usr/bin/rdma_server /usr/bin/rdma_client \
	 /usr/bin/ucmatose /usr/bin/ib_write_bw /usr/bin/ib_send_lat; do
	[ -e "$f" ] || continue
	f=$(readlink -f "$f")
	[ -n "${seen[$f]:-}" ] && continue
	seen[$f]=1
	out=$(LD_LIBRARY_PATH=$DROPIN ldd -r "$f" 2>&1)
	if echo "$out" | grep -qE 'undefined symbol|version .* not found|not found'; then
		fail "$f does not resolve against the drop-in:"
		echo "$out" | grep -E 'undefined symbol|not found' | sed 's/^/    /'
	elif echo "$out" | grep -qE 'lib(ibverbs|rdmacm)\.so\.1 => ' &&
	     ! echo "$out" | grep -E 'lib(ibverbs|rdmacm)\.so\.1 => ' | grep -qv "$DROPIN"; then
		checked=$((checked + 1))
		names="$names $(basename "$f")"
	else
		fail "$f: ldd does not pick the drop-in: $(echo "$out" | grep -E 'lib(ibverbs|rdmacm)')"
	fi
done
echo "ok: $checked Debian binaries and providers resolve every symbol against the drop-in (ldd -r):$names"

# 3. Stubs fail as documented, called the way a program would. (A sanitized
# drop-in needs the ASan runtime loaded first.)
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
# (Debian's python3: the first in PATH may be a shim, pyenv's, that takes a
# second to start and would run under the preloaded runtime too)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
if [ -n "$PY" ]; then
	env ${SAN_RT:+LD_PRELOAD=$SAN_RT ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0} \
	"$PY" - "$DROPIN" <<'EOF' || fail "stub behaviour (see above)"
import ctypes, errno, os, sys
d = sys.argv[1]
bad = 0
def check(what, ok):
    global bad
    print(("ok:   " if ok else "FAIL: ") + what)
    bad += not ok
libc = ctypes.CDLL(None, use_errno=True)
ibv = ctypes.CDLL(os.path.join(d, "libibverbs.so.1"), use_errno=True)
cm = ctypes.CDLL(os.path.join(d, "librdmacm.so.1"), use_errno=True)
libc.dlvsym.restype = ctypes.c_void_p
libc.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]

def call(lib, name, restype, *args):
    f = getattr(lib, name)
    f.restype = restype
    ctypes.set_errno(0)
    r = f(*args)
    return r, ctypes.get_errno()

r, e = call(ibv, "ibv_import_device", ctypes.c_void_p, -1)
check("ibv_import_device (the facade's) of no fd -> NULL, EINVAL", r is None and e == errno.EINVAL)
r, e = call(ibv, "ibv_import_dm", ctypes.c_void_p, None, 0)
check("ibv_import_dm -> NULL, EOPNOTSUPP", r is None and e == errno.EOPNOTSUPP)
r, e = call(ibv, "ibv_resize_cq", ctypes.c_int, None, 0)
check("ibv_resize_cq (the facade's) to 0 entries -> EINVAL", r == errno.EINVAL)
r, e = call(ibv, "ibv_rereg_mr", ctypes.c_int, None, 1 << 3, None, None, 0, 0)
check("ibv_rereg_mr (the facade's) with an unknown flag -> IBV_REREG_MR_ERR_INPUT, EINVAL",
      r == -1 and e == errno.EINVAL)
r, e = call(ibv, "ibv_attach_mcast", ctypes.c_int, None, None, 0)
check("ibv_attach_mcast (the facade's) without a QP -> EINVAL", r == errno.EINVAL and e == errno.EINVAL)
r, e = call(ibv, "ibv_cmd_alloc_pd", ctypes.c_int)
check("ibv_cmd_alloc_pd@PRIVATE_34 -> EOPNOTSUPP", r == errno.EOPNOTSUPP)
r, e = call(ibv, "verbs_register_driver_34", None, None)
check("verbs_register_driver_34 accepts and ignores a provider", True)
r, e = call(ibv, "ibv_event_type_str", ctypes.c_char_p, 0)
check("ibv_event_type_str(IBV_EVENT_CQ_ERR) = 'CQ error'", r == b"CQ error")
r, e = call(ibv, "ibv_rate_to_mbps", ctypes.c_int, 7)
check("ibv_rate_to_mbps(IBV_RATE_40_GBPS) = 40000", r == 40000)
compat = libc.dlvsym(ibv._handle, b"ibv_get_device_list", b"IBVERBS_1.0")
default = libc.dlvsym(ibv._handle, b"ibv_get_device_list", b"IBVERBS_1.1")
check("ibv_get_device_list@IBVERBS_1.0 and @IBVERBS_1.1 are distinct",
      compat is not None and default is not None and compat != default)
f = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, use_errno=True)(compat)
ctypes.set_errno(0)
check("ibv_get_device_list@IBVERBS_1.0 -> NULL, EOPNOTSUPP", f(None) is None and ctypes.get_errno() == errno.EOPNOTSUPP)
compat = libc.dlvsym(ibv._handle, b"ibv_query_device", b"IBVERBS_1.0")
f = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, use_errno=True)(compat)
ctypes.set_errno(0)
check("ibv_query_device@IBVERBS_1.0 -> EOPNOTSUPP", f(None, None) == errno.EOPNOTSUPP and ctypes.get_errno() == errno.EOPNOTSUPP)
r, e = call(ibv, "ibv_reg_dmabuf_mr", ctypes.c_void_p, None, ctypes.c_uint64(0), ctypes.c_size_t(4096), ctypes.c_uint64(0), -1, 1)
check("ibv_reg_dmabuf_mr -> NULL, EOPNOTSUPP", r is None and e == errno.EOPNOTSUPP)
r, e = call(ibv, "ibv_query_ece", ctypes.c_int, None, None)
check("ibv_query_ece -> EOPNOTSUPP", r == errno.EOPNOTSUPP and e == errno.EOPNOTSUPP)
r, e = call(cm, "rdma_create_event_channel", ctypes.c_void_p)
check("rdma_create_event_channel with no device -> NULL, ENODEV", r is None and e == errno.ENODEV)
r, e = call(cm, "rdma_getaddrinfo", ctypes.c_int, b"127.0.0.1", b"7471", None, ctypes.byref(ctypes.c_void_p()))
check("rdma_getaddrinfo -> 0 (names resolve without a device)", r == 0)
r, e = call(cm, "rsocket", ctypes.c_int, 2, 1, 0)
check("rsocket -> -1, EOPNOTSUPP", r == -1 and e == errno.EOPNOTSUPP)
sys.exit(1 if bad else 0)
EOF
fi

if [ $fails -eq 0 ]; then
	echo "run_dropin_abi: passed"
	exit 0
fi
echo "run_dropin_abi: $fails failure(s)"
exit 1
