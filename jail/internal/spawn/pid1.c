// The sandbox's pid 1, in C. jail's init (the child spawn_early.c forks, or the process the host
// executes as jail_init_arg0) forks first thing, before Go's runtime: the child goes on into Go as
// init's setup (jail/internal/setup: it builds the sandbox from the plan and starts the command),
// and this process stays pid 1 of the sandbox's pid namespace, small and single-threaded. The setup
// starts the command with CLONE_PARENT, so the command is this process's child too: pid 1 reaps it
// and every orphan, forwards jail's signals to it, and when it ends kills what is left and exits
// with its status.
//
// Why: as pid 1, a Go init took about a quarter of a millisecond after the command's end to
// notice it (the runtime's signal delivery across threads), end its seven threads and unmap its
// runtime, and jail's caller waited for all of it. The setup now exits once it has named the
// command on the link pipe, its teardown overlapping the command's run. It stays when it has
// work while the command runs (a terminal to relay, a persistent sandbox's egress ports,
// --explain's listener): then pid 1 passes it the command's wait status on the back pipe, the
// setup kills what is left and finishes, and pid 1 exits with its status. A reported run's end
// (--report, --json-status-fd) is pid 1's to send the host: the command's status and the usage
// of everything it reaped but the setup, whose Go runtime is not the command's.
//
// The signals are blocked before the setup is forked, microseconds into pid 1's life and long
// before the host can have sent the plan, so that none sent before the command exists is lost
// (a blocked signal is queued even for a pid 1 without a handler): they stay pending until the
// setup names the command. One sent in those first microseconds, which a pid 1 with no handler
// ignores, is lost as it was with the Go init, whose window lasted until its runtime caught it.
// SIGWINCH goes to a setup relaying a terminal: it resizes the pseudo-terminal, and the kernel
// signals the command. A signal that comes once the command has ended ends a setup still
// finishing the run.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parent.h"
#include "shed.h"
#include "slack.h"
#include "spawn.h"
#include "watch.h"

int jail_pid1_link_fd = -1, jail_pid1_back_fd = -1, jail_pid1_watch_errno, jail_pid1_end_fd = -1;

struct pid1 {
	pid_t setup, command; // command: 0 until the setup names it
	int setup_ws, command_ws;
	int setup_done, command_done;
	int flags;            // the setup's JAIL_LINK_* flags
	int told;             // the setup was sent the command's end: its status is the run's
	int children;         // a child was left at the last reap
	int link_fd, back_fd; // link_fd: -1 once closed
	struct jail_watch watch; // the protections' mountpoints the setup named (watch.h)
	int report_fd, err_fd;   // wire.ReportFd and stderr, to report a breach of one or the end
	struct rusage usage;     // of every child reaped but the setup
};

// add_usage adds what the reaped child ru says to p's usage, as the kernel adds it to a parent's
// RUSAGE_CHILDREN: the times summed, the peak the largest.
static void add_usage(struct pid1 *p, const struct rusage *ru) {
	struct rusage *u = &p->usage;
	timeradd(&u->ru_utime, &ru->ru_utime, &u->ru_utime);
	timeradd(&u->ru_stime, &ru->ru_stime, &u->ru_stime);
	if (ru->ru_maxrss > u->ru_maxrss)
		u->ru_maxrss = ru->ru_maxrss;
}

// named says whom the forwarded signals go to is known: the command, or nobody once the setup
// ended without naming one.
static int named(const struct pid1 *p) {
	return p->command > 0 || p->setup_done;
}

// tell sends the setup the command's wait status.
static void tell(struct pid1 *p) {
	struct jail_waited msg = {.wait_status = p->command_ws, .rusage = p->usage};
	p->told = write(p->back_fd, &msg, sizeof msg) == sizeof msg; // or the setup is gone
}

// report_end sends the host the command's end, as the wire.Message {"exited": ...} the setup
// would (package wire; the fields the report reads), in one write.
static void report_end(const struct pid1 *p) {
	const struct rusage *u = &p->usage;
	char line[256];
	int n = snprintf(line, sizeof line,
	                 "{\"exited\":{\"wait_status\":%d,\"rusage\":{\"Utime\":{\"Sec\":%ld,\"Usec\":%ld},"
	                 "\"Stime\":{\"Sec\":%ld,\"Usec\":%ld},\"Maxrss\":%ld}}}\n",
	                 p->command_ws, (long)u->ru_utime.tv_sec, (long)u->ru_utime.tv_usec,
	                 (long)u->ru_stime.tv_sec, (long)u->ru_stime.tv_usec, u->ru_maxrss);
	if (n > 0 && n < (int)sizeof line)
		(void)!write(p->report_fd, line, n);
}

