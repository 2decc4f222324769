#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# droce-perf --server and --client: two processes on one host, each with
# one droce device, joined by memif (net_memif, server and client roles), by
# a net_shm link (--shm), or by a veth pair between two network namespaces
# (--netns: net_af_packet on each end, as two hosts would be; the TCP
# connection over the veth's kernel addresses), the QP numbers, rkeys and
# figures over TCP.
# Every test that runs between two processes, briefly, in both start
# orders: both exit 0, the client's JSON is sane (perf_json_check.py) and
# the server printed the same figures. Asserts nothing about speed.
#
# Usage: run_perf_remote.sh <droce-perf> [--memif|--shm|--netns]
# (--netns: exit 77 if network namespaces cannot be created here)
# (PERF_REMOTE_KEEP=<file>: one brief run instead, its client's JSON kept there)
set -u
PERF=${1:?usage: run_perf_remote.sh <droce-perf> [--memif|--shm|--netns]}
TOPO=${2:---memif}
PY=/usr/bin/python3
HERE=$(dirname "$0")
CHECK=$HERE/perf_json_check.py
. "$HERE/port_lib.sh"
DIR=$(mktemp -d /tmp/droce-perf-remote.XXXXXX)
SPID='' CPID=''
fails=0
HDR=''
NS_S=prS$$ NS_C=prC$$ NS_MADE=
IN_S='' IN_C='' HOST=127.0.0.1

cleanup() {
	kill_tree $SPID $CPID
	rm -rf "$DIR" "/var/run/dpdk/prS$$" "/var/run/dpdk/prC$$" /dev/shm/droce-shm.pr$$
	if [ -n "$NS_MADE" ]; then
		ip netns del "$NS_S" 2>/dev/null
		ip netns del "$NS_C" 2>/dev/null
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=1; else CLIENT_LCORE=0; fi
EAL="--no-huge -m 256 --no-pci --no-telemetry --log-level=lib.eal:error"
case $TOPO in
--memif)
	SOCK=$DIR/memif.sock
	PORT_S="--vdev=net_memif0,role=server,socket=$SOCK" ETH_S=net_memif0
	PORT_C="--vdev=net_memif0,role=client,socket=$SOCK" ETH_C=net_memif0 ;;
--shm)
	PORT_S="--vdev=net_shm0,link=pr$$" ETH_S=net_shm0
	PORT_C="--vdev=net_shm0,link=pr$$" ETH_C=net_shm0 ;;
--netns)
	# as test/run_wire.sh: af_packet's MTU is 1500 (IB MTU 1024)
	if ! ip netns add "$NS_S" 2>"$DIR/ns.err" || ! ip netns add "$NS_C" 2>>"$DIR/ns.err"; then
		echo "run_perf_remote: SKIP: cannot create a network namespace: $(cat "$DIR/ns.err")"
		ip netns del "$NS_S" 2>/dev/null
		exit 77
	fi
	NS_MADE=1
	ip link add pvS$$ type veth peer name pvC$$ &&
		ip link set pvS$$ netns "$NS_S" && ip link set pvC$$ netns "$NS_C" ||
		{ echo "FAIL: cannot create the veth pair"; exit 1; }
	for x in "$NS_S pvS$$ 10.98.0.1" "$NS_C pvC$$ 10.98.0.2"; do
		set -- $x
		ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 2>/dev/null
		ip -n "$1" link set lo up
		ip -n "$1" addr add "$3/24" dev "$2" && ip -n "$1" link set "$2" up ||
			{ echo "FAIL: cannot bring $2 up"; exit 1; }
	done
	AF="qpairs=1,blocksz=4096,framesz=2048,framecnt=512"
	PORT_S="--vdev=net_af_packet0,iface=pvS$$,$AF" ETH_S=net_af_packet0
	PORT_C="--vdev=net_af_packet0,iface=pvC$$,$AF" ETH_C=net_af_packet0
	IN_S="ip netns exec $NS_S" IN_C="ip netns exec $NS_C" HOST=10.98.0.1 ;;
*)
	echo "usage: run_perf_remote.sh <droce-perf> [--memif|--shm|--netns]"; exit 1 ;;
