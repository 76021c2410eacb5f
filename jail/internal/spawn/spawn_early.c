// Starting the sandbox's init before jail's own Go runtime. A run's critical path was: jail's
// runtime starts (1.3 ms), then init's, in its namespaces (1.5 ms), each waiting for the other.
// This constructor runs first thing in the jail command, before Go's runtime exists, guesses from
// argv whether the invocation runs a command and with which namespaces, and starts init then; the
// two runtimes start side by side. jail then adopts that init (jail's early.go) when the plan asks
// for exactly those namespaces and the command gets jail's own stdio, or kills it unseen: it waits
// for a plan, and runs and prints nothing. The guess decides nothing.
//
// Then the process forks once more (waiter.c): the child goes on into Go's runtime as jail's host,
// and this process stays a small waiter, init's parent, which the caller waits for.
//
// `jail create [OPTIONS]` is taken the same way, for the same reason, but the fork is the
// sandbox's keeper (keeper.c), which forks init and outlives this process: it goes on into Go's
// runtime as create's host itself.
//
// Only the jail command opts in (cmd/jail exports jail_early_opt_in): tests and other programs
// linking this package start nothing. With no Go runtime yet the process is small and single-
// threaded, so a fork is cheap, the child can go on into Go's runtime as init without
// executing this binary again (become_init), and this thread writes the id maps itself.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch.h"
#include "boot.h"
#include "spawn.h"

extern void jail_early_opt_in(void) __attribute__((weak)); // cmd/jail/cgo.go; never called

struct jail_early jail_early = {.pid = -1, .plan_fd = -1, .msg_fd = -1, .err_fd = -1, .hand_fd = -1, .back_fd = -1, .end_fd = -1};

// options are jail's options, as cmd/jail's flag sets define them: the ones that take a value
// (in the next argument, or after '='), the ones with which no sandbox starts, and which of the
// two commands that start one takes each: a run (`jail [OPTIONS] -- COMMAND`) and `jail create`.
// Go's flag package reads "-name" and "--name" alike. TestEarlyInitKnowsEveryFlag and
// TestEarlyKeeperKnowsEveryFlag (cmd/jail) run jail once with each flag of those sets, so one
// this table lacks fails them.
enum { VALUE = 1, NO_COMMAND = 2, RUN = 4, CREATE = 8, BOTH = RUN | CREATE };
static const struct option {
	const char *name;
	int flags;
} options[] = {
    {"p", VALUE | BOTH},      {"profile", VALUE | BOTH}, {"ro", VALUE | BOTH},       {"rw", VALUE | BOTH},
    {"hide", VALUE | BOTH},   {"tmpfs", VALUE | BOTH},   {"net", VALUE | BOTH},      {"allow-host", VALUE | BOTH},
    {"env", VALUE | BOTH},    {"cwd", VALUE | BOTH},     {"timeout", VALUE | BOTH},  {"fallback", VALUE | RUN},
    {"report", VALUE | RUN},  {"json-status-fd", VALUE | RUN}, {"cache", VALUE | BOTH},
    {"workspace", VALUE | BOTH},
    {"name", VALUE | CREATE}, {"label", VALUE | CREATE}, {"idle-timeout", VALUE | CREATE}, {"ttl", VALUE | CREATE},
    {"q", RUN},               {"quiet", RUN},            {"v", BOTH},                {"verbose", BOTH},
    {"explain", RUN},         {"allow-private", BOTH},   {"allow-weaker", RUN},      {"json", CREATE},
    {"h", NO_COMMAND | BOTH}, {"help", NO_COMMAND | BOTH}, {"version", NO_COMMAND | RUN}, {"dry-run", NO_COMMAND | RUN},
};

// find_option returns the option of command (RUN or CREATE) whose name is the len bytes at
// name, or NULL.
static const struct option *find_option(const char *name, size_t len, int command) {
	for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
		if (options[i].flags & command && strncmp(options[i].name, name, len) == 0 && options[i].name[len] == 0)
			return &options[i];
	return NULL;
}

