#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rdma-core's own pyverbs test suite (tests/run_tests.py), as Debian's
# python3-pyverbs ships it in /usr/share/doc/rdma-core/tests, run unmodified
# over the drop-in libibverbs: one droce device on a net_ring port that
# loops back to itself. The generic modules only (the mlx5 and efa ones
# need that hardware). With RCT_SYSFS=1, as root, under devtools/droce-sysfs:
# test_rdmacm's players are processes forked from the one that opened the
# device, which share it (drivers/rdma/roce/roce_share.c).
#
# Fails on any test failure or error, and when a test named in the pass
# list (test/rdmacore/pass.txt: what passes today, as module.Class.test)
# does not pass, so that a
# test that passed cannot silently turn into a skip. Skips are listed by
# reason at the end.
#
# Usage: run_rdmacore_tests.sh <dropin dir> <pass list> [module ...]
# Exit 0 if all is well, 77 if python3-pyverbs (and its tests) are missing.
set -u

DROPIN=${1:?usage: run_rdmacore_tests.sh <dropin dir> <pass list> [module ...]}
PASS=${2:?usage: run_rdmacore_tests.sh <dropin dir> <pass list> [module ...]}
shift 2
MODULES=("$@")
((${#MODULES[@]})) || MODULES=(test_addr test_atomic test_cq test_cq_events test_cqex test_device
	test_fork test_mr test_odp test_parent_domain test_pd test_qp test_qpex test_rdmacm
	test_relaxed_ordering test_shared_pd test_tag_matching)
SRC=/usr/share/doc/rdma-core/tests
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
[ -n "$PY" ] && "$PY" -c "import pyverbs" 2>/dev/null && [ -f "$SRC/run_tests.py" ] ||
	{ echo "SKIP: python3-pyverbs (with rdma-core's tests) is missing"; exit 77; }
[ -e "$DROPIN/libibverbs.so.1" ] || { echo "FAIL: $DROPIN/libibverbs.so.1 was not built"; exit 1; }
DROPIN=$(cd "$DROPIN" && pwd)

. "$(dirname "$0")/port_lib.sh"
WORK=$(mktemp -d /tmp/droce-rdmacore.XXXXXX)
PREFIX=rct$$
cleanup() {
	[ -n "${RCT_KEEP:-}" ] || rm -rf "$WORK"; rm -rf "/var/run/dpdk/$PREFIX"
	huge_return
}
trap cleanup EXIT

# the suite as shipped: some files are gzipped in the package
cp -r "$SRC" "$WORK/tests"
gunzip -f "$WORK"/tests/*.gz

# The huge-page cases (an MR, a parent domain's allocator on a huge page)
# need 2 MiB pages in the pool; droce itself does not. Lend it a few, as
# root, for this run only (without, those cases skip).
huge_lend 8 || echo "note: no hugepages lent: $HUGE_WHY"

ENVV=(env LD_LIBRARY_PATH="$DROPIN")
SAN_RT=$(ldd "$DROPIN/libibverbs.so.1" 2>/dev/null | awk '/libasan\.so/ { print $3 }')
if [ -n "$SAN_RT" ]; then
	ENVV+=(LD_PRELOAD="$SAN_RT" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi
EAL="-l 0 --no-huge -m 512 --no-pci --no-telemetry --file-prefix=$PREFIX \
--vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1"

# RCT_SYSFS=1: under devtools/droce-sysfs, so that tests/base.py finds the
# device's IP through /sys/class/infiniband/droce0/device/net (test_rdmacm
# skips without it, and then its cases in the pass list do not count);
# droce-sysfs needs root
WRAP=()
NO_RDMACM=0
if [ "${RCT_SYSFS:-0}" = 1 ] && [ "$(id -u)" = 0 ]; then
	WRAP=("$(cd "$(dirname "$0")/.." && pwd)/devtools/droce-sysfs" --net=private)
elif [ "${RCT_SYSFS:-0}" = 1 ]; then
	echo "note: not root: no droce-sysfs, test_rdmacm skips"
	NO_RDMACM=1
else
	NO_RDMACM=1
fi

T0=$(date +%s.%N)
(cd "$WORK/tests" && "${ENVV[@]}" DROCE_EAL="$EAL" timeout -k 5 ${RCT_TIMEOUT:-240} \
	"${WRAP[@]}" "$PY" run_tests.py -v "${MODULES[@]}") >"$WORK/out.txt" 2>&1
rc=$?
grep -v -e '^EAL: ' "$WORK/out.txt" | tail -n 5

# unittest -v: "name (module.Class.name) ... ok|skipped 'why'|FAIL|ERROR",
# the docstring's first line sometimes between the name and the "..."
# (what a test prints, EAL's lines among it, may come between its "..." and
# its result)
status=$(awk '
	/^test_[A-Za-z0-9_]+ \(tests\./ {
		name = $2; gsub(/[()]/, "", name); sub(/^tests\./, "", name); wait = 0
	}
	name != "" && wait && /^(ok|skipped|FAIL|ERROR|expected failure|unexpected success)/ {
		print name "\t" $0; name = ""; wait = 0; next
	}
	name != "" && / \.\.\.( |$)/ {
		s = $0; sub(/.* \.\.\.( |$)/, "", s)
		if (s !~ /^(ok|skipped|FAIL|ERROR|expected failure|unexpected success)/) { wait = 1; next }
		print name "\t" s; name = ""
	}' "$WORK/out.txt")
npass=$(grep -c $'\tok$' <<<"$status")
nskip=$(grep -c $'\tskipped' <<<"$status")
nbad=$(grep -Ec $'\t(FAIL|ERROR)' <<<"$status")
bad=0
echo "run_rdmacore_tests: $npass passed, $nskip skipped, $nbad failed or errors (exit $rc)"
if ((nbad)); then
	grep -E $'\t(FAIL|ERROR)' <<<"$status" | sed 's/^/  failed: /'
	# what each failed test printed while it ran (test_rdmacm's players
	# print "Player passive|active got: <exception>" and exit 2; droce's
	# own log lines come here too)
	for t in $(grep -E $'\t(FAIL|ERROR)' <<<"$status" | cut -f1); do
		echo "  printed by ${t##*.}:"
		awk -v t="${t##*.}" '
			/^test_[A-Za-z0-9_]+ \(tests\./ { on = index($0, t " (tests.") == 1 }
			on && n < 60 && !/^EAL: / { print "    " $0; n++ }' "$WORK/out.txt"
	done
	sed -n '/^=\{20,\}$/,$p' "$WORK/out.txt" | grep -v '^EAL: ' | head -n 150
	bad=1
fi
# (of the modules run)
while read -r t; do
	case $t in ''|'#'*) continue ;; esac
	[[ " ${MODULES[*]} " == *" ${t%%.*} "* ]] || continue
	[[ $NO_RDMACM = 1 && $t == test_rdmacm.* ]] && continue
	if ! grep -q "^$t"$'\tok$' <<<"$status"; then
		echo "  in the pass list, did not pass: $t ($(grep "^$t"$'\t' <<<"$status" | cut -f2))"
		bad=1
	fi
done <"$PASS"
echo "skips by reason:"
grep $'\tskipped' <<<"$status" | cut -f2 | sort | uniq -c | sort -rn
printf 'run_rdmacore_tests: %.1f s\n' "$(awk "BEGIN { print $(date +%s.%N) - $T0 }")"
[ "$rc" = 0 ] && [ "$bad" = 0 ]