esac
EAL_S="-l 0 $EAL --file-prefix=prS$$ $PORT_S --vdev=droce0,ethdev=$ETH_S,ip=10.0.0.1"
EAL_C="-l $CLIENT_LCORE $EAL --file-prefix=prC$$ $PORT_C --vdev=droce0,ethdev=$ETH_C,ip=10.0.0.2"
TESTS=send_lat,write_lat,read_lat,atomic_lat,ud_lat,tag_lat,send_bw,write_bw,read_bw,atomic_bw,srq_bw,ud_bw,tag_bw

# run <label> <client first: 0|1> <client arguments...>
run() {
	local label=$1 cfirst=$2 port rs rc
	shift 2
	port=$(free_port)
	local so=$DIR/s.json se=$DIR/s.err co=$DIR/c.json ce=$DIR/c.err
	start_server() {
		# shellcheck disable=SC2086
		$IN_S timeout -k 5 150 "$PERF" $EAL_S -- --server --port "$port" >"$so" 2>"$se" &
		SPID=$!
	}
	start_client() {
		# shellcheck disable=SC2086
		$IN_C timeout -k 5 150 "$PERF" $EAL_C -- --client "$HOST" --port "$port" -j "$@" \
			>"$co" 2>"$ce" &
		CPID=$!
	}
	if [ "$cfirst" = 1 ]; then
		start_client "$@"; sleep 1; start_server
	else
		# the client once the server listens (it says so after listen())
		start_server
		for _ in $(seq 1 300); do
			grep -qs 'server waiting for a client on TCP port' "$se" && break
			kill -0 "$SPID" 2>/dev/null || break
			sleep 0.05
		done
		start_client "$@"
	fi
	wait "$CPID"; rc=$?
	wait "$SPID"; rs=$?
	SPID='' CPID=''
	if [ $rc != 0 ] || [ $rs != 0 ]; then
		echo "FAIL: $label: client exit $rc, server exit $rs"
		sed 's/^/    client | /' "$ce" | tail -n 5
		sed 's/^/    server | /' "$se" | tail -n 5
		fails=$((fails + 1))
		return
	fi
	# each process removed its EAL files at exit (DPDK leaves 3 MB of tmpfs a run)
	if [ -e "/var/run/dpdk/prS$$" ] || [ -e "/var/run/dpdk/prC$$" ]; then
		echo "FAIL: $label: /var/run/dpdk/prS$$ or prC$$ left behind"
		fails=$((fails + 1))
		rm -rf "/var/run/dpdk/prS$$" "/var/run/dpdk/prC$$"
		return
	fi
	local tests
	tests=$(echo "$@" | tr ' ' '\n' | grep -E '^[a-z]+_(lat|bw)$' | paste -sd,)
	"$PY" "$CHECK" "$label: client" "$co" "$tests" --mode client $HDR || fails=$((fails + 1))
	"$PY" "$CHECK" "$label: server" "$so" "$tests" --mode server --same-as "$co" $HDR ||
		fails=$((fails + 1))
	[ -n "${PERF_REMOTE_KEEP:-}" ] && cp "$co" "$PERF_REMOTE_KEEP"
}

if [ -n "${PERF_REMOTE_KEEP:-}" ]; then
	# (run_perf_plot.sh: one brief run, its client's JSON kept in that file)
	run "${TOPO#--}, for a plot" 0 send_lat tag_lat send_bw tag_bw -n 100
	exit $((fails > 0))
fi
# shellcheck disable=SC2046
run "${TOPO#--}, server first, every test" 0 $(echo $TESTS | tr , ' ') -n 200
run "${TOPO#--}, client first, tag tests both protocols, send_lat" 1 tag_lat tag_bw send_lat -n 200 -s 64,16384
run "${TOPO#--}, 2 QPs, a duration" 0 send_bw write_bw -q 2 -D 0.3 -s 4096
run "${TOPO#--}, UC" 1 send_lat send_bw write_bw -c uc -n 200 -s 64,1024
# the server takes --td and -b from the client (HELLO): both sides' headers say so
HDR='--header td=true --header slots=2'
run "${TOPO#--}, thread domains, two buffers" 0 send_bw write_bw srq_bw --td -b 2 -n 300 -s 65536
HDR=''
[ $fails = 0 ] && { echo "run_perf_remote: PASS"; exit 0; }
echo "run_perf_remote: $fails failure(s)"
exit 1
