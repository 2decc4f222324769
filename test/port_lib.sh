# Sourced by the test scripts that run more than one process, and by the
# capture tests (capture_setup and the capture_* checks, below).

# free_port: a TCP port that no socket on this host uses (listening,
# connected or in TIME_WAIT), picked at random, so that two scripts running
# at once, or a process a killed run left behind, do not take each other's
# port. It lies below the kernel's ephemeral range: a client that retries
# connect() to a port in that range can be given it as its own source port
# and connect to itself, and the server then finds its port in use.
free_port() {
	local p i lo=32768 span

	read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
	span=$((lo - 10000))
	[ "$span" -ge 1000 ] || span=20000
	for i in $(seq 1 200); do
		p=$((10000 + (RANDOM * 32768 + RANDOM) % span))
		if ! ss -Htan 2>/dev/null | awk '{ print $4 }' | grep -q ":$p\$"; then
			echo "$p"
			return 0
		fi
	done
	echo $((10000 + $$ % span))
}

# kill_tree <pid>...: SIGKILL each process and its children first (a
# `timeout` wrapper killed alone leaves the program it runs behind), then
# wait (at most 10 s) until they are gone or zombies: a process SIGKILLed
# is torn down later, and until then it still holds what it held (a
# net_shm side, a memif socket, a TCP port).
kill_tree() {
	local all= p i st

	_kill_tree_rec() {
		local p c
		for p in "$@"; do
			[ -n "$p" ] || continue
			for c in $(pgrep -P "$p" 2>/dev/null); do
				_kill_tree_rec "$c"
			done
			kill -KILL "$p" 2>/dev/null && all="$all $p"
		done
	}
	_kill_tree_rec "$@"
	for i in $(seq 1 200); do
		st=
		for p in $all; do
			[ -r "/proc/$p/stat" ] || continue
			# field 3 (after the ")" that ends the command name): Z once it has exited
			case $(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1) in
			Z|X|'') ;;
			*) st=alive ;;
			esac
		done
		[ -z "$st" ] && return 0
		sleep 0.05
	done
}

# capture_setup <name>: what the capture tests share. Skips (77) without
# tshark; WORK is a directory removed at exit (after CAPTURE_ATEXIT, a
# command the caller may set); ok/fail print a check's outcome, fail
# counts it; capture_end prints the verdict and exits with it.
capture_setup() {
	CAPTURE_NAME=$1
	command -v tshark >/dev/null || { echo "SKIP: tshark is missing"; exit 77; }
	WORK=$(mktemp -d)
	CAPTURE_ATEXIT=:
	trap 'eval "$CAPTURE_ATEXIT"; rm -rf "$WORK"' EXIT
	fails=0
	ok() { echo "ok: $*"; }
	fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
}

capture_end() {
	[ "$fails" = 0 ] && { echo "$CAPTURE_NAME: PASS"; exit 0; }
	echo "$CAPTURE_NAME: $fails failure(s)"
	exit 1
}

# capture_tshark <file>: TS, the tshark command that reads it with
# Wireshark's guesses at RoCE payloads (the heuristic dissectors of the
# protocols that run over InfiniBand) off: a payload of test bytes is not
# a malformed SMB Direct or NVMe frame
capture_tshark() {
	local names=(rpcrdma_infiniband iser_infiniband smb_direct_infiniband smcr_infiniband
		     sdp_infiniband lnet_ib eth_over_ib fc_infiniband nvme_rdma) h bad

	TS=(tshark -r "$1")
	for h in "${names[@]}"; do TS+=(--disable-heuristic "$h"); done
	# those this tshark does not have, it names ("No such protocol X, can't disable")
	bad=" $("${TS[@]}" -c 1 2>&1 >/dev/null |
		sed -n "s/.*No such protocol \(.*\), can't disable.*/\1/p" | tr '\n' ' ')"
	TS=(tshark -r "$1")
	for h in "${names[@]}"; do
		[[ $bad == *" $h "* ]] || TS+=(--disable-heuristic "$h")
	done
}

