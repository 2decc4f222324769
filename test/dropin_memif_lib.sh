#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by the drop-in tests that run a server and a client process on one
# host joined by memif. A memif port in role=server has its link down until
# its client connects, and programs such as perftest's servers refuse a port
# that is not ACTIVE before any peer exists. So neither program is the memif
# server: a third process is the switch, Debian's dpdk-testpmd with two memif
# role=server ports forwarding to each other (io mode, frames untouched),
# started first. Each program's droce device is on a memif role=client port
# of its own socket, and waits at probe for the connection to testpmd to
# come up (link_wait=): its port is ACTIVE from the first query on.
#
#   server: net_memif0 -> $SOCKDIR/<run>/s.sock -+
#                                                +- testpmd (io forwarding)
#   client: net_memif0 -> $SOCKDIR/<run>/c.sock -+
#
# droce IPs $NET.11 (server) and $NET.12 (client); TCP control over
# 127.0.0.1. Each run gets its own testpmd (topo_run_start/topo_run_end):
# DPDK 22.11's memif PMD can crash testpmd's forwarding lcore (SIGSEGV in
# its rx/tx) when a client disconnects while it polls, so a testpmd serves
# one run, and one that did not outlive its run is reported, not reused.
# testpmd polls with one forwarding lcore: SW_LCORES (default "(0,1)@0",
# main and forwarding lcore on CPU 0; the main lcore sleeps).
#
# The caller sets what dropin_lib.sh asks for and NET. Exits 77 if
# dpdk-testpmd or its memif PMD is missing.

. "$(dirname "${BASH_SOURCE[0]}")/dropin_lib.sh"

command -v dpdk-testpmd >/dev/null || { echo "$ME: SKIP: dpdk-testpmd is missing (Debian dpdk)"; exit 77; }
KIP_S=127.0.0.1
RIP_S=$NET.11 RIP_C=$NET.12
IN_S=() IN_C=()
SOCKDIR=$(mktemp -d /run/droce-$PFX-$ID.XXXXXX 2>/dev/null || mktemp -d /var/tmp/droce-$PFX-$ID.XXXXXX)
SW_LCORES=${SW_LCORES:-"(0,1)@0"}
LINK_WAIT_MS=${LINK_WAIT_MS:-10000}
MEMIF="role=client,socket-abstract=no"
SW_PID= SW_RUN=0 SW_CRASHES=0
# testpmd runs with the system's libraries (its mlx PMDs load libibverbs:
# not the drop-in, which meson's LD_LIBRARY_PATH names, nor its ASan
# runtime); its log is read while it runs: line-buffered
SW_LINEBUF=()
command -v stdbuf >/dev/null && SW_LINEBUF=(stdbuf -oL)

sw_kill() {
	[ -n "$SW_PID" ] && kill -KILL "$SW_PID" 2>/dev/null
	[ -n "$SW_PID" ] && wait "$SW_PID" 2>/dev/null
	SW_PID=
}

topo_cleanup() {
	sw_kill
	rm -rf "$SOCKDIR" /var/run/dpdk/${PFX}W${ID}_*
}

# topo_run_start <n>: a testpmd forwarding between the two sockets of run n
topo_run_start() {
	local log=$LOGDIR/$1.testpmd dir=$SOCKDIR/$1

	SW_RUN=$1
	mkdir -p "$dir"
	env -u LD_LIBRARY_PATH -u LD_PRELOAD "${SW_LINEBUF[@]}" dpdk-testpmd --lcores="$SW_LCORES" $EAL_COMMON --file-prefix=${PFX}W${ID}_$1 \
		--vdev=net_memif0,role=server,socket=$dir/s.sock,socket-abstract=no \
		--vdev=net_memif1,role=server,socket=$dir/c.sock,socket-abstract=no \
		-- --forward-mode=io --nb-cores=1 --total-num-mbufs=16384 --disable-link-check \
		--stats-period=86400 --auto-start </dev/null >"$log" 2>&1 &
	SW_PID=$!
	for _ in $(seq 1 300); do
		grep -qs 'start packet forwarding' "$log" && [ -S "$dir/s.sock" ] && [ -S "$dir/c.sock" ] && return 0
		kill -0 $SW_PID 2>/dev/null || break
		sleep 0.1
	done
	echo "   dpdk-testpmd did not start forwarding between two memif servers:"
	show "$log" testpmd | tail -n 5
	sw_kill
	return 1
}

# topo_run_end: stop this run's testpmd; say so if it had died already
topo_run_end() {
	local st

	if kill -0 "$SW_PID" 2>/dev/null; then
		sw_kill
	else
		wait "$SW_PID"
		st=$?
		SW_PID=
		SW_CRASHES=$((SW_CRASHES + 1))
		echo "   note: testpmd had exited (status $st) before the end of the run:"
		show "$LOGDIR/$SW_RUN.testpmd" testpmd | tail -n 3
	fi
	rm -rf "$SOCKDIR/$SW_RUN" /var/run/dpdk/${PFX}W${ID}_$SW_RUN
}

# the first testpmd tells whether this host can run one at all
if ! topo_run_start 0 >"$LOGDIR/probe.out"; then
	cat "$LOGDIR/probe.out"
	if ! ls /usr/lib/*/dpdk/pmds-*/librte_net_memif.so* >/dev/null 2>&1; then
		echo "$ME: SKIP: DPDK's memif PMD is missing"
		exit 77
	fi
	fail "dpdk-testpmd does not run here"
fi
topo_run_end >/dev/null
echo "$ME: droce $RIP_S (memif client) -> s.sock -> testpmd (io, lcores $SW_LCORES) <- c.sock <- droce $RIP_C (memif client), in $SOCKDIR/<run>"

eal_server() { echo "--lcores=$SERVER_LCORES $EAL_COMMON --file-prefix=${PFX}S${ID}_$1 --vdev=net_memif0,$MEMIF,socket=$SOCKDIR/$1/s.sock --vdev=droce0,ethdev=net_memif0,ip=$RIP_S,link_wait=$LINK_WAIT_MS"; }
eal_client() { echo "--lcores=${CLIENT_LCORES:-$CLIENT_LCORE} $EAL_COMMON --file-prefix=${PFX}C${ID}_$1 --vdev=net_memif0,$MEMIF,socket=$SOCKDIR/$1/c.sock --vdev=droce0,ethdev=net_memif0,ip=$RIP_C,link_wait=$LINK_WAIT_MS"; }

listening() { ss -ltnH 2>/dev/null | awk '{ print $4 }' | grep -qE ":$1\$"; }
