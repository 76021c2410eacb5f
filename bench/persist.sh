#!/usr/bin/env bash
# Persistent sandboxes against one-shot runs, side by side in one run (docs/performance.md):
#   1. `jail exec ID -- /bin/true` against `jail -- /bin/true` (interleaved hyperfine rounds);
#   2. `jail create` against `jail -- /bin/true`, and `jail rm` (rounds too; each create's and
#      rm's sandbox made or removed in an untimed --prepare);
#   3. the host memory of idle sandboxes (network none): the PSS of every process of theirs,
#      keeper, init and spawner, with 1 and with COUNT (200) of them alive;
#   4. COUNT sandboxes at once: created, each answering an exec, removed, and what is left after:
#      processes, files and mounts.
# ROUNDS (10) x RUNS (10) per command in 1 and 2.
#   bench/persist.sh [path/to/jail]       (needs: hyperfine jq python3)
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine jq python3
count=${COUNT:-200}

work=$(mktemp -d /tmp/jail-bench-persist.XXXXXX)
# The runtime directory on a tmpfs, as $XDG_RUNTIME_DIR is where a session has one.
export JAIL_RUNTIME_DIR
JAIL_RUNTIME_DIR=$(mktemp -d "$([ -d /dev/shm ] && echo /dev/shm || echo /tmp)/jr-bench.XXXXXX")
cleanup() {
	"$jail" ls --json 2>/dev/null | jq -r '.sandboxes[].id' | xargs -r -n 50 "$jail" rm -f >/dev/null 2>&1 || true
	rm -rf "$work" "$JAIL_RUNTIME_DIR"
}
trap cleanup EXIT
cd "$work"
"$jail" -- true # the protected paths' placeholders, made once

# pooled prints the pooled median of each command of the rounds in $work, and its ratio to the
# run's (jq: pool.jq).
pooled() {
	jq -rs -L "$bench" 'include "pool"; pool | (.run | median) as $run | to_entries[] |
		"\(.key)\t\(.value | median | ms) ms\t\(.value | median / $run | x) run\tcpu \(.value.cpu * 1000 | . * 10 | round / 10) ms"' \
		"$work"/round-*.json
}

echo "== 1. exec against a run"
id=$("$jail" create)
RUNS=${RUNS:-10} rounds "$work" run "$jail -- /bin/true" exec "$jail exec $id -- /bin/true"
pooled
"$jail" rm -f "$id"

echo "== 2. create against a run; rm"
rm -f "$work"/round-*.json
names=(run create rm)
cmds=("$jail -- /bin/true" "$jail create --name bench-create" "$jail rm -f bench-rm")
preps=("true" "sh -c '$jail rm -f bench-create >/dev/null 2>&1 || true'" "$jail create --name bench-rm")
for r in $(seq "${ROUNDS:-10}"); do
	args=()
	for i in 0 1 2; do
		j=$(((i + r) % 3))
		args+=(--prepare "${preps[j]}" -n "${names[j]}" "${cmds[j]}")
	done
	hyperfine -N --warmup 1 --runs "${RUNS:-10}" --export-json "$work/round-$r.json" "${args[@]}" >/dev/null 2>"$work/hyperfine.log" ||
		{ cat "$work/hyperfine.log" >&2; exit 1; }
	"$jail" rm -f bench-create >/dev/null 2>&1 || true
done
pooled

# pss prints the PSS (kB) of every process of the sandboxes in $JAIL_RUNTIME_DIR: each keeper (the
# process holding a sandbox's lock) and all its descendants, and how many processes that is.
pss() {
	python3 - "$JAIL_RUNTIME_DIR" <<'EOF'
import os, sys
root = sys.argv[1]
procs = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            stat = open(f"/proc/{p}/stat").read()
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] not in "ZX":
                procs[int(p)] = int(fields[1])
        except OSError:
            pass
def holds(pid):
    try:
        return open(f"/proc/{pid}/comm").read().strip() == "jail-keeper" and \
            any(os.readlink(f"/proc/{pid}/fd/{fd}").startswith(root + "/") for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError: # it ended meanwhile
        return False
keepers = [p for p in procs if holds(p)]
tree, todo = set(), list(keepers)
while todo:
    p = todo.pop()
    tree.add(p)
    todo += [c for c, pp in procs.items() if pp == p and c not in tree]
total = 0
for p in tree:
    try:
        for line in open(f"/proc/{p}/smaps_rollup"):
            if line.startswith("Pss:"):
                total += int(line.split()[1])
    except OSError:
        pass
print(total, len(keepers), len(tree))
EOF
}

echo "== 3. idle memory (network none)"
id=$("$jail" create)
"$jail" exec "$id" -- true
read -r kb sandboxes procs < <(pss)
echo "1 sandbox: $procs processes, PSS $kb kB"
"$jail" rm -f "$id"

echo "== 4. $count sandboxes at once"
mounts() { grep -c -e "$JAIL_RUNTIME_DIR" -e jail /proc/self/mountinfo || true; } # what a sandbox could leave
before_mounts=$(mounts)
began=$(date +%s%N)
ids=()
for i in $(seq "$count"); do
	ids+=("$("$jail" create)")
done
created=$(date +%s%N)
read -r kb sandboxes procs < <(pss)
echo "created $sandboxes in $(((created - began) / 1000000)) ms; $procs processes, PSS $kb kB in all, $((kb / sandboxes)) kB a sandbox"
fails=0
began=$(date +%s%N)
for id in "${ids[@]}"; do
	[ "$("$jail" exec "$id" -- echo ok)" = ok ] || fails=$((fails + 1))
done
echo "an exec in each: $(((($(date +%s%N) - began) / count) / 1000)) µs each, $fails failed"
began=$(date +%s%N)
printf '%s\n' "${ids[@]}" | xargs -n 50 "$jail" rm -f
echo "removed them all in $((($(date +%s%N) - began) / 1000000)) ms"
left=$(find "$JAIL_RUNTIME_DIR" -mindepth 1 -maxdepth 1 ! -name names | wc -l)
read -r kb sandboxes procs < <(pss)
[ "$(mounts)" = "$before_mounts" ] && mounts=unchanged || mounts=CHANGED
echo "left: $left entries in the runtime directory, $procs processes of its sandboxes, the host's mounts $mounts"
