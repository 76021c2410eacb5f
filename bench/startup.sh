#!/usr/bin/env bash
# Start-up and real-command cost of jail against bare execution and bubblewrap with the same
# grants, measured side by side in one run: interleaved hyperfine rounds (lib.sh), rotating which
# goes first, so that a change in the machine's load falls on all three alike. Prints the pooled
# medians and the ratios jail/bwrap. ROUNDS (10) x RUNS (10) per command.
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

# bubblewrap with the grants of jail's agent profile.
bw=(bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --ro-bind /etc /etc)
for l in bin sbin lib lib64; do
	[ -L "/$l" ] && bw+=(--symlink "$(readlink "/$l")" "/$l")
done
bw+=(--proc /proc --dev /dev --tmpfs /tmp --tmpfs "$HOME" --bind "$repo" "$repo" --chdir "$repo" --)

bench() { # name, command line (hyperfine splits it shell-style)
	local name=$1 cmd=$2
	RUNS=${RUNS:-10} rounds "$work" bare "$cmd" bwrap "${bw[*]} $cmd" jail "$jail -- $cmd"
	jq -rs -L "$bench" --arg n "$name" 'include "pool"; pool | (.bwrap | median) as $b |
		to_entries[] | "\($n)\t\(.key)\t\(.value | median | ms) ms\t\(.value | median / $b | x) bwrap"' "$work"/round-*.json
}
printf 'benchmark\trunner\tmedian\tratio\n'
bench "true" /bin/true
bench "python3 import json" "/usr/bin/python3 -c 'import json'"
bench "git status" "git status --porcelain"