// parse_options reads the options of command in argv from argv[i] on, as Go's flag package
// does, up to "--" or the first argument that is not one, and sets *net unless the last --net
// asks for the host's network. It returns the index where the options end, or -1 when they start
// no sandbox: an unknown option (Go refuses it), a missing value, or one with which none starts.
static int parse_options(int argc, char **argv, int i, int command, int *net) {
	*net = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || a[1] == 0 || strcmp(a, "--") == 0)
			return i;
		const char *name = a[1] == '-' ? a + 2 : a + 1;
		const char *eq = strchr(name, '=');
		const struct option *o = find_option(name, eq != NULL ? (size_t)(eq - name) : strlen(name), command);
		if (o == NULL || o->flags & NO_COMMAND)
			return -1;
		if (!(o->flags & VALUE))
			continue;
		const char *value = eq != NULL ? eq + 1 : ++i < argc ? argv[i] : NULL;
		if (value == NULL)
			return -1; // Go refuses an option without its value
		if (strcmp(o->name, "net") == 0)
			*net = strcmp(value, "host") != 0;
	}
	return i;
}

// runs_command reports whether argv is `jail [OPTIONS] -- COMMAND...`, the form that runs a
// command, and sets *net as parse_options does. Anything else (subcommands, a command without
// "--", an unknown option) starts no init here; Go's Prestart may still start one.
static int runs_command(int argc, char **argv, int *net) {
	int i = parse_options(argc, argv, 1, RUN, net);
	return i > 0 && i < argc && strcmp(argv[i], "--") == 0 && i + 1 < argc;
}

// creates_sandbox reports whether argv is `jail create [OPTIONS]`, with options as Go reads them
// and no argument after them (Go refuses one), and sets *net as parse_options does.
static int creates_sandbox(int argc, char **argv, int *net) {
	return argc > 1 && strcmp(argv[1], "create") == 0 && parse_options(argc, argv, 2, CREATE, net) == argc;
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

int jail_is_early_init;

// The command line as the kernel gave it, for jail_set_cmdline.
static int saved_argc;
static char **saved_argv;

void jail_set_cmdline(const char *name) {
	static size_t len; // measured once, on the strings as they came: forks inherit it
	if (saved_argc < 1)
		return;
	if (len == 0)
		len = saved_argv[saved_argc - 1] + strlen(saved_argv[saved_argc - 1]) - saved_argv[0];
	memset(saved_argv[0], 0, len);
	if (len >= strlen(name))
		memcpy(saved_argv[0], name, strlen(name));
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

// become_init makes the child jail's init without an execve: it becomes pid 1 (pid1.c), whose
// child, the setup, returns, and Go's runtime then starts in it as it would have in an executed
// init, which would only have loaded this binary again (0.4 ms more on the sandbox's way).
// runc's nsexec starts its init the same way. A failure is reported and ends the child, as
// jail_spawn_child's.
static void become_init(struct jail_spawn *s) {
	if (jail_spawn_setup(s) < 0)
		jail_spawn_fail(s);
	// Its command line, which the command can read in /proc/1/cmdline, becomes an executed
	// init's: jail's own may hold what was not meant for the command. Its name too, so that ps
	// tells it from jail.
	jail_set_cmdline(jail_init_arg0);
	// Go seeds its runtime's random state (map seeds among others) from the 16 bytes at
	// AT_RANDOM, which the child copied from jail: new ones make them init's own.
	void *seed = (void *)getauxval(AT_RANDOM);
	if (seed != NULL && getrandom(seed, 16, 0) != 16)
		jail_spawn_fail(s);
	// Descriptors 0 to 4 are init's (jail_init_spawn), and 5 its end pipe when it has one; the
	// rest are jail's pipe ends and descriptors jail inherited, which execve would have closed or
	// init would have. Closing err_fd tells jail that init is on its way.
	if (close_range(s->nfds, ~0U, 0) < 0)
		jail_spawn_fail(s);
	if (s->nfds > JAIL_PID1_END_FD) {
		fcntl(JAIL_PID1_END_FD, F_SETFD, FD_CLOEXEC);
		jail_pid1_end_fd = JAIL_PID1_END_FD;
	}
	jail_is_early_init = 1;
	jail_become_pid1(); // returns in the setup, a child, which goes on into Go's runtime
}

pid_t jail_fork_init(uint32_t ns, const int fds[5], int end_fd, const sigset_t *mask, int *errs) {
	enum { err, go, npipes };
	int p[npipes][2];
	if (pipes(p, npipes) < 0)
		return -1;
	static struct jail_spawn s;
	jail_init_spawn(&s, ns, fds, 0);
	if (end_fd >= 0)
		s.fds[s.nfds++] = end_fd; // JAIL_PID1_END_FD
	s.go_fd = p[go][0]; // no ready_fd: this thread knows the child exists when clone returns
	s.go_end = p[go][1];
	s.err_fd = p[err][1];
	s.mask = *mask;
	// A fork, in new namespaces: the child goes on from here, on its copy of this stack.
	pid_t pid = syscall(SYS_clone, s.flags | SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == 0) {
		become_init(&s);
		return 0;
	}
	int e = errno;
	close(p[err][1]);
	close(p[go][0]);
	char c = 0;
	struct jail_id_maps maps;
	if (pid > 0 && (e = -jail_write_id_maps(pid, &maps)) == 0 && write(p[go][1], &c, 1) != 1)
		e = errno;
	close(p[go][1]);
	if (pid < 0 || e != 0) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		close(p[err][0]);
		errno = e;
		return -1;
	}
	*errs = p[err][0];
	return pid;
}

// init_ns returns the clone flags of init's namespaces: every one, the network's unless net is 0.
static uint32_t init_ns(int net) {
	return CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | (net ? CLONE_NEWNET : 0);
}

// fork_init forks a run's init, in the namespaces net says, and returns in jail and in init
// (then jail_is_early_init is set). When it cannot, it returns in jail alone, having started
// nothing.
static void fork_init(int net) {
	if (!std_fds_open())
		return;
	// The plan's channel is a socket, so that the host can send init a descriptor with it
	// (wire.SendConfig); the messages' is a pipe, and so is the end pipe from pid 1 to the waiter
	// (jail_pid1_end_fd).
	enum { cfg, rep, end, npipes };
	int p[npipes][2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p[cfg]) < 0)
		return;
	if (pipes(p + rep, npipes - rep) < 0) {
		close(p[cfg][0]);
		close(p[cfg][1]);
		return;
	}
	int fds[] = {0, 1, 2, p[cfg][0], p[rep][1]}, errs = -1;
	const uint32_t ns = init_ns(net);
	sigset_t mask;
	sigprocmask(SIG_SETMASK, NULL, &mask);
	pid_t pid = jail_fork_init(ns, fds, p[end][1], &mask, &errs);
	if (pid == 0)
		return;
	close(p[cfg][0]);
	close(p[rep][1]);
	close(p[end][1]);
	// The namespaces go first on the plan's pipe, as launchInit sends them (wire.SendNamespaces).
	if (pid < 0 || write(p[cfg][1], &ns, sizeof ns) != sizeof ns) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			close(errs);
		}
		close(p[cfg][1]);
		close(p[rep][0]);
		close(p[end][0]);
		return;
	}
	jail_early = (struct jail_early){.pid = pid, .plan_fd = p[cfg][1], .msg_fd = p[rep][0], .err_fd = errs, .ns = ns,
	                                 .hand_fd = -1, .back_fd = -1, .end_fd = p[end][0]};
}

