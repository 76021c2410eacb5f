// Removing placeholders at the end of a run (placeholders.h).
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "placeholders.h"

// intent_window_ns is how long after an intent a placeholder may be born and still be taken for the
// one that intent announced: the host makes it right after writing the intent.
static const int64_t intent_window_ns = 10 * 1000000000LL;

// still_jails says the entry name of dir is the placeholder r describes: never a file or
// directory the user made in its place.
static int still_jails(int dir, const char *name, const struct jail_placeholder_record *r) {
	struct statx st;
	if (r->state == JAIL_PLACEHOLDER_VOID ||
	    statx(dir, name, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_BTIME, &st) < 0)
		return 0;
	int born = st.stx_mask & STATX_BTIME;
	int64_t btime_ns = (int64_t)st.stx_btime.tv_sec * 1000000000LL + st.stx_btime.tv_nsec;
	if (r->state == JAIL_PLACEHOLDER_MADE) {
		if (st.stx_ino != r->ino)
			return 0;
		if ((r->btime_sec || r->btime_nsec) &&
		    (!born || st.stx_btime.tv_sec != r->btime_sec || st.stx_btime.tv_nsec != r->btime_nsec))
			return 0;
	} else if (born && (btime_ns < r->intent_ns - 1000000000LL || btime_ns > r->intent_ns + intent_window_ns)) {
		return 0; // born long before or after the intent: not the one it announced
	}
	return r->dir ? S_ISDIR(st.stx_mode) : S_ISSOCK(st.stx_mode); // a directory must be empty: rmdir says
}

// remove_recorded removes the placeholders the record file lock lists in dir. A directory that is
// not empty stays (rmdir refuses it).
static void remove_recorded(int lock, int dir) {
	unsigned char buf[8192];
	size_t have = 0;
	off_t off = 0;
	ssize_t n;
	while ((n = pread(lock, buf + have, sizeof buf - have, off)) > 0) {
		off += n;
		have += n;
		size_t used = 0;
		struct jail_placeholder_record r;
		while (have - used >= sizeof r) {
			memcpy(&r, buf + used, sizeof r);
			if (have - used < sizeof r + r.len)
				break;
			char name[256];
			memcpy(name, buf + used + sizeof r, r.len);
			name[r.len] = 0;
			used += sizeof r + r.len;
			if (r.len > 0 && !memchr(name, '/', r.len) && strcmp(name, ".") && strcmp(name, "..") &&
			    still_jails(dir, name, &r))
				unlinkat(dir, name, r.dir ? AT_REMOVEDIR : 0);
		}
		memmove(buf, buf + used, have - used);
		have -= used;
	}
}

// record_name is the name of dir's record file in the state directory (placeholder.go's
// recordName): its device and inode.
static void record_name(int dir, char *name, size_t size) {
	struct stat st;
	if (fstat(dir, &st) < 0)
		name[0] = 0;
	else
		snprintf(name, size, "%llx-%llx", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
}

void jail_release_placeholders(const int *fds, int n) {
	int state = fds[0];
	for (int i = n - 2; i >= 1; i -= 2) {
		int lock = fds[i], dir = fds[i + 1];
		// A failed conversion leaves no lock at all (flock(2)): another run holds this
		// directory, and the last of them removes what is left.
		if (flock(lock, LOCK_EX | LOCK_NB) == 0) {
			char name[64];
			remove_recorded(lock, dir);
			record_name(dir, name, sizeof name);
			if (name[0])
				unlinkat(state, name, 0);
		}
	}
}
