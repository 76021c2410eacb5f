#!/usr/bin/env bash
# Cost of the overlay workspace (--workspace overlay) against the bind workspace, measured side
# by side (interleaved hyperfine rounds, rotating which goes first, so a change in machine load
# hits both), over a git repository of FILES (10000) files in 100 directories:
#   git status, find    one jail run each (the overlay's set-up, its first lookups and the
#                       change set's bookkeeping included)
#   ... x5              five in one run (the filesystem's part: lookups through the overlay)
#   in a persistent sandbox, warm
#                       git status and find in sandboxes made once (jail create), their CPU
#                       time inside, after a first run: what the overlay costs once it is warm
#   jail diff           of a change set holding 100 changes in that tree (no sandbox: the host
#                       reads the upper layer against the tree)
# Prints per workload the medians, the ratio overlay / bind (issue 19's target: at most 1.05),
# its minimum and the CPU ratio; then jail diff's median (target: under 200 ms).
# ROUNDS (8) x RUNS (3) per command.
#   bench/workspace.sh [path/to/jail]       (needs: hyperfine git jq)
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine git jq

work=$(mktemp -d /tmp/jail-bench-workspace.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
export XDG_STATE_HOME="$work/state"
tree="$work/tree"
mkdir "$tree"
files=${FILES:-10000}
for ((d = 0; d < 100; d++)); do
	mkdir "$tree/d$d"
	for ((f = 0; f < files / 100; f++)); do
		printf 'file %d %d\nline two\nline three\n' "$d" "$f" >"$tree/d$d/f$f.txt"
	done
done
cd "$tree"
git init -q
git add -A
git -c user.name=bench -c user.email=bench@localhost commit -q -m tree
sleep 1 # past racy-git's window, so that no git status writes the index again
git status --porcelain >/dev/null
echo "tree: $(git ls-files | wc -l) files in $(find . -path ./.git -prune -o -type d -print | wc -l) directories"

workloads=(
	"git status|git status --porcelain"
	"find|find . -type f"
	"git status x5|sh -c 'for i in 1 2 3 4 5; do git status --porcelain; done'"
	"find x5|sh -c 'for i in 1 2 3 4 5; do find . -type f; done'"
)

printf 'workload\tbind ms\toverlay ms\toverlay/bind\t(min)\t(cpu)\n'
for w in "${workloads[@]}"; do
	cmd=${w#*|}
	pair "$work" "${w%%|*}" bind "$jail --workspace bind -- $cmd" overlay "$jail --workspace overlay -- $cmd"
done
# Persistent sandboxes (jail create --workspace bind / overlay), whose overlay is mounted once:
# the CPU time of each command inside (its user and system time, read from /proc around a loop
# of N), after a first run that warms the overlay's dentries and inodes; ROUNDS_WARM (3) rounds
# of bind then overlay.
export JAIL_RUNTIME_DIR="$work/run"
mkdir -m 700 "$JAIL_RUNTIME_DIR"
bind_sb=$("$jail" create --workspace bind)
overlay_sb=$("$jail" create --workspace overlay)
cpu='t() { awk "{print \$14+\$15+\$16+\$17}" /proc/$$/stat; }; $1 >/dev/null; t0=$(t)
for i in $(seq $2); do $1 >/dev/null; done; echo $((($(t) - t0) * 10000 / $2))'
printf 'in a persistent sandbox, warm\tbind cpu ms\toverlay cpu ms\toverlay/bind\n'
for w in "git status|git status --porcelain|30" "find|find . -type f|100"; do
	IFS='|' read -r name cmd n <<<"$w"
	b=0 o=0
	for r in $(seq "${ROUNDS_WARM:-3}"); do
		b=$((b + $("$jail" exec "$bind_sb" -- sh -c "$cpu" x "$cmd" "$n")))
		o=$((o + $("$jail" exec "$overlay_sb" -- sh -c "$cpu" x "$cmd" "$n")))
	done
	jq -rn --arg n "$name" --argjson b "$b" --argjson o "$o" --argjson r "${ROUNDS_WARM:-3}" \
		'[$n, ($b / $r / 1000 | . * 100 | round / 100), ($o / $r / 1000 | . * 100 | round / 100), ($o / $b * 1000 | round / 1000 | tostring + "x")] | @tsv'
done
"$jail" rm -f "$bind_sb" "$overlay_sb" 2>/dev/null
"$jail" discard "$overlay_sb" 2>/dev/null || true

if [ -n "$(ls -A "$XDG_STATE_HOME/jail/changes" 2>/dev/null)" ]; then
	echo "bench: a run left a change set (it wrote the tree): the figures above include that" >&2
fi

# A change set of 100 changes: 90 edits, 5 new files, 5 deletions, spread over the tree.
script='for d in $(seq 0 89); do echo edited >> d$d/f1.txt; done
for d in $(seq 90 94); do echo new > d$d/new.txt; done
for d in $(seq 95 99); do rm d$d/f2.txt; done'
"$jail" --workspace overlay -- sh -c "$script" 2>"$work/run.log"
id=$(sed -n 's/.*wait in change set \([0-9a-f]*\).*/\1/p' "$work/run.log")
[ -n "$id" ] || { cat "$work/run.log" >&2; exit 1; }
hyperfine -N --warmup 2 --runs "${RUNS_DIFF:-30}" --export-json "$work/diff.json" "$jail diff $id" >/dev/null
jq -r --arg n "$("$jail" diff "$id" | grep -c '^diff --git')" \
	'.results[0] | "jail diff (\($n) files changed): median \(.median * 1000 | . * 10 | round / 10) ms, min \(.min * 1000 | . * 10 | round / 10) ms"' "$work/diff.json"
"$jail" discard "$id" 2>/dev/null
