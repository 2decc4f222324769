#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The connection manager on a wire (issue 11): two network namespaces joined
# by a veth pair (dropin_netns_lib.sh), Debian's rping and udaddy over the
# drop-in librdmacm in each, their droce devices on net_af_packet on the
# namespace's veth end.
# tshark captures on the server's veth while rping connects (REQ, MRA, REP,
# MRA, RTU), pings and disconnects (DREQ, DREP), while rping connects to a
# port nobody listens on (REJ) and while udaddy resolves a UD service (SIDR
# REQ and REP). Every CM MAD droce sent must decode as InfiniBand CM over
# RoCEv2 (UD SEND_ONLY QP1 -> QP1, Q_Key 0x80010000, a CM-class MAD), each
# message must be there, and no frame may be malformed or carry expert
# info; rping's data must arrive.
#
#   server ns: veth 10.98.0.1/24, droce 10.98.0.11
#   client ns: veth 10.98.0.2/24, droce 10.98.0.12
#
# Usage: run_cm_wire.sh <dropin dir>. Exit 0 if every check passes, 77 if
# network namespaces, tshark or the programs are not available here.
set -u

DROPIN=${1:?usage: run_cm_wire.sh <dropin dir>}
skip() { echo "run_cm_wire: SKIP: $*"; exit 77; }
for p in tshark ip rping udaddy timeout; do
	command -v $p >/dev/null || skip "$p is not installed"
done
[ -e "$DROPIN/librdmacm.so.1" ] || { echo "run_cm_wire: $DROPIN/librdmacm.so.1 was not built"; exit 1; }
DROPIN=$(cd "$DROPIN" && pwd)

ME=run_cm_wire PFX=cw NET=10.98.0
. "$(dirname "$0")/dropin_netns_lib.sh"
CAP=$LOGDIR/cm.pcapng
TPID=
# on exit: tshark first (a capture kept is then whole), whatever else runs in the
# namespaces, then the lib's cleanup
cm_wire_cleanup() {
	[ -n "$TPID" ] && kill "$TPID" 2>/dev/null && wait "$TPID" 2>/dev/null
	[ -n "$NS_MADE" ] && { ip netns pids "$NS_S"; ip netns pids "$NS_C"; } 2>/dev/null |
		xargs -r kill -KILL 2>/dev/null
	[ -n "${CM_KEEP_PCAP:-}" ] && [ -f "$CAP" ] && cp "$CAP" "$CM_KEEP_PCAP"
	cleanup
}
trap cm_wire_cleanup EXIT

ip netns exec "$NS_S" tshark -i "$VS" -w "$CAP" -q >"$LOGDIR/tshark.log" 2>&1 &
TPID=$!
for i in $(seq 1 150); do
	grep -qs "Capturing on" "$LOGDIR/tshark.log" && break
	sleep 0.1
done
grep -qs "Capturing on" "$LOGDIR/tshark.log" || { cat "$LOGDIR/tshark.log"; fail "tshark did not start"; }

checks=0 bad=0
check() {	# description, 1 if ok
	checks=$((checks + 1))
	if [ "${2:-}" = 1 ]; then echo "   ok   $1"; else echo "   FAIL $1"; bad=$((bad + 1)); fi
}

# pair <run> <server cmd> -- <client cmd>: server in NS_S, client in NS_C.
# The client starts once the server listens on port LISTEN: the server runs
# with DROCE_CM_DEBUG=1, whose trace of rdma_listen comes once the listener
# is in place (and READY, if set, is in its output too).
pair() {
	local run=$1 s=() c=() lre

	shift
	while [ "$1" != -- ]; do s+=("$1"); shift; done
	shift
	c=("$@")
	"${IN_S[@]}" "${DROPIN_ENV[@]}" DROCE_EAL="$(eal_server $run)" DROCE_CM_DEBUG=1 timeout 30 "${s[@]}" \
		>"$LOGDIR/$run.s" 2>&1 &
	SPID=$!
	lre="^droce-cm: [0-9.]+ listen port $LISTEN backlog"
	for i in $(seq 1 200); do
		grep -qs "${READY:-Selected IOVA}" "$LOGDIR/$run.s" && grep -qsE "$lre" "$LOGDIR/$run.s" && break
		sleep 0.05
	done
	"${IN_C[@]}" "${DROPIN_ENV[@]}" DROCE_EAL="$(eal_client $run)" timeout 30 "${c[@]}" \
		>"$LOGDIR/$run.c" 2>&1
	CRC=$?
	if [ "${STAYS:-0}" = 1 ]; then
		kill $SPID 2>/dev/null
		wait $SPID 2>/dev/null
		SRC=0
	else
		wait $SPID
		SRC=$?
	fi
	SPID=
}

