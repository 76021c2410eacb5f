// The audit's end in jail's waiter (audit.h).
#define _GNU_SOURCE
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
	int64_t sec, nsec;
	memcpy(&sec, data, sizeof sec);
	memcpy(&nsec, data + 8, sizeof nsec);
	int changed = 0;
	for (const char *p = data + 16, *end = data + st.st_size; !changed && p < end;) {
		const char *nul = memchr(p, 0, end - p);
		if (nul == NULL)
			break;
		struct statx sx;
		const char *path = p + 1;
		int64_t since_sec = sec, since_nsec = nsec;
		if (*p == 'T') { // a directory the host touched: "SEC NSEC PATH", changed from that ctime on
			char *rest;
			since_sec = strtoll(path, &rest, 10);
			since_nsec = strtoll(rest, &rest, 10);
			path = rest + 1;
		}
		if ((*p == 'S' || *p == 'T') && statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_CTIME, &sx) == 0)
			changed = sx.stx_ctime.tv_sec > since_sec ||
			          (sx.stx_ctime.tv_sec == since_sec && sx.stx_ctime.tv_nsec >= since_nsec);
		p = nul + 1;
	}
	munmap((void *)data, st.st_size);
	return changed;
}

void jail_audit_exec(int fd, int status) {
	char arg[16];
	snprintf(arg, sizeof arg, "%d", status);
	if (fd != 3 && dup2(fd, 3) < 0)
		return;
	fcntl(3, F_SETFD, 0);
	char *const argv[] = {(char *)jail_audit_arg0, arg, NULL};
	char *const envp[] = {NULL};
	execve("/proc/self/exe", argv, envp);
}
