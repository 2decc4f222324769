#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# dpdk-dumpcap (Debian's dpdk package), a DPDK secondary process, captures
# through droce-testpmd's rte_pdump server while two QPs stream SENDs
# ("traffic start"). droce-testpmd runs on hugepages with this run's
# --file-prefix; its EAL arguments create no port, so it brings up the
# embedded default's devices on them, their ports left unowned (own=0),
# which is what lets DPDK 22.11's dpdk-dumpcap see them. dpdk-dumpcap -c
# writes net_ring_a's frames (droce0's port) to a pcapng file, and tshark
# finds in it RoCE (InfiniBand over UDP 4791) both ways, droce0's SENDs out
# and droce1's ACKs in, described as net_ring_a, no other frame than ARP,
# nothing malformed and every ICRC right. droce-testpmd then stops the
# stream without an error completion and exits 0.
#
# As root, it lends the kernel's pool 2 MiB hugepages for the run only
# (port_lib.sh's huge_lend) and mounts hugetlbfs in a mount namespace of
# its own (or uses a mounted one). Exit 77, saying why, when dpdk-dumpcap
# or tshark is missing or hugepages cannot be had.
#
# Usage: run_dumpcap.sh <droce-testpmd>
set -u
TP=${1:?usage: run_dumpcap.sh <droce-testpmd>}
PAGES=128	# droce-testpmd takes some 40 2 MiB pages, dpdk-dumpcap's pool a few
FRAMES=200
. "$(dirname "$0")/port_lib.sh"
command -v dpdk-dumpcap >/dev/null || { echo "SKIP: dpdk-dumpcap is missing (Debian's dpdk)"; exit 77; }

# a mount namespace of our own: the hugetlbfs mount below goes with it
if [ -z "${DROCE_DUMPCAP_NS:-}" ] && unshare -m --propagation private true 2>/dev/null; then
	exec unshare -m --propagation private env DROCE_DUMPCAP_NS=1 bash "$0" "$@"
fi

capture_setup run_dumpcap
PREFIX=droce-dumpcap-$$
CAP=$WORK/net_ring_a.pcapng
tp=
HUGE_DIR=
cleanup() {
	[ -n "$tp" ] && kill_tree "$tp"
	rm -rf "/var/run/dpdk/$PREFIX"
	if [ -n "${DROCE_DUMPCAP_NS:-}" ]; then
		[ -n "$HUGE_DIR" ] && umount "$HUGE_DIR" 2>/dev/null
	else
		# a shared mount keeps a primary's page files: remove ours
		rm -f "$HUGE_DIR/${PREFIX}map_"*
	fi
	huge_return
}
CAPTURE_ATEXIT=cleanup

if [ -n "${DROCE_DUMPCAP_NS:-}" ]; then
	HUGE_DIR=$WORK/huge
	mkdir "$HUGE_DIR"
	mount -t hugetlbfs -o pagesize=2M nodev "$HUGE_DIR" 2>"$WORK/mount.err" ||
		{ echo "SKIP: cannot mount hugetlbfs: $(cat "$WORK/mount.err")"; exit 77; }
else
	HUGE_DIR=$(awk '$3 == "hugetlbfs" && ($4 ~ /pagesize=2M/ || $4 !~ /pagesize=/) { print $2; exit }' /proc/mounts)
	[ -n "$HUGE_DIR" ] ||
		{ echo "SKIP: no mount namespace of our own (unshare -m) and no hugetlbfs mounted"; exit 77; }
fi
huge_lend $PAGES || { echo "SKIP: hugepages cannot be reserved: $HUGE_WHY"; exit 77; }
ok "$PAGES hugepages lent for the run, hugetlbfs at $HUGE_DIR"

# droce-testpmd's commands through a FIFO: the stream runs until the capture is done
mkfifo "$WORK/cmds"
timeout -k 5 120 "$TP" -l 0 --no-pci --no-telemetry --file-prefix="$PREFIX" --huge-dir="$HUGE_DIR" \
	--log-level=lib.eal:error -- -f - <"$WORK/cmds" >"$WORK/tp.out" 2>&1 &
