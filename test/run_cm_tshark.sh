#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The CM MADs lib/rdmacm encodes, as tshark decodes them (issue 11). cm_pcap
# writes one RoCEv2 frame per message, as a kernel CM sends it on QP1 (UD
# SEND_ONLY to QP 1, DETH with Q_Key 0x80010000 and source QP 1, the
# 256-byte MAD, the ICRC), and lists what Wireshark must make of each frame.
# Every frame must decode as InfiniBand with a CM-class MAD naming the
# message sent, hold each field Wireshark 4.0 dissects (REQ with its IP CM
# header, REP, REJ, RTU, DREQ, DREP; it names MRA and SIDR but does not
# dissect them) at the value encoded, and be neither malformed nor carry
# any expert info. Wireshark dissects UDP port 4791 as RoCEv2 by default.
#
# Usage: run_cm_tshark.sh <path to cm_pcap>. Exit 0 if every check passes,
# 77 (skipped) without tshark.
set -u

GEN=${1:?usage: run_cm_tshark.sh <path to cm_pcap>}
[ -x "$GEN" ] || { echo "run_cm_tshark: $GEN is not executable"; exit 1; }
command -v tshark >/dev/null || { echo "run_cm_tshark: SKIP: tshark is not installed"; exit 77; }

WORK=$(mktemp -d /tmp/droce-cm-tshark.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
PCAP=$WORK/cm.pcap
"$GEN" "$PCAP" >"$WORK/want" || { echo "run_cm_tshark: cm_pcap failed"; exit 1; }
ts() { tshark -r "$PCAP" "$@" 2>/dev/null; }

checks=0 bad=0
check() {	# check <description> <1 if ok>
	checks=$((checks + 1))
	if [ "${2:-}" = 1 ]; then echo "   ok   $1"; else echo "   FAIL $1"; bad=$((bad + 1)); fi
}

# Wireshark's names for the CM attributes
ws_name() {
	case $1 in
	REQ) echo ConnectRequest;; MRA) echo MsgRcptAck;; REJ) echo ConnectReject;;
	REP) echo ConnectReply;; RTU) echo ReadyToUse;; DREQ) echo DisconnectRequest;;
	DREP) echo DisconnectReply;; SIDR_REQ) echo ServiceIDResReq;;
	SIDR_REP) echo ServiceIDResReqResp;; *) echo "?";;
	esac
}

names=$(awk -F'\t' '$2 !~ / == / { print $1 " " $2 }' "$WORK/want")
# tshark takes a second or more to start: its summary lines are read once (a
# frame's is its line), and the counts below come from one reading
# (tshark_counts); tc runs tshark itself for a filter not in the list
. "$(dirname "$0")/port_lib.sh"
lines=$(ts)
mads="infiniband.bth.opcode == 100 && infiniband.bth.destqp == 1 &&
	   infiniband.deth.q_key == 0x80010000 && infiniband.deth.srcqp == 1 &&
	   infiniband.mad.mgmtclass == 0x07 && frame.len == 322"
# (the fields Wireshark dissects, at the values encoded: see below)
filter=$(awk -F'\t' '$2 ~ / == / {
		if ($1 != f) { if (f != "") printf ") || "; printf "(frame.number == %s", $1; f = $1 }
		printf " && %s", $2 } END { print ")" }' "$WORK/want")
declare -A TC
tshark_counts TC tshark -r "$PCAP" -- frame "$mads" "_ws.malformed" "_ws.expert" "$filter"
tc() { if [ -n "${TC[$1]+set}" ]; then echo "${TC[$1]}"; else ts -Y "$1" | wc -l; fi; }
nframes=$(echo "$names" | wc -l)
echo "== $nframes CM MADs from cm_pcap, $(tshark --version 2>/dev/null | head -n1 | awk '{ print $1, $3 }')"
check "frames in the capture: $(tc frame) (cm_pcap wrote $nframes)" \
	$([ "$(tc frame)" -eq "$nframes" ] && echo 1)

# every frame: RoCEv2 UD SEND_ONLY to QP1 from QP1 with the GSI Q_Key, a CM MAD
n=$(tc "$mads")
check "UD SEND_ONLY QP1 -> QP1, Q_Key 0x80010000, a CM MAD, 322-byte frame: $n of $nframes" \
	$([ "$n" -eq "$nframes" ] && echo 1)

# every frame: the summary line and the -V tree name the message
ts -V >"$WORK/tree"
while read -r f nm; do
	ws=$(ws_name "$nm")
	line=$(sed -n "${f}p" <<<"$lines")
	tree=$(awk -v f="$f" '/^Frame [0-9]+:/ { on = ($2 == f ":") } on' "$WORK/tree")
	ok=$(echo "$line" | grep -q "CM: $ws\$" &&
	     echo "$tree" | grep -q "^    CM $ws" &&
	     echo "$tree" | grep -q "MAD Header - Common Management Datagram" &&
	     ! echo "$tree" | grep -qi "malformed" && echo 1)
	note=
	echo "$tree" | grep -q "^    CM $ws (Dissector Not Implemented)" &&
		note=" (named, not dissected, by this Wireshark)"
	check "frame $f, $nm:$(echo "$line" | sed 's/.*RRoCE [0-9]*//')$note" "$ok"
done <<<"$names"

n=$(tc "_ws.malformed")
check "malformed frames: $n" $([ "$n" -eq 0 ] && echo 1)
n=$(tc "_ws.expert")
check "frames with expert info: $n" $([ "$n" -eq 0 ] && echo 1)

# the fields Wireshark dissects, at the values encoded: one pass, then each
# filter alone if that pass misses a frame (filter: above)
nf=$(grep -c ' == ' "$WORK/want")
n=$(tc "$filter")
nwant=$(awk -F'\t' '$2 ~ / == / { print $1 }' "$WORK/want" | sort -u | wc -l)
if [ "$n" -ne "$nwant" ]; then
	while IFS=$'\t' read -r f expr; do
		[ "$(ts -Y "frame.number == $f && $expr" | wc -l)" -eq 1 ] ||
			echo "     frame $f does not match: $expr" \
				"($(ts -Y "frame.number == $f" -T fields -e "${expr%% *}" | head -n1))"
	done < <(grep ' == ' "$WORK/want")
fi
check "$nf field values in $nwant frames as encoded: $n frames match all theirs" \
	$([ "$n" -eq "$nwant" ] && echo 1)

echo "run_cm_tshark: $((checks - bad))/$checks checks passed"
[ "$bad" -eq 0 ]
