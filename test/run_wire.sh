#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# RoCEv2 on a real (virtual) wire: two network namespaces joined by a veth
# pair, an mp_peer process in each, its droce device on net_af_packet bound to
# the namespace's veth end. tshark captures on the server's veth; the capture
# must decode as InfiniBand (Wireshark dissects UDP port 4791 as RoCEv2 by
# default), show RC SEND and ACK and UD SEND opcodes, and hold no malformed
# frames and no warnings on the RoCE frames. Wireshark 4.0 does not verify
# the ICRC, so this script checks every ICRC itself (python3, zlib CRC-32).
#
#   server ns: veth 10.99.0.1/24 (kernel, TCP control), droce 10.99.0.11
#   client ns: veth 10.99.0.2/24 (kernel, TCP control), droce 10.99.0.12
#
# droce uses IPs of its own: af_packet hands it every frame of the veth, it
# keeps RoCE and ARP for its IP and drops the rest (the TCP control traffic);
# the kernel drops the RoCE frames (not its IP, no forwarding in a fresh
# namespace) and answers ARP only for its own IP.
#
# af_packet in DPDK 22.11: max_rx_pktlen is 1518, so the port MTU is 1500
# (IB MTU 1024) and the veth MTU stays 1500. framesz=2048 holds a full
# 1514-byte frame (tpacket2 header and MAC offset take 34 bytes); its rx
# queue wants framesz - 32 bytes of mbuf data room, 2016 <= droce's 2048.
# qdisc_bypass=0 (the driver's default is 1) so the frames this side sends
# pass the taps and tshark on one veth end sees both directions.
#
# Usage: run_wire.sh <path to mp_peer>. Exit 0 if all checks pass, 77 if
# network namespaces cannot be created here.
set -u

MP_PEER=${1:?usage: run_wire.sh <path to mp_peer>}
[ -x "$MP_PEER" ] || { echo "run_wire: $MP_PEER is not executable"; exit 1; }

ID=$$
NS_S=drS$ID NS_C=drC$ID
VS=dvS$ID VC=dvC$ID
KIP_S=10.99.0.1 KIP_C=10.99.0.2
RIP_S=10.99.0.11 RIP_C=10.99.0.12
. "$(dirname "${BASH_SOURCE[0]}")/port_lib.sh"
PORT=$(free_port)
CASE_TIMEOUT=${MP_CASE_TIMEOUT:-60}
KILL_AFTER=$((CASE_TIMEOUT * 2 + 20))
WORK=$(mktemp -d /tmp/droce-wire-$ID.XXXXXX)
CAP=$WORK/wire.pcapng
SPID= CPID= TPID=
NS_MADE=

if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=1; else CLIENT_LCORE=0; fi

cleanup() {
	for p in $SPID $CPID $TPID; do
		kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
	done
	sleep 0.2
	for p in $SPID $CPID $TPID; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	# deleting a namespace deletes the veth end in it, and so the pair
	[ -n "$NS_MADE" ] && ip netns del "$NS_S" 2>/dev/null
	[ -n "$NS_MADE" ] && ip netns del "$NS_C" 2>/dev/null
	ip link del "$VS" 2>/dev/null
	rm -rf "/var/run/dpdk/wS$ID" "/var/run/dpdk/wC$ID"
	if [ -n "${MP_KEEP_PCAP:-}" ] && [ -f "$CAP" ]; then
		cp "$CAP" "$MP_KEEP_PCAP" && echo "run_wire: capture kept as $MP_KEEP_PCAP"
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "run_wire: $*"; exit 1; }

command -v tshark >/dev/null || fail "tshark is not installed"
command -v ip >/dev/null || fail "ip (iproute2) is not installed"

# --- topology ---
if ! ip netns add "$NS_S" 2>"$WORK/netns.err"; then
	echo "run_wire: SKIP: cannot create a network namespace: $(cat "$WORK/netns.err")"
	exit 77
fi
NS_MADE=1
if ! ip netns add "$NS_C" 2>"$WORK/netns.err"; then
	echo "run_wire: SKIP: cannot create a network namespace: $(cat "$WORK/netns.err")"
	exit 77
fi
ip link add "$VS" type veth peer name "$VC" || fail "cannot create the veth pair"
ip link set "$VS" netns "$NS_S" || fail "cannot move $VS"
ip link set "$VC" netns "$NS_C" || fail "cannot move $VC"
for x in "$NS_S $VS $KIP_S" "$NS_C $VC $KIP_C"; do
	set -- $x
	ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null	# no IPv6 chatter
	ip netns exec "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 2>/dev/null
	ip -n "$1" link set lo up
	ip -n "$1" addr add "$3/24" dev "$2" || fail "cannot address $2"
	ip -n "$1" link set "$2" up || fail "cannot bring $2 up"
