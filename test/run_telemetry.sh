#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# droce's telemetry (drivers/rdma/roce/roce_telemetry.c) read as a DPDK user
# reads it: Debian's dpdk-telemetry.py on the socket of a running droce-perf
# (the embedded default) while it streams SENDs. Checks each /droce command,
# that the counters move between two reads, that a QP is listed in RTS, and
# that bad parameters are refused; and a device's own ethdev port's
# /ethdev/xstats, which are the device's counters.
#
# Usage: run_telemetry.sh <droce-perf>
set -u
PERF=${1:?usage: run_telemetry.sh <droce-perf>}
TEL=$(command -v dpdk-telemetry.py) || { echo "SKIP: dpdk-telemetry.py (Debian's dpdk) is missing"; exit 77; }
PY=/usr/bin/python3
OUT=$(mktemp)
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# (long enough for a slow machine; killed at the end)
"$PERF" send_bw -s 64 -D 300 >"$OUT" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$OUT"; rm -rf /var/run/dpdk/droce-perf-$pid' EXIT
prefix=droce-perf-$pid
for _ in $(seq 100); do
	[ -S /var/run/dpdk/$prefix/dpdk_telemetry.v2 ] && break
	sleep 0.1
done
[ -S /var/run/dpdk/$prefix/dpdk_telemetry.v2 ] || { cat "$OUT"; echo "FAIL: no telemetry socket"; exit 1; }

# q CMD: the command's JSON value (null when refused). dpdk-telemetry.py runs
# with Debian's python3 ($PY): its "#!/usr/bin/env python3" finds the first in
# PATH, which may be a shim (pyenv's takes over a second to start, each time).
q() { echo "$1" | "$PY" "$TEL" -f "$prefix" 2>/dev/null | tail -n1 |
	"$PY" -c 'import json, sys; d = json.load(sys.stdin); print(json.dumps(list(d.values())[0]))'; }
# j JSON EXPR: a Python expression on the value v
j() { "$PY" -c "import json, sys; v = json.loads(sys.argv[1]); print($2)" "$1"; }

# the stream has begun once droce1 has received something
for _ in $(seq 100); do
	[ "$(j "$(q /droce/stats,droce1)" 'v and v["rx_pkts"] > 1000')" = True ] 2>/dev/null && break
	sleep 0.1
done
devs=$(q /droce/devs)
[ "$(j "$devs" 'v == ["droce0", "droce1"]')" = True ] && ok "/droce/devs: $devs" || fail "/droce/devs: $devs"
info=$(q /droce/dev_info,droce1)
[ "$(j "$info" 'v["ip"] == "10.0.0.2" and v["port_state"] == "ACTIVE" and v["qps"] >= 1')" = True ] &&
	ok "/droce/dev_info,droce1: ip, port state, a QP" || fail "/droce/dev_info,droce1: $info"
[ "$(j "$(q /droce/dev_info,0)" 'v["name"]')" = droce0 ] && ok "/droce/dev_info,0 by index" ||
	fail "/droce/dev_info,0"
s1=$(q /droce/stats,droce1)
sleep 1
s2=$(q /droce/stats,droce1)
moved=$("$PY" -c "import json, sys; a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(b['rx_pkts'] > a['rx_pkts'] and b['tx_pkts'] > a['tx_pkts'] and b['rx_bytes'] > a['rx_bytes'])" "$s1" "$s2")
[ "$moved" = True ] && ok "/droce/stats: rx_pkts $(j "$s1" 'v["rx_pkts"]') -> $(j "$s2" 'v["rx_pkts"]')" ||
	fail "/droce/stats did not move: $s1 / $s2"
qps=$(q /droce/qps,droce0)
qpn=$(j "$qps" 'v[0] if v else ""')
[ -n "$qpn" ] && ok "/droce/qps,droce0: $qps" || fail "/droce/qps,droce0: $qps"
qi=$(q "/droce/qp_info,droce0,$qpn")
[ "$(j "$qi" 'v["state"] == "RTS" and v["type"] == "RC" and v["dest_ip"] == "10.0.0.2"')" = True ] &&
	ok "/droce/qp_info,droce0,$qpn: RC, RTS, to 10.0.0.2" || fail "/droce/qp_info: $qi"