// read_link reads the setup's messages (struct jail_link, each written in one write), and closes
// the pipe at its end.
static void read_link(struct pid1 *p) {
	struct jail_link msg;
	ssize_t n;
	while ((n = read(p->link_fd, &msg, sizeof msg)) == sizeof msg) {
		if (msg.flags & JAIL_LINK_WATCH) { // the mountpoint's path follows, in the same write
			char path[PIPE_BUF];
			size_t len = (uint32_t)msg.flags >> JAIL_LINK_WATCH_LEN_SHIFT;
			if (len < sizeof path && read(p->link_fd, path, len) == (ssize_t)len)
				jail_watch_take(&p->watch, (uint32_t)msg.pid, path, len);
			continue;
		}
		p->command = msg.pid;
		p->flags = msg.flags;
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(p->link_fd);
		p->link_fd = -1;
	}
}

// command_ended notes the command's end, and passes it on to a setup that stays for it.
static void command_ended(struct pid1 *p, int ws) {
	p->command_done = 1;
	p->command_ws = ws;
	if (p->flags & JAIL_LINK_STAYS && !p->setup_done)
		tell(p);
}

// reap reaps every child that ended. Until the setup names the command, only the setup: the
// command may end before that, and its status waits for its name.
static void reap(struct pid1 *p) {
	for (;;) {
		int ws;
		struct rusage ru;
		pid_t pid = wait4(named(p) ? -1 : p->setup, &ws, WNOHANG, &ru);
		p->children = pid == 0;
		if (pid <= 0)
			return;
		if (pid == p->setup) {
			p->setup_done = 1;
			p->setup_ws = ws;
			if (p->link_fd >= 0)
				read_link(p); // a name written just before the setup exited
			continue;
		}
		add_usage(p, &ru);
		if (pid == p->command)
			command_ended(p, ws);
	}
}

// forward passes the signals pending on sfd to the command, or SIGWINCH to a setup relaying the
// command's terminal. Once the command has ended, a signal other than SIGWINCH ends a setup that
// stays to finish the run, and the command's status stands: jail's caller wants jail gone, and
// the setup may never finish (a command without Landlock's signal scope can stop it).
static void forward(struct pid1 *p, int sfd) {
	struct signalfd_siginfo si;
	while (read(sfd, &si, sizeof si) == sizeof si) {
		if (si.ssi_signo == SIGWINCH && p->flags & JAIL_LINK_WINCH && !p->setup_done) {
			kill(p->setup, SIGWINCH);
		} else if (!p->command_done) {
			if (p->command > 0)
				kill(p->command, si.ssi_signo);
		} else if (si.ssi_signo != SIGWINCH && !p->setup_done) {
			kill(p->setup, SIGKILL);
			p->told = 0;
		}
	}
}

// finished says the run is over: the command ended and no setup stays for it, or the setup
// ended (having named no command, or once the command ended too).
static int finished(const struct pid1 *p) {
	if (p->setup_done)
		return p->command <= 0 || p->command_done;
	return p->command_done && !(p->flags & JAIL_LINK_STAYS);
}

// end kills what the run left and reaps it all. As pid 1, kill(-1) reaches every process in the
// pid namespace, and an empty child list means an empty sandbox; without a pid namespace that
// would be every process of the user on the host, so then only the command's process group.
static void end(struct pid1 *p) {
	if (getpid() == 1) {
		if (p->children)
			kill(-1, SIGKILL);
	} else if (p->command > 0) {
		kill(-p->command, SIGKILL);
	}
	struct rusage ru;
	pid_t pid;
	while ((pid = wait4(-1, NULL, 0, &ru)) > 0 || errno == EINTR)
		if (pid > 0 && pid != p->setup)
			add_usage(p, &ru);
}

// breached stops the sandbox when a watched protection no longer holds (watch.h), and reports it
// as jail's error: the run fails closed. present: look only for a name something was made at.
static void breached(struct pid1 *p, int present) {
	const char *path = jail_watch_breach(&p->watch, present);
	if (path == NULL)
		return;
	p->children = 1;
	end(p); // every process but this one, so that nothing writes there any more
	jail_watch_report(p->flags & JAIL_LINK_HOST_LEAVES ? -1 : p->report_fd, p->err_fd, path);
	_exit(125);
}

