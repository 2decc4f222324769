#!/usr/bin/env bash
# Builds the guides (doc/guides) to HTML with Debian's sphinx-build, warnings
# as errors (-W), into a temporary directory: any warning (a broken
# reference, a malformed table, a file left out of the toctree) fails.
# Exit 77 (skipped) when sphinx-build is missing and cannot be installed
# (devtools/setup.sh installs python3-sphinx).
# Usage: run_guides.sh <doc/guides directory>
set -uo pipefail
src=${1:?usage: run_guides.sh <doc/guides directory>}

if ! command -v sphinx-build >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			python3-sphinx >/dev/null 2>&1
	fi
	if ! command -v sphinx-build >/dev/null; then
		echo "SKIP: no sphinx-build (apt-get install python3-sphinx)"
		exit 77
	fi
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# -E: read every source again; -n: nitpicky is not used, references to
# documents and sections are checked anyway (:doc:, :ref:)
if ! sphinx-build -W --keep-going -E -q -b html -d "$out/doctrees" "$src" "$out/html" \
	>"$out/log" 2>&1; then
	cat "$out/log"
	echo "FAIL: sphinx-build -W reported warnings or errors"
	exit 1
fi
[ -s "$out/log" ] && cat "$out/log"
n=$(find "$out/html" -maxdepth 1 -name '*.html' | wc -l)
for f in index getting_started architecture verbs wire user developer; do
	[ -s "$out/html/$f.html" ] || { echo "FAIL: $f.html not built"; exit 1; }
done
echo "ok: $n pages, no warning"
