// The end of a run's hold on the placeholders its protections sit on (package placeholder makes
// them and the hold). It runs where the sandbox's mount namespace is not: in jail's waiter once it
// has reaped init (waiter.c), or in a host that stayed (placeholders.go).
#include <stdint.h>

// JAIL_HAND_MAX_FDS is how many descriptors jail's waiter takes from the host with its 'H': the
// most a hold has (waiter.go's MaxHandOverFiles).
#define JAIL_HAND_MAX_FDS 64

// jail_placeholder_record is one placeholder as its directory's record file holds it, followed
// by its name (len bytes, one path component). The host writes it before it makes the
// placeholder, as an intent (JAIL_PLACEHOLDER_INTENT, at intent_ns on CLOCK_REALTIME), and
// rewrites it in place once made: its inode and birth time (0, 0 where the filesystem keeps
// none), or void when the name was taken meanwhile. A run killed between the two leaves the
// intent, which the release takes for jail's only when the entry is of its kind (dir: an empty
// directory, else a socket) and was born within moments of the intent.
struct jail_placeholder_record {
	uint64_t ino;
	int64_t btime_sec;
	uint32_t btime_nsec;
	int64_t intent_ns;
	uint8_t state, dir, len;
} __attribute__((packed));

enum { JAIL_PLACEHOLDER_INTENT, JAIL_PLACEHOLDER_MADE, JAIL_PLACEHOLDER_VOID };

// jail_release_placeholders ends a hold: fds are the state directory's descriptor, then a
// record file (shared-locked) and the directory it records, for each directory, shallowest
// first. For each directory, deepest first: when no other run holds it (an exclusive lock taken
// without waiting), every recorded placeholder that is still jail's (same inode and birth time,
// a socket or an empty directory) is removed, then the record file. The caller closes fds (n > 0).
void jail_release_placeholders(const int *fds, int n);
