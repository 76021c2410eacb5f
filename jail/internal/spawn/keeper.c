// The keeper: the host-side process of a persistent sandbox, in C for its whole life. `jail
// create`'s constructor forks it before Go's runtime exists (spawn_early.c): it leaves the
// caller's session and descriptors, forks the sandbox's init in new namespaces (which goes on
// into Go's runtime as init, as a run's early init does), and while `jail create` sends init its
// plan it waits. Once create says the sandbox is ready ('G'), it holds it:
//
// - It is init's parent: it reaps it, and init dies with it (PR_SET_PDEATHSIG), taking the
//   whole pid namespace along. A sandbox cannot outlive its keeper.
// - It listens on the sandbox's two sockets in its state directory, which no sandbox has bound:
//   ctl.sock (SOCK_SEQPACKET, session.h's messages) and api.sock (HTTP). Each connection's peer
//   must have this uid (SO_PEERCRED) and this user namespace, which no process in any sandbox
//   has. A ctl connection asks the keeper to stop the sandbox or set its timers, or it is handed
//   to the spawner inside (session.h), which serves it from then on; an HTTP connection is handed
//   to a handler, jail's binary executed as jail_api_arg0 (Go, the HTTP API) for that
//   connection alone.
// - It enforces the idle timeout (no connection open, none for so long) and the deadline, and
//   then removes the sandbox as `jail rm` would. Each connection's start and end touch the lock
//   file, whose mtime is then the sandbox's last use.
// - With the egress proxy, it runs jail's binary as jail_egress_arg0 on the proxy's socket.
// - It holds the sandbox's placeholders (JAIL_MSG_HOLD) as a run's host or waiter does, and
//   releases them once init is gone: the last sandbox using them removes them.
// - It keeps the lock of an overlay workspace's change set (JAIL_MSG_KEEP) while the sandbox
//   lives, so that jail tells the change set of a live sandbox from one whose sandbox is gone.
//
// Its state directory holds the lock it keeps locked (flock) while it lives, so that `jail ls`
// tells a live sandbox from the record of a dead one without trusting any file. When the
// sandbox ends by itself (its spawner died), the keeper removes the sockets and leaves the
// record with an "ended" file for `jail ls` to show; when it is removed (stop, timers, SIGTERM),
// nothing is left of it.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "placeholders.h"
#include "session.h"
#include "spawn.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

enum { PENDING_NS = 5000000000LL }; // a ctl connection must say what it wants within 5 s

// conn is a connection the keeper accepted: one whose first message has not come yet
// (pending), or one handed on, which it only watches for its end.
struct conn {
	int fd;
	int pending;
	int64_t until; // pending: CLOCK_MONOTONIC deadline
};

struct keeper {
	uid_t uid;
	dev_t ns_dev; // this process's user namespace, which peers must share
	ino_t ns_ino;
	sigset_t mask; // the signal mask to give children
	int create;    // jail create's end of the socket pair; -1 once closed
	int chan;      // the spawner's channel (init's stdin); -1: none
	pid_t init, egress;
	uint32_t ns;
	int ready; // 'G' came: the sandbox is served
	char dir[PATH_MAX], name[PATH_MAX];
	int dirfd, lock;
	int api, ctl; // listening sockets
	struct conn *conns;
	int nconns;
	int64_t idle_ns, deadline; // 0: none; deadline in CLOCK_REALTIME
	int64_t active;            // CLOCK_MONOTONIC of the last connection's start or end
	int *hold;                 // the placeholders' hold (JAIL_MSG_HOLD), released at the end
	int nhold;
	int workspace; // the change set's lock (JAIL_MSG_KEEP), closed once init is gone; -1: none
};

