# Sourced by the multi-process test scripts.

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
