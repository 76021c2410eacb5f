#!/usr/bin/env bash
# Which of jail's two processes a run waits for. The host loads and resolves the profile and
# sends the plan, then makes the placeholders; init, started before the host's Go runtime,
# starts its own in the sandbox's namespaces, waits for the plan and builds the root up to the
# first protection, where it waits for the placeholders. jail -v ends each line with the time
# since jail started, on one clock for both. Prints, over RUNS (200) runs of `jail -v -- true`,
# the medians of when init began to wait, when the host sent the plan, when init began building
# the root and when it executed the command, how often and how long init waited for the plan
# (the host's start-up was then the longer) or the plan for init, and how often and how long
# init waited for the placeholders.
#   bench/critical-path.sh [path/to/jail]
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")

work=$(mktemp -d /tmp/jail-bench-path.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"

# One line per run: ready sent built executed made protect (ms since jail started).
for _ in $(seq "${RUNS:-200}"); do
	"$jail" -v -- true 2>&1 >/dev/null | awk '
		{ t = $(NF - 1); sub(/^\(\+/, "", t) } # each line ends "(+T ms)"
		/^jail: init: wait for the plan /         { ready = t }
		/^jail: host: send the plan /             { sent = t }
		/^jail: init: build the root filesystem / { built = t }
		/^jail: init: exec /                      { executed = t }
		/^jail: host: the placeholders are made / { made = t }
		/^jail: init: wait for the host.s placeholders / { protect = t }
		END { print ready, sent, built, executed, made, protect }'
done >times

# median COLUMN-EXPRESSION prints the median of an awk expression over the runs.
median() {
	awk "{ print $1 }" times | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f ms", v[int((NR + 1) / 2)] }'
}
printf 'init waits for the plan   %s\n' "$(median '$1')"
printf 'host sends the plan       %s\n' "$(median '$2')"
printf 'init builds the root      %s\n' "$(median '$3')"
printf 'init executes the command %s\n' "$(median '$4')"
awk '{ if ($2 > $1) { n++; w += $2 - $1 } else { h += $1 - $2 } }
     END { printf "init waited for the host in %d of %d runs (%.2f ms on average over all);", n, NR, w / NR
           printf " the plan waited for init in the others (%.2f ms)\n", h / NR }' times
awk '$6 != "" { m++; if ($5 > $6) { n++; w += $5 - $6 } }
     END { if (m) printf "init waited for the placeholders in %d of %d runs (%.2f ms on average over all)\n", n, m, w / m }' times