done
for i in $(seq 1 50); do
	ip -n "$NS_S" -o link show "$VS" | grep -q "state UP" &&
		ip -n "$NS_C" -o link show "$VC" | grep -q "state UP" && break
	sleep 0.1
done
echo "run_wire: $NS_S:$VS ($KIP_S, droce $RIP_S) <-veth-> $NS_C:$VC ($KIP_C, droce $RIP_C)"

# --- capture ---
ip netns exec "$NS_S" tshark -i "$VS" -w "$CAP" -q >"$WORK/tshark.log" 2>&1 &
TPID=$!
for i in $(seq 1 150); do
	grep -qs "Capturing on" "$WORK/tshark.log" && break
	kill -0 $TPID 2>/dev/null || break
	sleep 0.1
done
grep -qs "Capturing on" "$WORK/tshark.log" || { cat "$WORK/tshark.log"; fail "tshark did not start"; }

AF="qpairs=1,blocksz=4096,framesz=2048,framecnt=512,qdisc_bypass=0"
EAL_COMMON="--no-huge -m 256 --no-pci --no-telemetry"
EAL_SERVER="-l 0 $EAL_COMMON --file-prefix=wS$ID --vdev=net_af_packet0,iface=$VS,$AF --vdev=droce0,ethdev=net_af_packet0,ip=$RIP_S"
EAL_CLIENT="-l $CLIENT_LCORE $EAL_COMMON --file-prefix=wC$ID --vdev=net_af_packet0,iface=$VC,$AF --vdev=droce0,ethdev=net_af_packet0,ip=$RIP_C"

show() {
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: Detected shared linkage' \
		"$1" | sed "s/^/    $2 | /"
}

# run_case <name> <mp_peer args...>
run_case() {
	local name=$1 src crc i t0 t1
	shift
	local slog=$WORK/$name.server.log clog=$WORK/$name.client.log

	echo "== $name: mp_peer $*"
	t0=$(date +%s.%N)
	DROCE_EAL=$EAL_SERVER timeout -k 5 $KILL_AFTER ip netns exec "$NS_S" "$MP_PEER" server $PORT "$@" \
		--timeout "$CASE_TIMEOUT" >"$slog" 2>&1 &
	SPID=$!
	for i in $(seq 1 300); do
		grep -qs "listening on TCP port" "$slog" && break
		kill -0 $SPID 2>/dev/null || break
		sleep 0.1
	done
	if ! grep -qs "listening on TCP port" "$slog"; then
		echo "   server did not come up"
		kill -KILL $SPID 2>/dev/null
		wait $SPID 2>/dev/null
		SPID=
		show "$slog" server
		return 1
	fi
	DROCE_EAL=$EAL_CLIENT timeout -k 5 $KILL_AFTER ip netns exec "$NS_C" "$MP_PEER" client $PORT "$@" \
		--peer "$KIP_S" --timeout "$CASE_TIMEOUT" >"$clog" 2>&1 &
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
	rm -rf "/var/run/dpdk/wS$ID" "/var/run/dpdk/wC$ID"
	printf '   %s: server exit %d, client exit %d, %.1f s\n' "$name" $src $crc \
		"$(awk "BEGIN { print $t1 - $t0 }")"
	[ $src -eq 0 ] && [ $crc -eq 0 ]
}

T0=$(date +%s)
fails=0
# sizes: payloads below 16 B, pad counts 0..3, one packet, exactly one MTU,
# one byte over (FIRST+LAST), several MTUs (MIDDLE); immediate data on i % 4 == 3
run_case rc_srq --qp rc --srq --msgs 60 --sizes 1,2,3,4,15,16,17,64,1000,1024,1025,2048,4096,4097,65536 --seed 21 ||
	fails=$((fails + 1))
run_case ud_srq --qp ud --srq --msgs 60 --sizes 1,2,3,4,15,16,17,64,1000,mtu --seed 22 ||
	fails=$((fails + 1))
sleep 0.5
kill -INT $TPID 2>/dev/null
for i in $(seq 1 100); do kill -0 $TPID 2>/dev/null || break; sleep 0.1; done
kill -KILL $TPID 2>/dev/null
wait $TPID 2>/dev/null
TPID=
[ -s "$CAP" ] || fail "no capture file"

