// pid 1 watches the protections whose mountpoints lie inside a writable bind. The kernel drops a
// mount in every other mount namespace when its mountpoint is removed or renamed over on the host
// (a host's `git config`, by lock file and rename; `rmdir .vscode`), and the name is then the
// sandbox's to fill: such a protection cannot hold by itself for a whole run. The setup adds an
// inotify watch on each such mountpoint's directory before it mounts there, on an instance pid 1
// made before forking it, and names each mountpoint to pid 1; when one is removed, renamed away or
// renamed over, pid 1 stops the sandbox and says so (fail closed), with what is at the name now.
#include <stddef.h>

struct jail_watched {
	int wd;           // the watch on the mountpoint's directory
	char *path;       // the mountpoint, as the sandbox (and the host) sees it
	const char *name; // its last component, in path
};

struct jail_watch {
	int fd; // the inotify instance, or -errno when there is none
	struct jail_watched *list;
	int n;
};

// jail_watch_take adds the mountpoint path (len bytes) in the directory watched as wd.
void jail_watch_take(struct jail_watch *w, int wd, const char *path, size_t len);

// jail_watch_breach reads the events pending on w's instance and returns the path of a watched
// mountpoint that was removed, renamed away or renamed over, with *what saying which, or NULL. A
// queue that overflowed is a breach too (path "": what happened cannot be known).
const char *jail_watch_breach(struct jail_watch *w, const char **what);

// jail_watch_report reports a breach as jail's error, once the sandbox is stopped: as a JSON
// message on report_fd (wire.ReportFd) when the host reads it, else (-1, or the host gone) as a
// line on err_fd.
void jail_watch_report(int report_fd, int err_fd, const char *path, const char *what);
