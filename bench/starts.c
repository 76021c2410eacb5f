// starts: runs commands many times, P at once, and prints for each its starts per second and the
// CPU time of its whole process tree per start. The tree matters: bubblewrap's outer process
// exits before its sandbox's pid 1 does, so a runner's wait4 (hyperfine's, time's) never counts
// that pid 1 or the command. This process is a child subreaper: everything a run leaves behind
// is reparented here and reaped, and RUSAGE_CHILDREN counts it all.
//
//   starts ROUNDS P N NAME CMD... [:: NAME CMD...]
//
// Each round runs N starts of every command in turn (rotating which goes first), up to P in
// flight: a new start begins as soon as a launcher (not its leftovers) exits. A command's time
// runs from its first start until everything it left is reaped. Prints one tab-separated line
// per command: NAME, starts per second, CPU ms per start, median wall ms per start (P = 1
// only; - otherwise), all over the ROUNDS rounds pooled.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"

#define MAXCMD 8

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu(void) {
	struct rusage r;
	getrusage(RUSAGE_CHILDREN, &r);
	return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static pid_t start(char **argv) {
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0) {
		perror("starts: fork");
		exit(1);
	}
	return pid;
}

// batch runs n starts of argv, p at once, and reaps everything they leave. It adds each
// launcher's wall time to walls (p == 1) and returns how many launchers failed.
static int batch(char **argv, int p, int n, double *walls) {
	pid_t live[64];
	double began[64];
	int nlive = 0, started = 0, failed = 0;
	for (;;) {
		while (nlive < p && started < n) {
			began[nlive] = now();
			live[nlive++] = start(argv);
			started++;
		}
		int ws;
		pid_t pid = wait(&ws);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break; // ECHILD: all started and everything they left reaped
		}
		for (int i = 0; i < nlive; i++) {
			if (live[i] != pid)
				continue;
			if (p == 1)
				*walls++ = now() - began[i];
			if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
				failed++;
			live[i] = live[--nlive];
			began[i] = began[nlive];
			break;
		}
	}
	return failed;
}

int main(int argc, char **argv) {
	if (argc < 6) {
		fprintf(stderr, "usage: starts ROUNDS P N NAME CMD... [:: NAME CMD...]\n");
		return 2;
	}
	int rounds = atoi(argv[1]), p = atoi(argv[2]), n = atoi(argv[3]);
	if (p < 1 || p > 64 || n < 1 || rounds < 1) {
		fprintf(stderr, "starts: P must be 1-64, N and ROUNDS at least 1\n");
		return 2;
	}
	char *name[MAXCMD], **cmd[MAXCMD];
	int k = split_commands(argc, argv, 4, name, cmd, MAXCMD);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	double secs[MAXCMD] = {0}, cpus[MAXCMD] = {0}, *walls[MAXCMD];
	int failed[MAXCMD] = {0};
	for (int c = 0; c < k; c++)
		walls[c] = calloc((size_t)rounds * n, sizeof(double));
	for (int r = 0; r < rounds; r++)
		for (int j = 0; j < k; j++) {
			int c = (r + j) % k;
			double t0 = now(), c0 = cpu();
			failed[c] += batch(cmd[c], p, n, walls[c] + (size_t)r * n);
			secs[c] += now() - t0;
			cpus[c] += cpu() - c0;
		}
	int bad = 0;
	for (int c = 0; c < k; c++) {
		int total = rounds * n;
		qsort(walls[c], total, sizeof(double), cmp);
		printf("%s\t%.1f\t%.2f\t", name[c], total / secs[c], cpus[c] * 1e3 / total);
		if (p == 1)
			printf("%.2f\n", walls[c][total / 2] * 1e3);
		else
			printf("-\n");
		if (failed[c]) {
			fprintf(stderr, "starts: %s failed %d of %d times\n", name[c], failed[c], total);
			bad = 1;
		}
	}
	return bad;
}
