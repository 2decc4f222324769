#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The sysfs view of a droce device (lib/verbs/verbs_sysfs.c,
# devtools/droce-sysfs, doc/guides/sysfs.rst), with Debian's ibv_devices over
# the drop-in and one droce0 (ip=10.0.0.1) on a net_ring:
#   - DROCE_SYSFS_ROOT=<dir>: the device's files under
#     <dir>/sys/class/infiniband/droce0/ hold what the verbs say, in the
#     kernel's formats (node_guid as ibv_devices shows it, gids/0,
#     gid_attrs/types/0, state, ...); a root it cannot write to costs a
#     warning, not the device list;
#   - as root, under devtools/droce-sysfs (--net=current and --net=private):
#     rdma-core's tests/base.py lookups (ls device/net/, then
#     `ip -j addr show <ifname>`, addr_info[0].local) give 10.0.0.1,
#     gid_attrs/ndevs/0 names that netdev, /dev/infiniband/uverbs-droce0 is a
#     character device; the program's exit status comes back; the dummy
#     netdev is shared by two runs at once and gone after the last, and
#     nothing (netdev, /sys/class/infiniband, mount) stays behind;
#   - ucx_info -d (when ucx-utils is installed) lists droce0 with rc_verbs.
# Usage: run_dropin_sysfs.sh <dropin dir> <source root>
# Exit 0 on success, 77 if ibverbs-utils is missing.
set -u

DROPIN=${1:?usage: run_dropin_sysfs.sh <dropin dir> <source root>}
SRC=${2:?usage: run_dropin_sysfs.sh <dropin dir> <source root>}
TOOL=$SRC/devtools/droce-sysfs
command -v ibv_devices >/dev/null || { echo "SKIP: ibv_devices (Debian ibverbs-utils) is missing"; exit 77; }
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }
DROPIN=$(cd "$DROPIN" && pwd)

ENVV=(env LD_LIBRARY_PATH="$DROPIN")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	ENVV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi

PFX=drsys$$
TMP=$(mktemp -d /tmp/droce-sysfs-test.XXXXXX)
cleanup() { touch "$TMP/a.stop" 2>/dev/null; wait; rm -rf "$TMP" /var/run/dpdk/$PFX*; }
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

IP=10.0.0.1
IFN=drs-0a000001
EAL="-l 0 --no-huge -m 256 --no-pci --no-telemetry --vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=$IP"
ENVV+=(DROCE_EAL="$EAL --file-prefix=$PFX")

# value of file $2 (relative to device dir $1), or "<missing>"
val() { cat "$1/$2" 2>/dev/null || echo "<missing>"; }
expect() {	# dir file want
	local got
	got=$(val "$1" "$2")
	[ "$got" = "$3" ] && ok "$2 = $3" || fail "$2: '$got', want '$3'"
}

# ---- DROCE_SYSFS_ROOT into a plain directory ----
ROOT=$TMP/root
mkdir -p "$ROOT/sys/class/infiniband"
out=$("${ENVV[@]}" DROCE_SYSFS_ROOT="$ROOT" timeout 60 ibv_devices 2>"$TMP/err1")
echo "$out" | grep -q droce0 || { fail "ibv_devices with DROCE_SYSFS_ROOT: $out $(cat "$TMP/err1")"; }
guid=$(echo "$out" | awk '$1 == "droce0" { print $2 }')
D=$ROOT/sys/class/infiniband/droce0
expect "$D" node_guid "${guid:0:4}:${guid:4:4}:${guid:8:4}:${guid:12:4}"
expect "$D" sys_image_guid "${guid:0:4}:${guid:4:4}:${guid:8:4}:${guid:12:4}"
expect "$D" node_type "1: CA"
expect "$D" board_id "DROCE_SW"
expect "$D" ports/1/state "4: ACTIVE"
expect "$D" ports/1/phys_state "5: LinkUp"
expect "$D" ports/1/link_layer "Ethernet"
expect "$D" ports/1/gids/0 "0000:0000:0000:0000:0000:ffff:0a00:0001"
expect "$D" ports/1/gid_attrs/types/0 "RoCE v2"
# the table's empty entries (ibv_query_port's gid_tbl_len: 16): zeros, no type
expect "$D" ports/1/gids/1 "0000:0000:0000:0000:0000:0000:0000:0000"
expect "$D" ports/1/gids/15 "0000:0000:0000:0000:0000:0000:0000:0000"
[ ! -e "$D/ports/1/gids/16" ] && [ ! -e "$D/ports/1/gid_attrs/types/1" ] &&
	ok "16 GID entries, the empty ones without a type" ||
	fail "gids/16 or gid_attrs/types/1 exists"
expect "$D" ports/1/pkeys/0 "0xffff"
expect "$D" ports/1/lid "0x0"
expect "$D" ports/1/cap_mask "0x00010000"
[[ $(val "$D" ports/1/rate) =~ ^[0-9.]+\ Gb/sec\ \(4X( [A-Z0-9]+)?\)$ ]] &&
	ok "ports/1/rate = $(val "$D" ports/1/rate)" || fail "ports/1/rate: '$(val "$D" ports/1/rate)'"
