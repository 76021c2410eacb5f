// The jail process its caller waits for, when spawn_early.c started the sandbox's init. Once init
// is forked, this process forks once more: the child goes on into Go's runtime as jail's host
// (it loads the profile, sends init its plan, reports errors), and this process stays here,
// small and single-threaded, as init's parent. It reaps init, which brings the command's CPU
// time and peak memory to jail's caller, forwards the signals jail is sent, and exits with the
// command's status.
//
// Why: at the end of a run, a Go process took about half a millisecond to notice, end its
// threads and unmap its runtime, and the caller waited for that after the command had ended.
// The host now leaves once it has sent init the plan, when nothing is left for it to do (no
// terminal, report, proxy or fallback; init then prints its own errors, this process enforces
// the timeout and, at the sandbox's end, releases the run's placeholders): it hands the sandbox
// over ('H' on the hand socket, with the placeholders' hold as descriptors) and exits, its
// teardown overlapping init's work and the command's. Otherwise it stays, and this process
// passes it init's wait status and resource usage (back pipe: only init's parent can reap
// init); the host then finishes as before, and its exit status is jail's.
//
// The host runs in a session of its own, so that signals for jail's process group (a terminal's
// Ctrl-C, a harness's killpg) reach it only through this process, once. They stay pending here
// until the host says where they go: straight to init once it has adopted it ('I', or 'H'), as
// the host would have forwarded them (init keeps those that come before the command for the
// command), so that none is lost in a host that is leaving; or to the host once it catches
// them ('S') when it runs an init of its own.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "batch.h"
#include "parent.h"
#include "placeholders.h"
#include "shed.h"
#include "spawn.h"

struct waiter {
	pid_t init, host;
	int init_ws, host_ws;
	int init_done, host_done;
	int started, to_init, handed_over; // what the host said: 'S', 'I', 'H'
	int hand_fd, back_fd; // -1 once closed
	// A timeout the host handed over: when (CLOCK_MONOTONIC), the status to exit with and
	// jail's error to print once it has killed init.
	int has_deadline, timed_out;
	struct timespec deadline;
	int timeout_status;
	char timeout_error[256];
	// The hold on the placeholders the run's protections sit on, which the host hands over with
	// its 'H' (package placeholder): released once pid 1 has left its namespaces after saying
	// the sandbox is empty, or else once init is reaped (release).
	int held[JAIL_HAND_MAX_FDS], nheld;
	// The audit's baseline (package audit), which the host hands over with an 'a' before its
	// 'H'; -1: none. Once init is reaped, jail is executed to list what the run wrote unseen,
	// when any of it changed.
	int audit_fd;
	// end_fd is the end pipe from pid 1 (jail_pid1_end_fd; -1 once closed). Its byte says that
	// nothing of the sandbox runs any more (ended): the sentinels are checked then (audited,
	// unseen), while pid 1 exits, rather than once it is reaped. Its EOF after the byte says
	// that pid 1 has left its namespaces (left): the placeholders are released then.
	int end_fd, ended, left, audited, unseen;
};

// take_timeout takes a 'T' record's body at b (n bytes; waiter.go's handOver): the time left in
// ns, the exit status and jail's error, after its length. Returns the bytes it took.
static size_t take_timeout(struct waiter *w, const unsigned char *b, size_t n) {
	uint64_t left;
	if (n < sizeof left + 2 || n < sizeof left + 2 + b[sizeof left + 1])
		return n; // cut short: the host writes it whole (below PIPE_BUF), so it is not the host's
	memcpy(&left, b, sizeof left);
	size_t len = b[sizeof left + 1];
	clock_gettime(CLOCK_MONOTONIC, &w->deadline);
	w->deadline.tv_sec += left / 1000000000 + (w->deadline.tv_nsec + left % 1000000000) / 1000000000;
	w->deadline.tv_nsec = (w->deadline.tv_nsec + left % 1000000000) % 1000000000;
	w->has_deadline = 1;
	w->timeout_status = b[sizeof left];
	memcpy(w->timeout_error, b + sizeof left + 2, len);
	w->timeout_error[len] = 0;
	return sizeof left + 2 + len;
}

// take_fds keeps the descriptors a message on the hand socket carried (only an 'H' carries
// any): the audit's baseline first when the message said 'a', then the placeholders' hold. Any
// past what the buffer held the kernel closed (MSG_CTRUNC): the host never sends that many
// (waiter.go).
static void take_fds(struct waiter *w, struct msghdr *msg, int audit) {
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c != NULL; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (int i = 0; i < n; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
			if (audit && w->audit_fd < 0)
				w->audit_fd = fd;
			else if (w->nheld < JAIL_HAND_MAX_FDS)
				w->held[w->nheld++] = fd;
			else
				close(fd);
		}
	}
}

