#!/usr/bin/env bash
# The droce PMD, built as a plugin, loads into Debian's unmodified dpdk-testpmd
# with -d, probes on a net_ring port and owns it (testpmd leaves it alone).
# net_impair, as a plugin too, wraps a testpmd port and drops frames.
# $1: path of librte_rdma_roce.so, $2 (optional): path of librte_net_impair.so
set -u
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd not installed"; exit 77; }
# EAL refuses a plugin if any directory on its path is world-writable (as /tmp
# is, where a checkout may live): load a copy from a private directory.
dir=""
for base in /run /var/cache "$HOME"; do
	[ -d "$base" ] && [ -w "$base" ] && [ $((0$(stat -c %a "$base") & 2)) -eq 0 ] &&
		dir=$(mktemp -d -p "$base" droce-plugin.XXXXXX 2>/dev/null) && break
done
[ -n "$dir" ] || { echo "no private directory for the plugin"; exit 77; }
# ...and testpmd's EAL files, which DPDK leaves in /var/run/dpdk (3 MB each)
trap 'rm -rf "$dir" /var/run/dpdk/droce-tp*-$$' EXIT
chmod 755 "$dir"
cp "$1" "$dir/" && plugin=$dir/$(basename "$1")
impair=""
if [ -n "${2:-}" ]; then
	cp "$2" "$dir/" && impair=$dir/$(basename "$2")
fi
out=$( (echo "show port summary all"; sleep 1; echo quit) |
	timeout 60 dpdk-testpmd -d "$plugin" --no-huge -m 256 --no-pci --no-telemetry \
		--file-prefix=droce-tp-$$ --log-level=pmd.rdma.roce:info \
		--vdev=net_ring0 --vdev=net_ring1 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1 \
		-- -i --total-num-mbufs=4096 2>&1)
rc=0
echo "$out" | grep -q "droce0 on net_ring0 (port 0): ip 10.0.0.1" ||
	{ echo "FAIL: droce0 did not probe"; rc=1; }
echo "$out" | grep -q "Number of available ports: 2" ||
	{ echo "FAIL: testpmd should see net_ring1 and droce0's own port (droce owns net_ring0)"; rc=1; }
echo "$out" | grep -Eq "^1 +[0-9A-F:]+ +net_ring1" ||
	{ echo "FAIL: net_ring1 missing from testpmd's port list"; rc=1; }
echo "$out" | grep -Eq "^2 +[0-9A-F:]+ +droce0 " ||
	{ echo "FAIL: droce0's own ethdev port missing from testpmd's port list"; rc=1; }
# ethport=0: the device registers no port of its own
out=$( (echo "show port summary all"; sleep 1; echo quit) |
	timeout 60 dpdk-testpmd -d "$plugin" --no-huge -m 256 --no-pci --no-telemetry \
		--file-prefix=droce-tpe-$$ --vdev=net_ring0 --vdev=net_ring1 \
		--vdev=droce0,ethdev=net_ring0,ip=10.0.0.1,ethport=0 \
		-- -i --total-num-mbufs=4096 2>&1)
echo "$out" | grep -q "Number of available ports: 1" ||
	{ echo "FAIL: with ethport=0 testpmd should see only net_ring1"; rc=1; }
# a bad devarg fails the probe with a line naming it
bad=$(timeout 60 dpdk-testpmd -d "$plugin" --no-huge -m 256 --no-pci --no-telemetry \
	--file-prefix=droce-tpb-$$ --vdev=net_ring0 --vdev=droce0,ethdev=net_ring0,ip=10.0.0.1,mtu=abc \
	-- -i --total-num-mbufs=4096 </dev/null 2>&1)
echo "$bad" | grep -q "invalid value for argument 'mtu'" ||
	{ echo "FAIL: bad mtu devarg not reported"; rc=1; }
bad=$(timeout 60 dpdk-testpmd -d "$plugin" --no-huge -m 256 --no-pci --no-telemetry \
	--file-prefix=droce-tpc-$$ --vdev=net_ring0 --vdev=droce0,ip=10.0.0.1 \
	-- -i --total-num-mbufs=4096 </dev/null 2>&1)
echo "$bad" | grep -q "missing required argument 'ethdev'" ||
	{ echo "FAIL: missing ethdev devarg not reported"; rc=1; }
# the fault injector is usable from testpmd too: it wraps a port and counts
# dpdk-testpmd forwards on droce0's own port: net_ring0 loops to itself, so
# the frames tx_first sends there (not RoCE) come back to the port, and io
# forwarding sends them again; the device counts them both ways
out=$( (echo "start tx_first"; sleep 1; echo "stop"; echo "show port xstats 1"; sleep 1; echo quit) |
	timeout 60 dpdk-testpmd -d "$plugin" --no-huge -m 256 --no-pci --no-telemetry \
		--file-prefix=droce-tpf-$$ -l 0-1 --vdev=net_ring0 \
		--vdev=droce0,ethdev=net_ring0,ip=10.0.0.1,lcore=inline \
		-- -i --total-num-mbufs=4096 2>&1)
fr=$(echo "$out" | sed -n 's/^ *rx_ethdev: *\([0-9]*\).*/\1/p' | head -n1)
ft=$(echo "$out" | sed -n 's/^ *tx_ethdev: *\([0-9]*\).*/\1/p' | head -n1)
[ -n "$fr" ] && [ "$fr" -gt 32 ] && [ -n "$ft" ] && [ "$ft" -gt 32 ] ||
	{ echo "FAIL: testpmd forwarded nothing through droce0's port (rx_ethdev ${fr:-none}, tx_ethdev ${ft:-none})"; rc=1; }
if [ -n "$impair" ]; then
	out=$( (echo "start tx_first"; sleep 1; echo "stop"; echo "show port xstats 1"; sleep 1; echo quit) |
		timeout 60 dpdk-testpmd -d "$impair" --no-huge -m 256 --no-pci --no-telemetry \
			--file-prefix=droce-tpi-$$ --vdev=net_ring0 \
			--vdev=net_impair0,ethdev=net_ring0,drop=0.5,seed=3 \
			-- -i --total-num-mbufs=4096 2>&1)
	d=$(echo "$out" | sed -n 's/^ *impair_dropped: *\([0-9]*\).*/\1/p' | head -n1)
	[ -n "$d" ] && [ "$d" -gt 0 ] ||
		{ echo "FAIL: net_impair in testpmd dropped nothing (xstats: ${d:-none})"; rc=1; }
fi
[ $rc = 0 ] && echo "ok: plugin probes in dpdk-testpmd, owns its port, adds its own (not with ethport=0; ${fr:-?} frames forwarded through it), rejects bad devargs; net_impair drops ${d:-?} frames in testpmd"
exit $rc
