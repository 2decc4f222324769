#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sourced by the drop-in tests that run a server and a client process on one
# host joined directly by a net_shm link (drivers/net/shm): both give the
# same link= name, neither is a server, either may start first, and each
# process's port is up from the start. Nothing else runs: two processes, one
# busy thread each.
#
#   server: net_shm0,link=<run> <- /dev/shm/droce-shm.<run> -> net_shm0,link=<run>: client
#
# droce IPs $NET.11 (server) and $NET.12 (client); TCP control over
# 127.0.0.1. Each run gets a link name of its own; a name that is reused
# (SHM_LINK) shows that a link its earlier holders left serves the next run.
# The caller sets what dropin_lib.sh asks for and NET.

. "$(dirname "${BASH_SOURCE[0]}")/dropin_lib.sh"

KIP_S=127.0.0.1
RIP_S=$NET.11 RIP_C=$NET.12
IN_S=() IN_C=()

link_of() { echo "${SHM_LINK:-$PFX$ID-$1}"; }
topo_run_end() { [ -n "${SHM_LINK:-}" ] || rm -f "/dev/shm/droce-shm.$(link_of "$SW_RUN")"; }
topo_run_start() { SW_RUN=$1; }
topo_cleanup() { rm -f /dev/shm/droce-shm.$PFX$ID-*; }
echo "$ME: droce $RIP_S <- net_shm link -> droce $RIP_C, two processes, nothing between them"

eal_server() { echo "--lcores=$SERVER_LCORES $EAL_COMMON --file-prefix=${PFX}S${ID}_$1 --vdev=net_shm0,link=$(link_of "$1") --vdev=droce0,ethdev=net_shm0,ip=$RIP_S"; }
eal_client() { echo "--lcores=${CLIENT_LCORES:-$CLIENT_LCORE} $EAL_COMMON --file-prefix=${PFX}C${ID}_$1 --vdev=net_shm0,link=$(link_of "$1") --vdev=droce0,ethdev=net_shm0,ip=$RIP_C"; }

listening() { ss -ltnH 2>/dev/null | awk '{ print $4 }' | grep -qE ":$1\$"; }
