#!/usr/bin/env bash
# Installs what droce needs on Debian 12 (as root) and prepares DPDK's driver
# SDK headers, which Debian's libdpdk-dev does not ship, from Debian's source
# package of exactly the installed DPDK version. Idempotent; prints the SDK
# include directory on its last line.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
pkgs=(dpdk dpdk-dev libdpdk-dev libibverbs-dev librdmacm-dev rdma-core meson
      ninja-build python3-pyelftools pkg-config gcc dpkg-dev xz-utils iproute2
      ibverbs-utils rdmacm-utils perftest tshark python3-pyverbs)
# the guides: sphinx-build (meson -Ddocs=true, and the suite's 'guides' test)
pkgs+=(python3-sphinx)
# devtools/fuzz: clang, and its libFuzzer and sanitizer runtimes, which clang
# only recommends (and recommends are not installed)
pkgs+=(clang libclang-rt-14-dev)
# devtools/plot (and the test perf_plot): droce-perf's JSON drawn, headless
pkgs+=(python3-matplotlib)

# as root, or through sudo (only for what needs root: apt, /var/cache, /etc/apt)
as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo >/dev/null; then
		sudo "$@"
	else
		echo "setup: '$*' needs root, and there is no sudo: run this as root" >&2
		return 1
	fi
}

# one dpkg-query for all (one each took seconds on a loaded host, and
# devtools/test.sh runs this twice)
missing=()
declare -A have=()
while read -r name status; do
	if [[ $status == *"ok installed"* ]]; then have[$name]=1; fi
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${pkgs[@]}" 2>/dev/null)
for p in "${pkgs[@]}"; do
	[ -n "${have[$p]:-}" ] || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "setup: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	as_root apt-get update -q >&2
	as_root apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

ver=$(dpkg-query -W -f='${Version}' libdpdk-dev)
upver=${ver%%-*}
sdk=${DROCE_SDK_CACHE:-/var/cache/droce}/dpdk-sdk-$ver
hdrs=(drivers/bus/vdev/bus_vdev_driver.h lib/eal/include/bus_driver.h
      lib/eal/include/dev_driver.h lib/ethdev/ethdev_driver.h lib/ethdev/ethdev_vdev.h)
# net_memif's private headers (in net_memif/): droce takes the port's own
# control-channel lock around its bursts (drivers/rdma/roce/roce_port.c)
memif_hdrs=(drivers/net/memif/rte_eth_memif.h drivers/net/memif/memif.h)

if [ ! -f "$sdk/include/ethdev_vdev.h" ] || [ ! -f "$sdk/include/net_memif/rte_eth_memif.h" ]; then
	src=/etc/apt/sources.list.d/droce-deb-src.sources
	if ! apt-get source --print-uris -q "dpdk=$ver" >/dev/null 2>&1; then
		echo "setup: adding a deb-src entry ($src)" >&2
		for f in /etc/apt/sources.list.d/debian.sources; do
			[ -f "$f" ] && sed 's/^Types: deb$/Types: deb-src/' "$f"
		done | as_root tee "$src" >/dev/null
		if [ ! -s "$src" ]; then
			grep -h '^deb ' /etc/apt/sources.list 2>/dev/null | sed 's/^deb /deb-src /' |
				as_root tee /etc/apt/sources.list.d/droce-deb-src.list >/dev/null
		fi
		as_root apt-get update -q >&2
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "setup: fetching Debian's dpdk $ver source for the driver SDK headers" >&2
	(cd "$tmp" && chmod 755 . && apt-get source --download-only -q "dpdk=$ver" 2>&1 | grep -E '^(Fetched|E:)' >&2)
	orig=$(ls "$tmp"/dpdk_"$upver".orig.tar.* | head -n1)
	tar xf "$orig" -C "$tmp" --wildcards "${hdrs[@]/#/*/}" "${memif_hdrs[@]/#/*/}"
	dir=$(cd "$tmp" && ls -d dpdk-*/ | head -n1)
	as_root mkdir -p "$sdk/include/net_memif"
	for h in "${hdrs[@]}"; do as_root install -m 0644 "$tmp/$dir/$h" "$sdk/include/"; done
	for h in "${memif_hdrs[@]}"; do as_root install -m 0644 "$tmp/$dir/$h" "$sdk/include/net_memif/"; done
fi
echo "$sdk/include"
