#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's unmodified ibv_rc_pingpong, ibv_uc_pingpong, ibv_ud_pingpong,
# ibv_srq_pingpong and ibv_xsrq_pingpong over the drop-in libibverbs, on a
# real (virtual) wire: two
# network namespaces joined by a veth pair, each process's droce device on
# net_af_packet bound to its namespace's veth end (as run_wire.sh sets up):
#
#   server ns: veth 10.98.0.1/24 (kernel, TCP control), droce 10.98.0.11
#   client ns: veth 10.98.0.2/24 (kernel, TCP control), droce 10.98.0.12
#
# The client connects to the server's TCP port over the kernel IPs; RoCE
# goes between the droce IPs (af_packet hands droce every frame, it keeps
# RoCE and ARP for its own IP). af_packet in DPDK 22.11: port MTU 1500, IB
# MTU 1024, so -m 1024 and UD messages of at most 1024 B. framesz=2048,
# qdisc_bypass=0 as in run_wire.sh.
#
# Each program runs with and without -e at two sizes. A run passes when both
# sides exit 0 and print the GID exchange and the "bytes in" / "iters in"
# lines (ibv_xsrq_pingpong: the exchange and "success"). tshark captures the
# XRC runs on the server's veth: XRC SENDs from the client carrying the
# server's SRQ number in their XRCETH, XRC Acknowledges back, nothing
# malformed, every ICRC good (roce_icrc_check.py). Wireshark 4.0 names the
# XRC opcodes but dissects nothing after their BTH (the rest is "vendor
# data"), so the XRCETH is read from there.
#
# Usage: run_dropin_netns.sh <dropin dir>
# Exit 0 if every run passed, 77 if ibverbs-utils is missing or network
# namespaces cannot be created here.
set -u

DROPIN=${1:?usage: run_dropin_netns.sh <dropin dir>}
for p in ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong ibv_srq_pingpong ss ip timeout; do
	command -v $p >/dev/null || { echo "SKIP: $p is missing (Debian ibverbs-utils / iproute2)"; exit 77; }
done
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }
DROPIN=$(cd "$DROPIN" && pwd)

ME=run_dropin_netns PFX=dn NET=10.98.0
. "$(dirname "$0")/dropin_netns_lib.sh"
RUN_TIMEOUT=${PP_TIMEOUT:-60}

# check_out <log> <peer droce ip>: the usual output of a successful run
check_out() {
	if [ "$3" = ibv_xsrq_pingpong ]; then
		grep -qE "^ *remote: LID [0-9a-f]+, QPN RECV [0-9a-f]+ SEND [0-9a-f]+, PSN [0-9a-f]+, SRQN [0-9a-f]+, GID ::ffff:$2\$" "$1" &&
		grep -qE '^success$' "$1"
		return
	fi
	grep -qE "remote address: .*GID ::ffff:$2\$" "$1" &&
	grep -qE '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' "$1" &&
	grep -qE '^[0-9]+ iters in [0-9.]+ seconds = [0-9.]+ usec/iter$' "$1"
}

n=0
# run_case <program> <args...>
run_case() {
	local prog=$1 i src crc ok=1 t0 t1
	shift
	n=$((n + 1))
	local port=$((PORT + n)) slog=$LOGDIR/$n.server clog=$LOGDIR/$n.client
	echo "== $prog $* (server $NS_S <-veth/af_packet-> client $NS_C, TCP $KIP_S:$port)"
	t0=$(date +%s.%N)
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_server $n)" timeout -k 5 $RUN_TIMEOUT \
		ip netns exec "$NS_S" $prog -d droce0 -g 0 -p $port "$@" >"$slog" 2>&1 &
	SPID=$!
	for i in $(seq 1 300); do
		listening $port && break
		kill -0 $SPID 2>/dev/null || break
		sleep 0.1
	done
	if ! listening $port; then
		echo "   server did not listen on $port"
		kill -KILL $SPID 2>/dev/null
		wait $SPID 2>/dev/null
		SPID=
		show "$slog" server
		return 1
	fi
	"${DROPIN_ENV[@]}" DROCE_EAL="$(eal_client $n)" timeout -k 5 $RUN_TIMEOUT \
		ip netns exec "$NS_C" $prog -d droce0 -g 0 -p $port "$@" $KIP_S >"$clog" 2>&1 &
	CPID=$!
	wait $CPID
	crc=$?
	CPID=
	wait $SPID
	src=$?
	SPID=
	t1=$(date +%s.%N)
	show "$slog" server
	show "$clog" client
	rm -rf /var/run/dpdk/dnS${ID}_$n /var/run/dpdk/dnC${ID}_$n
	check_out "$slog" $RIP_C $prog || { echo "   server output lacks the GID exchange or the result lines"; ok=0; }
	check_out "$clog" $RIP_S $prog || { echo "   client output lacks the GID exchange or the result lines"; ok=0; }
	printf '   %s: server exit %d, client exit %d, %.1f s\n' "$prog $*" $src $crc \
		"$(awk "BEGIN { print $t1 - $t0 }")"
	[ $src -eq 0 ] && [ $crc -eq 0 ] && [ $ok -eq 1 ]
}

