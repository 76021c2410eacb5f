// jail's own threads run as SCHED_BATCH. Under the default scheduler a woken thread preempts the
// one running; jail's two Go processes start side by side with several threads each, and on a
// machine with few CPUs their wakeups (the runtime's sysmon wakes every 20 us or so while a
// goroutine blocks in a syscall) kept preempting whichever thread the sandbox was waiting for. A
// SCHED_BATCH thread does not preempt on waking. The switch needs no privilege and happens only
// from SCHED_OTHER, before Go's runtime starts, so every thread of jail and of the init it forks
// inherits it; the command gets SCHED_OTHER back (RestoreSchedOther). spawn_early.c's
// constructor calls it for `jail [OPTIONS] -- COMMAND`, in jail and in the init it forked.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>

#include "batch.h"

int jail_batch;

void jail_batch_own_threads(void) {
	struct sched_param none = {0};
	if (sched_getscheduler(0) == SCHED_OTHER && sched_setscheduler(0, SCHED_BATCH, &none) == 0)
		jail_batch = 1;
}

int jail_unbatch_thread(void) {
	struct sched_param none = {0};
	return sched_setscheduler(0, SCHED_OTHER, &none) == 0 ? 0 : -errno;
}