if [ -z "$(ip -o -4 addr show 2>/dev/null | awk -v ip=$IP '{ split($4, a, "/"); if (a[1] == ip) print }')" ]; then
	# no netdev holds the address: no netdev named, as the kernel has none for such a GID
	[ -z "$(ls -A "$D/device/net" 2>/dev/null)" ] && [ ! -e "$D/ports/1/gid_attrs/ndevs/0" ] &&
		ok "no netdev holds $IP: device/net/ empty, no ndevs/0" ||
		fail "no netdev holds $IP, yet device/net has '$(ls "$D/device/net" 2>/dev/null)'"
fi
# not a writable root: a warning, and the list all the same
out=$("${ENVV[@]}" DROCE_SYSFS_ROOT=/proc/self timeout 60 ibv_devices 2>"$TMP/err2")
if echo "$out" | grep -q droce0 && grep -q "DROCE_SYSFS_ROOT=/proc/self" "$TMP/err2"; then
	ok "an unwritable DROCE_SYSFS_ROOT: a warning, the device still listed"
else
	fail "unwritable DROCE_SYSFS_ROOT: stdout '$out', stderr '$(grep -v ^EAL "$TMP/err2")'"
fi

# ---- devtools/droce-sysfs ----
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	echo "droce-sysfs: not root (or no unshare): the namespace checks do not run"
	[ $fails = 0 ] && { echo "run_dropin_sysfs: PASS"; exit 0; }
	echo "run_dropin_sysfs: $fails failure(s)"; exit 1
fi
had_ib=no
[ -e /sys/class/infiniband ] && had_ib=yes
# droce-sysfs's mounts (its tmpfs, binds on /sys/class and /dev/infiniband),
# not the host's: other programs (a netns made meanwhile) may add their own
droce_mounts() { findmnt -rn -o TARGET,SOURCE | grep -Ec 'droce-sysfs|^/sys/class|^/dev/infiniband'; }
mounts_before=$(droce_mounts)

# What the program sees: rdma-core's tests/base.py _get_ip_mac() steps
# (with Debian's python3, as its tests run: the first in PATH may be a shim
# that takes a second to start)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
export PY
cat >"$TMP/probe.sh" <<'EOF'
ibv_devices >/dev/null 2>&1 || { echo "no device list"; exit 3; }
d=/sys/class/infiniband/droce0
[ -d $d/device/net/ ] || { echo "no $d/device/net/"; exit 3; }
ifn=$(ls $d/device/net/ | head -n1)
ip=$(ip -j addr show "$ifn" | "${PY:-python3}" -c 'import json, sys; print(json.load(sys.stdin)[0]["addr_info"][0]["local"])')
echo "ifname=$ifn ip=$ip ndev=$(cat $d/ports/1/gid_attrs/ndevs/0) dev=$(stat -c '%F %t:%T' /dev/infiniband/uverbs-droce0)"
EOF
for net in current private; do
	got=$("${ENVV[@]}" timeout 60 "$TOOL" --net=$net -- bash "$TMP/probe.sh" 2>"$TMP/err3")
	want="ifname=$IFN ip=$IP ndev=$IFN dev=character special file 1:3"
	[ "$got" = "$want" ] && ok "--net=$net: $got" ||
		fail "--net=$net: '$got', want '$want' ($(grep -v ^EAL "$TMP/err3" | tail -n3))"
done

"${ENVV[@]}" timeout 60 "$TOOL" -- sh -c 'exit 7' 2>/dev/null
rc=$?
[ $rc = 7 ] && ok "the program's exit status comes back" || fail "exit status $rc, want 7"

# two runs at once share the dummy; the last one out deletes it
"${ENVV[@]}" timeout 60 "$TOOL" -- sh -c "touch $TMP/a.up; while [ ! -e $TMP/a.stop ]; do sleep 0.1; done" 2>/dev/null &
a=$!
for _ in $(seq 100); do [ -e "$TMP/a.up" ] && break; sleep 0.1; done
"${ENVV[@]}" timeout 60 "$TOOL" -- true 2>/dev/null
ip link show dev $IFN >/dev/null 2>&1 && ok "a run's exit leaves the dummy another run uses" ||
	fail "$IFN went with the first run out, while another uses it"
touch "$TMP/a.stop"
wait $a

ip link show dev $IFN >/dev/null 2>&1 && fail "$IFN is still there after the last run" || ok "$IFN is gone"
if [ $had_ib = no ]; then
	[ -e /sys/class/infiniband ] && fail "/sys/class/infiniband appeared outside" ||
		ok "/sys/class/infiniband is nowhere outside"
fi
[ "$(droce_mounts)" = "$mounts_before" ] && ok "no mount stays behind" ||
	fail "droce-sysfs's mounts: $mounts_before before, $(droce_mounts) after"

if command -v ucx_info >/dev/null; then
	"${ENVV[@]}" timeout 120 "$TOOL" -- ucx_info -d >"$TMP/ucx" 2>&1
	grep -q "Memory domain: droce0" "$TMP/ucx" && grep -q "Transport: rc_verbs" "$TMP/ucx" &&
		ok "ucx_info -d lists droce0 (rc_verbs)" || fail "ucx_info -d: $(grep -E 'Memory domain|ERROR' "$TMP/ucx")"
else
	echo "ucx_info (Debian ucx-utils) is missing: the UCX check does not run"
fi

[ $fails = 0 ] && { echo "run_dropin_sysfs: PASS"; exit 0; }
echo "run_dropin_sysfs: $fails failure(s)"
exit 1
