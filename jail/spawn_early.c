// Starting the sandbox's init before jail's own Go runtime. A run's critical path was: jail's
// runtime starts (1.3 ms), then init's, in its namespaces (1.5 ms), each waiting for the other.
// This constructor runs first thing in the jail command, before Go's runtime exists, guesses
// from argv whether the invocation runs a command and with which namespaces, and starts init
// then; the two runtimes start side by side. jail then adopts that init (early.go) when the plan
// asks for exactly those namespaces and the command gets jail's own stdio, or kills it unseen:
// it waits for a plan, and runs and prints nothing. The guess decides nothing.
//
// Only the jail command opts in (cmd/jail defines jail_early_opt_in): tests and other programs
// linking this package start nothing. With no Go runtime yet the process is small and single-
// threaded, so a plain clone is cheap and this thread writes the id maps itself.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

extern const int jail_early_opt_in __attribute__((weak));

struct jail_early jail_early = {.pid = -1, .plan_fd = -1, .msg_fd = -1, .err_fd = -1};

// runs_command reports whether argv is `jail [OPTIONS] -- COMMAND...`, the form that runs a
// command, without an option that makes it not run one, and sets *net unless --net host asks
// for the host's network. Anything else (subcommands, a command without "--") starts no init
// here; Go's Prestart may still start one.
static int runs_command(int argc, char **argv, int *net) {
	*net = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0)
			return i + 1 < argc;
		if (a[0] != '-')
			return 0; // a subcommand, or a command jail finds without "--"
		if (strcmp(a, "--dry-run") == 0 || strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0 ||
		    strcmp(a, "--version") == 0)
			return 0;
		if (strcmp(a, "--net=host") == 0 || (strcmp(a, "--net") == 0 && i + 1 < argc && strcmp(argv[i + 1], "host") == 0))
			*net = 0;
		if (strchr(a, '=') == NULL && i + 1 < argc && strcmp(argv[i + 1], "--") != 0 && argv[i + 1][0] != '-')
			i++; // the option's value (a boolean option followed by the command's name ends up here, harmlessly)
	}
	return 0;
}

// pipes opens n close-on-exec pipes into fds, or none.
static int pipes(int fds[][2], int n) {
	for (int i = 0; i < n; i++) {
		if (pipe2(fds[i], O_CLOEXEC) < 0) {
			while (i-- > 0) {
				close(fds[i][0]);
				close(fds[i][1]);
			}
			return -1;
		}
	}
	return 0;
}

// std_fds_open reports whether descriptors 0, 1 and 2 are open. When one is not, the pipes below
// would take its place and init's stdio would be one of them; Go's runtime opens /dev/null there
// first thing, and Prestart then starts init with that.
static int std_fds_open(void) {
	for (int fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) < 0)
			return 0;
	return 1;
}

__attribute__((constructor)) static void start_early(int argc, char **argv) {
	int net;
	if (&jail_early_opt_in == NULL || !runs_command(argc, argv, &net) || !std_fds_open())
		return;
	enum { cfg, rep, err, go, npipes };
	int p[npipes][2];
	if (pipes(p, npipes) < 0)
		return;
	static struct jail_spawn s;
	int fds[] = {0, 1, 2, p[cfg][0], p[rep][1]};
	jail_init_spawn(&s, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP |
	                        (net ? CLONE_NEWNET : 0),
	                fds);
	s.go_fd = p[go][0]; // no ready_fd: this thread knows the child exists when clone returns
	s.err_fd = p[err][1];
	sigprocmask(SIG_SETMASK, NULL, &s.mask);
	static char stack[64 * 1024] __attribute__((aligned(16))); // the child's copy of it
	pid_t pid = clone(jail_spawn_child, stack + sizeof stack, s.flags | SIGCHLD, &s);
	close(p[cfg][0]);
	close(p[rep][1]);
	close(p[err][1]);
	close(p[go][0]);
	char c = 0;
	int ok = pid > 0 && jail_write_id_maps(pid) == 0 && write(p[go][1], &c, 1) == 1;
	close(p[go][1]);
	if (!ok) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		close(p[cfg][1]);
		close(p[rep][0]);
		close(p[err][0]);
		return;
	}
	jail_early = (struct jail_early){.pid = pid, .plan_fd = p[cfg][1], .msg_fd = p[rep][0], .err_fd = p[err][0], .net = net};
}