tp=$!
# a droce-testpmd that died must not take this script with it (SIGPIPE)
trap '' PIPE
exec 3>"$WORK/cmds"
cat >&3 <<CMD
create pd 0
create pd 1
create cq 0 256
create cq 1 256
create mr 0 65536
create mr 1 65536
create qp rc 0 0
create qp rc 1 1
connect qp 0 1
traffic start 0 1 0 1 size 1000 depth 8
CMD
for _ in $(seq 300); do
	grep -q "started" "$WORK/tp.out" && break
	kill -0 $tp 2>/dev/null || break
	sleep 0.1
done
grep -q "traffic qp 0 -> qp 1 started" "$WORK/tp.out" ||
	{ cat "$WORK/tp.out"; echo "FAIL: droce-testpmd did not start the stream"; exit 1; }
ok "droce-testpmd on hugepages (--file-prefix=$PREFIX): qp 0 -> qp 1 streams"

timeout -k 5 60 dpdk-dumpcap --file-prefix="$PREFIX" -D >"$WORK/list" 2>"$WORK/list.err"
grep -q "^[0-9]*\. net_ring_a$" "$WORK/list" && ok "dpdk-dumpcap -D lists $(tr '\n' ' ' <"$WORK/list")" ||
	{ cat "$WORK/list.err"; fail "dpdk-dumpcap -D: $(tr '\n' ' ' <"$WORK/list")"; }
timeout -k 5 60 dpdk-dumpcap --file-prefix="$PREFIX" -i net_ring_a -w "$CAP" -c $FRAMES \
	>"$WORK/dc.out" 2>&1
rc=$?
[ $rc = 0 ] && ok "dpdk-dumpcap -i net_ring_a -c $FRAMES: $(grep -o 'received/dropped.*' "$WORK/dc.out")" ||
	{ cat "$WORK/dc.out"; fail "dpdk-dumpcap: exit $rc"; }

echo "traffic stop" >&3
exec 3>&-
wait $tp
rc=$?
tp=
[ $rc = 0 ] && ok "droce-testpmd: $(grep -o '[0-9]* messages in.*errors' "$WORK/tp.out")" ||
	{ cat "$WORK/tp.out"; fail "droce-testpmd: exit $rc"; }

[ -s "$CAP" ] || { echo "FAIL: dpdk-dumpcap wrote no file"; exit 1; }
capture_tshark "$CAP"
capture_check_clean
# one pass: each frame's protocols, direction, BTH opcode, interface
"${TS[@]}" -T fields -e frame.protocols -e frame.packet_flags_direction -e infiniband.bth.opcode \
	-e frame.interface_name >"$WORK/fields" 2>/dev/null
all=$(wc -l <"$WORK/fields")
n=$(grep -c ":udp:infiniband" "$WORK/fields")
other=$(grep -vc ":udp:infiniband\|:arp" "$WORK/fields")
[ "$all" -ge $FRAMES ] && [ "$other" = 0 ] && ok "$all frames: $n RoCE, the others ARP" ||
	fail "$all frames (want $FRAMES at least), $n RoCE, $other neither RoCE nor ARP"
# net_ring_a is droce0's port: its SENDs (SEND ONLY, opcode 4) go out, droce1's ACKs (17) come in
dirs=$(awk -F '\t' '$1 ~ /:udp:infiniband/ { print $2 ":" $3 }' "$WORK/fields" | sort -u | tr '\n' ' ')
[ "$dirs" = "0x00000001:17 0x00000002:4 " ] && ok "SENDs out, ACKs in ($dirs)" ||
	fail "direction:opcode $dirs, want 0x00000001:17 0x00000002:4"
# DPDK 22.11's rte_pcapng names an interface dpdk:<port id>
port=$(sed -n 's/^\([0-9]*\)\. net_ring_a$/\1/p' "$WORK/list")
ifs=$(cut -f4 "$WORK/fields" | sort -u | tr '\n' ' ')
[ "$ifs" = "dpdk:$port " ] && ok "every frame on interface dpdk:$port (net_ring_a)" ||
	fail "interfaces: $ifs, want dpdk:$port (net_ring_a)"
capture_check_icrc "$n"
capture_end
