package seccomp

import "golang.org/x/sys/unix"

// watchedCalls are the calls --explain watches: every call that writes by path, and connect.
// openat2 passes its flags in memory, which the filter cannot read: all of its calls are
// watched (the listener reads the flags).
var watchedCalls = []watchedCall{
	{"open", unix.SYS_OPEN, 1}, {"openat", unix.SYS_OPENAT, 2}, {"openat2", unix.SYS_OPENAT2, -1},
	{"creat", unix.SYS_CREAT, -1}, {"truncate", unix.SYS_TRUNCATE, -1},
	{"mkdir", unix.SYS_MKDIR, -1}, {"mkdirat", unix.SYS_MKDIRAT, -1}, {"rmdir", unix.SYS_RMDIR, -1},
	{"unlink", unix.SYS_UNLINK, -1}, {"unlinkat", unix.SYS_UNLINKAT, -1},
	{"rename", unix.SYS_RENAME, -1}, {"renameat", unix.SYS_RENAMEAT, -1}, {"renameat2", unix.SYS_RENAMEAT2, -1},
	{"link", unix.SYS_LINK, -1}, {"linkat", unix.SYS_LINKAT, -1},
	{"symlink", unix.SYS_SYMLINK, -1}, {"symlinkat", unix.SYS_SYMLINKAT, -1},
	{"chmod", unix.SYS_CHMOD, -1}, {"fchmodat", unix.SYS_FCHMODAT, -1}, {"fchmodat2", unix.SYS_FCHMODAT2, -1},
	{"connect", unix.SYS_CONNECT, -1},
}
