#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced (through dropin_netns_lib.sh or dropin_memif_lib.sh) by the drop-in
# tests that run a server and a client process: what does not depend on how
# the two are joined.
#
# The caller sets ME (its name, for messages), PFX (two letters naming its
# EAL file prefixes and topology objects) and DROPIN (the drop-in directory,
# absolute). It may set SERVER_LCORES (default 0) and CLIENT_LCORES (default:
# lcore 1 when there are two CPUs). The topology library defines
# eal_server/eal_client <n> (DROCE_EAL of run n), listening <port>, KIP_S
# (the address the client connects to), RIP_S/RIP_C (the droce IPs), the
# command prefixes IN_S/IN_C (arrays) that run a process on the server/client
# side, and may define topo_cleanup and topo_run_start <n>/topo_run_end
# (around run n; start fails when the run cannot be).

# A sanitized build links the drop-in with ASan: load its runtime first.
DROPIN_ENV=(env LD_LIBRARY_PATH="$DROPIN")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	DROPIN_ENV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi

ID=$$
. "$(dirname "${BASH_SOURCE[0]}")/port_lib.sh"
PORT=$(free_port)
LOGDIR=$(mktemp -d /tmp/droce-$PFX-$ID.XXXXXX)
SPID= CPID=
if [ "$(nproc)" -ge 2 ]; then CLIENT_LCORE=${CLIENT_LCORE:-1}; else CLIENT_LCORE=0; fi
SERVER_LCORES=${SERVER_LCORES:-0}
EAL_COMMON="--no-huge -m 256 --no-pci --no-telemetry"

topo_cleanup() { :; }
topo_run_start() { :; }
topo_run_end() { :; }
cleanup() {
	for p in $SPID $CPID ${TPID:-}; do
		kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	topo_cleanup
	rm -rf /var/run/dpdk/${PFX}S${ID}_* /var/run/dpdk/${PFX}C${ID}_* "$LOGDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "$ME: $*"; exit 1; }

show() {
	grep -v -e '^EAL: Detected' -e '^EAL: Multi-process socket' -e '^EAL: Selected IOVA' \
		-e '^EAL: Physical addresses are unavailable' -e '^EAL: No free' "$1" | sed "s/^/    $2 | /"
}
