#!/usr/bin/env bash
# File-heavy work under jail against bubblewrap building the same sandbox (bwrap.jq: jail's own
# plan, mount for mount, without Landlock and seccomp), side by side in one run, and what each
# Landlock and seccomp choice costs per call on the running kernel.
#   bench/files.sh [path/to/jail]       (needs: bubblewrap gcc git jq python3)
#
# 1. Workloads, each run ROUNDS (8) times per launcher in interleaved rounds: find /usr; git
#    status in a repository of 10,000 files in 100 directories; a C loop of open+close+stat of
#    one file in the working directory, and of one under /usr, 100,000 times; python's
#    open(f).close() on the working-directory file, 100,000 times. Printed: the median wall time
#    of a whole run (start-up included) per launcher, and the median CPU time of the command
#    itself, measured inside the sandbox (start-up excluded: what the layers cost the work), with
#    jail / bwrap for both.
# 2. Landlock choices, each applied by a small helper (llrun) inside that same bwrap sandbox:
#    CPU ns per open+close (median of ROUNDS runs of 100,000) of a file two levels below the
#    working-directory grant, the same six levels deeper, libc (three levels below /usr) and a
#    directory under /usr.
# 3. seccomp: CPU ns per call of getppid (a call the kernel's cache lets through without running
#    the filter) and ioctl (argument-checked: the filter runs), with no filter, a one-instruction
#    allow-all filter and jail's.
# The load average is printed before and after (lib.sh's load_check); under its warning the wall
# times are unreliable (the CPU times much less so).
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need bwrap gcc git jq python3
rounds=${ROUNDS:-8}
n=100000

work=$(mktemp -d "${TMPDIR:-/tmp}/jail-bench-files.XXXXXX")
cache="" # the project's tool-cache directory jail makes for the repository, removed with it
trap 'rm -rf "$work" ${cache:+"$cache"}' EXIT
chmod 755 "$work"
tools="$work/tools"
mkdir "$tools"

load_check before

