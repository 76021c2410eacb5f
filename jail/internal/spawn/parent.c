// What jail's two C parents share (parent.h).
#define _GNU_SOURCE
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parent.h"

// The signals jail forwards to the command (jail's run.go: forwardedSignals).
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

int jail_exit_status(int ws) {
	return WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : WEXITSTATUS(ws);
}

int jail_signalfds(int *cfd, int *sfd, sigset_t *blocked) {
	sigset_t child, fwd;
	sigemptyset(&child);
	sigaddset(&child, SIGCHLD);
	sigemptyset(&fwd);
	for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
		sigaddset(&fwd, forwarded[i]);
	*blocked = fwd;
	sigaddset(blocked, SIGCHLD);
	*cfd = signalfd(-1, &child, SFD_NONBLOCK | SFD_CLOEXEC);
	*sfd = signalfd(-1, &fwd, SFD_NONBLOCK | SFD_CLOEXEC);
	if (*cfd >= 0 && *sfd >= 0)
		return 0;
	if (*cfd >= 0)
		close(*cfd);
	if (*sfd >= 0)
		close(*sfd);
	return -1;
}

void jail_drain_signalfd(int fd) {
	struct signalfd_siginfo si;
	while (read(fd, &si, sizeof si) == sizeof si)
		;
}
