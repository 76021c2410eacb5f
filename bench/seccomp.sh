#!/usr/bin/env bash
# Cost of jail's default seccomp filter on syscall-heavy work: the same sandbox with and without
# the filter, measured side by side (interleaved hyperfine rounds, same load). Prints the medians
# and the ratio filter / no filter (target <= 1.02), the floor any filter pays (a one-instruction
# allow-all filter / none), and the CPU time per syscall pair. ROUNDS (10) x RUNS (3) per command.
#   bench/seccomp.sh [path/to/jail]       (needs: hyperfine bubblewrap gcc git jq)
#
# Two pairs:
#   bwrap   bubblewrap with the agent profile's grants, with and without `--seccomp` fed the
#           program `jail seccomp export -p agent` writes: exactly the filter's own cost.
#   jail    jail -p agent against a profile extending agent with [syscalls] default = "off".
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need hyperfine bwrap gcc git jq

work=$(mktemp -d /tmp/jail-bench-seccomp.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

# The filter, as jail compiles it for the agent profile.
"$jail" seccomp export -p agent -o "$work/agent.bpf"
echo "filter: $(($(stat -c %s "$work/agent.bpf") / 8)) BPF instructions"

# A tight syscall loop: getpid and stat, N times each (raw syscalls, nothing cached by libc).
mkdir "$work/tools"
cat >"$work/tools/sysloop.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
/* Prints the CPU time one getpid+stat pair took, in ns: immune to waiting for a CPU. */
int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	struct stat st;
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++) {
		syscall(SYS_getpid);
		stat("/usr", &st);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
C
gcc -O2 -o "$work/tools/sysloop" "$work/tools/sysloop.c"

# A medium repository for git status: the Python standard library, committed.
repo="$work/repo"
mkdir "$repo"
cp -r /usr/lib/python3*/. "$repo/" 2>/dev/null || true
git -C "$repo" init -q && git -C "$repo" add -A && git -C "$repo" -c user.name=b -c user.email=b@b commit -qm bench
echo "repository: $(git -C "$repo" ls-files | wc -l) files; /usr: $(find /usr -type f | wc -l) files"
cd "$repo"

# bubblewrap with the grants of jail's agent profile (as bench/startup.sh).
bw="bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --ro-bind /etc /etc"
for l in bin sbin lib lib64; do
	[ -L "/$l" ] && bw+=" --symlink $(readlink "/$l") /$l"
done
bw+=" --proc /proc --dev /dev --tmpfs /tmp --ro-bind $work/tools $work/tools --bind $repo $repo --chdir $repo"

# agent without the filter.
printf 'extends = ["agent"]\n\n[syscalls]\ndefault = "off"\n' >"$work/nofilter.toml"

workloads=(
	"find /usr|find /usr -type f | wc -l"
	"getpid+stat loop (2x200k)|$work/tools/sysloop 200000"
	"git status|git status --porcelain"
)

# Median and minimum wall time over interleaved rounds, and mean user+system CPU time.
measure() { # pair, workload name, then NAME COMMAND pairs: default, none[, allow-all]
	local pair=$1 name=$2
	shift 2
	rounds "$work" "$@"
	jq -rs -L "$bench" --arg p "$pair" --arg n "$name" 'include "pool"; pool |
		[$p, $n, (.default | median | ms), (.none | median | ms),
		 ((.default | median) / (.none | median) | x), (.default.times[0] / .none.times[0] | x),
		 (.default.cpu / .none.cpu | x),
		 (if ."allow-all" then ((."allow-all" | median) / (.none | median) | x) else "-" end),
		 (if ."allow-all" then ((.default | median) / (."allow-all" | median) | x) else "-" end)
		] | @tsv' "$work"/round-*.json
}

# The one-instruction filter "return ALLOW": what being under seccomp at all costs (the kernel's
# syscall slow path), paid by any filter. allow-all/none is that floor; default/allow-all is the
# cost of jail's rules on top of it.
printf '\x06\x00\x00\x00\x00\x00\xff\x7f' >"$work/allow-all.bpf"

printf 'pair\tworkload\tdefault ms\tnone ms\tdefault/none\t(min)\t(cpu)\tallow-all/none\tdefault/allow-all\n'
for w in "${workloads[@]}"; do
	name=${w%%|*} cmd=${w#*|}
	q=$(printf '%q' "$cmd")
	measure bwrap "$name" \
		default "sh -c 'exec $bw --seccomp 3 -- sh -c $q 3<$work/agent.bpf'" \
		none "sh -c 'exec $bw -- sh -c $q'" \
		allow-all "sh -c 'exec $bw --seccomp 3 -- sh -c $q 3<$work/allow-all.bpf'"
	measure jail "$name" \
		default "$jail --ro $work/tools -- sh -c $q" \
		none "$jail -p $work/nofilter.toml --ro $work/tools -- sh -c $q"
done
# CPU time per getpid+stat pair, measured by the loop itself: the steadiest figure on a busy
# machine (waiting for a CPU does not count). Median of interleaved runs.
declare -A cpu
for r in $(seq "${ROUNDS:-10}"); do
	cpu[none]+="$(sh -c "exec $bw -- $work/tools/sysloop 200000") "
	cpu[allow-all]+="$(sh -c "exec $bw --seccomp 3 -- $work/tools/sysloop 200000 3<$work/allow-all.bpf") "
	cpu[default]+="$(sh -c "exec $bw --seccomp 3 -- $work/tools/sysloop 200000 3<$work/agent.bpf") "
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
none=$(median <<<"${cpu[none]}") allow=$(median <<<"${cpu[allow-all]}") def=$(median <<<"${cpu[default]}")
printf 'CPU ns per getpid+stat pair (bwrap, median): none %s, allow-all filter %s, default filter %s: default/none %s, default/allow-all %s\n' \
	"$none" "$allow" "$def" "$(awk "BEGIN {printf \"%.3fx\", $def / $none}")" "$(awk "BEGIN {printf \"%.3fx\", $def / $allow}")"