# cpuof CMD...: runs CMD (its stdout to /dev/null) and prints its CPU ms (user + system, its
# children included) and wall ms.
cat >"$tools/cpuof.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	struct timespec a, b;
	struct rusage ru;
	int st;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t p = fork();
	if (p == 0) {
		dup2(open("/dev/null", O_WRONLY), 1);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	wait4(p, &st, 0, &ru);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.3f %.3f\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
	       (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
C
# oloop MODE PATH N: CPU ns per iteration of open+close (open), open+close+stat (openstat) or
# open(O_DIRECTORY)+close (dir) of PATH.
cat >"$tools/oloop.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	const char *mode = argv[1], *path = argv[2];
	long n = atol(argv[3]);
	int flags = O_RDONLY | O_CLOEXEC | (strcmp(mode, "dir") ? 0 : O_DIRECTORY);
	int withstat = !strcmp(mode, "openstat");
	struct stat st;
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++) {
		int fd = open(path, flags);
		if (fd < 0 || (withstat && stat(path, &st) < 0)) {
			perror(path);
			return 1;
		}
		close(fd);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("%.0f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
C
# llrun [-H HANDLED] [-S SCOPED] [-r RIGHTS:PATH]... [-l ...] -- CMD: one Landlock layer of the
# rules given (masks in hex; -l starts another layer), then executes CMD. Without -r and with
# -H 0, no layer at all.
cat >"$tools/llrun.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
struct ruleset_attr { uint64_t fs, net, scoped; };
struct path_beneath { uint64_t allowed; int32_t fd; } __attribute__((packed));
static int rs = -1;
static uint64_t handled = 0xffff, scoped;
static void layer_end(void) {
	if (rs >= 0 && syscall(SYS_landlock_restrict_self, rs, 0)) { perror("landlock_restrict_self"); exit(1); }
	if (rs >= 0) close(rs);
	rs = -1;
}
static void layer_start(void) {
	struct ruleset_attr a = {handled, 0, scoped};
	if (rs < 0 && (rs = syscall(SYS_landlock_create_ruleset, &a, sizeof a, 0)) < 0) { perror("landlock_create_ruleset"); exit(1); }
}
int main(int argc, char **argv) {
	int i;
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "-l")) layer_end();
		else if (!strcmp(argv[i], "-H")) handled = strtoull(argv[++i], 0, 16);
		else if (!strcmp(argv[i], "-S")) scoped = strtoull(argv[++i], 0, 16);
		else if (!strcmp(argv[i], "-r")) {
			char *rule = argv[++i], *path = strchr(rule, ':') + 1;
			struct path_beneath pb = {strtoull(rule, 0, 16) & handled, open(path, O_PATH | O_CLOEXEC)};
			layer_start();
			if (pb.fd < 0) { perror(path); exit(1); }
			if (syscall(SYS_landlock_add_rule, rs, 1, &pb, 0)) {
				pb.allowed &= 0xc007; /* a file takes only execute, write, read, truncate, ioctl_dev */
				if (syscall(SYS_landlock_add_rule, rs, 1, &pb, 0)) { perror(path); exit(1); }
			}
			close(pb.fd);
		}
	}
	if (handled || scoped) layer_start();
	layer_end();
	execvp(argv[i + 1], argv + i + 1);
	perror(argv[i + 1]);
	return 127;
}
C
# sysc getppid|ioctl N: CPU ns per call.
cat >"$tools/sysc.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	long n = atol(argv[2]);
	int fd = open("/proc/self/exe", O_RDONLY), ioc = argv[1][0] == 'i';
	struct termios t;
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++) {
		if (ioc) ioctl(fd, TCGETS, &t);
		else syscall(SYS_getppid);
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("%.1f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	return 0;
}
C
for t in cpuof oloop llrun sysc; do
	gcc -O2 -o "$tools/$t" "$tools/$t.c"
done
cat >"$tools/pyloop.py" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
for _ in range(n):
    open(path).close()
PY
python=$(command -v /usr/bin/python3 || command -v python3)

# The repository: 10,000 files in 100 directories, committed, its index settled.
repo="$work/repo"
mkdir "$repo"
for ((d = 0; d < 100; d++)); do
	mkdir "$repo/d$d"
	for ((f = 0; f < 100; f++)); do
		printf 'file %d %d\n' "$d" "$f" >"$repo/d$d/f$f.txt"
	done
done
cd "$repo"
git init -q && git add -A && git -c user.name=bench -c user.email=bench@localhost commit -qm tree
sleep 1 # past racy-git's window, so that git status does not write the index again
git status --porcelain >/dev/null
file="$repo/d5/f5.txt" usrdir=/usr/share/doc
usrfile=$(realpath "$(ldd "$(command -v git)" | awk '/libc\.so/ {print $3}')") # three levels below /usr
echo "repository: $(git ls-files | wc -l) files; /usr: $(find /usr -type f 2>/dev/null | wc -l) files in $(find /usr -type d 2>/dev/null | wc -l) directories"

# bwrap building jail's plan for this directory, the tools read-only in both.
"$jail" --ro "$tools" -- true
cache=$("$jail" --ro "$tools" --dry-run -- true | jq -r '.caches.dir // empty')
mapfile -t bw < <("$jail" --ro "$tools" --dry-run -- true | jq -r -f "$bench/bwrap.jq")
unset 'bw[-1]' # its "--": bwrap options (--seccomp) may follow
bw=(bwrap "${bw[@]}")
jl=("$jail" --ro "$tools" --)

# 1. Workloads.
workloads=(
	"find /usr|find /usr -type f"
	"git status|git status --porcelain"
	"open+close+stat loop, working directory|$tools/oloop openstat $file $n"
	"open+close+stat loop, /usr|$tools/oloop openstat $usrfile $n"
	"python open().close() loop|$python $tools/pyloop.py $file $n"
)
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3fx", b / a}'; }
printf '\nworkload\tbwrap wall ms\tjail wall ms\tjail/bwrap\tbwrap CPU ms\tjail CPU ms\tjail/bwrap (CPU)\n'
for w in "${workloads[@]}"; do
	name=${w%%|*}
	read -ra cmd <<<"${w#*|}"
	declare -A wall=() cpu=()
	for ((r = 0; r < rounds; r++)); do
		for who in bwrap jail; do
			[ $((r % 2)) = 1 ] && who=$([ "$who" = bwrap ] && echo jail || echo bwrap)
			if [ "$who" = bwrap ]; then launcher=("${bw[@]}" --); else launcher=("${jl[@]}"); fi
			t0=$EPOCHREALTIME
			# find exits 1 on the directories no one may read (in both): a run counts if it printed.
			out=$("${launcher[@]}" "$tools/cpuof" "${cmd[@]}" 2>"$work/stderr") || true
			[ -n "$out" ] || { echo "bench: $name under $who failed: $(cat "$work/stderr")" >&2; exit 1; }
			t1=$EPOCHREALTIME
			c=${out%% *}
			wall[$who]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) * 1000}') "
			cpu[$who]+="$c "
		done
	done
	bwall=$(median <<<"${wall[bwrap]}") jwall=$(median <<<"${wall[jail]}")
	bcpu=$(median <<<"${cpu[bwrap]}") jcpu=$(median <<<"${cpu[jail]}")
	printf '%s\t%.1f\t%.1f\t%s\t%.1f\t%.1f\t%s\n' "$name" "$bwall" "$jwall" "$(ratio "$bwall" "$jwall")" \
		"$bcpu" "$jcpu" "$(ratio "$bcpu" "$jcpu")"
	unset wall cpu
