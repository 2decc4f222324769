#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's unmodified ibv_devices and ibv_devinfo over the drop-in
# libibverbs (LD_LIBRARY_PATH=<dropin dir>), the device from DROCE_EAL:
#   - ibv_devices lists droce0 with its node GUID;
#   - ibv_devinfo -v shows droce0: transport InfiniBand, link_layer Ethernet,
#     PORT_ACTIVE, active_mtu, GID ::ffff:10.0.0.1 (RoCE v2), board_id, the
#     multicast limits;
#   - DROCE_EAL unset, or EAL arguments EAL refuses: a clear message on
#     stderr, an empty list, a clean exit and nothing from EAL on stdout;
#   - ibv_rc_pingpong -t (timestamps) fails cleanly with its own message:
#     droce has none (ibv_xsrq_pingpong, XRC, runs in run_dropin_pingpong.sh).
# Usage: run_dropin_devices.sh <dropin dir>
# Exit 0 on success, 77 if ibverbs-utils is not installed.
set -u

DROPIN=${1:?usage: run_dropin_devices.sh <dropin dir>}
for p in ibv_devices ibv_devinfo; do
	command -v $p >/dev/null || { echo "SKIP: $p (Debian ibverbs-utils) is missing"; exit 77; }
done
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }

# A sanitized build (-Dsanitize=true) links the drop-in with ASan: an
# unsanitized program must load the ASan runtime first, and its own leaks
# are not ours to report.
DROPIN_ENV=(env LD_LIBRARY_PATH="$DROPIN")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	DROPIN_ENV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi

PFX=drdev$$
TMP=$(mktemp -d /tmp/droce-dev.XXXXXX)
cleanup() { rm -rf "$TMP" /var/run/dpdk/$PFX*; }
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

EAL="-l 0 --no-huge -m 256 --no-pci --no-telemetry --vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1"

# run <name> <DROCE_EAL or "-" for unset> <program args...>: out/err/rc in $TMP
run() {
	local name=$1 eal=$2
	shift 2
	if [ "$eal" = - ]; then
		env -u DROCE_EAL "${DROPIN_ENV[@]:1}" timeout -k 5 60 "$@" \
			>"$TMP/$name.out" 2>"$TMP/$name.err"
	else
		"${DROPIN_ENV[@]}" DROCE_EAL="$eal" timeout -k 5 60 "$@" \
			>"$TMP/$name.out" 2>"$TMP/$name.err"
	fi
	echo $? >"$TMP/$name.rc"
	echo "== $name: DROCE_EAL=${eal} $* -> exit $(cat "$TMP/$name.rc")"
	sed 's/^/    out | /' "$TMP/$name.out"
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' "$TMP/$name.err" >"$TMP/$name.shown"
	head -n 12 "$TMP/$name.shown" | sed 's/^/    err | /'
	if [ "$(wc -l <"$TMP/$name.shown")" -gt 14 ]; then
		echo "    err | ..."
		tail -n 2 "$TMP/$name.shown" | sed 's/^/    err | /'
	elif [ "$(wc -l <"$TMP/$name.shown")" -gt 12 ]; then
		tail -n +13 "$TMP/$name.shown" | sed 's/^/    err | /'
	fi
}
expect_rc() { [ "$(cat "$TMP/$1.rc")" = "$2" ] || fail "$1: exit $(cat "$TMP/$1.rc"), expected $2"; }
# expect <name> <stream> <ERE>: the stream (out/err) has a line matching
expect() {
	if grep -qE "$3" "$TMP/$1.$2"; then
		echo "ok: $1: $2 has /$3/"
	else
		fail "$1: no line matching /$3/ in its std$2"
	fi
}
refuse() {
	if grep -qE "$3" "$TMP/$1.$2"; then fail "$1: std$2 has /$3/"; fi
}

