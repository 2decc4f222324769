#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# droce as a program outside the tree sees it: `meson install --destdir` into
# a temporary directory, then
#   - the files are where doc/guides/user.rst says (libdroce and its soname,
#     droce.h and no internal header, libdroce.pc, the PMD plugins, the
#     drop-ins in their private directory, droce-perf, the guides);
#   - test/install/hello_droce.c compiles and links with nothing but
#     `pkg-config --cflags --libs libdroce`, against libdroce and not
#     rdma-core's libibverbs;
#   - it runs (LD_LIBRARY_PATH at the installed libdir, EAL arguments on its
#     command line): two devices on a net_ring pair, one RC SEND/RECV;
#   - the installed drop-in libibverbs.so.1 lists a device to Debian's
#     ibv_devices (if installed).
# Usage: run_install.sh <build dir> <source dir>, and in the environment the
# install directories (absolute, as meson's options give them): LIBDIR,
# INCLUDEDIR, BINDIR, DATADIR; CC, the C compiler (default cc).
set -u
BUILD=${1:?usage: run_install.sh <build dir> <source dir>}
SRC=${2:?usage: run_install.sh <build dir> <source dir>}
CC=${CC:-cc}
for v in LIBDIR INCLUDEDIR BINDIR DATADIR; do
	[ -n "${!v:-}" ] || { echo "FAIL: $v not set"; exit 1; }
done

TMP=$(mktemp -d /tmp/droce-install.XXXXXX)
PFX=drinst$$
cleanup() { rm -rf "$TMP" /var/run/dpdk/$PFX*; }
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

DEST=$TMP/root
meson install -C "$BUILD" --no-rebuild --quiet --destdir "$DEST" >"$TMP/install.log" 2>&1 ||
	{ cat "$TMP/install.log"; echo "FAIL: meson install"; exit 1; }
echo "== installed into $DEST:"
(cd "$DEST" && find . \( -type f -o -type l \) | LC_ALL=C sort | sed 's/^\./    /')

libdir=$DEST$LIBDIR
pcdir=$libdir/pkgconfig
pc=$pcdir/libdroce.pc
[ -f "$pc" ] || { echo "FAIL: no ${pc#"$DEST"}"; exit 1; }
for f in "$libdir/libdroce.so" "$libdir/libdroce.so.0" "$DEST$INCLUDEDIR/droce.h" \
	"$libdir/droce/pmds/librte_rdma_roce.so" "$libdir/droce/pmds/librte_net_impair.so" \
	"$libdir/droce/pmds/librte_net_shm.so" "$libdir/droce/dropin/libibverbs.so.1" \
	"$libdir/droce/dropin/librdmacm.so.1" "$DEST$BINDIR/droce-perf" \
	"$DEST$DATADIR/doc/droce/user.rst" "$DEST$DATADIR/doc/droce/developer.rst"; do
	[ -e "$f" ] || fail "${f#"$DEST"} not installed"
done
for h in verbs_loc.h roce.h roce_loc.h droce_config.h droce_build_config.h; do
	[ -z "$(find "$DEST" -name "$h")" ] || fail "internal header $h installed"
done
[ -z "$(find "$DEST" -name 'libibverbs*' -not -path '*/droce/dropin/*')" ] ||
	fail "a libibverbs outside <libdir>/droce/dropin would shadow rdma-core's"

# The .pc is relocatable (pkgconfig.relocatable=true, a project default).
# A build directory configured before that default keeps an absolute prefix:
# then rewrite it in a copy, as a packager's staging would.
if ! grep -q '^prefix=${pcfiledir}' "$pc"; then
	echo "note: $pc is not relocatable (meson configure -Dpkgconfig.relocatable=true); prefix rewritten in a copy"
	mkdir -p "$TMP/pc"
	sed "s|^prefix=|prefix=$DEST|" "$pc" >"$TMP/pc/libdroce.pc"
	pcdir=$TMP/pc
fi
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs libdroce) ||
	{ echo "FAIL: pkg-config --cflags --libs libdroce"; exit 1; }
echo "== pkg-config --cflags --libs libdroce: $flags"
cp "$SRC/test/install/hello_droce.c" "$TMP/"
# shellcheck disable=SC2086 # $flags is a list of words
(cd "$TMP" && "$CC" -Wall -Werror -o hello_droce hello_droce.c $flags) ||
	{ echo "FAIL: hello_droce.c does not build against the installed droce"; exit 1; }
needed=$(readelf -d "$TMP/hello_droce" | awk '/NEEDED/ { print $5 }' | tr -d '[]' | tr '\n' ' ')
echo "== hello_droce NEEDED: $needed"
[[ " $needed" == *" libdroce.so.0 "* ]] || fail "hello_droce does not link libdroce.so.0"
[[ " $needed" != *" libibverbs.so"* ]] || fail "hello_droce links rdma-core's libibverbs"

echo "== LD_LIBRARY_PATH=${libdir#"$DEST"} hello_droce <EAL args>"
LD_LIBRARY_PATH=$libdir timeout -k 5 60 "$TMP/hello_droce" -l 0 --no-huge -m 256 --no-pci \
	--no-telemetry --file-prefix=${PFX}a --log-level=lib.eal:error >"$TMP/hello.out" 2>"$TMP/hello.err"
rc=$?
sed 's/^/    out | /' "$TMP/hello.out"
sed 's/^/    err | /' "$TMP/hello.err" | head -n 20
[ $rc -eq 0 ] || fail "hello_droce exited $rc"
ldd_dir=$(LD_LIBRARY_PATH=$libdir ldd "$TMP/hello_droce" | awk '/libdroce\.so/ { print $3 }')
[ "$(dirname "$ldd_dir")" = "$libdir" ] || fail "hello_droce resolves libdroce to $ldd_dir, not the installed one"
grep -qx 'device droce0' "$TMP/hello.out" || fail "droce0 not listed"
grep -qx 'device droce1' "$TMP/hello.out" || fail "droce1 not listed"
grep -qx 'droce1 received 18 bytes: hello from droce0' "$TMP/hello.out" || fail "the message did not arrive"
grep -qx 'droce0 SEND completed' "$TMP/hello.out" || fail "no SEND completion"
grep -Eqx 'droce0 tx_pkts [1-9][0-9]* rx_pkts [1-9][0-9]*' "$TMP/hello.out" ||
	fail "droce0's counters do not show the SEND and its ACK"

# The installed drop-in, from its private directory, under an unmodified binary.
if command -v ibv_devices >/dev/null; then
	echo "== LD_LIBRARY_PATH=${libdir#"$DEST"}/droce/dropin ibv_devices"
	LD_LIBRARY_PATH=$libdir/droce/dropin DROCE_EAL="-l 0 --no-huge -m 256 --no-pci --no-telemetry \
--file-prefix=${PFX}b --log-level=lib.eal:error --vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1" \
		timeout -k 5 60 ibv_devices >"$TMP/devices.out" 2>&1
	rc=$?
	sed 's/^/    | /' "$TMP/devices.out"
	[ $rc -eq 0 ] || fail "ibv_devices exited $rc"
	grep -Eq '^[[:space:]]+droce0[[:space:]]+[0-9a-f]{16}$' "$TMP/devices.out" || fail "the installed drop-in lists no droce0"
else
	echo "note: ibv_devices (ibverbs-utils) missing: the installed drop-in is not run"
fi

if [ $fails -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "PASS"