// serve is pid 1's life, with cfd and sfd signalfds for SIGCHLD and the forwarded signals. The
// mount table is polled once the command is named: the setup names every mountpoint before it,
// and the table has changed since pid 1 opened it, so the first poll looks at them all.
__attribute__((noreturn)) static void serve(struct pid1 *p, int cfd, int sfd) {
	reap(p);
	while (!finished(p)) {
		struct pollfd fds[4] = {
		    {.fd = cfd, .events = POLLIN},
		    {.fd = p->link_fd, .events = POLLIN},
		    {.fd = named(p) ? sfd : -1, .events = POLLIN},
		    {.fd = named(p) && p->watch.n > 0 ? p->watch.fd : -1, .events = POLLPRI},
		};
		if (jail_poll_idle(fds, 4, NULL) < 0)
			continue;
		if (fds[3].revents & (POLLPRI | POLLERR))
			breached(p, 0);
		if (fds[1].revents)
			read_link(p);
		if (fds[0].revents)
			jail_drain_signalfd(cfd);
		reap(p); // also after a name: the command may have ended before it came
		if (named(p))
			forward(p, sfd);
	}
	end(p);
	breached(p, 1); // a protection the host moved away, and something made at its name
	if (jail_pid1_end_fd >= 0)
		(void)!write(jail_pid1_end_fd, "", 1); // nothing of the sandbox runs: the waiter may look
	if (p->flags & JAIL_LINK_REPORT && p->command_done)
		report_end(p);
	_exit(jail_exit_status(p->told || !p->command_done ? p->setup_ws : p->command_ws));
}

// drop_bounding_set empties the setup's capability bounding set, before Go's runtime starts its
// threads, which inherit it: a capability leaves it only through one PR_CAPBSET_DROP each, whose
// new credentials cost the setup 45 us on its way once it had the plan. The bounding set only
// limits what an execve grants, and the setup executes nothing but the command (or the spawner),
// from the thread that drops every capability and checks that this set is empty
// (restrict.DropCapabilities): the capabilities it builds the sandbox with stay. One the kernel
// refuses to drop stays for that check to find.
static void drop_bounding_set(void) {
	for (int c = 0; prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0; c++)
		;
}

void jail_become_pid1(void) {
	int cfd, sfd, link[2], back[2];
	sigset_t blocked, old;
	if (jail_signalfds(&cfd, &sfd, &blocked) < 0 || pipe2(link, O_CLOEXEC) < 0 ||
	    pipe2(back, O_CLOEXEC) < 0)
		goto fail;
	sigprocmask(SIG_BLOCK, &blocked, &old); // before the fork: pid 1 loses none sent during setup
	signal(SIGCHLD, SIG_DFL);               // ignored, the kernel would reap the command itself
	// The mount table the protections are watched on (watch.h), opened in the sandbox's mount
	// namespace before the setup changes it.
	int watch = open("/proc/self/mounts", O_RDONLY | O_CLOEXEC);
	jail_pid1_watch_errno = watch < 0 ? errno : 0;
	pid_t setup = fork();
	if (setup < 0)
		goto fail;
	if (setup == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(cfd);
		close(sfd);
		close(link[0]);
		close(back[1]);
		jail_pid1_link_fd = link[1];
		jail_pid1_back_fd = back[0];
		if (watch >= 0)
			close(watch);
		if (jail_pid1_end_fd >= 0) // pid 1's alone: the sandbox's end is its to say
			close(jail_pid1_end_fd);
		jail_pid1_end_fd = -1;
		drop_bounding_set();
		jail_coarse_slack(); // slack.c
		return;
	}
	// The setup holds init's stdio and pipes to the host; pid 1 keeps stderr and the report pipe,
	// out of the way, only to report a breached protection. Like the Go init before it, pid 1
	// keeps the namespace's capabilities, and is non-dumpable: the command can neither read
	// its memory (jail's environment, as forked) nor trace it.
	int err_fd = fcntl(2, F_DUPFD_CLOEXEC, 5), report_fd = fcntl(4, F_DUPFD_CLOEXEC, 5);
	close_range(0, 4, 0);
	close(link[1]);
	close(back[0]);
	fcntl(link[0], F_SETFL, O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN); // a setup gone before it read the command's end
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		kill(setup, SIGKILL);
		_exit(125);
	}
	struct pid1 p = {.setup = setup, .link_fd = link[0], .back_fd = back[1], .watch = {.fd = watch},
	                 .report_fd = report_fd, .err_fd = err_fd};
	serve(&p, cfd, sfd);
fail:
	dprintf(4, "fork the sandbox's pid 1: %s\n", strerror(errno));
	_exit(125);
}

// An init the host executed (launchInit) becomes pid 1 and its setup here, before Go's runtime.
__attribute__((constructor)) static void become_pid1_when_init(int argc, char **argv) {
	if (argc > 0 && strcmp(argv[0], jail_init_arg0) == 0)
		jail_become_pid1();
}
