#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Capture (the devarg pcapng=, drivers/rdma/roce/roce_capture.c): droce-perf's
# embedded default with droce0 capturing (--pcapng) runs SEND, WRITE, READ
# and atomic ping-pongs; tshark opens the file and finds RoCE (InfiniBand
# over UDP 4791) both ways, every opcode those tests put on the wire, no
# malformed frame (with Wireshark's guesses at payloads off, as run_wire.sh),
# and every ICRC right (roce_icrc_check.py).
#
# Usage: run_capture.sh <droce-perf>
set -u
PERF=${1:?usage: run_capture.sh <droce-perf>}
. "$(dirname "$0")/port_lib.sh"
capture_setup run_capture
CAP=$WORK/droce0.pcapng

timeout -k 5 120 "$PERF" send_lat write_lat read_lat atomic_lat -n 100 -s 64,5000 \
	--pcapng "$CAP" >"$WORK/out" 2>&1 || { cat "$WORK/out"; echo "FAIL: droce-perf"; exit 1; }
[ -s "$CAP" ] && ok "droce-perf wrote $CAP ($(stat -c %s "$CAP") bytes)" || { echo "FAIL: no file"; exit 1; }

capture_tshark "$CAP"
capture_check_clean
# one pass (tshark takes a second or more to start): each RoCE frame's
# direction and BTH opcode, a line each
"${TS[@]}" -Y infiniband -T fields -e frame.packet_flags_direction -e infiniband.bth.opcode \
	>"$WORK/fields" 2>/dev/null
n=$(wc -l <"$WORK/fields")
# 100 iterations x 2 sizes x 4 tests, each at least a request and an answer
[ "$n" -ge 1600 ] && ok "$n RoCE frames" || fail "$n RoCE frames, want at least 1600"
dirs=$(cut -f1 "$WORK/fields" | sort -u | tr '\n' ' ')
[ "$dirs" = "0x00000001 0x00000002 " ] && ok "both directions (inbound and outbound)" ||
	fail "directions: $dirs"
ops=" $(cut -f2 "$WORK/fields" | sort -nu | tr '\n' ' ')"
# RC: SEND FIRST/LAST/ONLY, WRITE FIRST/LAST/ONLY, READ request and responses, ACK,
# FETCH_ADD and its ACK (atomic_lat)
for op in 0 2 4 6 8 10 12 13 15 16 17 18 20; do
	case "$ops" in *" $op "*) ;; *) fail "opcode $op not in the capture ($ops)" ;; esac
done
ok "opcodes:$ops"
capture_check_icrc "$n"
capture_end
