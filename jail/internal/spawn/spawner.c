// The spawner: the process inside a persistent sandbox that starts every command. init's setup
// starts it as a one-shot run's command would be started — from the thread that has dropped
// its capabilities and applied no_new_privs, Landlock and seccomp — by executing jail's own
// binary as jail_spawner_arg0, which this constructor takes before Go's runtime exists. So each
// process it forks inherits every restriction, and none can be asked of it: a request names a
// command, never a policy. It stays small (no Go runtime) for the sandbox's whole life.
//
// Its descriptors: 0 the keeper's end of a socket pair (sessions arrive there), 1 and 2
// /dev/null, 3 jail's binary (its helpers run from it: Landlock lets this one file execute).
// Its argument: the sandbox's default timeout of a command, in ns (the plan's [limits] timeout).
// Its environment is the sandbox's, its working directory the sandbox's cwd. It is
// non-dumpable, so the commands can neither trace it nor read its memory or descriptors
// through /proc, and it ignores every signal that would end it but SIGKILL (and SIGSTOP): a
// command that kills it (kill -9 -1) ends its own sandbox, as pid 1 then ends the rest.
//
// Requests come on sessions: connections of host programs to the keeper's ctl.sock, which the
// keeper hands over (session.h). Processes started with JAIL_EXEC_CAPTURE have their output
// copied by this process into two files outside the sandbox (descriptors the client passed),
// keeping the last bytes of each: older ones are given back as a hole, which readers skip with
// SEEK_DATA.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

extern char **environ;

enum { KEEPER_FD = 0, BINARY_FD = 3, MAX_ENDED = 64, LIST_ARGV = 1024, PUNCH_STEP = 64 * 1024 };

// stream is captured output: read from a pipe (or a terminal's master), written to a file.
struct stream {
	int from, to;    // from: -1 at its end; to: -1 when not captured
	int64_t written; // the file's size
	int64_t punched; // bytes at its start given back
};

struct proc {
	pid_t pid;
	uint32_t flags; // JAIL_EXEC_* as asked
	int running, status, timed_out, released;
	int64_t started, ended; // CLOCK_REALTIME
	int64_t deadline;       // CLOCK_MONOTONIC, 0: none
	int64_t timeout;        // what the deadline was set from (ns), for the message
	int stdin_w, master;    // -1: none
	int session;            // the session that waits for it or kills it on close; -1
	int32_t keep;
	struct stream out[2];
	char *argv; // argc strings, for listings
	size_t argv_len;
	uint32_t argc;
	char *cwd;
	struct proc *next;
};

// waiter is a session waiting for a process's end (JAIL_MSG_WAIT).
struct waiter {
	int session;
	pid_t pid;
};

static struct proc *procs;
static int *sessions, nsessions;
static int64_t default_timeout; // of a command whose request names none (ns; 0: none): argv[1]
static struct waiter *waiters;
static int nwaiters;
static int devnull = -1;