# --- analysis ---
# The payload is opaque test data, but Wireshark hands every InfiniBand
# payload to heuristic sub-dissectors (on by default), and random bytes
# mislead some of them: RPCoRDMA reads 16 bytes of any RC SEND payload before
# it checks the length (RC SEND Only with < 16 bytes become "[Malformed
# Packet: RPCoRDMA]"), and the Ethertype-over-IB guess takes payload bytes
# such as 81 00 for a VLAN header. The strict checks run with the InfiniBand
# payload heuristics off (headers, BTH and extension headers, ICRC are all
# still dissected); what the defaults flag is only reported.
TS_DEFAULT="tshark -r $CAP -o ip.check_checksum:TRUE"
TS=$TS_DEFAULT
HEUR="rpcrdma_infiniband iser_infiniband smb_direct_infiniband smcr_infiniband sdp_infiniband
      lnet_ib eth_over_ib fc_infiniband nvme_rdma"
# those this tshark does not have, it names ("No such protocol X, can't
# disable"), all in one run (tshark takes a second or more to start)
no_heur=" $(tshark -r "$CAP" -c 1 $(printf -- '--disable-heuristic %s ' $HEUR) 2>&1 >/dev/null |
	sed -n "s/.*No such protocol \(.*\), can't disable.*/\1/p" | tr '\n' ' ')"
for h in $HEUR; do
	[[ $no_heur == *" $h "* ]] || TS="$TS --disable-heuristic $h"
done
# the counts below, from one reading of the capture (tshark_counts); count()
# runs tshark itself for a filter not in the list
declare -A COUNTS
cf=(frame infiniband "udp.dstport == 4791")
for op in 0 1 2 3 4 5 100 101; do
	cf+=("infiniband.bth.opcode == $op && ip.src == $RIP_C && ip.dst == $RIP_S")
done
cf+=("infiniband.bth.opcode == 17 && ip.src == $RIP_S && ip.dst == $RIP_C")
for syn in 0 1 3; do
	cf+=("infiniband.bth.opcode == 17 && infiniband.aeth.syndrome.opcode == $syn")
done
cf+=("_ws.malformed" "(udp.port == 4791 || arp) && _ws.expert.severity >= \"Warning\""
     "udp.port == 4791 && ip.checksum.status != 1"
     "infiniband && (infiniband.bth.tver != 0 || infiniband.bth.p_key != 65535)"
     "infiniband.deth && infiniband.deth.q_key != 0x11111111" "infiniband.deth"
     "udp.dstport == 4791 && (udp.srcport < 49152 || udp.checksum != 0)"
     "udp.dstport == 4791 && frame.len != frame.cap_len"
     "arp.opcode == 1 && arp.dst.proto_ipv4 == $RIP_S" "arp.opcode == 2 && arp.src.proto_ipv4 == $RIP_S"
     icmp)
tshark_counts COUNTS $TS -- "${cf[@]}"
count() {
	if [ -n "${COUNTS[$1]+set}" ]; then
		echo "${COUNTS[$1]}"
	else
		$TS -Y "$1" 2>/dev/null | wc -l
	fi
}
checks=0 bad=0
check() {	# check <description> <ok?>
	checks=$((checks + 1))
	if [ "${2:-}" = 1 ]; then echo "   ok   $1"; else echo "   FAIL $1"; bad=$((bad + 1)); fi
}

echo "== capture: $(count frame) frames on $VS"
n_ib=$(count infiniband)
n_roce=$(count "udp.dstport == 4791")
echo "   RoCEv2 (UDP 4791): $n_roce frames, decoded as InfiniBand: $n_ib"
echo "   opcodes (count, sender, BTH opcode):"
$TS -Y infiniband -T fields -e ip.src -e infiniband.bth.opcode 2>/dev/null | sort | uniq -c |
	while read -r n src op; do
		case $op in
		0) nm="RC SEND First";; 1) nm="RC SEND Middle";; 2) nm="RC SEND Last";;
		3) nm="RC SEND Last with Immediate";; 4) nm="RC SEND Only";;
		5) nm="RC SEND Only with Immediate";; 17) nm="RC Acknowledge";;
		100) nm="UD SEND Only";; 101) nm="UD SEND Only with Immediate";; *) nm="?";;
		esac
		printf '     %6d  %-11s %3d  %s\n' "$n" "$src" "$op" "$nm"
	done
check "frames decoded as InfiniBand BTH ($n_ib > 0, = every UDP 4791 frame: $n_roce)" \
	$([ "$n_ib" -gt 0 ] && [ "$n_ib" -eq "$n_roce" ] && echo 1)
for op in "0 RC SEND First" "1 RC SEND Middle" "2 RC SEND Last" "3 RC SEND Last with Immediate" \
	  "4 RC SEND Only" "5 RC SEND Only with Immediate" "100 UD SEND Only" \
	  "101 UD SEND Only with Immediate"; do
	set -- $op
	n=$(count "infiniband.bth.opcode == $1 && ip.src == $RIP_C && ip.dst == $RIP_S")
	shift
	check "$* from the client: $n" $([ "$n" -gt 0 ] && echo 1)