// read_hand reads what the host says on the hand socket: 'S' (forward signals to it), 'I' (to
// init), 'H' (it hands the sandbox over, with the placeholders' hold), 'T' and a timeout before
// an 'H'. At the socket's end (the host is gone) it closes it. The host writes each message in
// one write below PIPE_BUF, so none is split.
static void read_hand(struct waiter *w) {
	unsigned char buf[PIPE_BUF];
	union {
		char buf[CMSG_SPACE(sizeof(int) * JAIL_HAND_MAX_FDS)];
		struct cmsghdr align;
	} control;
	ssize_t n;
	for (;;) {
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
		struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof control.buf};
		if ((n = recvmsg(w->hand_fd, &msg, MSG_CMSG_CLOEXEC)) <= 0)
			break;
		int audit = 0;
		for (size_t i = 0; i < (size_t)n; i++) {
			w->started = 1;
			audit |= buf[i] == 'a';
			if (buf[i] == 'S')
				w->to_init = 0; // also after an 'I': the host runs the Landlock fallback
			else if (buf[i] == 'I' || buf[i] == 'H')
				w->to_init = 1;
			if (buf[i] == 'H')
				w->handed_over = 1;
			else if (buf[i] == 'T')
				i += take_timeout(w, buf + i + 1, n - i - 1);
		}
		take_fds(w, &msg, audit);
	}
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(w->hand_fd);
		w->hand_fd = -1;
	}
}

// init_ended passes init's wait status and resource usage to a host still waiting for them.
static void init_ended(struct waiter *w, const struct rusage *ru) {
	w->init_done = 1;
	if (w->host_done || w->handed_over)
		return;
	struct jail_waited msg = {.wait_status = w->init_ws, .rusage = *ru};
	// A failure means the host is gone: its own exit status says how.
	(void)!write(w->back_fd, &msg, sizeof msg);
}

// host_ended notes the host's end. A host that leaves without handing over has reaped init
// through this process, or failed: then init must not outlive it.
static void host_ended(struct waiter *w) {
	w->host_done = 1;
	if (w->hand_fd >= 0)
		read_hand(w); // a hand-over written just before the host exited
	if (!w->handed_over && !w->init_done)
		kill(w->init, SIGKILL);
}

// reap reaps every child that ended.
static void reap(struct waiter *w) {
	int ws;
	struct rusage ru;
	pid_t pid;
	while ((pid = wait4(-1, &ws, WNOHANG, &ru)) > 0) {
		if (pid == w->init) {
			w->init_ws = ws;
			init_ended(w, &ru);
		} else if (pid == w->host) {
			w->host_ws = ws;
			host_ended(w);
		}
	}
}

// forward passes the signals pending on sfd on: to init, once the host has adopted it, or to
// the host, which passes them to an init of its own.
static void forward(struct waiter *w, int sfd) {
	struct signalfd_siginfo si;
	while (read(sfd, &si, sizeof si) == sizeof si) {
		if (w->to_init && !w->init_done)
			kill(w->init, si.ssi_signo);
		else if (!w->to_init && !w->host_done)
			kill(w->host, si.ssi_signo);
	}
}

// read_end reads pid 1's end pipe: a byte once the sandbox is empty, then EOF once pid 1 has
// left its namespaces: an exiting process's last descriptors close in its task work, which the
// kernel runs after it has left them (do_exit), and pid 1 is the end pipe's only writer. EOF
// without a byte (pid 1 killed, or failing) says nothing about the rest of the sandbox.
static void read_end(struct waiter *w) {
	char c;
	ssize_t n = read(w->end_fd, &c, 1);
	if (n == 1) {
		w->ended = 1;
		return;
	}
	w->left = n == 0 && w->ended;
	if (n >= 0 || errno != EINTR) {
		close(w->end_fd);
		w->end_fd = -1;
	}
}

// audit checks the audit's sentinels once, when there is a baseline (jail_audit_changed).
static void audit(struct waiter *w) {
	if (w->audit_fd >= 0 && !w->audited) {
		w->unseen = jail_audit_changed(w->audit_fd);
		w->audited = 1;
	}
}

// release removes the run's placeholders once (jail_release_placeholders), after the audit has
// looked: removing them changes their directories' ctimes.
static void release(struct waiter *w) {
	audit(w);
	if (w->nheld > 0)
		jail_release_placeholders(w->held, w->nheld);
	w->nheld = 0;
}

// time_left returns how long until the handed-over timeout, or NULL when there is none.
static const struct timespec *time_left(struct waiter *w) {
	static struct timespec left;
	if (!w->has_deadline || w->timed_out || w->init_done)
		return NULL;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	left.tv_sec = w->deadline.tv_sec - now.tv_sec;
	left.tv_nsec = w->deadline.tv_nsec - now.tv_nsec;
	if (left.tv_nsec < 0) {
		left.tv_sec--;
		left.tv_nsec += 1000000000;
	}
	if (left.tv_sec < 0)
		left.tv_sec = left.tv_nsec = 0;
	return &left;
}

