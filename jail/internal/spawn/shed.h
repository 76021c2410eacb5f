#pragma once

#include <poll.h>
#include <time.h>

// jail_shed_binary unmaps from this process the pages of jail's binary it mapped read-only (its
// code and constants), which stay in the page cache (shed.c).
void jail_shed_binary(void);

// jail_poll_idle is ppoll(fds, n, until, NULL) for a C parent's wait loop (the waiter, pid 1),
// which sheds jail's binary once, the first time nothing came for JAIL_SHED_AFTER_MS: a short
// run ends before. It may return 0 (nothing ready) before until.
int jail_poll_idle(struct pollfd *fds, nfds_t n, const struct timespec *until);

#define JAIL_SHED_AFTER_MS 100