fails=0
T0=$(date +%s)
ITERS=${PP_ITERS:-500}
for e in "" -e; do
	for s in 1 4096; do
		run_case ibv_rc_pingpong -m 1024 -s $s -n $ITERS $e || fails=$((fails + 1))
	done
	for s in 1 4096; do
		run_case ibv_uc_pingpong -m 1024 -s $s -n $ITERS $e || fails=$((fails + 1))
	done
	for s in 1 1024; do
		run_case ibv_ud_pingpong -s $s -n $ITERS $e || fails=$((fails + 1))
	done
	for s in 1 4096; do
		run_case ibv_srq_pingpong -m 1024 -q 16 -s $s -n $ITERS $e || fails=$((fails + 1))
	done
done

# XRC, captured
bad=0
if command -v ibv_xsrq_pingpong >/dev/null && command -v tshark >/dev/null; then
	CAP=$LOGDIR/xrc.pcapng
	ip netns exec "$NS_S" tshark -i "$VS" -w "$CAP" -q >"$LOGDIR/tshark.log" 2>&1 &
	TPID=$!
	for i in $(seq 1 150); do
		grep -qs "Capturing on" "$LOGDIR/tshark.log" && break
		kill -0 $TPID 2>/dev/null || break
		sleep 0.1
	done
	x0=$n
	for e in "" -e; do
		for s in 1 4096; do
			run_case ibv_xsrq_pingpong -m 1024 -s $s -n $ITERS $e || fails=$((fails + 1))
		done
	done
	sleep 0.5
	kill -TERM $TPID 2>/dev/null
	wait $TPID 2>/dev/null
	TPID=
	# the server's SRQ number, as the client printed it
	srqn=$(sed -nE 's/^ *remote: .*SRQN ([0-9a-f]+), GID.*/\1/p' "$LOGDIR/$((x0 + 1)).client")
	ts() { tshark -r "$CAP" "$@" 2>/dev/null; }
	xcheck() {	# xcheck <description> <1 if ok>
		if [ "${2:-}" = 1 ]; then echo "   ok   $1"; else echo "   FAIL $1"; bad=$((bad + 1)); fi
	}
	req="infiniband.bth.opcode >= 160 && infiniband.bth.opcode <= 165 && ip.src == $RIP_C && ip.dst == $RIP_S"
	# the counts below from one reading of the capture (tshark_counts);
	# tc runs tshark itself for a filter not in the list
	declare -A XC
	xf=(frame "$req" "infiniband.bth.opcode == 177 && ip.src == $RIP_S && ip.dst == $RIP_C"
	    "udp.dstport == 4791 && (infiniband.bth.opcode < 160 || infiniband.bth.opcode >= 192)"
	    "_ws.malformed || (udp.port == 4791 && _ws.expert.severity >= \"Warning\")" "udp.dstport == 4791")
	for op in 160 161 162 164; do xf+=("infiniband.bth.opcode == $op && ip.src == $RIP_C"); done
	tshark_counts XC tshark -r "$CAP" -- "${xf[@]}"
	tc() { if [ -n "${XC[$1]+set}" ]; then echo "${XC[$1]}"; else ts -Y "$1" | wc -l; fi; }
	nreq=$(tc "$req")
	echo "== capture of the XRC runs: $(tc frame) frames; XRC opcodes (count, sender, opcode):"
	ts -Y "infiniband.bth.opcode >= 160 && infiniband.bth.opcode < 192" -T fields -e ip.src \
		-e infiniband.bth.opcode | sort | uniq -c | sed 's/^/     /'
	for op in 160 161 162 164; do
		k=$(tc "infiniband.bth.opcode == $op && ip.src == $RIP_C")
		xcheck "XRC SEND opcode $op from the client: $k" $([ "$k" -gt 0 ] && echo 1)
	done
	k=$(tc "infiniband.bth.opcode == 177 && ip.src == $RIP_S && ip.dst == $RIP_C")
	xcheck "XRC Acknowledge (177) from the server: $k" $([ "$k" -gt 0 ] && echo 1)
	k=$(ts -Y "$req" -T fields -e infiniband.vendor | cut -c1-8 | grep -vc "^$(printf %08x $((16#${srqn:-0})))")
	xcheck "XRCETH of every XRC SEND = the server's SRQN ${srqn:-?}: $((nreq - k)) of $nreq" \
		$([ -n "$srqn" ] && [ "$nreq" -gt 0 ] && [ "$k" -eq 0 ] && echo 1)
	k=$(tc "udp.dstport == 4791 && (infiniband.bth.opcode < 160 || infiniband.bth.opcode >= 192)")
	xcheck "frames of other transports: $k" $([ "$k" -eq 0 ] && echo 1)
	k=$(tc "_ws.malformed || (udp.port == 4791 && _ws.expert.severity >= \"Warning\")")
	xcheck "malformed frames or RoCE frames with expert warnings: $k" $([ "$k" -eq 0 ] && echo 1)
	nroce=$(tc "udp.dstport == 4791")
	ts -Y "udp.dstport == 4791" -F pcap -w "$LOGDIR/xrc.pcap"
	set -- $("$SYS_PY" "$(dirname "$0")/roce_icrc_check.py" "$LOGDIR/xrc.pcap")
	xcheck "ICRC verified independently: ${1:-0} good of $nroce, ${2:-?} bad ${*:3}" \
		$([ "${2:-1}" -eq 0 ] && [ "${1:-0}" -eq "$nroce" ] && [ "$nroce" -gt 0 ] && echo 1)
else
	echo "   --   XRC not run: ibv_xsrq_pingpong or tshark missing"
fi

echo "run_dropin_netns: $((n - fails))/$n runs passed, $bad XRC capture check(s) failed in $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ] && [ $bad -eq 0 ]
