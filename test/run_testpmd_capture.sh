#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A capture started and stopped from droce-testpmd's console (capture
# start|stop, droce_dev_capture): the file it leaves is whole once "capture
# stop" returns, tshark reads RoCE both ways in it and nothing malformed,
# and only the frames of the captured interval are there. Then dpdk-dumpcap
# against the embedded default, which runs --no-huge: a secondary process
# cannot map such a primary's memory, so dpdk-dumpcap fails (and says why),
# and droce-testpmd goes on. run_dumpcap.sh captures with dpdk-dumpcap from
# a droce-testpmd on hugepages.
#
# Usage: run_testpmd_capture.sh <droce-testpmd>
set -u
TP=${1:?usage: run_testpmd_capture.sh <droce-testpmd>}
. "$(dirname "$0")/port_lib.sh"
capture_setup run_testpmd_capture
CAP=$WORK/droce1.pcapng

cat >"$WORK/cap.cmd" <<CMD
create pd 0
create pd 1
create cq 0 64
create cq 1 64
create mr 0 65536
create mr 1 65536
create qp rc 0 0
create qp rc 1 1
connect qp 0 1
# before the capture: not in the file
post recv 1 1 0 4096 count 4
post send 0 0 0 100 count 4
poll cq 0 expect 4
poll cq 1 expect 4
capture stop droce1
expect ENOENT
capture start droce1 $CAP
capture start droce1 $WORK/again.pcapng
expect EBUSY
# 8 SENDs of 3000 B (3 packets each at a 1024 B MTU), each acknowledged
post recv 1 1 0 4096 count 8
post send 0 0 0 3000 count 8
poll cq 0 expect 8
poll cq 1 expect 8
capture stop droce1
capture stop droce1
expect ENOENT
# after the capture: not in the file either
post recv 1 1 0 4096 count 4
post send 0 0 0 100 count 4
poll cq 0 expect 4
poll cq 1 expect 4
# a second capture of the same device, into another file
capture start 1 $WORK/second.pcapng
post recv 1 1 0 4096
post send 0 0 0 100
poll cq 0 expect 1
poll cq 1 expect 1
capture stop 1
capture start droce1 /nonexistent-dir/x.pcapng
expect ENOENT
CMD
timeout -k 5 60 "$TP" -f "$WORK/cap.cmd" >"$WORK/out" 2>&1 ||
	{ cat "$WORK/out"; echo "FAIL: droce-testpmd"; exit 1; }
ok "droce-testpmd: capture start, stop, EBUSY, ENOENT"
[ -s "$CAP" ] && ok "$CAP: $(stat -c %s "$CAP") bytes" || { echo "FAIL: no file"; exit 1; }
capture_tshark "$CAP"
capture_check_clean
# one pass (tshark takes a second or more to start): each RoCE frame's
# direction and BTH opcode, a line each
tshark -r "$CAP" -Y infiniband -T fields -e frame.packet_flags_direction -e infiniband.bth.opcode \
	>"$WORK/fields" 2>/dev/null
# droce1 receives 8 x 3 SEND packets, sends at least one ACK
rx=$(awk -F '\t' '$1 == "0x00000001"' "$WORK/fields" | wc -l)
tx=$(awk -F '\t' '$1 == "0x00000002"' "$WORK/fields" | wc -l)
[ "$rx" = 24 ] && ok "24 RoCE frames in (the captured SENDs' packets)" || fail "$rx RoCE frames in, want 24"
[ "$tx" -ge 1 ] && [ "$tx" -le 24 ] && ok "$tx RoCE frames out (ACKs)" || fail "$tx RoCE frames out"
# the 100 B messages before and after are SEND ONLY (opcode 4); the
# captured 3000 B ones SEND FIRST, MIDDLE, LAST (0, 1, 2), 8 of each
only=$(awk -F '\t' '$2 != "" && $2 + 0 == 4' "$WORK/fields" | wc -l)
fml=$(awk -F '\t' '$2 != "" && $2 + 0 <= 2 { print $2 }' "$WORK/fields" |
	sort | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
[ "$only" = 0 ] && ok "no SEND ONLY of the 100 B messages before or after" ||
	fail "$only SEND ONLY frames from outside the capture"
[ "$fml" = "0:8 1:8 2:8 " ] && ok "SEND FIRST, MIDDLE, LAST: 8 each" || fail "SEND opcodes: $fml"
n2=$(tshark -r "$WORK/second.pcapng" -Y infiniband 2>/dev/null | wc -l)
[ "$n2" -ge 2 ] && ok "the second capture: $n2 RoCE frames" || fail "the second capture: $n2 frames"

# dpdk-dumpcap: a secondary process of droce-testpmd (its --file-prefix)
if command -v dpdk-dumpcap >/dev/null; then
	echo "sleep 6000" >"$WORK/sleep.cmd"
	"$TP" -q -f "$WORK/sleep.cmd" >"$WORK/tp2" 2>&1 &
	tp=$!
	prefix=droce-testpmd-$tp
	for _ in $(seq 50); do [ -S /var/run/dpdk/$prefix/mp_socket ] && break; sleep 0.1; done
	timeout -k 2 15 dpdk-dumpcap --file-prefix=$prefix -D >"$WORK/dc" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		ok "dpdk-dumpcap attached: $(tr '\n' ' ' <"$WORK/dc")"
	elif grep -q "hugepage\|shared memory" "$WORK/dc"; then
		ok "dpdk-dumpcap cannot attach to the --no-huge embedded default, whose memory a" \
		   "secondary process cannot map ($(grep -m1 -o 'Failed[^!]*\|Cannot get hugepage information' "$WORK/dc"))"
	else
		cat "$WORK/dc"
		fail "dpdk-dumpcap: exit $rc"
	fi
	kill -0 $tp 2>/dev/null && ok "droce-testpmd still runs after dpdk-dumpcap's attempt" ||
		fail "droce-testpmd died"
	kill $tp 2>/dev/null
	wait $tp 2>/dev/null
	rm -rf "/var/run/dpdk/$prefix"
fi
capture_end