static int64_t now(clockid_t clock) {
	struct timespec t;
	clock_gettime(clock, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

// touch notes activity: the idle timer starts again, and the lock's mtime says when.
static void touch(struct keeper *k) {
	k->active = now(CLOCK_MONOTONIC);
	if (k->lock >= 0)
		futimens(k->lock, NULL);
}

static void answer(int fd, uint32_t type, int32_t value) {
	struct jail_msg m = {.type = type, .value = value};
	jail_send(fd, &m, NULL, 0, NULL, 0);
}

// remove_tree removes name beneath dirfd, a directory's whole tree, never following a symlink.
static void remove_tree(int dirfd, const char *name) {
	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			remove_tree(fd, e->d_name);
	closedir(d);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

// kill_child kills one of the keeper's children and reaps it. Returns its wait status.
static int kill_child(pid_t *pid) {
	int ws = 0;
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		while (waitpid(*pid, &ws, 0) < 0 && errno == EINTR)
			;
	}
	*pid = -1;
	return ws;
}

// ended writes the record of a sandbox that ended by itself: when, why, init's status.
static void write_ended(struct keeper *k, int ws) {
	char at[32], text[256];
	time_t t = time(NULL);
	struct tm tm;
	strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	int status = WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
	int n = snprintf(text, sizeof text,
	                 "{\"at\":\"%s\",\"reason\":\"its spawner ended (status %d): a command may have killed it\",\"status\":%d}\n", at,
	                 status, status);
	int fd = openat(k->dirfd, "ended", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0) {
		(void)!write(fd, text, n);
		close(fd);
	}
}

// release_hold ends the sandbox's hold on its placeholders, once init is gone (placeholders.h):
// the last sandbox using them removes them, from here, outside its mount namespace.
static void release_hold(struct keeper *k) {
	if (k->nhold > 0) {
		jail_release_placeholders(k->hold, k->nhold);
		jail_close_fds(k->hold, k->nhold);
	}
	free(k->hold);
	k->hold = NULL;
	k->nhold = 0;
}

// teardown ends the sandbox: init (and with it every process inside), the egress proxy, the
// placeholders' hold, the sockets. all removes the state directory too; otherwise the record
// stays, saying it ended.
static void teardown(struct keeper *k, int all) {
	int ws = kill_child(&k->init);
	kill_child(&k->egress);
	release_hold(k);
	if (k->workspace >= 0) {
		close(k->workspace);
		k->workspace = -1;
	}
	if (k->dirfd >= 0) {
		for (const char *s = "api.sock\0ctl.sock\0egress.sock\0"; *s; s += strlen(s) + 1)
			unlinkat(k->dirfd, s, 0);
		if (all) {
			if (k->dir[0] != 0) {
				char parent[PATH_MAX];
				snprintf(parent, sizeof parent, "%s", k->dir);
				char *slash = strrchr(parent, '/');
				if (slash != NULL) {
					*slash = 0;
					int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
					if (pfd >= 0) {
						remove_tree(pfd, slash + 1);
						close(pfd);
					}
				}
			}
		} else {
			write_ended(k, ws);
		}
	}
	if (k->name[0] != 0)
		unlink(k->name);
}

// peer_ok reports whether fd's peer may use the sandbox: this uid, and this user namespace —
// which refuses every process inside any sandbox (each has a user namespace of its own). The
// peer's pidfd, where the kernel has it, makes sure the pid was not reused meanwhile.
static int peer_ok(const struct keeper *k, int fd) {
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.uid != k->uid || cr.pid <= 0)
		return 0;
	int pidfd = -1;
	len = sizeof pidfd;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		pidfd = -1;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)cr.pid);
	struct stat st;
	int ok = stat(path, &st) == 0 && st.st_dev == k->ns_dev && st.st_ino == k->ns_ino;
	if (pidfd >= 0) {
		ok = ok && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
		close(pidfd);
	}
	return ok;
}

static void add_conn(struct keeper *k, int fd, int pending) {
	struct conn *c = realloc(k->conns, (k->nconns + 1) * sizeof *c);
	if (c == NULL) {
		close(fd);
		return;
	}
	k->conns = c;
	k->conns[k->nconns++] = (struct conn){.fd = fd, .pending = pending, .until = now(CLOCK_MONOTONIC) + PENDING_NS};
	touch(k);
}

static void drop_conn(struct keeper *k, int i) {
	close(k->conns[i].fd);
	k->conns[i] = k->conns[--k->nconns];
	touch(k);
}

// exec_jail executes jail's own binary as arg0 with the state directory as its argument, in a
// child with conn as stdin (or /dev/null) and extra as descriptor 3 (or none).
static pid_t exec_jail(struct keeper *k, const char *arg0, int conn, int extra) {
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, &k->mask, NULL);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(conn >= 0 ? conn : null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    (extra >= 0 && dup2(extra, 3) < 0) || close_range(extra >= 0 ? 4 : 3, ~0U, 0) < 0)
		_exit(127);
	char *argv[] = {(char *)arg0, k->dir, NULL};
	execve("/proc/self/exe", argv, environ);
	_exit(127);
}

