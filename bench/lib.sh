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

# Kernel trace events left enabled (even with tracing off) cost every system call and context
# switch here (~0.2 µs a syscall for raw_syscalls), and more of jail's than of bwrap's: say so.
trace_events=$( (cat /sys/kernel/tracing/set_event 2>/dev/null || true) | paste -sd' ')
if [ -n "$trace_events" ]; then
	echo "bench: kernel trace events are enabled ($trace_events): figures will be off; clear them with: echo > /sys/kernel/tracing/set_event" >&2
fi
