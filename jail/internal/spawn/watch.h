// pid 1 watches the protections whose mountpoints lie inside a writable bind. The kernel drops a
// mount in every other mount namespace when its mountpoint is removed or renamed over on the host
// (a host's `git config`, by lock file and rename; `rmdir .vscode`), and the name is then the
// sandbox's to fill: such a protection cannot hold by itself for a whole run. The setup names each
// such mountpoint to pid 1 with the id of the mount it made there. pid 1 polls its mount table,
// which the kernel marks changed when it drops a mount of the namespace (POLLPRI on
// /proc/self/mounts), and on each change looks again at every mountpoint: one whose path no
// longer leads to its mount, and pid 1 stops the sandbox and says so (fail closed), with what is
// at the name now. At the end it looks once more, for a mountpoint the host renamed away (the
// mount moves with it, unnoticed by the table), and reports what was made in its place.
#include <stddef.h>
#include <stdint.h>

struct jail_watched {
	uint32_t mnt_id; // the mount the setup made at path
	char *path;      // the mountpoint, as the sandbox (and the host) sees it
};

struct jail_watch {
	int fd; // /proc/self/mounts, opened in the sandbox's namespace; -1 when it could not be
	        // (then the setup refuses a plan with a mountpoint to watch: jail_pid1_watch_errno)
	struct jail_watched *list;
	int n;
};

// jail_watch_take adds the mountpoint path (len bytes), where the mount mnt_id was made.
void jail_watch_take(struct jail_watch *w, uint32_t mnt_id, const char *path, size_t len);

// jail_watch_breach returns the path of a mountpoint whose path no longer leads to its mount, or
// NULL. present says to return only one where something is there now (the end's look: a name
// merely emptied harms nothing).
const char *jail_watch_breach(const struct jail_watch *w, int present);

// jail_watch_report reports the breach at path as jail's error, with what is there now, once the
// sandbox is stopped: as a JSON message on report_fd (wire.ReportFd) when the host reads it, else
// (-1, or the host gone) as a line on err_fd.
void jail_watch_report(int report_fd, int err_fd, const char *path);