sleep 0.5
qi2=$(q "/droce/qp_info,droce0,$qpn")
p1=$(j "$qi" 'v["sq_psn"]')
p2=$(j "$qi2" 'v["sq_psn"]')
[ "$p1" != "$p2" ] && ok "its sq_psn moves: $p1 -> $p2" || fail "sq_psn stays at $p1"
# its own counters (droce_qp_xstats): the sender's packets and bytes out,
# ACKs in; the receiver's QP the other way round; nothing refused
c1=$qi
c2=$qi2
moved=$("$PY" -c "import json, sys; a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
keys = ['tx_pkts', 'tx_bytes', 'rx_pkts', 'rx_bytes']
print(all(b[k] > a[k] for k in keys) and b['tx_bytes'] >= 64 * b['tx_pkts'] // 2 and
      all(k in b for k in ['retransmits', 'timeouts', 'naks_sent_seq_err', 'naks_rcvd_rem_access',
                           'rnr_naks_sent', 'rnr_naks_rcvd', 'rx_dup', 'rx_drop_seq', 'rx_drop_no_wqe']))" "$c1" "$c2")
[ "$moved" = True ] && ok "/droce/qp_info,droce0,$qpn counters move: tx_pkts $(j "$c1" 'v["tx_pkts"]') -> $(j "$c2" 'v["tx_pkts"]'), rx_pkts (ACKs) $(j "$c2" 'v["rx_pkts"]')" ||
	fail "QP counters did not move: $c1 / $c2"
rqpn=$(j "$(q /droce/qps,droce1)" 'v[0] if v else ""')
rc=$(q "/droce/qp_info,droce1,$rqpn")
[ "$(j "$rc" 'v["rx_pkts"] > 1000 and v["rx_bytes"] > 64 * 1000 and v["tx_pkts"] > 0 and v["rx_drop_qp_state"] == 0')" = True ] &&
	ok "/droce/qp_info,droce1,$rqpn: rx_pkts $(j "$rc" 'v["rx_pkts"]'), tx_pkts (ACKs) $(j "$rc" 'v["tx_pkts"]')" ||
	fail "/droce/qp_info,droce1,$rqpn: $rc"
# a device counts at least what its QPs do
[ "$(j "$(q /droce/stats,droce1)" 'v["rx_pkts"] >= '"$(j "$rc" 'v["rx_pkts"]')"' and "timeouts" in v and "naks_rcvd_seq_err" in v')" = True ] &&
	ok "/droce/stats,droce1 >= its QP's, with timeouts and NAK kinds" || fail "/droce/stats,droce1 vs its QP"
# the device's own ethdev port (roce_ethdev.c), own_port_id in
# /droce/dev_info: its /ethdev/xstats are the device's counters, moving; each
# read before the device's own is at most that
eid=$(j "$info" 'v.get("own_port_id", -1)')
[ "$eid" -ge 0 ] 2>/dev/null || eid=""
if [ -n "$eid" ]; then
	x1=$(q /ethdev/xstats,$eid)
	d1=$(q /droce/stats,droce1)
	sleep 0.5
	x2=$(q /ethdev/xstats,$eid)
	agree=$("$PY" -c "import json, sys; x1, d1, x2 = (json.loads(a) for a in sys.argv[1:4])
print(set(d1) <= set(x1) and all(x1[k] <= d1[k] for k in d1) and x2['rx_pkts'] > x1['rx_pkts'] and
      x2['tx_pkts'] > x1['tx_pkts'] and 'rx_good_packets' in x1)" "$x1" "$d1" "$x2")
	[ "$agree" = True ] &&
		ok "/ethdev/xstats,$eid (droce1's port): the device's counters, rx_pkts $(j "$x1" 'v["rx_pkts"]') -> $(j "$x2" 'v["rx_pkts"]')" ||
		fail "/ethdev/xstats,$eid: $x1 / $d1 / $x2"
else
	fail "/droce/dev_info,droce1 names no own port: $info"
fi
q /droce/neigh,droce0 >/dev/null && ok "/droce/neigh,droce0" || fail "/droce/neigh"
for bad in /droce/dev_info,nosuch /droce/dev_info,7 /droce/qp_info,droce0 "/droce/qp_info,droce0,99999" \
	/droce/stats; do
	[ "$(q "$bad")" = null ] && ok "$bad: refused" || fail "$bad: $(q "$bad")"
done
[ $fails = 0 ] && { echo "run_telemetry: PASS"; exit 0; }
echo "run_telemetry: $fails failure(s)"
exit 1
