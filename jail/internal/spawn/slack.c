// init's setup runs its threads with a coarse timer slack. Go's sysmon thread sleeps 20 us at a
// time for as long as a goroutine runs or sits in a system call, and the setup's one goroutine
// does so for most of its life (the plan's read, the mounts): some fifty wake-ups, each a
// context switch on a CPU the host's start wants too. A timer may fire up to its thread's slack
// late, so with 1 ms sysmon wakes a few times instead; it has nothing to do here in any case
// (one goroutine: no P to hand over, nothing to preempt). The setup sets no timer of its own
// before the command runs; the command gets the caller's slack back from the thread that starts
// it, and a setup that stays for the run gives it back to all its threads (RestoreTimerSlack).
// pid1.c calls it in the setup before Go's runtime starts, so every thread inherits it.
#define _GNU_SOURCE
#include <errno.h>
#include <sys/prctl.h>

#include "slack.h"

enum { coarse_slack_ns = 1000000 };

long jail_setup_slack;

void jail_coarse_slack(void) {
	// 0 is a real-time caller's, which no slack applies to; a caller's coarser slack stays.
	long own = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
	if (own > 0 && own < coarse_slack_ns && prctl(PR_SET_TIMERSLACK, coarse_slack_ns, 0, 0, 0) == 0)
		jail_setup_slack = own;
}

int jail_restore_slack(void) {
	// Set, not reset: PR_SET_TIMERSLACK's 0 would give the thread the slack it was created with.
	if (jail_setup_slack > 0 && prctl(PR_SET_TIMERSLACK, jail_setup_slack, 0, 0, 0) < 0)
		return -errno;
	return 0;
}
