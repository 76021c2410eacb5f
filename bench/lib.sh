# Shared by the bench scripts (source it): the jail binary under test, the tool check, and
# interleaved measuring rounds.

# bench_jail prints the absolute path of the jail binary: $1, or the one `make` builds.
bench_jail() {
	realpath "${1:-$(dirname "${BASH_SOURCE[0]}")/../bin/jail}"
}

# need exits with the install line unless every named tool is on PATH. bwrap comes from the
# bubblewrap package.
need() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null && continue
		echo "bench: $tool is missing (apt-get install -y ${*/bwrap/bubblewrap})" >&2
		exit 2
	done
}

# rounds DIR NAME COMMAND [NAME COMMAND...] measures the commands in ROUNDS hyperfine rounds of
# RUNS runs each, rotating which goes first, and leaves each round's JSON in DIR/round-N.json.
# hyperfine runs all of one command's runs before the next one's, so a change in machine load
# between them would show up as a difference; rounds spread it over all of them.
rounds() {
	local dir=$1 r i j
	shift
	local cmds=("$@") order
	rm -f "$dir"/round-*.json
	for r in $(seq "${ROUNDS:-10}"); do
		order=()
		for ((i = 0; i < ${#cmds[@]}; i += 2)); do
			j=$(((i + 2 * r) % ${#cmds[@]}))
			order+=(-n "${cmds[j]}" "${cmds[j + 1]}")
		done
		hyperfine -N --warmup 1 --runs "${RUNS:-3}" --export-json "$dir/round-$r.json" "${order[@]}" \
			>/dev/null 2>"$dir/hyperfine.log" || { cat "$dir/hyperfine.log" >&2; exit 1; }
	done
}

# httpserver DIR builds bench/httpserver (a loopback HTTP/1.1 server, Go's net/http) into DIR and
# starts it: its pid in $server, for the caller's trap to kill, its address in $addr.
httpserver() {
	local dir=$1
	(cd "$(dirname "${BASH_SOURCE[0]}")/.." && go build -o "$dir/httpserver" ./bench/httpserver)
	"$dir/httpserver" >"$dir/addr" &
	server=$!
	for _ in $(seq 50); do [ -s "$dir/addr" ] && break; sleep 0.1; done
	addr=$(cat "$dir/addr")
}

# python_repo DIR makes DIR (a directory that exists) a git repository of the Python standard
# library, committed under lib/ (not at the top, where it would shadow the modules
# `python3 -c 'import json'` imports from the working directory): 4,500 files or so.
python_repo() {
	mkdir "$1/lib"
	cp -r /usr/lib/python3*/. "$1/lib/" 2>/dev/null || true
	git -C "$1" init -q && git -C "$1" add -A && git -C "$1" -c user.name=b -c user.email=b@b commit -qm bench
}

# bwrap_typical DIR sets typical to a sandbox as bubblewrap is typically run (bwrap-typical): the
# system read-only, /proc, /dev, a private /tmp and home, DIR writable and the working directory.
bwrap_typical() {
	local l
	typical=(bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --ro-bind /etc /etc)
	for l in bin sbin lib lib64; do
		[ -L "/$l" ] && typical+=(--symlink "$(readlink "/$l")" "/$l")
	done
	typical+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$HOME" --bind "$1" "$1" --chdir "$1" --)
}

# pair DIR NAME A_NAME A_COMMAND B_NAME B_COMMAND measures two commands in interleaved rounds
# (ROUNDS, default 8) and prints one tab-separated line: NAME, A's and B's median ms, B/A at the
# median, at the minimum, and of the CPU time.
pair() {
	local dir=$1 name=$2 a=$3 b=$5
	ROUNDS=${ROUNDS:-8} rounds "$dir" "$a" "$4" "$b" "$6"
	jq -rs -L "$(dirname "${BASH_SOURCE[0]}")" --arg n "$name" --arg a "$a" --arg b "$b" 'include "pool"; pool |
		[$n, (.[$a] | median | ms), (.[$b] | median | ms),
		 ((.[$b] | median) / (.[$a] | median) | x), (.[$b].times[0] / .[$a].times[0] | x),
		 (.[$b].cpu / .[$a].cpu | x)] | @tsv' "$dir"/round-*.json
}

# load_check WHEN prints the machine's load average (1, 5, 15 minutes) and warns when other
# work makes the figures unreliable: the 1-minute average above half the CPUs (the benchmark
# itself keeps about one busy). Under load jail and bwrap queue for a CPU alike, but not equally:
# the one with more CPU time per start waits longer, so the ratios move too. Read figures taken
# under a warning as what they were, a loaded machine, and rerun on a quiet one to compare.
load_check() {
	local when=$1 load cpus own=""
	[ ${#busy_pids[@]} -eq 0 ] || own=", ${#busy_pids[@]} busy loops started by the benchmark"
	read -r load _ < /proc/loadavg
	cpus=$(nproc)
	echo "load average $when: $(cut -d' ' -f1-3 /proc/loadavg) ($cpus CPUs$own)"
	if awk -v l="$load" -v c="$cpus" 'BEGIN { exit !(l > c / 2) }'; then
		echo "bench: load average $load on $cpus CPUs $when: other work competes for the CPUs, figures are unreliable (compare ratios of interleaved rounds only)" >&2
	fi
}

# busy_loops N starts N shell loops that spin until the benchmark exits (LOAD=N in the scripts
# that call it): a repeatable load, for measuring how start-up degrades under one.
busy_loops() {
	local i
	busy_pids=()
	for ((i = 0; i < $1; i++)); do
		(exec sh -c 'while :; do :; done') &
		busy_pids+=($!)
	done
}

# end_busy_loops ends the loops busy_loops started, by their ids.
end_busy_loops() {
	[ ${#busy_pids[@]} -eq 0 ] || kill "${busy_pids[@]}" 2>/dev/null || true
	busy_pids=()
}
busy_pids=()

# build_starts DIR compiles starts.c (whole-tree CPU per start, parallel starts) into DIR/starts.
build_starts() {
	cc -O2 -o "$1/starts" "$(dirname "${BASH_SOURCE[0]}")/starts.c"
}

# Kernel trace events left enabled (even with tracing off) cost every system call and context
# switch here (~0.2 µs a syscall for raw_syscalls), and more of jail's than of bwrap's: say so.
trace_events=$( (cat /sys/kernel/tracing/set_event 2>/dev/null || true) | paste -sd' ')
if [ -n "$trace_events" ]; then
	echo "bench: kernel trace events are enabled ($trace_events): figures will be off; clear them with: echo > /sys/kernel/tracing/set_event" >&2
fi
