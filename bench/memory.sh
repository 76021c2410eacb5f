#!/usr/bin/env bash
# Launcher memory: what jail's own processes hold while the command runs — the waiter, pid 1,
# and the Go host or init's setup where they stay — against bubblewrap's two processes, side by
# side. Each launcher runs `sleep` in a sandbox; once it sleeps (and half a second more: jail's
# processes shed what they no longer need after 100 ms, jail/internal/spawn/shed.c), the resident
# set (Rss) and the proportional share (Pss: a page shared by N processes counts 1/N) of every
# launcher process are summed from /proc/PID/smaps_rollup; the command's are not counted.
#   plain        jail -- CMD
#   report       jail --report FILE -- CMD                   (the host stays to write it)
#   proxy        jail --allow-host ADDR -- CMD               (the host stays to serve the proxy)
#   proxy-used   the same, once the command has downloaded 100 MB through a CONNECT tunnel and
#                made 1000 plain forwarded requests (bench/httpserver on loopback)
#   bwrap        bwrap building the sandbox of jail's plan (bwrap.jq), as bench/startup.sh
#   bwrap-basic  bwrap as users typically write it (/usr, /etc, private /tmp and home, the
#                working directory, --unshare-all)
# ROUNDS (5) interleaved rounds; prints each one's medians and the processes counted.
# As root: pid 1 and a setup are non-dumpable, their /proc files root's alone.
#   bench/memory.sh [path/to/jail]      (needs: bubblewrap jq curl go git python3)
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need bwrap jq curl go git python3
if [ "$(id -u)" != 0 ]; then
	echo "bench: memory.sh reads the smaps of jail's pid 1, which is non-dumpable: run it as root (sudo bench/memory.sh)" >&2
	exit 2
fi

work=$(mktemp -d /tmp/jail-bench-memory.XXXXXX)
server=
trap '[ -n "$server" ] && kill "$server"; rm -rf "$work"' EXIT
httpserver "$work"
# The working directory is a git repository of the Python standard library (4,500 files or so, as
# bench/startup.sh's): the host keeps what the unseen-writes audit walked of it for the run.
mkdir "$work/repo"
python_repo "$work/repo"
cd "$work/repo"
echo "working directory: a repository of $(git ls-files | wc -l) files"

mapfile -t bw < <("$jail" --dry-run -- true | jq -r -f "$bench/bwrap.jq")
bwrap_typical "$PWD"

traffic="curl -sS -p --noproxy '' -o /dev/null http://$addr/big && curl -sS --noproxy '' -o /dev/null 'http://$addr/s[1-1000]'"

# measure NAME LAUNCHER... runs the launcher with a command that does its work (WORK), says it is
# done and sleeps, and prints NAME, the summed Rss and Pss (kB) and the launcher processes'
# names once it sleeps; then it ends the command, and with it the run.
measure() {
	local name=$1 top pids=() p comm rss=0 pss=0 r s names=() sleeper=
	shift
	rm -f ready
	"$@" sh -c "${WORK:-:}; : > ready; exec sleep 60" >/dev/null 2>"$work/stderr" &
	top=$!
	for _ in $(seq 300); do [ -e ready ] && break; sleep 0.1; done
	[ -e ready ] || { cat "$work/stderr" >&2; echo "bench: $name: the command never got ready" >&2; exit 1; }
	sleep 0.5
	descendants() { echo "$1"; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do descendants "$c"; done; }
	for p in $(descendants "$top"); do
		comm=$(cat /proc/"$p"/comm 2>/dev/null) || continue
		case $comm in
		sleep) sleeper=$p ;;
		sh) ;;
		*)
			read -r r s < <(awk '/^Rss:/ {r = $2} /^Pss:/ {s = $2} END {print r, s}' /proc/"$p"/smaps_rollup)
			rss=$((rss + r)) pss=$((pss + s)) names+=("$comm")
			;;
		esac
	done
	kill "$sleeper"
	wait "$top" || true
	printf '%s\t%s\t%s\t%s\n' "$name" "$rss" "$pss" "${names[*]}" >>"$work/samples"
}

load_check before
for r in $(seq "${ROUNDS:-5}"); do
	runs=(plain report proxy proxy-used bwrap bwrap-basic)
	for ((i = 0; i < ${#runs[@]}; i++)); do
		case ${runs[(i + r) % ${#runs[@]}]} in
		plain) measure plain "$jail" -q -- ;;
		report) measure report "$jail" -q --report "$work/report.json" -- ;;
		proxy) measure proxy "$jail" -q --allow-host "$addr" -- ;;
		proxy-used) WORK=$traffic measure proxy-used "$jail" -q --allow-host "$addr" -- ;;
		bwrap) measure bwrap bwrap "${bw[@]}" ;;
		bwrap-basic) measure bwrap-basic "${typical[@]}" ;;
		esac
	done
done
printf 'run\tRSS median (min-max)\tPSS median (min-max)\tprocesses\n'
jq -Rrn '[inputs | split("\t") | {name: .[0], rss: (.[1] | tonumber), pss: (.[2] | tonumber), procs: .[3]}] |
	group_by(.name)[] | (map(.rss) | sort) as $r | (map(.pss) | sort) as $p |
	def mb($v): $v / 1024 * 100 | round / 100 | tostring;
	def col($v): "\(mb($v[$v | length / 2 | floor])) MiB (\(mb($v[0]))-\(mb($v[-1])))";
	"\(.[0].name)\t\(col($r))\t\(col($p))\t\(.[0].procs)"' "$work/samples"
load_check after