done
n=$(count "infiniband.bth.opcode == 17 && ip.src == $RIP_S && ip.dst == $RIP_C")
# AETH syndrome: 0 ACK, 1 RNR NAK (the SRQ ran dry for a moment), 3 NAK
n_ack=$(count "infiniband.bth.opcode == 17 && infiniband.aeth.syndrome.opcode == 0")
n_rnr=$(count "infiniband.bth.opcode == 17 && infiniband.aeth.syndrome.opcode == 1")
n_nak=$(count "infiniband.bth.opcode == 17 && infiniband.aeth.syndrome.opcode == 3")
check "RC Acknowledge from the server: $n ($n_ack ACK, $n_rnr RNR NAK, $n_nak NAK)" \
	"$([ "$n" -gt 0 ] && [ "$n_ack" -gt 0 ] && echo 1)"
n=$(count "_ws.malformed")
check "malformed frames: $n" $([ "$n" -eq 0 ] && echo 1)
n=$(count "(udp.port == 4791 || arp) && _ws.expert.severity >= \"Warning\"")
check "RoCE/ARP frames with expert warnings or errors: $n" $([ "$n" -eq 0 ] && echo 1)
n=$(count "udp.port == 4791 && ip.checksum.status != 1")
check "RoCE frames whose IPv4 header checksum is not good: $n" $([ "$n" -eq 0 ] && echo 1)
n=$(count "infiniband && (infiniband.bth.tver != 0 || infiniband.bth.p_key != 65535)")
check "BTH with TVer != 0 or P_Key != 0xffff: $n" $([ "$n" -eq 0 ] && echo 1)
n=$(count "infiniband.deth && infiniband.deth.q_key != 0x11111111")
n_ud=$(count "infiniband.deth")
check "UD frames with a Q_Key other than the QP's: $n of $n_ud" $([ "$n_ud" -gt 0 ] && [ "$n" -eq 0 ] && echo 1)
n=$(count "udp.dstport == 4791 && (udp.srcport < 49152 || udp.checksum != 0)")
check "RoCE UDP source port outside 0xc000.. or non-zero UDP checksum: $n" $([ "$n" -eq 0 ] && echo 1)
n=$(count "udp.dstport == 4791 && frame.len != frame.cap_len")
check "RoCE frames truncated in the capture: $n" $([ "$n" -eq 0 ] && echo 1)
max=$($TS -Y "udp.dstport == 4791" -T fields -e frame.len 2>/dev/null | sort -n | tail -n1)
# IB MTU 1024: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + 1024 + ICRC 4
check "largest RoCE frame: ${max:-0} bytes (a full 1024-byte IB MTU packet is 1082)" \
	$([ "${max:-0}" -ge 1082 ] && [ "${max:-0}" -le 1514 ] && echo 1)
n=$(count "arp.opcode == 1 && arp.dst.proto_ipv4 == $RIP_S")
m=$(count "arp.opcode == 2 && arp.src.proto_ipv4 == $RIP_S")
check "ARP for the server's droce IP: $n requests, $m replies from droce" \
	$([ "$n" -gt 0 ] && [ "$m" -gt 0 ] && echo 1)
n=$(count "icmp")
check "ICMP (the kernel answering RoCE frames): $n" $([ "$n" -eq 0 ] && echo 1)

# With Wireshark's default heuristics (information only)
n=$($TS_DEFAULT -Y "_ws.malformed" 2>/dev/null | wc -l)
echo "   --   with the default payload heuristics: $n malformed frames, flagged by:" \
	"$($TS_DEFAULT -Y "_ws.malformed" -T fields -e frame.protocols 2>/dev/null |
	   sed 's/.*:infiniband://' | sort | uniq -c | awk '{ printf "%s%s x%s", s, $2, $1; s = ", " }')"

# ICRC: Wireshark 4.0 shows it but does not check it
if [ -n "$SYS_PY" ]; then
	$TS -Y "udp.dstport == 4791" -F pcap -w "$WORK/roce.pcap" 2>/dev/null
	out=$("$SYS_PY" "$(dirname "$0")/roce_icrc_check.py" "$WORK/roce.pcap")
	set -- $out
	check "ICRC verified independently (python3 zlib): ${1:-0} good, ${2:-?} bad ${*:3}" \
		$([ "${2:-1}" -eq 0 ] && [ "${1:-0}" -eq "$n_roce" ] && echo 1)
else
	echo "   --   ICRC not verified: no python3"
fi

echo "run_wire: $((2 - fails))/2 transfers passed, $((checks - bad))/$checks capture checks passed in $(( $(date +%s) - T0 )) s"
[ $fails -eq 0 ] && [ $bad -eq 0 ]