// expire kills the sandbox once the handed-over timeout is reached: init is pid 1 of the
// sandbox's pid namespace, and the kernel kills every other process in it with it.
static void expire(struct waiter *w) {
	const struct timespec *left = time_left(w);
	if (left != NULL && left->tv_sec == 0 && left->tv_nsec == 0) {
		w->timed_out = 1;
		kill(w->init, SIGKILL);
	}
}

// wait_sandbox is the waiter's life: cfd and sfd are signalfds for SIGCHLD and the forwarded
// signals, blocked from here on. It runs as SCHED_OTHER again (batch.c): it only ever wakes to
// end the run or to pass a signal on, and should then preempt what runs where it wakes rather
// than wait for its time slice (0.02–0.05 ms off the exit).
__attribute__((noreturn)) static void wait_sandbox(struct waiter *w, int cfd, int sfd,
                                                   const sigset_t *blocked) {
	if (jail_batch)
		jail_unbatch_thread();
	sigprocmask(SIG_BLOCK, blocked, NULL);
	signal(SIGPIPE, SIG_IGN); // a host gone before it read init's status
	reap(w);                  // a child that ended before SIGCHLD was blocked
	while (!(w->init_done && w->host_done)) {
		struct pollfd fds[4] = {
		    {.fd = cfd, .events = POLLIN},
		    {.fd = w->hand_fd, .events = POLLIN},
		    {.fd = w->started ? sfd : -1, .events = POLLIN},
		    {.fd = w->end_fd, .events = POLLIN},
		};
		if (jail_poll_idle(fds, 4, time_left(w)) < 0)
			continue;
		expire(w);
		if (fds[1].revents)
			read_hand(w);
		if (fds[3].revents)
			read_end(w);
		if (w->ended)
			audit(w); // while pid 1 exits
		// The placeholders may go while pid 1 ends its exit: it wrote its byte only once it had
		// killed and reaped every process of its pid namespace, nested ones too, so none is left
		// to find a protected name bare. They wait for the EOF after it, when pid 1 has left its
		// mount namespace: removed under a mount still there, each would detach it and wait for
		// an expedited RCU grace period. Without the byte, only once init is reaped (below).
		if (w->left)
			release(w);
		if (fds[0].revents) {
			jail_drain_signalfd(cfd);
			reap(w);
		}
		if (w->started)
			forward(w, sfd);
	}
	// init is reaped: the sandbox is gone. The placeholders go now unless they did once pid 1
	// had left its namespaces.
	release(w);
	int unseen = w->unseen;
	int status = jail_exit_status(w->handed_over ? w->init_ws : w->host_ws);
	if (w->timed_out) {
		dprintf(2, "jail: %s\n", w->timeout_error);
		status = w->timeout_status;
	}
	if (unseen)
		jail_audit_exec(w->audit_fd, status); // returns only if it cannot run
	_exit(status);
}

void jail_fork_host(void) {
	int hand[2], back[2], cfd, sfd;
	sigset_t blocked;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, hand) < 0) // it carries descriptors
		return;
	if (pipe2(back, O_CLOEXEC) < 0) {
		close(hand[0]);
		close(hand[1]);
		return;
	}
	pid_t waiter = getpid(), host = -1;
	if (jail_signalfds(&cfd, &sfd, &blocked) == 0 && (host = fork()) < 0) {
		close(cfd);
		close(sfd);
	}
	if (host < 0) { // this process goes on as the host, and waits for init itself
		close(hand[0]);
		close(hand[1]);
		close(back[0]);
		close(back[1]);
		close(jail_early.end_fd);
		jail_early.end_fd = -1;
		return;
	}
	if (host == 0) {
		// The host dies with the waiter, as init does, and is out of jail's process group.
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != waiter || setsid() < 0)
			_exit(125);
		close(cfd);
		close(sfd);
		close(hand[0]);
		close(back[1]);
		close(jail_early.end_fd); // the waiter's
		jail_early.end_fd = -1;
		jail_early.hand_fd = hand[1];
		jail_early.back_fd = back[0];
		return;
	}
	close(hand[1]);
	close(back[0]);
	fcntl(hand[0], F_SETFL, O_NONBLOCK);
	// The host holds init's pipes; this process only waits.
	close(jail_early.plan_fd);
	close(jail_early.msg_fd);
	close(jail_early.err_fd);
	struct waiter w = {.init = jail_early.pid, .host = host, .hand_fd = hand[0], .back_fd = back[1], .audit_fd = -1,
	                   .end_fd = jail_early.end_fd};
	wait_sandbox(&w, cfd, sfd, &blocked);
}
