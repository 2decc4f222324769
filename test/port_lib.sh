# Sourced by the multi-process test scripts.

# free_port: a TCP port in 20000..59999 that no socket on this host uses
# (listening, connected or in TIME_WAIT), picked at random, so that two
# scripts running at once, or a process a killed run left behind, do not
# take each other's port.
free_port() {
	local p i

	for i in $(seq 1 200); do
		p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		if ! ss -Htan 2>/dev/null | awk '{ print $4 }' | grep -q ":$p\$"; then
			echo "$p"
			return 0
		fi
	done
	echo $((20000 + $$ % 40000))
}

# kill_tree <pid>...: SIGKILL each process and its children first (a
# `timeout` wrapper killed alone leaves the program it runs behind).
kill_tree() {
	local p c

	for p in "$@"; do
		[ -n "$p" ] || continue
		for c in $(pgrep -P "$p" 2>/dev/null); do
			kill_tree "$c"
		done
		kill -KILL "$p" 2>/dev/null
	done
}
