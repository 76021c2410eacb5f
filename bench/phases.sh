#!/usr/bin/env bash
# A run's two halves, jail against bubblewrap building the same sandbox (bwrap.jq): from the
# launcher's start until the command runs, and from the command's exit until the launcher's.
# The command is a static program that writes the monotonic clock (which no namespace changes)
# to its stdout and exits; a driver starts each launcher in turn, alternating, and notes when
# it started, what the command wrote and when the launcher was reaped. Prints the medians.
# RUNS (200) per launcher.
#   bench/phases.sh [path/to/jail]       (needs: bubblewrap gcc jq)
set -euo pipefail
bench=$(realpath "$(dirname "$0")")
. "$bench/lib.sh"
jail=$(bench_jail "${1:-}")
need bwrap gcc jq

work=$(mktemp -d /tmp/jail-bench-phases.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cd "$work"

cat >stamp.c <<'C'
#include <time.h>
#include <unistd.h>
/* Writes CLOCK_MONOTONIC in microseconds, as a double, and exits. */
int main(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	double us = t.tv_sec * 1e6 + t.tv_nsec / 1e3;
	return write(1, &us, sizeof us) != sizeof us;
}
C
cat >phases.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "commands.h"
static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}
static double median(double *v, int n) {
	qsort(v, n, sizeof *v, cmp);
	return v[n / 2];
}
/* phases N NAME CMD... [:: NAME CMD...]: runs the commands in turn, N times each, and prints
   for each the median start->command and command's exit->reaped, in microseconds. */
int main(int argc, char **argv) {
	int n = atoi(argv[1]);
	char *name[8], **cmd[8];
	int k = split_commands(argc, argv, 2, name, cmd, 8);
	double *start[8], *exit_[8];
	for (int c = 0; c < k; c++) {
		start[c] = malloc(n * sizeof(double));
		exit_[c] = malloc(n * sizeof(double));
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < k; j++) {
			int c = (i + j) % k, p[2];
			if (pipe(p) < 0)
				return 1;
			double t0 = now(), stamp = 0;
			pid_t pid = fork();
			if (pid == 0) {
				dup2(p[1], 1);
				close(p[0]);
				close(p[1]);
				execvp(cmd[c][0], cmd[c]);
				_exit(127);
			}
			close(p[1]);
			if (read(p[0], &stamp, sizeof stamp) != sizeof stamp) {
				fprintf(stderr, "%s: no timestamp\n", name[c]);
				return 1;
			}
			close(p[0]);
			waitpid(pid, NULL, 0);
			start[c][i] = stamp - t0;
			exit_[c][i] = now() - stamp;
		}
	for (int c = 0; c < k; c++)
		printf("%s\t%.2f\t%.2f\n", name[c], median(start[c], n) / 1e3, median(exit_[c], n) / 1e3);
	return 0;
}
C
gcc -O2 -static -o stamp stamp.c
gcc -O2 -I"$bench" -o phases phases.c

"$jail" -- ./stamp >/dev/null # a first run, as bench/startup.sh
mapfile -t bw < <("$jail" --dry-run -- true | jq -r -f "$bench/bwrap.jq")
./phases "${RUNS:-200}" jail "$jail" -- ./stamp :: bwrap bwrap "${bw[@]}" ./stamp >result.tsv
printf 'runner\tstart -> command\tcommand exit -> runner exit\n'
awk -F'\t' '{print $1 "\t" $2 " ms\t" $3 " ms"; s[NR] = $2; e[NR] = $3}
	END {printf "jail/bwrap\t%.2fx\t%.2fx\n", s[1] / s[2], e[1] / e[2]}' result.tsv
