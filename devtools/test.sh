#!/usr/bin/env bash
# Builds droce twice (normal, and with ASan+UBSan) and runs the whole test
# suite in both. Installs what is missing (devtools/setup.sh). The last line
# is "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

sdk=$(bash devtools/setup.sh | tail -n1) || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
run_build() {	# dir, meson options...
	local dir=$1; shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Ddpdk_sdk_include="$sdk" "$@" >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; failed=$((failed + 1)); return; }
	fi
	if ! ninja -C "$dir" >"$dir.ninja.log" 2>&1; then
		tail -n 40 "$dir.ninja.log"
		failed=$((failed + 1))
		return
	fi
	echo "== meson test ($dir)"
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		meson test -C "$dir" --print-errorlogs --num-processes 1 "${TEST_ARGS[@]}"
	local log="$dir/meson-logs/testlog.json"
	if [ -f "$log" ]; then
		local p f
		p=$(grep -c '"result": "OK"' "$log")
		f=$(grep -Ec '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log")
		passed=$((passed + p))
		failed=$((failed + f))
	else
		failed=$((failed + 1))
	fi
}

TEST_ARGS=("$@")
run_build build
if [ "${DROCE_SKIP_ASAN:-0}" != 1 ]; then
	run_build build-asan -Dsanitize=true -Dbuildtype=debug
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
