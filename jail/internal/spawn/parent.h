// What jail's two C parents share: the waiter, init's parent (waiter.c), and the sandbox's pid 1,
// the command's parent (pid1.c). Each reaps its children as SIGCHLD says they end, passes the
// forwarded signals on, and exits with a status as a shell reports it.
#include <signal.h>

// jail_exit_status is a wait status as a shell reports it: the exit code, or 128+N for signal N
// (fail.ExitStatus).
int jail_exit_status(int ws);

// jail_signalfds makes *cfd a signalfd for SIGCHLD and *sfd one for the signals jail forwards to
// the command (jail's run.go: forwardedSignals), both non-blocking, and sets *blocked to all of
// them, which the caller blocks. Returns 0, or -1 with neither made.
int jail_signalfds(int *cfd, int *sfd, sigset_t *blocked);

// jail_drain_signalfd reads every signal pending on fd and drops it.
void jail_drain_signalfd(int fd);