static int64_t now(clockid_t clock) {
	struct timespec t;
	clock_gettime(clock, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void answer(int session, uint32_t type, pid_t pid, int32_t value) {
	struct jail_msg m = {.type = type, .pid = pid, .value = value};
	jail_send(session, &m, NULL, 0, NULL, 0);
}

static struct proc *find(pid_t pid) {
	for (struct proc *p = procs; p != NULL; p = p->next)
		if (p->pid == pid && !p->released)
			return p;
	return NULL;
}

// alive reports whether q is still in the table (released or not).
static int alive(const struct proc *q) {
	for (struct proc *p = procs; p != NULL; p = p->next)
		if (p == q)
			return 1;
	return 0;
}

static void close_if(int *fd) {
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void free_proc(struct proc *p) {
	for (struct proc **pp = &procs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	close_if(&p->stdin_w);
	close_if(&p->master);
	for (int i = 0; i < 2; i++) {
		close_if(&p->out[i].from);
		close_if(&p->out[i].to);
	}
	free(p->argv);
	free(p->cwd);
	free(p);
}

// done reports whether p can go: it ended, nobody will ask for it, and its output is copied.
static int done(const struct proc *p) {
	return !p->running && (p->released || !(p->flags & JAIL_EXEC_RECORD)) && p->out[0].from < 0 && p->out[1].from < 0;
}

// evict drops the oldest ended records beyond MAX_ENDED.
static void evict(void) {
	int ended = 0;
	for (struct proc *p = procs; p != NULL; p = p->next)
		ended += !p->running && !p->released && p->flags & JAIL_EXEC_RECORD;
	while (ended-- > MAX_ENDED) {
		struct proc *oldest = NULL;
		for (struct proc *p = procs; p != NULL; p = p->next)
			if (!p->running && !p->released && p->flags & JAIL_EXEC_RECORD && (oldest == NULL || p->ended < oldest->ended))
				oldest = p;
		oldest->released = 1;
		if (done(oldest))
			free_proc(oldest);
	}
}

static void send_exited(int session, const struct proc *p) {
	struct jail_msg m = {.type = JAIL_MSG_EXITED, .pid = p->pid, .value = p->status, .ns1 = p->timeout, .ns2 = p->ended};
	if (p->timed_out)
		m.flags |= JAIL_PROC_TIMED_OUT;
	jail_send(session, &m, NULL, 0, NULL, 0);
}

// ended notes that p ended with wait status ws, and tells whoever waits.
static void ended(struct proc *p, int ws) {
	p->running = 0;
	p->status = ws;
	p->ended = now(CLOCK_REALTIME);
	close_if(&p->stdin_w);
	if (p->session >= 0 && p->flags & JAIL_EXEC_WAIT)
		send_exited(p->session, p);
	p->session = -1;
	for (int i = 0; i < nwaiters; i++)
		if (waiters[i].pid == p->pid) {
			send_exited(waiters[i].session, p);
			waiters[i--] = waiters[--nwaiters];
		}
	if (done(p))
		free_proc(p);
	else
		evict();
}

// relay copies what is ready on s->from to its file, and gives back what is older than the
// last keep bytes. It returns how much it copied (0 at the end, or when nothing was ready).
static ssize_t relay(struct proc *p, struct stream *s) {
	char buf[16384];
	ssize_t n = read(s->from, buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) { // the end, or EIO from a terminal whose last slave closed
		close_if(&s->from);
		if (done(p))
			free_proc(p);
		return 0;
	}
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(s->to, buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) { // a full disk: what does not fit is lost, as dropped
			lseek(s->to, n - off, SEEK_CUR);
			break;
		}
		off += w;
	}
	s->written += n;
	int64_t drop = (s->written - p->keep) & ~(int64_t)4095;
	if (drop - s->punched >= PUNCH_STEP && fallocate(s->to, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, drop) == 0)
		s->punched = drop;
	return n;
}

// reap notes the end of every process that ended. What a captured process wrote before it
// ended is in its pipes (a pipe's worth at most): copied first, so that whoever learns of the
// end finds it in the files.
static void reap(void) {
	int ws;
	pid_t pid;
	while ((pid = waitpid(-1, &ws, WNOHANG)) > 0)
		for (struct proc *p = procs; p != NULL; p = p->next)
			if (p->pid == pid && p->running) {
				for (int i = 0; i < 2; i++)
					while (p->out[i].from >= 0 && relay(p, &p->out[i]) > 0)
						;
				ended(p, ws);
				break;
			}
}

// exec_fail is the child's end when it cannot start the command: step and errno go back on fd.
__attribute__((noreturn)) static void exec_fail(int fd, int step) {
	int msg[2] = {step, errno};
	(void)!write(fd, msg, sizeof msg);
	_exit(127);
}

// merged_env returns environ with the env overrides (KEY=VALUE each) laid over it.
static char **merged_env(char **env, uint32_t envc) {
	size_t n = 0;
	while (environ[n] != NULL)
		n++;
	char **out = calloc(n + envc + 1, sizeof *out);
	if (out == NULL)
		return environ;
	memcpy(out, environ, n * sizeof *out);
	for (uint32_t i = 0; i < envc; i++) {
		size_t key = strcspn(env[i], "=");
		size_t j = 0;
		while (j < n && !(strncmp(out[j], env[i], key) == 0 && out[j][key] == '='))
			j++;
		out[j] = env[i];
		if (j == n)
			n++;
	}
	return out;
}

// search executes argv[0] as execvp does, but with PATH from envp: ENOENT (and ENOTDIR) try the
// next directory, EACCES is kept for the end, any other error is final. It returns on failure.
static void search(char *const argv[], char *const envp[]) {
	const char *name = argv[0];
	if (strchr(name, '/') != NULL) {
		execve(name, argv, envp);
		return;
	}
	const char *path = "/usr/local/bin:/usr/bin:/bin";
	for (char *const *e = envp; *e != NULL; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	int denied = 0;
	char file[PATH_MAX];
	for (const char *dir = path;; dir++) {
		size_t len = strcspn(dir, ":"); // an empty entry is the working directory
		if (snprintf(file, sizeof file, "%.*s/%s", len == 0 ? 1 : (int)len, len == 0 ? "." : dir, name) < (int)sizeof file) {
			execve(file, argv, envp);
			if (errno == EACCES)
				denied = 1;
			else if (errno != ENOENT && errno != ENOTDIR)
				return;
		}
		dir += len;
		if (*dir == 0)
			break;
	}
	errno = denied ? EACCES : ENOENT;
}

// child becomes the command: its own session, the descriptors io as 0, 1 and 2, every signal as
// by default, the working directory, then execve. It reports a failure on errfd.
__attribute__((noreturn)) static void child(int io[3], int tty, const char *cwd, char **argv, char **env, uint32_t envc,
                                            int helper, int errfd) {
	for (int sig = 1; sig < _NSIG; sig++)
		signal(sig, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0 || (tty && ioctl(io[0], TIOCSCTTY, 0) < 0))
		exec_fail(errfd, JAIL_FAILED_SETUP);
	for (int i = 0; i < 3; i++) // out of the way of the dup2s below
		if (io[i] < 3 && (io[i] = fcntl(io[i], F_DUPFD_CLOEXEC, 3)) < 0)
			exec_fail(errfd, JAIL_FAILED_SETUP);
	for (int i = 0; i < 3; i++)
		if (dup2(io[i], i) < 0)
			exec_fail(errfd, JAIL_FAILED_SETUP);
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		exec_fail(errfd, JAIL_FAILED_SETUP);
	if (cwd[0] != 0 && chdir(cwd) < 0)
		exec_fail(errfd, JAIL_FAILED_CHDIR);
	char **envp = merged_env(env, envc);
	if (helper)
		syscall(SYS_execveat, BINARY_FD, "", argv, envp, AT_EMPTY_PATH);
	else
		search(argv, envp);
	exec_fail(errfd, JAIL_FAILED_EXEC);
}

// strings splits n bytes at b into count NUL-terminated strings, into out; NULL when they do not
// fit exactly, else the byte after them.
static char *strings(char *b, char *end, uint32_t count, char **out) {
	for (uint32_t i = 0; i < count; i++) {
		char *nul = memchr(b, 0, end - b);
		if (nul == NULL)
			return NULL;
		out[i] = b;
		b = nul + 1;
	}
	return b;
}

// open_tty opens a pseudo-terminal of the sandbox's devpts: *master and *slave, cols x rows.
static int open_tty(int *master, int *slave, uint16_t cols, uint16_t rows) {
	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0)
		return -1;
	int unlock = 0;
	struct winsize ws = {.ws_row = rows ? rows : 24, .ws_col = cols ? cols : 80};
	if (ioctl(*master, TIOCSPTLCK, &unlock) < 0 || (*slave = ioctl(*master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		close_if(master);
		return -1;
	}
	ioctl(*master, TIOCSWINSZ, &ws);
	return 0;
}

// valid_exec reports whether an exec request's flags make sense together and come with the
// descriptors they name.
static int valid_exec(const struct jail_msg *m, int nfds) {
	uint32_t f = m->flags;
	if (f & JAIL_EXEC_OUT_FD && f & (JAIL_EXEC_CAPTURE | JAIL_EXEC_TTY))
		return 0;
	if (f & JAIL_EXEC_STDIN_FD && f & (JAIL_EXEC_STDIN_PIPE | JAIL_EXEC_TTY))
		return 0;
	int want = !!(f & JAIL_EXEC_STDIN_FD) + 2 * !!(f & (JAIL_EXEC_OUT_FD | JAIL_EXEC_CAPTURE));
	return m->argc > 0 && m->argc <= JAIL_MSG_MAX && m->envc <= JAIL_MSG_MAX && nfds == want;
}

// launch forks the command with io as its 0, 1 and 2 and returns its pid once it has executed,
// or -1 with *step and errno saying what failed.
static pid_t launch(int io[3], const struct jail_msg *m, const char *cwd, char **argv, char **env, int *step) {
	int err[2];
	if (pipe2(err, O_CLOEXEC) < 0) {
		*step = JAIL_FAILED_SETUP;
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0)
		child(io, !!(m->flags & JAIL_EXEC_TTY), cwd, argv, env, m->envc, !!(m->flags & JAIL_EXEC_HELPER), err[1]);
	int e = errno;
	close(err[1]);
	if (pid < 0) {
		close(err[0]);
		*step = JAIL_FAILED_SETUP;
		errno = e;
		return -1;
	}
	int result[2];
	ssize_t n;
	while ((n = read(err[0], result, sizeof result)) < 0 && errno == EINTR)
		;
	close(err[0]);
	if (n != sizeof result)
		return pid; // EOF: it executed
	waitpid(pid, NULL, 0);
	*step = result[0];
	errno = result[1];
	return -1;
}

// start handles JAIL_MSG_EXEC.
static void start(int session, const struct jail_msg *m, char *payload, int *fds, int nfds) {
	uint32_t f = m->flags;
	char *end = payload + m->len;
	if (!valid_exec(m, nfds)) {
		jail_close_fds(fds, nfds);
		answer(session, JAIL_MSG_ERROR, 0, EINVAL);
		return;
	}
	char **argv = calloc(m->argc + 1, sizeof *argv), **env = calloc(m->envc + 1, sizeof *env), *cwd[1];
	char *rest = argv == NULL || env == NULL ? NULL : strings(payload, end, m->argc, argv);
	if (rest != NULL)
		rest = strings(rest, end, m->envc, env);
	if (rest != NULL)
		rest = strings(rest, end, 1, cwd);
	if (rest == NULL) {
		answer(session, JAIL_MSG_ERROR, 0, argv == NULL || env == NULL ? ENOMEM : EINVAL);
		free(argv);
		free(env);
		jail_close_fds(fds, nfds);
		return;
	}
	// io: what the command gets as 0, 1 and 2; theirs: what only it needs, closed here once it
	// runs; in_w, master and outs[i][0]: what this process keeps.
	int io[3] = {devnull, devnull, devnull}, theirs[6], nt = 0, k = 0, step = 0;
	int in_w = -1, master = -1, slave = -1, outs[2][2] = {{-1, -1}, {-1, -1}};
	if (f & JAIL_EXEC_STDIN_FD)
		io[0] = theirs[nt++] = fds[k++];
	if (f & JAIL_EXEC_OUT_FD) {
		io[1] = theirs[nt++] = fds[k++];
		io[2] = theirs[nt++] = fds[k++];
	}
	if (f & JAIL_EXEC_TTY) {
		if (open_tty(&master, &slave, m->cols, m->rows) < 0)
			step = JAIL_FAILED_TTY;
		else
			io[0] = io[1] = io[2] = theirs[nt++] = slave;
		if (step == 0 && f & JAIL_EXEC_STDIN_PIPE && (in_w = fcntl(master, F_DUPFD_CLOEXEC, 0)) < 0)
			step = JAIL_FAILED_SETUP;
	} else {
		int p[2];
		if (f & JAIL_EXEC_STDIN_PIPE) {
			if (pipe2(p, O_CLOEXEC) < 0)
				step = JAIL_FAILED_SETUP;
			else {
				io[0] = theirs[nt++] = p[0];
				in_w = p[1];
			}
		}
		for (int i = 0; f & JAIL_EXEC_CAPTURE && i < (f & JAIL_EXEC_MERGE ? 1 : 2) && step == 0; i++)
			if (pipe2(outs[i], O_CLOEXEC) < 0) // the command's end blocks, as any pipe it writes to
				step = JAIL_FAILED_SETUP;
			else
				io[1 + i] = theirs[nt++] = outs[i][1];
		if (f & JAIL_EXEC_MERGE)
			io[2] = io[1];
	}
	pid_t pid = step == 0 ? launch(io, m, cwd[0], argv, env, &step) : -1;
	int e = errno;
	jail_close_fds(theirs, nt);
	free(env);
	if (pid < 0) {
		close_if(&in_w);
		close_if(&master);
		close_if(&outs[0][0]);
		close_if(&outs[1][0]);
		jail_close_fds(fds + k, nfds - k);
		free(argv);
		struct jail_msg fail = {.type = JAIL_MSG_FAILED, .flags = step, .value = e};
		jail_send(session, &fail, NULL, 0, NULL, 0);
		return;
	}
	struct proc *p = calloc(1, sizeof *p);
	size_t argv_len = argv[m->argc - 1] + strlen(argv[m->argc - 1]) + 1 - argv[0];
	if (p == NULL || (p->argv = malloc(argv_len)) == NULL || (p->cwd = strdup(cwd[0])) == NULL) {
		kill(-pid, SIGKILL); // it cannot be kept track of
		if (p != NULL)
			free(p->argv);
		free(p);
		free(argv);
		close_if(&in_w);
		close_if(&master);
		close_if(&outs[0][0]);
		close_if(&outs[1][0]);
		jail_close_fds(fds + k, nfds - k);
		struct jail_msg fail = {.type = JAIL_MSG_FAILED, .flags = JAIL_FAILED_SETUP, .value = ENOMEM};
		jail_send(session, &fail, NULL, 0, NULL, 0);
		return;
	}
	memcpy(p->argv, argv[0], argv_len);
	free(argv);
	p->argc = m->argc;
	p->argv_len = argv_len;
	p->pid = pid;
	p->flags = f;
	p->running = 1;
	p->started = now(CLOCK_REALTIME);
	p->timeout = m->ns1 == 0 ? default_timeout : m->ns1; // < 0: none
	p->deadline = p->timeout > 0 ? now(CLOCK_MONOTONIC) + p->timeout : 0;
	p->stdin_w = in_w;
	p->master = master;
	p->session = f & (JAIL_EXEC_WAIT | JAIL_EXEC_KILL_ON_CLOSE) ? session : -1;
	p->keep = m->value > 0 ? m->value : 1 << 20;
	p->out[0] = p->out[1] = (struct stream){.from = -1, .to = -1};
	if (f & JAIL_EXEC_CAPTURE) {
		p->out[0].to = fds[k];
		p->out[1].to = fds[k + 1];
		p->out[0].from = f & JAIL_EXEC_TTY ? fcntl(master, F_DUPFD_CLOEXEC, 0) : outs[0][0];
		p->out[1].from = outs[1][0];
		for (int i = 0; i < 2; i++) // this process's ends never block it
			if (p->out[i].from >= 0)
				fcntl(p->out[i].from, F_SETFL, O_NONBLOCK);
	}
	p->next = procs;
	procs = p;
	struct jail_msg ok = {.type = JAIL_MSG_STARTED, .pid = pid, .ns1 = p->started};
	jail_send(session, &ok, NULL, 0, &master, f & JAIL_EXEC_TTY_MASTER && master >= 0 ? 1 : 0);
}

// list sends a record of every process but the helpers', then the end.
static void list(int session) {
	for (struct proc *p = procs; p != NULL; p = p->next) {
		if (p->released || p->flags & JAIL_EXEC_HELPER)
			continue;
		struct jail_msg m = {.type = JAIL_MSG_PROC, .pid = p->pid, .value = p->status, .ns1 = p->started, .ns2 = p->ended};
		m.flags = (p->running ? JAIL_PROC_RUNNING : 0) | (p->timed_out ? JAIL_PROC_TIMED_OUT : 0) |
		          (p->flags & JAIL_EXEC_TTY ? JAIL_PROC_TTY : 0) | (p->stdin_w >= 0 ? JAIL_PROC_STDIN : 0) |
		          (p->flags & JAIL_EXEC_RECORD ? JAIL_PROC_RECORD : 0);
		// argv, cut to whole strings within LIST_ARGV bytes, then cwd.
		size_t n = 0, cwd = strlen(p->cwd) + 1;
		for (const char *s = p->argv; m.argc < p->argc; s += strlen(s) + 1) {
			size_t l = strlen(s) + 1;
			if (n + l > LIST_ARGV && m.argc > 0)
				break;
			n += l;
			m.argc++;
		}
		char *payload = malloc(n + cwd);
		if (payload == NULL)
			continue;
		memcpy(payload, p->argv, n);
		memcpy(payload + n, p->cwd, cwd);
		jail_send(session, &m, payload, n + cwd, NULL, 0);
		free(payload);
	}
	answer(session, JAIL_MSG_END, 0, 0);
}

// request handles one message on session.
static void request(int session, const struct jail_msg *m, char *payload, int *fds, int nfds) {
	if (m->type == JAIL_MSG_EXEC) {
		start(session, m, payload, fds, nfds);
		return;
	}
	jail_close_fds(fds, nfds);
	if (m->type == JAIL_MSG_LIST) {
		list(session);
		return;
	}
	struct proc *p = find(m->pid);
	if (p == NULL) {
		answer(session, JAIL_MSG_ERROR, m->pid, ESRCH);
		return;
	}
	int e = 0;
	switch (m->type) {
	case JAIL_MSG_SIGNAL:
		if (!p->running)
			e = ESRCH;
		else if (kill(m->flags & JAIL_SIGNAL_GROUP ? -p->pid : p->pid, m->value) < 0)
			e = errno;
		break;
	case JAIL_MSG_STDIN:
		if (p->stdin_w < 0) {
			e = EPIPE;
			break;
		}
		struct jail_msg fd = {.type = JAIL_MSG_FD, .pid = p->pid};
		jail_send(session, &fd, NULL, 0, &p->stdin_w, 1);
		return;
	case JAIL_MSG_CLOSE_IN:
		if (p->stdin_w < 0)
			e = EPIPE;
		close_if(&p->stdin_w);
		break;
	case JAIL_MSG_RESIZE:
		if (p->master < 0)
			e = ENOTTY;
		else if (ioctl(p->master, TIOCSWINSZ, &(struct winsize){.ws_row = m->rows, .ws_col = m->cols}) < 0)
			e = errno;
		break;
	case JAIL_MSG_WAIT:
		if (!p->running) {
			send_exited(session, p);
			return;
		}
		struct waiter *w = realloc(waiters, (nwaiters + 1) * sizeof *w);
		if (w == NULL) {
			e = ENOMEM;
			break;
		}
		waiters = w;
		waiters[nwaiters++] = (struct waiter){session, p->pid};
		return;
	case JAIL_MSG_RELEASE:
		if (p->running)
			kill(-p->pid, SIGKILL);
		p->released = 1;
		if (done(p))
			free_proc(p);
		break;
	default:
		e = EINVAL;
	}
	answer(session, e ? JAIL_MSG_ERROR : JAIL_MSG_OK, m->pid, e);
}

// end_session closes a session, killing the processes to be killed with it.
static void end_session(int i) {
	int s = sessions[i];
	for (struct proc *p = procs; p != NULL; p = p->next)
		if (p->session == s) {
			if (p->running && p->flags & JAIL_EXEC_KILL_ON_CLOSE)
				kill(-p->pid, SIGKILL);
			p->session = -1;
		}
	for (int j = 0; j < nwaiters; j++)
		if (waiters[j].session == s)
			waiters[j--] = waiters[--nwaiters];
	close(s);
	sessions[i] = sessions[--nsessions];
}

// serve reads one message from fd (the keeper's, or a session's) and handles it. Returns -1 at
// the end of fd.
static int serve(int fd, int is_keeper) {
	struct jail_msg head;
	ssize_t size = recv(fd, &head, sizeof head, MSG_PEEK | MSG_TRUNC);
	if (size <= 0)
		return size < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
	if (size > JAIL_MSG_MAX + (ssize_t)sizeof head)
		size = JAIL_MSG_MAX + sizeof head; // jail_recv then finds it truncated
	char small[4096], *buf = size <= (ssize_t)sizeof small ? small : malloc(size);
	int fds[JAIL_MSG_MAX_FDS], nfds;
	ssize_t n = buf == NULL ? -1 : jail_recv(fd, buf, size, fds, &nfds);
	if (n <= 0) {
		if (buf != small)
			free(buf);
		return n == 0 || (errno != EBADMSG && errno != EAGAIN && errno != EINTR) ? -1 : 0;
	}
	struct jail_msg *m = (struct jail_msg *)buf;
	if (is_keeper) { // a new session
		if (m->type == JAIL_MSG_SESSION && nfds == 1) {
			int *s = realloc(sessions, (nsessions + 1) * sizeof *s);
			if (s != NULL) {
				sessions = s;
				struct timeval t = {.tv_sec = 2};
				setsockopt(fds[0], SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
				sessions[nsessions++] = fds[0];
				nfds = 0;
			}
		}
		jail_close_fds(fds, nfds);
	} else {
		request(fd, m, buf + sizeof *m, fds, nfds);
	}
	if (buf != small)
		free(buf);
	return 0;
}

// expire kills the processes whose timeout has come, and returns the ms until the next one.
static int expire(void) {
	int64_t t = now(CLOCK_MONOTONIC), next = -1;
	for (struct proc *p = procs; p != NULL; p = p->next) {
		if (!p->running || p->deadline == 0 || p->timed_out)
			continue;
		if (p->deadline <= t) {
			p->timed_out = 1;
			kill(-p->pid, SIGKILL);
			kill(p->pid, SIGKILL); // if it left its group
		} else if (next < 0 || p->deadline - t < next) {
			next = p->deadline - t;
		}
	}
	return next < 0 ? -1 : (int)((next + 999999) / 1000000);
}

__attribute__((noreturn)) static void spawner(void) {
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	int sfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (sfd < 0 || devnull < 0)
		_exit(125);
	fcntl(KEEPER_FD, F_SETFD, FD_CLOEXEC);
	fcntl(BINARY_FD, F_SETFD, FD_CLOEXEC);
	for (;;) {
		int n = 0, max = 2 + nsessions;
		for (struct proc *p = procs; p != NULL; p = p->next)
			max += (p->out[0].from >= 0) + (p->out[1].from >= 0);
		struct pollfd *fds = calloc(max, sizeof *fds);
		struct stream **streams = calloc(max, sizeof *streams);
		struct proc **owners = calloc(max, sizeof *owners);
		if (fds == NULL || streams == NULL || owners == NULL)
			_exit(125);
		fds[n++] = (struct pollfd){.fd = KEEPER_FD, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
		for (int i = 0; i < nsessions; i++)
			fds[n++] = (struct pollfd){.fd = sessions[i], .events = POLLIN};
		int first_stream = n;
		for (struct proc *p = procs; p != NULL; p = p->next)
			for (int i = 0; i < 2; i++)
				if (p->out[i].from >= 0) {
					streams[n] = &p->out[i];
					owners[n] = p;
					fds[n++] = (struct pollfd){.fd = p->out[i].from, .events = POLLIN};
				}
		int timeout = expire();
		if (poll(fds, n, timeout) > 0) {
			if (fds[0].revents && serve(KEEPER_FD, 1) < 0)
				_exit(0); // the keeper is gone: so is the sandbox, in a moment
			if (fds[1].revents) {
				struct signalfd_siginfo si;
				while (read(sfd, &si, sizeof si) == sizeof si)
					;
				reap();
			}
			for (int i = first_stream; i < n; i++)
				if (fds[i].revents && alive(owners[i]) && streams[i]->from == fds[i].fd)
					relay(owners[i], streams[i]);
			// Sessions last: serving one may close another's descriptor number's slot.
			for (int i = first_stream - 1; i >= 2; i--)
				if (fds[i].revents && i - 2 < nsessions && sessions[i - 2] == fds[i].fd &&
				    (fds[i].revents & (POLLERR | POLLNVAL) || serve(fds[i].fd, 0) < 0))
					end_session(i - 2);
		}
		free(fds);
		free(streams);
		free(owners);
	}
}

// An init's setup started this binary as the spawner: it never returns to Go's runtime.
__attribute__((constructor)) static void become_spawner(int argc, char **argv) {
	if (argc < 1 || strcmp(argv[0], jail_spawner_arg0) != 0)
		return;
	// First: until now the process was dumpable, but nothing but pid 1 and the setup existed.
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		_exit(125);
	prctl(PR_SET_NAME, jail_spawner_arg0, 0, 0, 0); // not "3", after the descriptor it ran from
	if (argc > 1)
		default_timeout = strtoll(argv[1], NULL, 10);
	static const int ignored[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM,
	                              SIGTSTP, SIGTTIN, SIGTTOU, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGWINCH};
	for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
		signal(ignored[i], SIG_IGN);
	spawner();
}