LISTEN=7174 pair rping rping -s -a $RIP_S -p 7174 -C 5 -v -- rping -c -a $RIP_S -p 7174 -C 5 -v
check "rping: both exit 0 (server $SRC, client $CRC), 5 pings on each side" \
	$([ "$SRC" = 0 ] && [ "$CRC" = 0 ] && [ "$(grep -c 'ping data: rdma-ping-' "$LOGDIR/rping.c")" = 5 ] &&
	  [ "$(grep -c 'server ping data: rdma-ping-' "$LOGDIR/rping.s")" = 5 ] && echo 1)
STAYS=1 LISTEN=7180 pair noport rping -s -a $RIP_S -p 7180 -C 1 -- rping -c -a $RIP_S -p 7181 -C 1 -v
check "rping to a port without listener: REJECTED, error 8" \
	$(grep -q 'RDMA_CM_EVENT_REJECTED, error 8' "$LOGDIR/noport.c" && echo 1)
READY='udaddy: starting server' LISTEN=7174 pair udaddy udaddy -b $RIP_S -c 1 -- udaddy -s $RIP_S -c 1
check "udaddy: both exit 0 (server $SRC, client $CRC)" \
	$([ "$SRC" = 0 ] && [ "$CRC" = 0 ] && echo 1)
sleep 0.5
kill $TPID 2>/dev/null
wait $TPID 2>/dev/null
TPID=

ts() { tshark -r "$CAP" "$@" 2>/dev/null; }
ws_name() {
	case $1 in
	REQ) echo ConnectRequest;; MRA) echo MsgRcptAck;; REJ) echo ConnectReject;;
	REP) echo ConnectReply;; RTU) echo ReadyToUse;; DREQ) echo DisconnectRequest;;
	DREP) echo DisconnectReply;; SIDR_REQ) echo ServiceIDResReq;;
	SIDR_REP) echo ServiceIDResReqResp;;
	esac
}
# (tshark takes a second or more to start: the CM MADs' lines are read once,
# and the counts below from one more reading, tshark_counts; tc runs tshark
# itself for a filter that did not get a count)
cm_lines=$(ts -Y "infiniband.mad.mgmtclass == 0x07")
all=$(printf '%s' "$cm_lines" | grep -c '')
qp1="infiniband.bth.opcode == 100 && infiniband.bth.destqp == 1"
qp1="$qp1 && infiniband.deth.q_key == 0x80010000 && infiniband.deth.srcqp == 1"
qp1="$qp1 && infiniband.mad.mgmtclass == 0x07"
declare -A TC
tshark_counts TC tshark -r "$CAP" -- "$qp1" "_ws.malformed" "infiniband && _ws.expert"
tc() { if [ -n "${TC[$1]+set}" ]; then echo "${TC[$1]}"; else ts -Y "$1" | wc -l; fi; }
n=$(tc "$qp1")
check "CM MADs on the wire: $all, all UD SEND_ONLY QP1 -> QP1 with Q_Key 0x80010000: $n" \
	$([ "$all" -gt 0 ] && [ "$n" = "$all" ] && echo 1)
for m in REQ MRA REP RTU DREQ DREP REJ SIDR_REQ SIDR_REP; do
	k=$(printf '%s\n' "$cm_lines" | grep -c "CM: $(ws_name $m)\$")
	check "$m: $k frame(s)" $([ "$k" -gt 0 ] && echo 1)
done
n=$(tc "_ws.malformed")
check "malformed frames: $n" $([ "$n" = 0 ] && echo 1)
n=$(tc "infiniband && _ws.expert")
check "InfiniBand frames with expert info: $n" $([ "$n" = 0 ] && echo 1)

echo "run_cm_wire: $((checks - bad))/$checks checks passed"
if [ $bad -ne 0 ]; then
	for f in "$LOGDIR"/*.s "$LOGDIR"/*.c; do
		echo "--- $(basename "$f")"
		grep -v '^EAL' "$f" | tail -n 8
	done
	exit 1
fi
