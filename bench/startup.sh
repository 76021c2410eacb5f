#!/usr/bin/env bash
# Start-up and real-command cost of jail against bare execution and bubblewrap with the same
# grants, measured side by side in one run (hyperfine runs them back to back, under the same
# load). Prints the medians and the ratios jail/bwrap.
#   bench/startup.sh [path/to/jail]       (needs: hyperfine bubblewrap git python3 jq)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine bwrap git python3 jq

# A medium repository: the Python standard library, committed under lib/ (not at the top, where
# it would shadow the modules `python3 -c 'import json'` imports from the working directory).
repo=$(mktemp -d /tmp/jail-bench-repo.XXXXXX)
trap 'rm -rf "$repo" "$out"' EXIT
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

out=$(mktemp)
bench() { # name, command line (hyperfine splits it shell-style)
	local name=$1 cmd=$2
	hyperfine -N --warmup 5 --runs "${RUNS:-60}" --export-json "$out" \
		-n bare "$cmd" -n bwrap "${bw[*]} $cmd" -n jail "$jail -- $cmd" >/dev/null
	jq -r --arg n "$name" '.results as $r | ($r[] | select(.command=="bwrap") | .median) as $b |
		$r[] | "\($n)\t\(.command)\t\(.median*1000 | .*100|round/100) ms\t\(.median/$b | .*100|round/100)x bwrap"' "$out"
}
printf 'benchmark\trunner\tmedian\tratio\n'
bench "true" /bin/true
bench "python3 import json" "/usr/bin/python3 -c 'import json'"
bench "git status" "git status --porcelain"
