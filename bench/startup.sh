#!/usr/bin/env bash
# Start-up and real-command cost of jail against bare execution and bubblewrap, measured side by
# side in one run: interleaved hyperfine rounds (lib.sh), rotating which goes first, so that a
# change in the machine's load falls on all alike. bwrap builds the sandbox of jail's own plan,
# mount for mount (bwrap.jq); bwrap-basic only the five grants at its core (/usr, /etc, a
# private /tmp and home, the working directory), without the hidden files and protected paths.
# Prints the pooled medians and each one's ratio to both. ROUNDS (10) x RUNS (10) per command.
#   bench/startup.sh [path/to/jail]       (needs: hyperfine bubblewrap git python3 jq)
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine bwrap git python3 jq

# A medium repository: the Python standard library, committed under lib/ (not at the top, where
# it would shadow the modules `python3 -c 'import json'` imports from the working directory).
repo=$(mktemp -d /tmp/jail-bench-repo.XXXXXX) work=$(mktemp -d)
trap 'rm -rf "$repo" "$work"' EXIT
mkdir "$repo/lib"
cp -r /usr/lib/python3*/. "$repo/lib/" 2>/dev/null || true
git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" -c user.name=b -c user.email=b@b commit -qm bench
echo "repository: $(git -C "$repo" ls-files | wc -l) files"
cd "$repo"

# bubblewrap building the sandbox of jail's plan here (the agent profile): the same mounts in
# the same order (bwrap.jq). jail's placeholders for missing protected paths exist only while a
# run lasts, so bwrap binds the protected paths that exist (--ro-bind-try) and no more.
"$jail" -- true
mapfile -t bw < <("$jail" --dry-run -- true | jq -r -f "$bench/bwrap.jq")
bw=(bwrap "${bw[@]}")
echo "bwrap: ${#bw[@]} arguments from jail's plan ($(grep -c -- '^--' <(printf '%s\n' "${bw[@]}")) options)"
basic=(bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --ro-bind /etc /etc)
for l in bin sbin lib lib64; do
	[ -L "/$l" ] && basic+=(--symlink "$(readlink "/$l")" "/$l")
done
basic+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$HOME" --bind "$repo" "$repo" --chdir "$repo" --)

bench() { # name, command line (hyperfine splits it shell-style)
	local name=$1 cmd=$2
	RUNS=${RUNS:-10} rounds "$work" bare "$cmd" bwrap-basic "${basic[*]} $cmd" \
		bwrap "$(printf '%q ' "${bw[@]}")$cmd" jail "$jail -- $cmd"
	jq -rs -L "$bench" --arg n "$name" 'include "pool"; pool | (.bwrap | median) as $b |
		(.["bwrap-basic"] | median) as $basic | to_entries[] |
		"\($n)\t\(.key)\t\(.value | median | ms) ms\t\(.value | median / $b | x) bwrap\t\(.value | median / $basic | x) bwrap-basic"' \
		"$work"/round-*.json
}
printf 'benchmark\trunner\tmedian\tratios\n'
bench "true" /bin/true
bench "python3 import json" "/usr/bin/python3 -c 'import json'"
bench "git status" "git status --porcelain"