# tshark_counts <array> <tshark -r FILE [options]...> -- <filter>...: for
# each display filter, the number of frames it passes (what `tshark ... -Y
# <filter> | wc -l` prints), all from one reading of the file (tshark's
# io,stat tap, one interval over the whole capture): tshark takes a second or
# more to start. Sets <array>[<filter>] (an associative array); a filter
# with a comma (io,stat's separator) is left out, as all are if tshark fails.
tshark_counts() {
	local -n tc_out=$1
	local cmd=() f z=io,stat,0 fl=() i=0 c

	shift
	while [ "$1" != -- ]; do cmd+=("$1"); shift; done
	shift
	for f in "$@"; do
		[[ $f == *,* ]] && continue
		fl+=("$f")
		z="$z,$f"
	done
	[ ${#fl[@]} -gt 0 ] || return 0
	# the row "| 0.000 <> 9.000 | frames | bytes | frames | bytes ..."
	for c in $("${cmd[@]}" -q -z "$z" 2>/dev/null |
		   awk -v n=${#fl[@]} '/^\| *[0-9.]+ <> / {
			gsub(/\|/, " ")
			for (i = 0; i < n; i++) print $(4 + 2 * i)
			exit }'); do
		[ $i -lt ${#fl[@]} ] && [[ $c =~ ^[0-9]+$ ]] && tc_out[${fl[i]}]=$c
		i=$((i + 1))
	done
	# all of them or none: a row of another shape is not trusted
	if [ $i -ne ${#fl[@]} ]; then
		for f in "${fl[@]}"; do unset "tc_out[$f]"; done
	fi
}

# capture_check_clean: the file of TS reads, and holds no malformed frame
capture_check_clean() {
	local m

	# (one reading: tshark's status is the whole file's, filter or not)
	"${TS[@]}" -Y "_ws.malformed || _ws.expert.severity == error" >"$WORK/tshark.bad" \
		2>"$WORK/tshark.err" || { cat "$WORK/tshark.err"; fail "tshark cannot read the file"; }
	m=$(wc -l <"$WORK/tshark.bad")
	[ "$m" = 0 ] && ok "no malformed frame" ||
		fail "$m malformed frames: $("${TS[@]}" -Y _ws.malformed 2>/dev/null | head -n 3)"
}

# SYS_PY: Debian's python3. Not the first python3 in PATH: that may be a
# shim (pyenv's takes over a second to start, each time).
SYS_PY=/usr/bin/python3
[ -x "$SYS_PY" ] || SYS_PY=$(command -v python3)

# capture_check_icrc <n>: the RoCE frames of TS's file are <n>, each with
# its ICRC right (roce_icrc_check.py reads libpcap files)
capture_check_icrc() {
	local want=$1 r

	"${TS[@]}" -F pcap -w "$WORK/roce.pcap" -Y "udp.dstport == 4791" 2>/dev/null
	r=$("$SYS_PY" "$(dirname "${BASH_SOURCE[0]}")/roce_icrc_check.py" "$WORK/roce.pcap")
	set -- $r
	[ "${2:-1}" = 0 ] && [ "${1:-0}" -eq "$want" ] 2>/dev/null && ok "ICRC: $1 good" ||
		fail "ICRC: ${1:-?} good, ${2:-?} bad ${*:3}"
}

# huge_lend <n>: adds <n> 2 MiB pages to the kernel's hugepage pool, for
# this run only (as root); huge_return takes back as many as it added (not
# an old count written back: another run may lend pages meanwhile, and
# writing its count back would take them from under it). 0 if all <n> were
# added; otherwise none stay lent and HUGE_WHY says why.
HUGE_NR=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
HUGE_LENT=0
huge_lend() {
	local was now

	HUGE_WHY=
	if [ ! -e "$HUGE_NR" ]; then
		HUGE_WHY="the kernel has no 2 MiB hugepages ($HUGE_NR)"
	elif [ ! -w "$HUGE_NR" ] || [ "$(id -u)" != 0 ]; then
		HUGE_WHY="reserving hugepages needs root ($HUGE_NR)"
	else
		was=$(cat "$HUGE_NR")
		echo $((was + $1)) >"$HUGE_NR" 2>/dev/null
		now=$(cat "$HUGE_NR")
		HUGE_LENT=$((now > was ? now - was : 0))
		[ "$HUGE_LENT" -ge "$1" ] && return 0
		HUGE_WHY="the kernel gave $HUGE_LENT of $1 hugepages (memory: $(awk '/MemAvailable/ { print $2, $3 }' /proc/meminfo) available)"
		huge_return
	fi
	return 1
}

huge_return() {
	local now

	[ "$HUGE_LENT" -gt 0 ] || return 0
	now=$(cat "$HUGE_NR")
	echo $((now > HUGE_LENT ? now - HUGE_LENT : 0)) >"$HUGE_NR" 2>/dev/null
	HUGE_LENT=0
}
