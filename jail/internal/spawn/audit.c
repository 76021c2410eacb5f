// The audit's end in jail's waiter (audit.h).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"

const char *const jail_audit_arg0 = "jail-audit";

int jail_audit_changed(int fd) {
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size < 16)
		return 0;
	const char *data = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (data == MAP_FAILED)
		return 1; // cannot tell: let the audit look
	int changed = 0;
	for (const char *p = data + 16, *end = data + st.st_size; !changed && p < end;) {
		const char *nul = memchr(p, 0, end - p);
		if (nul == NULL)
			break;
		if (*p == 'S' || *p == 'D') { // "INO SEC NSEC PATH": moved when it is there but not so
			char *path;
			unsigned long long ino = strtoull(p + 1, &path, 10);
			long long sec = strtoll(path, &path, 10);
			long long nsec = strtoll(path, &path, 10);
			struct statx sx;
			if (*path == ' ' && statx(AT_FDCWD, path + 1, AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_CTIME, &sx) == 0)
				changed = sx.stx_ino != ino || sx.stx_ctime.tv_sec != sec || sx.stx_ctime.tv_nsec != nsec;
		}
		p = nul + 1;
	}
	munmap((void *)data, st.st_size);
	return changed;
}

void jail_audit_exec(int fd, int status) {
	char arg[16];
	snprintf(arg, sizeof arg, "%d", status);
	if (fd == 3 || dup2(fd, 3) == 3) {
		fcntl(3, F_SETFD, 0);
		char *const argv[] = {(char *)jail_audit_arg0, arg, NULL};
		char *const envp[] = {NULL};
		execve("/proc/self/exe", argv, envp);
	}
	// Said, not passed over: a run whose writes go unlisted must not look like one that wrote none.
	dprintf(2, "jail: audit: execute jail: %s: what the run wrote unseen is not listed\n", strerror(errno));
}
