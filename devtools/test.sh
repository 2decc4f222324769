#!/usr/bin/env bash
# Builds droce twice (normal, and with ASan+UBSan) and runs the whole test
# suite in both. Installs what is missing (devtools/setup.sh). As root, or
# as a user with sudo (it re-runs itself under sudo). The last line is
# "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# The multi-process and wire tests create network namespaces and veths: run
# as root, or re-run under sudo (keeping the DROCE_* settings) when there is one.
if [ "$(id -u)" != 0 ]; then
	if ! command -v sudo >/dev/null; then
		echo "test.sh: run as root (no sudo here)"
		echo "0 passed, 1 failed"
		exit 1
	fi
	keep=()
	for v in $(compgen -e | grep '^DROCE_'); do keep+=("$v=${!v}"); done
	exec sudo env "${keep[@]}" bash "$top/devtools/test.sh" "$@"
fi

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
# --- fuzzing (devtools/fuzz): each libFuzzer harness once, DROCE_FUZZ_TIME
# seconds (default 20 here: the CI's share of a 2-CPU machine; devtools/fuzz
# alone runs 30, longer runs by hand), in build-fuzz (clang, -O0: the
# quickest build), as many harnesses at once as there are CPUs (each
# single-threaded, on a CPU of its own for its whole time); each
# harness counts as one test, a failed build as one failure. Not when only
# part of the suite was asked for (arguments), nor with DROCE_SKIP_FUZZ=1.
if [ "${DROCE_SKIP_FUZZ:-0}" != 1 ] && ((${#TEST_ARGS[@]} == 0)); then
	echo "== fuzz (build-fuzz)"
	mkdir -p build-fuzz
	bash devtools/fuzz --time "${DROCE_FUZZ_TIME:-20}" --opt 0 --parallel "$(nproc)" 2>&1 |
		tee build-fuzz/fuzz-test.log
	p=$(grep -c '^fuzz_[a-z]*: PASS' build-fuzz/fuzz-test.log)
	f=$(grep -c '^fuzz_[a-z]*: FAIL' build-fuzz/fuzz-test.log)
	passed=$((passed + p))
	failed=$((failed + f + (p + f == 0 ? 1 : 0)))
fi
# --- end of fuzzing ---
# --- ThreadSanitizer (devtools/tsan --quick): the threaded test programs in
# both progress modes in build-tsan (-Dtsan=true); each run counts as one
# test. Not with arguments, nor with DROCE_SKIP_TSAN=1.
if [ "${DROCE_SKIP_TSAN:-0}" != 1 ] && ((${#TEST_ARGS[@]} == 0)); then
	echo "== tsan (build-tsan)"
	mkdir -p build-tsan
	bash devtools/tsan --quick 2>&1 | tee build-tsan/tsan-test.log
	p=$(grep -c '^tsan: ok ' build-tsan/tsan-test.log)
	f=$(grep -c '^tsan: FAIL ' build-tsan/tsan-test.log)
	passed=$((passed + p))
	failed=$((failed + f + (p + f == 0 ? 1 : 0)))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
