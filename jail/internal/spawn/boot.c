// Booting a run's Go runtimes with one P. Go's runtime starts with as many Ps (GOMAXPROCS) as
// the process may use CPUs, and with two or more, the first goroutines it starts wake a second
// thread to spin for work there is none of: a run's two short-lived Go processes, the host and
// init's setup, paid about 0.15 ms of CPU each for it (docs/performance.md). Set from main it is
// too late, the threads are started by then; the runtime reads GOMAXPROCS from its environment
// at boot, before any Go code runs, so this constructor's path (spawn_early.c) puts it there.
//
// The runtime reads the environment from the process's initial stack, which has no room for one
// more entry, so the last entry is lent: its slot points at "GOMAXPROCS=1" until package spawn's
// initialisation (boot.go) gives the entry back to Go's copy of the environment and removes
// GOMAXPROCS from it, before any other code reads it. The last entry, so that its place in the
// environment is unchanged, and only one the runtime does not read at boot: not GOGC, GODEBUG,
// GOMEMLIMIT, GOTRACEBACK or any other GO one, and one of the form NAME=VALUE, which boot.go puts
// back as such. A caller's own GOMAXPROCS, or an environment that is empty or ends otherwise, is
// left alone. Of the C processes the run leaves, the
// waiter and pid 1 read no environment. A Go process of the run that stays once the command has
// started asks for the default number of Ps back (RestoreProcs).
#include <stddef.h>
#include <string.h>

#include "boot.h"

char *jail_boot_swapped;

void jail_boot_one_p(char **envp) {
	static char one[] = "GOMAXPROCS=1";
	size_t n = 0;
	for (; envp[n] != NULL; n++)
		if (strncmp(envp[n], "GOMAXPROCS=", strlen("GOMAXPROCS=")) == 0)
			return;
	if (n == 0 || strncmp(envp[n - 1], "GO", 2) == 0 || strchr(envp[n - 1], '=') == NULL)
		return;
	jail_boot_swapped = envp[n - 1];
	envp[n - 1] = one;
}