# ibv_devices: the device and its GUID
run devices "$EAL --file-prefix=${PFX}a" ibv_devices
expect_rc devices 0
expect devices out '^[[:space:]]+droce0[[:space:]]+[0-9a-f]{16}$'
refuse devices out '^EAL'
guid=$(awk '$1 == "droce0" { print $2 }' "$TMP/devices.out")
# droce brought EAL up from DROCE_EAL: the program's EAL files went with it
[ -e "/var/run/dpdk/${PFX}a" ] && fail "devices: /var/run/dpdk/${PFX}a left behind"

# ibv_devinfo -v: device, port and GID attributes
run devinfo "$EAL --file-prefix=${PFX}b" ibv_devinfo -v
expect_rc devinfo 0
expect devinfo out '^hca_id:[[:space:]]+droce0$'
expect devinfo out '^[[:space:]]+transport:[[:space:]]+InfiniBand \(0\)$'
expect devinfo out '^[[:space:]]+board_id:[[:space:]]+DROCE_SW$'
expect devinfo out '^[[:space:]]+phys_port_cnt:[[:space:]]+1$'
expect devinfo out '^[[:space:]]+state:[[:space:]]+PORT_ACTIVE \(4\)$'
expect devinfo out '^[[:space:]]+active_mtu:[[:space:]]+(256|512|1024|2048|4096) \([1-5]\)$'
expect devinfo out '^[[:space:]]+link_layer:[[:space:]]+Ethernet$'
expect devinfo out '^[[:space:]]+GID\[  0\]:[[:space:]]+::ffff:10\.0\.0\.1, RoCE v2$'
expect devinfo out '^[[:space:]]+max_num_tags:[[:space:]]+4095$'
expect devinfo out '^[[:space:]]+IBV_TM_CAP_RC$'
# the multicast limits (0 would make pyverbs and mckey skip)
expect devinfo out '^[[:space:]]+max_mcast_grp:[[:space:]]+64$'
expect devinfo out '^[[:space:]]+max_mcast_qp_attach:[[:space:]]+32$'
expect devinfo out '^[[:space:]]+max_total_mcast_qp_attach:[[:space:]]+2048$'
if [ -n "$guid" ]; then
	g=$(echo "$guid" | sed -E 's/(....)(....)(....)(....)/\1:\2:\3:\4/')
	expect devinfo out "^[[:space:]]+node_guid:[[:space:]]+$g\$"
fi

# DROCE_EAL unset: the message, an empty list, exit 0 (ibv_devices) / 255
# ("No IB devices found", ibv_devinfo)
run unset - ibv_devices
expect_rc unset 0
expect unset err 'droce: no droce device: DROCE_EAL is not set'
refuse unset out 'droce0'
run unset_devinfo - ibv_devinfo
expect_rc unset_devinfo 255	# its "return -1" when the list is empty
expect unset_devinfo err 'DROCE_EAL is not set'
expect unset_devinfo err 'No IB devices found'

# EAL refuses the arguments: the message, no EAL usage on stdout
run bad_eal "-l 0 --no-huge --no-pci --file-prefix=${PFX}c --no-such-eal-option" ibv_devices
expect_rc bad_eal 0
expect bad_eal err 'droce: EAL initialisation from DROCE_EAL failed'
refuse bad_eal out 'Usage|EAL'

# A droce vdev whose probe fails: EAL is up, no device, a hint
run bad_vdev "-l 0 --no-huge -m 256 --no-pci --no-telemetry --file-prefix=${PFX}d --vdev=droce0,ethdev=nope,ip=10.0.0.1" ibv_devices
expect_rc bad_vdev 0
expect bad_vdev err 'no droce device was probed'
refuse bad_vdev out 'droce0'

# What droce lacks fails cleanly, with the program's own message:
# completion timestamps.
run rc_ts "$EAL --file-prefix=${PFX}f" ibv_rc_pingpong -d droce0 -g 0 -t -p $((30001 + $$ % 20000))
expect_rc rc_ts 1
expect rc_ts err "^The device isn't completion timestamp capable\$"

if [ $fails -eq 0 ]; then
	echo "run_dropin_devices: passed"
	exit 0
fi
echo "run_dropin_devices: $fails failure(s)"
exit 1
