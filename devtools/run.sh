#!/usr/bin/env bash
# Builds droce and runs the main job on its embedded default: two droce
# devices joined by a net_ring pair in one process, no NIC, no hugepages.
# Arguments are passed to droce-perf. As root, or as a user: droce-perf
# needs no privileges, and setup.sh uses sudo only to install what is missing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sdk=$(bash devtools/setup.sh | tail -n1)
[ -f build/build.ninja ] || meson setup build -Ddpdk_sdk_include="$sdk" >/dev/null
ninja -C build >/dev/null
exec build/app/droce-perf "$@"
