#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The connection manager's telemetry (lib/rdmacm/cm_telemetry.c) and the
# per-QP counters, read with Debian's dpdk-telemetry.py on the socket of an
# unmodified rping server (rdmacm-utils) over the drop-in librdmacm and
# libibverbs while an rping client in another process pings it over a
# net_shm link: /droce/cm lists the listen port, an established connection
# and MAD counters that moved; /droce/cm_ids and /droce/cm_id,<id> show the
# connection's id, ESTABLISHED, its addresses and QP; that QP's counters
# (/droce/qp_info) move between two reads; bad parameters are refused.
#
# Usage: run_cm_telemetry.sh <build/dropin directory>
set -u
DROPIN=${1:?usage: run_cm_telemetry.sh <build/dropin>}
TEL=$(command -v dpdk-telemetry.py) || { echo "SKIP: dpdk-telemetry.py (Debian's dpdk) is missing"; exit 77; }
command -v rping >/dev/null || { echo "SKIP: rping (rdmacm-utils) is missing"; exit 77; }
PY=/usr/bin/python3
WORK=$(mktemp -d)
. "$(dirname "${BASH_SOURCE[0]}")/port_lib.sh"
ID=$$ PORT=$(free_port) LINK=cmtel$$
S_PFX=cmtel-s$$ C_PFX=cmtel-c$$
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
spid= cpid=
cleanup() {
	[ -n "$cpid" ] && kill "$cpid" 2>/dev/null
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$WORK" "/var/run/dpdk/$S_PFX" "/var/run/dpdk/$C_PFX" "/dev/shm/droce-shm.$LINK"
}
trap cleanup EXIT
eal() { echo "-l 0 --no-huge -m 256 --no-pci --file-prefix=$1 --vdev=net_shm0,link=$LINK --vdev=droce0,ethdev=net_shm0,ip=$2"; }

# q CMD: the command's JSON value (null when refused). dpdk-telemetry.py runs
# with Debian's python3 ($PY): its "#!/usr/bin/env python3" finds the first in
# PATH, which may be a shim (pyenv's takes over a second to start, each time).
q() { echo "$1" | "$PY" "$TEL" -f "$S_PFX" 2>/dev/null | tail -n1 |
	"$PY" -c 'import json, sys; d = json.load(sys.stdin); print(json.dumps(list(d.values())[0]))' 2>/dev/null; }
j() { "$PY" -c "import json, sys; v = json.loads(sys.argv[1]); print($2)" "$1" 2>/dev/null; }

LD_LIBRARY_PATH=$DROPIN DROCE_EAL="$(eal "$S_PFX" 10.77.0.11)" \
	timeout -k 5 150 rping -s -a 10.77.0.11 -p $PORT -C 1000000 -S 1000 >"$WORK/srv" 2>&1 &
spid=$!
for _ in $(seq 100); do
	[ "$(j "$(q /droce/cm)" 'v["listening"]')" = 1 ] && break
	sleep 0.2
done
cm=$(q /droce/cm)
[ "$(j "$cm" "v['listening'] == 1 and $PORT in v['listen_ports'] and v['established'] == 0")" = True ] &&
	ok "/droce/cm before the client: listening on $PORT" || { cat "$WORK/srv"; fail "/droce/cm: $cm"; exit 1; }
LD_LIBRARY_PATH=$DROPIN DROCE_EAL="$(eal "$C_PFX" 10.77.0.12)" \
	timeout -k 5 150 rping -c -a 10.77.0.11 -p $PORT -C 1000000 -S 1000 >"$WORK/cli" 2>&1 &
cpid=$!
for _ in $(seq 100); do
	[ "$(j "$(q /droce/cm)" 'v["established"]')" = 1 ] && break
	sleep 0.2
done
cm=$(q /droce/cm)
[ "$(j "$cm" 'v["established"] == 1 and v["ids"] == 2 and v["droce0"]["rx_mads"] >= 2 and
	v["droce0"]["tx_mads"] >= 1 and v["droce0"]["rx_malformed"] == 0')" = True ] &&
	ok "/droce/cm: an established connection, MADs in $(j "$cm" 'v["droce0"]["rx_mads"]') out $(j "$cm" 'v["droce0"]["tx_mads"]')" ||
	{ cat "$WORK/srv" "$WORK/cli"; fail "/droce/cm: $cm"; exit 1; }
ids=$(q /droce/cm_ids)
cid=$(j "$ids" '[k for k, s in v.items() if s.startswith("ESTABLISHED")][0]')
[ "$(j "$ids" "v['$cid'] == 'ESTABLISHED 10.77.0.11:$PORT -> 10.77.0.12:' + v['$cid'].split(':')[-1] and
	any(s == 'LISTEN 10.77.0.11:$PORT' for s in v.values())")" = True ] &&
	ok "/droce/cm_ids: $ids" || fail "/droce/cm_ids: $ids"
one=$(q "/droce/cm_id,$cid")
qpn=$(j "$one" 'v["qp_num"]')
[ "$(j "$one" 'v["state"] == "ESTABLISHED" and v["port_space"] == "TCP" and v["device"] == "droce0" and
	v["dst"].startswith("10.77.0.12:") and v["qp_num"] > 1 and v["remote_qpn"] > 1')" = True ] &&
	ok "/droce/cm_id,$cid: ESTABLISHED, QP $qpn" || fail "/droce/cm_id,$cid: $one"
[ "$(j "$(q /droce/qps,droce0)" "$qpn in v and 1 in v")" = True ] &&
	ok "/droce/qps,droce0 has QP1 and the connection's QP $qpn" || fail "/droce/qps,droce0: $(q /droce/qps,droce0)"
a=$(q "/droce/qp_info,droce0,$qpn")
sleep 1
b=$(q "/droce/qp_info,droce0,$qpn")
moved=$("$PY" -c "import json, sys; a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(all(b[k] > a[k] for k in ['rx_pkts', 'rx_bytes', 'tx_pkts', 'tx_bytes']) and b['rx_drop_qp_state'] == 0)" "$a" "$b")
[ "$moved" = True ] && ok "the connection's QP counters move: rx_pkts $(j "$a" 'v["rx_pkts"]') -> $(j "$b" 'v["rx_pkts"]')" ||
	fail "QP $qpn counters: $a / $b"
for bad in /droce/cm_id /droce/cm_id,0 /droce/cm_id,zz; do
	[ "$(q "$bad")" = null ] && ok "$bad: refused" || fail "$bad: $(q "$bad")"
done
kill -0 $spid 2>/dev/null && kill -0 $cpid 2>/dev/null && ok "both rping still run" ||
	{ cat "$WORK/srv" "$WORK/cli"; fail "an rping ended early"; }
[ $fails = 0 ] && { echo "run_cm_telemetry: PASS"; exit 0; }
echo "run_cm_telemetry: $fails failure(s)"
exit 1