__attribute__((constructor)) static void start_early(int argc, char **argv, char **envp) {
	int net, create;
	if (jail_early_opt_in == NULL)
		return;
	saved_argc = argc;
	saved_argv = argv;
	if (argc > 1 && strcmp(argv[1], "exec") == 0) {
		jail_exec_fast(argc, argv); // returns only when Go is to do it
		return;
	}
	if (argc > 1 && strcmp(argv[1], "rm") == 0) {
		jail_rm_fast(argc, argv); // likewise
		return;
	}
	if (!(create = creates_sandbox(argc, argv, &net)) && !runs_command(argc, argv, &net))
		return;
	// A caller that ignores SIGCHLD passes that on, and the kernel would then reap this process's
	// children itself: the waiter would never see init end. Go's runtime takes SIGCHLD over in
	// the host and in init's setup, and pid 1 resets it (pid1.c); the command gets the default
	// back either way, as it did when jail's own process was a Go one.
	struct sigaction chld;
	if (sigaction(SIGCHLD, NULL, &chld) == 0 && chld.sa_handler == SIG_IGN)
		signal(SIGCHLD, SIG_DFL);
	if (create) {
		// `jail create`: the keeper, which forks init, and holds the sandbox once this
		// process, its host, has built it and left (keeper.c).
		jail_fork_keeper(init_ns(net));
		return;
	}
	jail_boot_one_p(envp); // the host's and the setup's runtimes boot with one P (boot.c)
	fork_init(net);
	// Both switch to SCHED_BATCH (batch.c) only now: the child, still SCHED_OTHER when it is
	// first woken, may preempt what runs on the CPU it lands on (the kernel workers tearing down
	// an earlier sandbox's namespaces, say) rather than wait for it.
	jail_batch_own_threads();
	if (jail_early.pid > 0 && !jail_is_early_init)
		jail_fork_host(); // returns in the host; this process stays as the waiter
}
