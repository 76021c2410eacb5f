#!/usr/bin/env bash
# Start-up and real-command cost of jail against bare execution and bubblewrap, measured side by
# side in one run: interleaved rounds (lib.sh), rotating which goes first, so that a change in the
# machine's load falls on all alike. Two bubblewraps: bwrap builds the sandbox of jail's own plan,
# mount for mount (bwrap.jq); bwrap-typical is bwrap as users typically write it: /usr and /etc
# read-only with the merged-/usr links, /proc, /dev, a private /tmp and home, the working
# directory, --unshare-all (no hidden files, no protected paths). Three parts:
#   1. wall time: hyperfine, ROUNDS (10) x RUNS (10) per command, pooled medians and each one's
#      ratio to both bwraps;
#   2. CPU time per start of /bin/true, of the whole process tree (starts.c): hyperfine's
#      user+system counts only what the launcher waited for, and bwrap's outer process never
#      waits for its sandbox's pid 1 or the command;
#   3. starts per second with 1, 2, 4 and 8 started at once (PARALLEL), SROUNDS (5) rounds of
#      10 x P starts each.
# The load average is printed before each part, with a warning when other work makes the figures
# unreliable; LOAD=N adds N busy loops for the whole run, to measure start-up under a load.
#   bench/startup.sh [path/to/jail]       (needs: hyperfine bubblewrap git python3 jq cc)
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine bwrap git python3 jq cc

# A medium repository: the Python standard library (python_repo).
repo=$(mktemp -d /tmp/jail-bench-repo.XXXXXX) work=$(mktemp -d)
trap 'end_busy_loops; rm -rf "$repo" "$work"' EXIT
build_starts "$work"
python_repo "$repo"
echo "repository: $(git -C "$repo" ls-files | wc -l) files"
cd "$repo"

# bubblewrap building the sandbox of jail's plan here (the agent profile): the same mounts in
# the same order (bwrap.jq). jail's placeholders for missing protected paths exist only while a
# run lasts, so bwrap binds the protected paths that exist (--ro-bind-try) and no more.
"$jail" -- true
mapfile -t bw < <("$jail" --dry-run -- true | jq -r -f "$bench/bwrap.jq")
bw=(bwrap "${bw[@]}")
echo "bwrap: ${#bw[@]} arguments from jail's plan ($(grep -c -- '^--' <(printf '%s\n' "${bw[@]}")) options)"
bwrap_typical "$repo"

bench() { # name, command line (hyperfine splits it shell-style)
	local name=$1 cmd=$2
	RUNS=${RUNS:-10} rounds "$work" bare "$cmd" bwrap-typical "${typical[*]} $cmd" \
		bwrap "$(printf '%q ' "${bw[@]}")$cmd" jail "$jail -- $cmd"
	jq -rs -L "$bench" --arg n "$name" 'include "pool"; pool | (.bwrap | median) as $b |
		(.["bwrap-typical"] | median) as $t | to_entries[] |
		"\($n)\t\(.key)\t\(.value | median | ms) ms\t\(.value | median / $b | x) bwrap\t\(.value | median / $t | x) bwrap-typical"' \
		"$work"/round-*.json
}
[ "${LOAD:-0}" -gt 0 ] && busy_loops "$LOAD" && echo "load: $LOAD busy loops for the whole run"
load_check "before the wall times"
printf 'benchmark\trunner\tmedian\tratios\n'
bench "true" /bin/true
bench "python3 import json" "/usr/bin/python3 -c 'import json'"
bench "git status" "git status --porcelain"

# starts P prints starts/s, CPU ms per start and (P = 1) the median wall ms of each runner, as
# starts.c does, for `/bin/true`.
starts() {
	"$work/starts" "${SROUNDS:-5}" "$1" $((10 * $1)) bwrap-typical "${typical[@]}" /bin/true :: \
		bwrap "${bw[@]}" /bin/true :: jail "$jail" -- /bin/true
}
load_check "before the starts"
printf '\nparallel\trunner\tstarts/s\tCPU ms/start\twall ms (P=1)\tjail: starts/s, CPU vs bwrap; vs bwrap-typical\n'
for p in ${PARALLEL:-1 2 4 8}; do
	starts "$p" | awk -F'\t' -v p="$p" '{ rate[$1] = $2; cpu[$1] = $3; line[NR] = $0; name[NR] = $1 }
		END {
			for (i = 1; i <= NR; i++) {
				extra = ""
				if (name[i] == "jail")
					extra = sprintf("%.2fx, %.2fx; %.2fx, %.2fx", rate["jail"] / rate["bwrap"], cpu["jail"] / cpu["bwrap"],
						rate["jail"] / rate["bwrap-typical"], cpu["jail"] / cpu["bwrap-typical"])
				print p "\t" line[i] "\t" extra
			}
		}'
done
load_check "at the end"
