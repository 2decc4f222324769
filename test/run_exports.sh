#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Each shared library exports exactly the global symbols of its version
# script (lib/verbs/version.map for libdroce, drivers/**/version.map for the
# PMD plugins): nothing internal leaks, nothing listed is missing.
# Usage: run_exports.sh <library> <version.map> [<library> <version.map>...]
set -u
(($# >= 2 && $# % 2 == 0)) || { echo "usage: run_exports.sh <library> <version.map>..."; exit 1; }
fails=0
while (($#)); do
	lib=$1 map=$2
	shift 2
	# the names between "global:" and "local:", comments dropped
	want=$(sed 's|/\*.*\*/||g' "$map" |
		awk '/global:/ { g = 1; next } /local:/ { g = 0 } g && /;/ { gsub(/[ \t;]/, ""); print }' |
		LC_ALL=C sort)
	# the version node itself is an absolute (A) symbol
	have=$(nm -D --defined-only "$lib" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' |
		LC_ALL=C sort)
	extra=$(LC_ALL=C comm -13 <(echo "$want") <(echo "$have") | grep .)
	missing=$(LC_ALL=C comm -23 <(echo "$want") <(echo "$have") | grep .)
	echo "$(basename "$lib"): $(echo "$have" | grep -c .) symbols exported, $(echo "$want" | grep -c .) in $(basename "$(dirname "$map")")/$(basename "$map")"
	if [ -n "$extra" ]; then
		echo "FAIL: $(basename "$lib") exports what its version script does not list:"
		echo "$extra" | sed 's/^/    /'
		fails=$((fails + 1))
	fi
	if [ -n "$missing" ]; then
		echo "FAIL: $(basename "$lib") does not define what its version script lists:"
		echo "$missing" | sed 's/^/    /'
		fails=$((fails + 1))
	fi
done
[ $fails -eq 0 ] && echo PASS
