#!/usr/bin/env bash
# Cost of --explain on build-like work: the same jail run with and without --explain, measured
# side by side (interleaved hyperfine rounds, rotating which goes first, so a change in machine
# load hits both). --explain makes every write-intent open, mkdir, rename, unlink... and connect
# wait for jail's init to read and judge it, so file-creating work pays per file. Prints per
# workload the medians, the ratio explain / plain (it stays opt-in above 1.05) and the CPU ratio.
# ROUNDS (8) x RUNS (3) per command.
#   bench/explain.sh [path/to/jail]       (needs: hyperfine git jq tar)
#
# Workloads, in a project directory granted write (the agent profile):
#   tar x     unpack 3000 C headers from /usr/include (FILES to change)
#   git add   git init && git add -A of the same tree
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine git jq tar

work=$(mktemp -d /tmp/jail-bench-explain.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
proj="$work/proj"
mkdir "$proj"
(cd /usr/include && find . -type f | LC_ALL=C sort | sed -n "1,${FILES:-3000}p" | tar cf "$proj/src.tar" -T -)
echo "tree: $(tar tf "$proj/src.tar" | wc -l) files, $(du -h "$proj/src.tar" | cut -f1) (from /usr/include)"
cd "$proj"

workloads=(
	"tar x|rm -rf w && mkdir w && tar xf src.tar -C w"
	"git add|rm -rf w && mkdir w && tar xf src.tar -C w && cd w && git init -q && git add -A"
)

printf 'workload\tplain ms\texplain ms\texplain/plain\t(min)\t(cpu)\n'
for w in "${workloads[@]}"; do
	q=$(printf '%q' "${w#*|}")
	pair "$work" "${w%%|*}" plain "$jail -- sh -c $q" explain "$jail --explain -- sh -c $q"
done
