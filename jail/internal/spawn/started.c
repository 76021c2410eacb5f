// When jail started, for the times -v prints. A constructor notes it before Go's runtime starts
// (a millisecond later) and before spawn_early.c forks init, which inherits it.
#include <time.h>

#include "started.h"

long long jail_started_ns;

__attribute__((constructor(101))) static void note_start(void) {
	struct timespec t;
	if (clock_gettime(CLOCK_MONOTONIC, &t) == 0)
		jail_started_ns = t.tv_sec * 1000000000LL + t.tv_nsec;
}
