// `jail exec` and `jail rm -f` before Go's runtime. A Go program's start (its runtime, its
// packages' set-up) costs more than a millisecond and a half of CPU: most of what
// `jail exec ID -- /bin/true` took (0.6 of a whole one-shot run), and of `jail rm -f ID` but the
// sandbox's teardown. spawn_early.c's constructor hands their common forms here:
//
//   - `jail exec [-i] [--cwd DIR] [--env NAME[=VALUE]]... ID [--] COMMAND [ARG...]` sends the
//     sandbox's spawner the request jail/client's Start sends (session.h), with this process's
//     stdio as the command's, forwards the signals it gets, and exits with the command's status;
//   - `jail rm -f ID...` asks each keeper to stop, as jail/client's Delete does, and waits until
//     each has exited.
//
// Everything else returns to Go, which does it all: other options (-t, --timeout, --help, rm
// without -f), a runtime directory or sandbox it cannot take as is, a sandbox that does not
// answer, and a start that fails — nothing ran then, and Go asks again to report it as jail's
// one line.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session.h"
#include "spawn.h"

// The signals forwarded to the command, as cmd/jail's exec forwards them.
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
static int signal_pipe = -1; // the write end of the pipe caught signals go to

static void caught(int sig) {
	int e = errno;
	(void)!write(signal_pipe, &sig, sizeof sig);
	errno = e;
}