done

# 2. Landlock choices, inside bwrap's sandbox of the same plan. jail's rules as `--dry-run`
# lists them: read (read_file, read_dir, execute: d), truncate (d + truncate: 400d), write
# (every right: ffff), list (read_dir: 8).
spec=$("$jail" --ro "$tools" --dry-run -- true)
rules() { # the rules of jail's plan, read grants given truncate when $1 is "truncate"
	jq -r --arg t "$1" '.landlock | (.truncate // []) as $tr |
		(.read[] | "-r \(if $t == "truncate" and (. as $p | $tr | index($p)) then "400d" else "d" end):\(.)"),
		(.write[] | "-r ffff:\(.)"), (.list[] | "-r 8:\(.)")' <<<"$spec" | paste -sd' '
}
before=$(rules none) now=$(rules truncate)
deep="$repo/d1/a/b/c/d/e/f"
mkdir -p "$deep" && cp "$file" "$deep/f.txt"
extra=$(for ((d = 0; d < 100; d++)); do printf -- '-r d:%s ' "$repo/d$d"; done)
choices=(
	"no Landlock (bwrap alone)|-H 0"
	"a domain that handles no right an open asks for|-H 1000 -r 1000:/"
	"jail's rules, read grants without truncate (before)|$before"
	"jail's rules, truncate on read-only binds (now)|$now"
	"jail's rules, truncate not handled at all|-H bfff $before"
	"now + signals and abstract sockets scoped|-S 3 $now"
	"now, stacked twice (two layers)|$now -l $now"
	"now + 100 more rules|$now $extra"
	"now + a rule at the /usr file's own directory|$now -r 400d:$(dirname "$usrfile")"
)
printf '\nLandlock choice (CPU ns per call, median of %s runs)\topen+close %s\topen+close /usr file\topen+close /usr dir\topen+close 6 levels deeper\n' "$rounds" "${file#"$repo"/}"
for c in "${choices[@]}"; do
	read -ra args <<<"${c#*|}"
	row=${c%%|*}
	for target in "open $file" "open $usrfile" "dir $usrdir" "open $deep/f.txt"; do
		read -r mode path <<<"$target"
		v=""
		for ((r = 0; r < rounds; r++)); do
			v+="$("${bw[@]}" -- "$tools/llrun" "${args[@]}" -- "$tools/oloop" "$mode" "$path" "$n") "
		done
		row+=$'\t'$(median <<<"$v")
	done
	echo "$row"
done

# 3. seccomp.
"$jail" seccomp export -p agent -o "$work/agent.bpf"
printf '\x06\x00\x00\x00\x00\x00\xff\x7f' >"$work/allow-all.bpf"
printf '\nseccomp (CPU ns per call, median of %s runs; jail'"'"'s filter: %s BPF instructions)\tgetppid\tioctl(TCGETS)\n' "$rounds" "$(($(stat -c %s "$work/agent.bpf") / 8))"
for f in none allow-all agent; do
	row=$f
	for call in getppid ioctl; do
		v=""
		for ((r = 0; r < rounds; r++)); do
			if [ "$f" = none ]; then
				v+="$("${bw[@]}" -- "$tools/sysc" "$call" 1000000) "
			else
				v+="$("${bw[@]}" --seccomp 9 -- "$tools/sysc" "$call" 1000000 9<"$work/$f.bpf") "
			fi
		done
		row+=$'\t'$(median <<<"$v")
	done
	echo "$row"
done

echo
load_check after