// accept_conn takes a connection on a listening socket, if its peer may use the sandbox.
static int accept_conn(struct keeper *k, int l) {
	int fd = accept4(l, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return -1;
	if (!peer_ok(k, fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

// first_message acts on a pending ctl connection's first message: stop, timers, or anything
// else, which the spawner serves (the keeper only peeks, so the message waits for it there).
// Returns -1 when the keeper is to exit.
static int first_message(struct keeper *k, int i) {
	int fd = k->conns[i].fd;
	struct jail_msg m;
	ssize_t n = recv(fd, &m, sizeof m, MSG_PEEK);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n < (ssize_t)sizeof m) {
		drop_conn(k, i);
		return 0;
	}
	switch (m.type) {
	case JAIL_MSG_STOP:
		// Read, not only peeked: a socket closed with a message unread makes the peer's next
		// read fail (ECONNRESET) before it gets the answer queued for it.
		recv(fd, &m, sizeof m, 0);
		teardown(k, 1);
		answer(fd, JAIL_MSG_OK, 0);
		return -1;
	case JAIL_MSG_TIMERS: {
		char buf[sizeof m];
		int fds[JAIL_MSG_MAX_FDS], nfds;
		if (jail_recv(fd, buf, sizeof buf, fds, &nfds) == sizeof m) {
			memcpy(&m, buf, sizeof m);
			k->idle_ns = m.ns1;
			k->deadline = m.ns2;
			answer(fd, JAIL_MSG_OK, 0);
		}
		jail_close_fds(fds, nfds);
		drop_conn(k, i);
		return 0;
	}
	}
	int flags = fcntl(fd, F_GETFL);
	struct jail_msg s = {.type = JAIL_MSG_SESSION};
	if (k->chan < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || jail_send(k->chan, &s, NULL, 0, &fd, 1) < 0) {
		drop_conn(k, i);
		return 0;
	}
	k->conns[i].pending = 0; // the spawner has it; watched for its end
	touch(k);
	return 0;
}

// spawn_init (again) forks init in the namespaces ns, with a new plan pipe, messages pipe and
// spawner channel, and sends jail create init's pid and its ends of the pipes. In the child,
// which is to become init, it returns 1; otherwise 0.
static int spawn_init(struct keeper *k, uint32_t ns) {
	kill_child(&k->init);
	if (k->chan >= 0)
		close(k->chan);
	k->chan = -1;
	int cfg[2] = {-1, -1}, rep[2] = {-1, -1}, chan[2] = {-1, -1}, null = -1, e = 0;
	pid_t pid = -1;
	if (pipe2(cfg, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0 ||
	    (null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		e = errno;
	} else {
		int fds[5] = {chan[1], null, null, cfg[0], rep[1]}, errs = -1;
		pid = jail_fork_init(ns, fds, -1, &k->mask, &errs);
		if (pid == 0) {
			signal(SIGPIPE, SIG_DFL); // the keeper's, not init's setup's
			return 1;
		}
		if (pid < 0)
			e = errno;
		else { // init reports a failed start (an errno), or closes the pipe once on its way
			int got;
			ssize_t n;
			while ((n = read(errs, &got, sizeof got)) < 0 && errno == EINTR)
				;
			close(errs);
			if (n == sizeof got) {
				e = got;
				kill_child(&pid);
			}
		}
	}
	for (int *fd = (int[]){cfg[0], rep[1], chan[1], null}, i = 0; i < 4; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	struct jail_msg m = {.type = JAIL_MSG_INIT, .flags = ns, .pid = pid, .value = e};
	if (pid > 0) {
		k->init = pid;
		k->chan = chan[0];
		// The namespaces go first on the plan's pipe, as launchInit sends them.
		(void)!write(cfg[1], &ns, sizeof ns);
		int give[2] = {cfg[1], rep[0]};
		jail_send(k->create, &m, NULL, 0, give, 2);
	} else {
		if (chan[0] >= 0)
			close(chan[0]);
		m.type = JAIL_MSG_ERROR;
		jail_send(k->create, &m, NULL, 0, NULL, 0);
	}
	if (cfg[1] >= 0)
		close(cfg[1]);
	if (rep[0] >= 0)
		close(rep[0]);
	return 0;
}

// from_create handles a message from jail create. Returns 1 in init's child, -1 when the keeper
// is to exit (create gave up or died before the sandbox was ready), 0 otherwise.
static int from_create(struct keeper *k) {
	char buf[sizeof(struct jail_msg) + 2 * PATH_MAX + 2];
	int fds[JAIL_MSG_MAX_FDS], nfds;
	ssize_t n = jail_recv(k->create, buf, sizeof buf, fds, &nfds);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		close(k->create);
		k->create = -1;
		return k->ready ? 0 : -1; // gone before the sandbox was ready: nothing of it may stay
	}
	struct jail_msg m;
	memcpy(&m, buf, sizeof m);
	char *payload = buf + sizeof m;
	switch (m.type) {
	case JAIL_MSG_SPAWN:
		jail_close_fds(fds, nfds);
		k->ns = m.value;
		return spawn_init(k, k->ns);
	case JAIL_MSG_DIR: {
		const char *end = payload + m.len, *name = memchr(payload, 0, m.len);
		if (nfds != 1 || name == NULL || memchr(name + 1, 0, end - name - 1) == NULL || strlen(payload) >= sizeof k->dir ||
		    strlen(name + 1) >= sizeof k->name) {
			jail_close_fds(fds, nfds);
			answer(k->create, JAIL_MSG_ERROR, EINVAL);
			return 0;
		}
		memcpy(k->dir, payload, strlen(payload) + 1);
		memcpy(k->name, name + 1, strlen(name + 1) + 1);
		k->lock = fds[0];
		k->dirfd = open(k->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		answer(k->create, k->dirfd < 0 ? JAIL_MSG_ERROR : JAIL_MSG_OK, errno);
		return 0;
	}
	case JAIL_MSG_HOLD: {
		int *h = realloc(k->hold, (k->nhold + nfds) * sizeof *h);
		if (h == NULL) {
			jail_close_fds(fds, nfds);
			answer(k->create, JAIL_MSG_ERROR, ENOMEM);
			return 0;
		}
		k->hold = h;
		memcpy(k->hold + k->nhold, fds, nfds * sizeof *fds);
		k->nhold += nfds;
		answer(k->create, JAIL_MSG_OK, 0);
		return 0;
	}
	case JAIL_MSG_KEEP:
		if (nfds != 1 || k->workspace >= 0) {
			jail_close_fds(fds, nfds);
			answer(k->create, JAIL_MSG_ERROR, EINVAL);
			return 0;
		}
		k->workspace = fds[0];
		answer(k->create, JAIL_MSG_OK, 0);
		return 0;
	case JAIL_MSG_GO:
		if (nfds < 2 || k->init <= 0 || k->dirfd < 0) {
			jail_close_fds(fds, nfds);
			answer(k->create, JAIL_MSG_ERROR, EINVAL);
			return 0;
		}
		k->api = fds[0];
		k->ctl = fds[1];
		fcntl(k->api, F_SETFL, O_NONBLOCK);
		fcntl(k->ctl, F_SETFL, O_NONBLOCK);
		if (nfds > 2) {
			k->egress = exec_jail(k, jail_egress_arg0, -1, fds[2]);
			close(fds[2]);
		}
		k->idle_ns = m.ns1;
		k->deadline = m.ns2;
		k->ready = 1;
		touch(k);
		answer(k->create, k->egress < 0 && nfds > 2 ? JAIL_MSG_ERROR : JAIL_MSG_OK, errno);
		return 0;
	}
	jail_close_fds(fds, nfds);
	answer(k->create, JAIL_MSG_ERROR, EINVAL);
	return 0;
}

// reap reaps the keeper's children: handlers, the egress proxy, init. Returns -1 once init has
// ended, which ends the sandbox.
static int reap(struct keeper *k) {
	int ws;
	pid_t pid;
	while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
		if (pid == k->egress)
			k->egress = -1;
		if (pid == k->init) {
			k->init = -1;
			teardown(k, !k->ready);
			return -1;
		}
	}
	return 0;
}

// expired reports whether a timer ran out, and sets *ms to the time to the next one (-1: none).
static int expired(struct keeper *k, int *ms) {
	int64_t left = -1;
	if (k->ready && k->deadline > 0)
		left = k->deadline - now(CLOCK_REALTIME);
	int open = 0;
	for (int i = 0; i < k->nconns; i++)
		open += !k->conns[i].pending;
	if (k->ready && k->idle_ns > 0 && open == 0) {
		int64_t idle = k->active + k->idle_ns - now(CLOCK_MONOTONIC);
		if (left < 0 || idle < left)
			left = idle;
	}
	int64_t mono = now(CLOCK_MONOTONIC);
	for (int i = 0; i < k->nconns; i++)
		if (k->conns[i].pending && (left < 0 || k->conns[i].until - mono < left))
			left = k->conns[i].until - mono > 0 ? k->conns[i].until - mono : 0;
	*ms = left < 0 ? -1 : (int)((left + 999999) / 1000000);
	if (k->ready && k->deadline > 0 && k->deadline <= now(CLOCK_REALTIME))
		return 1;
	return k->ready && k->idle_ns > 0 && open == 0 && k->active + k->idle_ns <= mono;
}

// serve is the keeper's life. It returns only in the child that is to become init.
static int serve(struct keeper *k, int sfd) {
	for (;;) {
		int ms;
		if (expired(k, &ms)) {
			teardown(k, 1);
			_exit(0);
		}
		int n = 0;
		struct pollfd *fds = calloc(5 + k->nconns, sizeof *fds);
		if (fds == NULL)
			_exit(125);
		fds[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = k->create, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = k->ready ? k->api : -1, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = k->ready ? k->ctl : -1, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = k->chan, .events = 0}; // its end: the spawner died
		int first = n;
		for (int i = 0; i < k->nconns; i++) // a handed-on connection: only its end (events 0)
			fds[n++] = (struct pollfd){.fd = k->conns[i].fd, .events = k->conns[i].pending ? POLLIN : 0};
		int ready = poll(fds, n, ms);
		if (ready > 0 && fds[0].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) == sizeof si)
				if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
					teardown(k, 1);
					_exit(0);
				}
			if (reap(k) < 0)
				_exit(0);
		}
		if (ready > 0 && fds[1].revents) {
			int r = from_create(k);
			if (r > 0) {
				free(fds);
				return 1;
			}
			if (r < 0) {
				teardown(k, 1);
				_exit(1);
			}
		}
		if (ready > 0 && fds[4].revents) { // the spawner is gone: init ends the sandbox next
			close(k->chan);
			k->chan = -1;
		}
		if (ready > 0 && fds[2].revents) {
			int c = accept_conn(k, k->api);
			if (c >= 0) {
				exec_jail(k, jail_api_arg0, c, -1);
				add_conn(k, c, 0);
			}
		}
		if (ready > 0 && fds[3].revents) {
			int c = accept_conn(k, k->ctl);
			if (c >= 0)
				add_conn(k, c, 1);
		}
		// Connections, from the last: dropping one moves the last into its place.
		for (int i = n - 1; ready > 0 && i >= first; i--) {
			int c = i - first;
			if (c >= k->nconns || k->conns[c].fd != fds[i].fd || !fds[i].revents)
				continue;
			if (k->conns[c].pending && !(fds[i].revents & (POLLHUP | POLLERR))) {
				if (first_message(k, c) < 0)
					_exit(0);
			} else {
				drop_conn(k, c);
			}
		}
		int64_t mono = now(CLOCK_MONOTONIC);
		for (int i = k->nconns - 1; i >= 0; i--)
			if (k->conns[i].pending && k->conns[i].until <= mono)
				drop_conn(k, i);
		free(fds);
	}
}

int jail_keeper_link = -1;

pid_t jail_fork_keeper(uint32_t ns) {
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -1;
	pid_t pid = fork();
	if (pid != 0) {
		close(sp[1]);
		if (pid > 0)
			jail_keeper_link = sp[0];
		else
			close(sp[0]);
		return pid;
	}
	// The keeper: out of the caller's session, terminal, working directory and descriptors.
	close(sp[0]);
	static struct keeper k = {.create = -1, .chan = -1, .init = -1, .egress = -1, .dirfd = -1, .lock = -1, .api = -1, .ctl = -1, .workspace = -1};
	k.uid = getuid();
	k.create = sp[1];
	jail_set_cmdline(jail_keeper_arg0);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct stat st;
	if (setsid() < 0 || chdir("/") < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
	    dup2(k.create, 3) < 0 || stat("/proc/self/ns/user", &st) < 0)
		_exit(125);
	k.create = 3;
	fcntl(3, F_SETFD, FD_CLOEXEC);
	close_range(4, ~0U, 0);
	k.ns_dev = st.st_dev;
	k.ns_ino = st.st_ino;
	sigset_t blocked;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGCHLD);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGHUP);
	sigprocmask(SIG_BLOCK, &blocked, &k.mask);
	sigdelset(&blocked, SIGHUP); // blocked, never read: the session it might come from is gone
	int sfd = signalfd(-1, &blocked, SFD_NONBLOCK | SFD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	if (sfd < 0)
		_exit(125);
	k.ns = ns;
	if (spawn_init(&k, ns) || serve(&k, sfd))
		return 0; // init's child: into Go's runtime
	_exit(0);
}