// option returns the value of option name at argv[*i] ("-name V", "--name V", "--name=V"),
// advancing *i past it, or NULL when argv[*i] is not that option.
static const char *option(int argc, char **argv, int *i, const char *name) {
	const char *a = argv[*i], *n = a[1] == '-' ? a + 2 : a + 1;
	size_t len = strlen(name);
	if (a[0] != '-' || strncmp(n, name, len) != 0)
		return NULL;
	if (n[len] == '=')
		return n + len + 1;
	if (n[len] != 0 || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

// is_id reports whether s has a sandbox id's form (rundir.IsID).
static int is_id(const char *s) {
	if (strlen(s) != 15 || strncmp(s, "jb_", 3) != 0)
		return 0;
	for (const char *c = s + 3; *c; c++)
		if (!(*c >= '0' && *c <= '9') && !(*c >= 'a' && *c <= 'f'))
			return 0;
	return 1;
}

// is_name reports whether s has a name's form (rundir.CheckName).
static int is_name(const char *s) {
	size_t n = strlen(s);
	if (n == 0 || n > 63 || strncmp(s, "jb_", 3) == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int alnum = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9');
		if (!alnum && (i == 0 || !strchr("_.-", s[i])))
			return 0;
	}
	return 1;
}

// runtime_dir writes jail's runtime directory to out (rundir.Path), if it exists and is
// private (rundir's checkPrivate); else it returns -1 and Go says why.
static int runtime_dir(char *out, size_t size) {
	const char *d = getenv("JAIL_RUNTIME_DIR"), *x = getenv("XDG_RUNTIME_DIR"), *t = getenv("TMPDIR");
	int n;
	if (d != NULL && *d)
		n = snprintf(out, size, "%s", d);
	else if (x != NULL && x[0] == '/')
		n = snprintf(out, size, "%s/jail", x);
	else
		n = snprintf(out, size, "%s/jail-%u", t != NULL && *t ? t : "/tmp", (unsigned)getuid());
	struct stat st;
	if (n < 0 || (size_t)n >= size || lstat(out, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() || st.st_mode & 077)
		return -1;
	return 0;
}

// sandbox_socket writes the path of the control socket of the sandbox idOrName names to out.
static int sandbox_socket(const char *idOrName, char *out, size_t size) {
	char root[PATH_MAX], link[PATH_MAX], id[32];
	if (runtime_dir(root, sizeof root) < 0)
		return -1;
	if (is_id(idOrName)) {
		snprintf(id, sizeof id, "%s", idOrName);
	} else {
		ssize_t n;
		if (!is_name(idOrName) || snprintf(link, sizeof link, "%s/names/%s", root, idOrName) >= (int)sizeof link ||
		    (n = readlink(link, id, sizeof id - 1)) < 0)
			return -1;
		id[n] = 0;
		if (!is_id(id))
			return -1;
	}
	int n = snprintf(out, size, "%s/%s/ctl.sock", root, id);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

// has_workspace reports whether the sandbox whose control socket is ctl has an overlay
// workspace: the `changes` link beside it (rundir.ChangesLink).
static int has_workspace(const char *ctl) {
	char p[PATH_MAX];
	const char *slash = strrchr(ctl, '/');
	struct stat st;
	if (slash == NULL || snprintf(p, sizeof p, "%.*s/changes", (int)(slash - ctl), ctl) >= (int)sizeof p)
		return 1;
	return lstat(p, &st) == 0;
}

// request encodes the exec request: argv, the env overrides, the working directory.
static char *request(struct jail_msg *m, char **argv, int argc, char **env, int envc, const char *cwd, size_t *len) {
	size_t n = strlen(cwd) + 1;
	for (int i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	for (int i = 0; i < envc; i++)
		n += strlen(env[i]) + 1;
	char *b = n <= JAIL_MSG_MAX ? malloc(n) : NULL, *p = b;
	if (b == NULL)
		return NULL;
	for (int i = 0; i < argc; i++)
		p = stpcpy(p, argv[i]) + 1;
	for (int i = 0; i < envc; i++)
		p = stpcpy(p, env[i]) + 1;
	stpcpy(p, cwd);
	m->argc = argc;
	m->envc = envc;
	*len = n;
	return b;
}

void jail_format_duration(int64_t ns, char *out, size_t size); // below

// wait_exit waits on sock for the end of pid, passing on the signals caught meanwhile (read from
// signals), and returns the status to exit with.
static int wait_exit(int sock, int signals, pid_t pid, const char *id) {
	for (;;) {
		struct pollfd fds[2] = {{.fd = sock, .events = POLLIN}, {.fd = signals, .events = POLLIN}};
		if (poll(fds, 2, -1) < 0)
			continue;
		int sig;
		while (fds[1].revents && read(signals, &sig, sizeof sig) == sizeof sig) {
			struct jail_msg m = {.type = JAIL_MSG_SIGNAL, .pid = pid, .value = sig};
			jail_send(sock, &m, NULL, 0, NULL, 0); // answered with 'k' or 'r', skipped below
		}
		if (!fds[0].revents)
			continue;
		char buf[sizeof(struct jail_msg) + 4096];
		int got[JAIL_MSG_MAX_FDS], ngot;
		ssize_t n = jail_recv(sock, buf, sizeof buf, got, &ngot);
		jail_close_fds(got, ngot);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		struct jail_msg m;
		if (n <= 0) {
			fprintf(stderr, "jail: sandbox %s: wait for %d: connection closed (did the sandbox end?)\n", id, (int)pid);
			return 125;
		}
		memcpy(&m, buf, sizeof m);
		if (m.type != JAIL_MSG_EXITED || m.pid != pid)
			continue;
		if (m.flags & JAIL_PROC_TIMED_OUT) {
			char d[64];
			jail_format_duration(m.ns1, d, sizeof d);
			fprintf(stderr, "jail: timeout: killed the command after %s\n", d);
			return 124;
		}
		return WIFSIGNALED(m.value) ? 128 + WTERMSIG(m.value) : WEXITSTATUS(m.value);
	}
}

// dial connects to the control socket at path; -1 when it cannot.
static int dial(const char *path) {
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof addr.sun_path)
		return -1;
	memcpy(addr.sun_path, path, strlen(path) + 1);
	int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock >= 0 && connect(sock, (struct sockaddr *)&addr, sizeof addr) < 0) {
		close(sock);
		sock = -1;
	}
	return sock;
}

void jail_exec_fast(int argc, char **argv) {
	int stdin_too = 0, envc = 0, i = 2;
	const char *cwd = "", *v;
	char **env = calloc(argc, sizeof *env), *made = calloc(argc, 1); // made: env[k] was malloc'd
	if (env == NULL || made == NULL)
		goto go;
	for (; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-i") == 0 || strcmp(argv[i], "--i") == 0)
			stdin_too = 1;
		else if ((v = option(argc, argv, &i, "cwd")) != NULL)
			cwd = v;
		else if ((v = option(argc, argv, &i, "env")) != NULL) {
			const char *eq = strchr(v, '=');
			if (v[0] == 0 || v[0] == '=')
				goto go; // Go names the mistake
			if (eq != NULL) {
				env[envc++] = (char *)v;
			} else if (getenv(v) != NULL) { // NAME: this process's, when set
				size_t n = strlen(v) + strlen(getenv(v)) + 2;
				if ((env[envc] = malloc(n)) == NULL)
					goto go;
				made[envc] = 1;
				snprintf(env[envc++], n, "%s=%s", v, getenv(v));
			}
		} else
			goto go; // -t, --timeout, --help, anything else: Go
	}
	if (i >= argc)
		goto go;
	const char *id = argv[i++];
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	char path[PATH_MAX];
	if (i >= argc || sandbox_socket(id, path, sizeof path) < 0)
		goto go;
	int fds[3], nfds = 0;
	if (stdin_too)
		fds[nfds++] = 0;
	fds[nfds++] = 1;
	fds[nfds++] = 2;
	for (int k = 0; k < nfds; k++)
		if (fcntl(fds[k], F_GETFD) < 0)
			goto go; // a closed stdio descriptor: Go's runtime puts /dev/null there
	struct jail_msg m = {.type = JAIL_MSG_EXEC, .flags = JAIL_EXEC_WAIT | JAIL_EXEC_KILL_ON_CLOSE | JAIL_EXEC_OUT_FD};
	if (stdin_too)
		m.flags |= JAIL_EXEC_STDIN_FD;
	size_t len;
	char *payload = request(&m, argv + i, argc - i, env, envc, cwd, &len);
	int sock = -1, pipe_fds[2] = {-1, -1};
	if (payload == NULL || pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0 || (sock = dial(path)) < 0)
		goto undo;
	// Caught before the command can exist, so that none is lost on the way.
	signal_pipe = pipe_fds[1];
	struct sigaction sa = {.sa_handler = caught};
	for (size_t k = 0; k < sizeof forwarded / sizeof forwarded[0]; k++)
		sigaction(forwarded[k], &sa, NULL);
	if (jail_send(sock, &m, payload, len, fds, nfds) < 0)
		goto undo;
	char buf[sizeof(struct jail_msg) + 64];
	int got[JAIL_MSG_MAX_FDS], ngot;
	ssize_t n;
	while ((n = jail_recv(sock, buf, sizeof buf, got, &ngot)) < 0 && errno == EINTR)
		;
	if (n > 0)
		jail_close_fds(got, ngot);
	memcpy(&m, buf, sizeof m);
	if (n <= 0 || m.type != JAIL_MSG_STARTED)
		goto undo; // it did not start: Go asks again, and says why
	_exit(wait_exit(sock, pipe_fds[0], m.pid, id));
undo:
	for (size_t k = 0; k < sizeof forwarded / sizeof forwarded[0]; k++)
		signal(forwarded[k], SIG_DFL);
	if (sock >= 0)
		close(sock);
	if (pipe_fds[0] >= 0) {
		close(pipe_fds[0]);
		close(pipe_fds[1]);
	}
	signal_pipe = -1;
	free(payload);
go:
	for (int k = 0; k < envc; k++)
		if (made[k])
			free(env[k]);
	free(env);
	free(made);
}

void jail_rm_fast(int argc, char **argv) {
	int i = 2, force = 0;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-f") != 0 && strcmp(argv[i], "--f") != 0 && strcmp(argv[i], "-force") != 0 &&
		    strcmp(argv[i], "--force") != 0)
			return; // --help, anything else: Go
		force = 1;
	}
	if (!force || i >= argc) // without -f, rm asks the spawner first what runs: Go does that
		return;
	int n = argc - i, *socks = calloc(n, sizeof *socks);
	if (socks == NULL)
		return;
	// Every sandbox reached before any is stopped: otherwise Go does it all, from the start. So
	// does it for a sandbox with an overlay workspace (its directory's `changes` link), whose
	// change set Go finishes once the sandbox is gone, and says what waits there.
	int k = 0;
	for (char path[PATH_MAX]; k < n; k++)
		if (sandbox_socket(argv[i + k], path, sizeof path) < 0 || has_workspace(path) || (socks[k] = dial(path)) < 0)
			break;
	if (k < n) {
		while (k-- > 0)
			close(socks[k]);
		free(socks);
		return;
	}
	for (k = 0; k < n; k++) {
		struct jail_msg m = {.type = JAIL_MSG_STOP};
		char buf[sizeof m];
		int got[JAIL_MSG_MAX_FDS], ngot;
		ssize_t r = jail_send(socks[k], &m, NULL, 0, NULL, 0) < 0 ? -1 : jail_recv(socks[k], buf, sizeof buf, got, &ngot);
		if (r > 0) {
			jail_close_fds(got, ngot);
			memcpy(&m, buf, sizeof m);
		}
		if (r <= 0 || m.type != JAIL_MSG_OK) {
			// This one's keeper went away meanwhile: Go removes what is left of it, and the rest.
			char **rest = calloc(n - k + 4, sizeof *rest);
			if (rest != NULL) {
				rest[0] = argv[0];
				rest[1] = "rm";
				rest[2] = "-f";
				memcpy(rest + 3, argv + i + k, (n - k) * sizeof *rest);
				execv("/proc/self/exe", rest);
			}
			fprintf(stderr, "jail: rm %s: its keeper did not answer\n", argv[i + k]);
			_exit(125);
		}
		while ((r = recv(socks[k], buf, sizeof buf, 0)) > 0 || (r < 0 && errno == EINTR))
			; // the end of the connection: the keeper has exited
		close(socks[k]);
	}
	_exit(0);
}

// jail_format_duration writes ns as Go's time.Duration.String does ("1.5s", "100ms", "1h0m0s"):
// the timeout message is the same on both paths (duration_test.go checks it).
void jail_format_duration(int64_t ns, char *out, size_t size) {
	char buf[32], *w = buf + sizeof buf;
	uint64_t u = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	*--w = 0;
	if (u < 1000000000ULL) {
		// Less than a second: ns, µs or ms, with a fraction.
		int prec = 0;
		const char *unit;
		if (u == 0) {
			snprintf(out, size, "0s");
			return;
		} else if (u < 1000ULL) {
			unit = "ns";
		} else if (u < 1000000ULL) {
			prec = 3;
			unit = "µs";
		} else {
			prec = 6;
			unit = "ms";
		}
		w -= strlen(unit);
		memcpy(w, unit, strlen(unit));
		int print = 0;
		for (int k = 0; k < prec; k++) { // the fraction, trailing zeros dropped
			int digit = u % 10;
			print = print || digit != 0;
			if (print)
				*--w = digit + '0';
			u /= 10;
		}
		if (print)
			*--w = '.';
		do {
			*--w = u % 10 + '0';
			u /= 10;
		} while (u > 0);
	} else {
		*--w = 's';
		int print = 0;
		for (int k = 0; k < 9; k++) {
			int digit = u % 10;
			print = print || digit != 0;
			if (print)
				*--w = digit + '0';
			u /= 10;
		}
		if (print)
			*--w = '.';
		uint64_t secs = u % 60;
		u /= 60;
		do {
			*--w = secs % 10 + '0';
			secs /= 10;
		} while (secs > 0);
		if (u > 0) {
			*--w = 'm';
			uint64_t mins = u % 60;
			u /= 60;
			do {
				*--w = mins % 10 + '0';
				mins /= 10;
			} while (mins > 0);
			if (u > 0) {
				*--w = 'h';
				do {
					*--w = u % 10 + '0';
					u /= 10;
				} while (u > 0);
			}
		}
	}
	if (ns < 0)
		*--w = '-';
	snprintf(out, size, "%s", w);
}
