#!/usr/bin/env bash
# The layering of issue 10, checked on the source tree ($1: its top):
#  - the facade (lib/) and the apps (app/) include no header of a driver:
#    they reach the PMD only through lib/rdev (droce_rdev_core.h, droce_rdev_pmd.h);
#  - the driver's objects embed no verbs object (struct ibv_qp, ibv_cq, ...):
#    it sees ibv_* types only as the interface passes them.
set -uo pipefail
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
fail=0

hdrs=$(cd "$top" && ls drivers/*/*/*.h | xargs -n1 basename | sort -u | grep -v '^rte_pmd_')
for h in $hdrs; do
	hits=$(cd "$top" && grep -rn --include='*.[ch]' "#include \"$h\"" lib app)
	if [ -n "$hits" ]; then
		echo "FAIL: a driver's private header $h is included outside drivers/:"
		echo "$hits"
		fail=1
	fi
done
hits=$(cd "$top" && grep -rnE 'struct ibv_(qp|cq|srq|pd|mr|ah|context|qp_ex|cq_ex) +[a-z_]+;' drivers/rdma)
if [ -n "$hits" ]; then
	echo "FAIL: the driver embeds verbs objects:"
	echo "$hits"
	fail=1
fi
[ $fail = 0 ] && echo "ok: lib/ and app/ see drivers only through lib/rdev; the driver embeds no ibv_* object"
exit $fail
