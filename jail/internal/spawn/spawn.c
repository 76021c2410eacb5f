// The C half of spawn.go: starting init the way posix_spawn starts a program, with a vfork
// (CLONE_VM|CLONE_VFORK: the child borrows jail's memory and jail's thread waits until the
// child's execve), but in new namespaces. Go's syscall.ForkExec falls back to a full fork of
// the runtime's address space whenever a user namespace is asked for; in a VM, copying its page
// tables and then faulting in every page jail writes afterwards (about 220 faults, each with a
// TLB shootdown) cost a quarter of a millisecond.
//
// The child runs on its own stack but in jail's memory and with the suspended thread's TLS, as
// posix_spawn's child does: it touches only *s and its stack, and calls only async-signal-safe
// functions. spawn_early.c runs the same setup (jail_spawn_setup) in a fork that then becomes
// init without an execve.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"

// Go raises its soft RLIMIT_NOFILE to the hard limit at start-up and puts the original back in
// the children it starts; this constructor runs before Go's runtime, to do the same here.
static struct rlimit nofile;
static int nofile_saved;

__attribute__((constructor)) static void save_nofile(void) {
	nofile_saved = getrlimit(RLIMIT_NOFILE, &nofile) == 0;
}

// reset_signals gives every signal jail's Go runtime handles its default action again, so that
// one arriving before execve cannot run a Go handler here. Ignored signals stay ignored, as
// execve would keep them.
static void reset_signals(void) {
	for (int sig = 1; sig < _NSIG; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) < 0 || sa.sa_handler == SIG_IGN || sa.sa_handler == SIG_DFL)
			continue;
		sa.sa_handler = SIG_DFL;
		sa.sa_flags = 0;
		sigaction(sig, &sa, NULL);
	}
}

// wait_for_maps waits until jail has written the id maps (only a process outside the new user
// namespace may map more than its own id) and says so on go_fd.
static int wait_for_maps(const struct jail_spawn *s) {
	char c;
	ssize_t n;
	close(s->go_end); // the child's copy: jail's is the one that counts
	while ((n = read(s->go_fd, &c, 1)) < 0 && errno == EINTR)
		;
	if (n != 1) {
		errno = ECANCELED; // jail could not map the ids: it reports why
		return -1;
	}
	return 0;
}

// place_fds makes s->fds[i] descriptor i, for every i below s->nfds. Sources and the error pipe
// are first moved above that range so that no dup2 closes one still needed.
static int place_fds(struct jail_spawn *s) {
	int n = s->nfds;
	if (s->err_fd < n && (s->err_fd = fcntl(s->err_fd, F_DUPFD_CLOEXEC, n)) < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (s->fds[i] < n && (s->fds[i] = fcntl(s->fds[i], F_DUPFD_CLOEXEC, n)) < 0)
			return -1;
	for (int i = 0; i < n; i++)
		if (dup2(s->fds[i], i) < 0)
			return -1;
	return 0;
}

// raise_ambient keeps the namespace's capabilities across execve for an ordinary uid, which
// would otherwise lose them: init builds the sandbox with them and drops them all before the
// command runs.
static int raise_ambient(int last_cap) {
	struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -1;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		data[i].inheritable = data[i].permitted;
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -1;
	for (int c = 0; c <= last_cap; c++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
			return -1;
	return 0;
}

int jail_spawn_setup(struct jail_spawn *s) {
	reset_signals();
	if (setsid() < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return -1;
	// jail needs to know the namespaces exist only where it cannot tell (jail_spawn's caller
	// is suspended in the vfork). The network namespace is created while it writes the maps:
	// the namespace's capabilities hold before any id is mapped.
	char c = 0;
	if (s->ready_fd >= 0 && write(s->ready_fd, &c, 1) != 1)
		return -1;
	if (s->unshare_flags != 0 && unshare(s->unshare_flags) < 0)
		return -1;
	if (s->go_fd >= 0 && wait_for_maps(s) < 0)
		return -1;
	if (place_fds(s) < 0)
		return -1;
	if (s->ambient_last_cap >= 0 && raise_ambient(s->ambient_last_cap) < 0)
		return -1;
	if (nofile_saved && setrlimit(RLIMIT_NOFILE, &nofile) < 0)
		return -1;
	sigprocmask(SIG_SETMASK, &s->mask, NULL);
	return 0;
}

void jail_spawn_fail(const struct jail_spawn *s) {
	int e = errno;
	while (write(s->err_fd, &e, sizeof e) < 0 && errno == EINTR)
		;
	_exit(127);
}

int jail_spawn_child(void *arg) {
	struct jail_spawn *s = arg;
	if (jail_spawn_setup(s) == 0)
		execve(s->path, s->argv, s->envp);
	jail_spawn_fail(s);
	return 127;
}

// write_file writes data to the file at path, all at once, as /proc's id map files want it.
static int write_file(const char *path, const char *data) {
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, data, strlen(data));
	int e = n < 0 ? -errno : n == (ssize_t)strlen(data) ? 0 : -EIO;
	close(fd);
	return e;
}

// own_range maps every id this process's user namespace has onto itself: each line
// "inside outside count" of its own map at path (/proc/self/uid_map) becomes "inside inside
// count". On the host that is the whole range, "0 0 4294967295"; in a nested or rootless
// container's namespace only the ids its parent granted, which are all a child may be given.
// Returns 0, or -errno with map untouched.
static int own_range(const char *path, char *map, size_t size) {
	char buf[JAIL_ID_MAP_MAX];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	size_t len = 0;
	for (char *line = buf; *line != 0;) {
		unsigned long inside, outside, count;
		int used;
		if (sscanf(line, "%lu %lu %lu%n", &inside, &outside, &count, &used) != 3)
			return -EINVAL;
		int w = snprintf(map + len, size - len, "%lu %lu %lu\n", inside, inside, count);
		if (w < 0 || (size_t)w >= size - len)
			return -E2BIG;
		len += w;
		line += used;
		line += strspn(line, " \n");
	}
	return len > 0 ? 0 : -EINVAL; // an empty map: no id of this namespace exists outside it
}

// write_map writes the id map at path: range when it is not NULL and the kernel takes it, else
// id alone. map is set to what was written.
static int write_map(const char *path, const char *range, unsigned id, char *map, size_t size) {
	if (range != NULL && write_file(path, range) == 0) {
		snprintf(map, size, "%s", range);
		return 0;
	}
	snprintf(map, size, "%u %u 1", id, id);
	return write_file(path, map);
}

int jail_write_id_maps(pid_t pid, struct jail_id_maps *m) {
	uid_t uid = getuid();
	gid_t gid = getgid();
	// Root stays root, over every id its namespace has, so that file ownership reads as
	// outside; it loses every capability before the command runs. An ordinary user maps itself
	// alone, as does a root the kernel refuses more (a container's --cap-drop of CAP_SETUID).
	char uid_range[JAIL_ID_MAP_MAX], gid_range[JAIL_ID_MAP_MAX];
	int ranged = uid == 0 && own_range("/proc/self/uid_map", uid_range, sizeof uid_range) == 0 &&
	             own_range("/proc/self/gid_map", gid_range, sizeof gid_range) == 0;
	int e;
	snprintf(m->path, sizeof m->path, "/proc/%d/uid_map", (int)pid);
	if ((e = write_map(m->path, ranged ? uid_range : NULL, uid, m->uid_map, sizeof m->uid_map)) < 0)
		return e;
	// An ordinary user must deny setgroups before writing gid_map.
	snprintf(m->path, sizeof m->path, "/proc/%d/setgroups", (int)pid);
	if ((e = write_file(m->path, "deny")) < 0)
		return e;
	snprintf(m->path, sizeof m->path, "/proc/%d/gid_map", (int)pid);
	if ((e = write_map(m->path, ranged ? gid_range : NULL, gid, m->gid_map, sizeof m->gid_map)) < 0)
		return e;
	m->path[0] = 0;
	return 0;
}

// ambient_last_cap is the ambient_last_cap a child of this process needs: the highest capability
// for an ordinary uid, which would lose the namespace's capabilities at execve without them; -1
// for root, which keeps them.
static int ambient_last_cap(void) {
	if (getuid() == 0)
		return -1;
	int last = CAP_LAST_CAP;
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	if (f != NULL) {
		int n;
		if (fscanf(f, "%d", &n) == 1 && n < last)
			last = n;
		fclose(f);
	}
	return last;
}

const char *const jail_init_arg0 = "jail-init";

void jail_init_spawn(struct jail_spawn *s, int flags, const int fds[5], int executes) {
	static char *argv[] = {NULL, NULL}, *envp[] = {NULL};
	argv[0] = (char *)jail_init_arg0;
	const int cloned = CLONE_NEWUSER | CLONE_NEWPID; // the child must be its pid namespace's first
	s->path = "/proc/self/exe";
	s->argv = argv;
	s->envp = envp;
	s->flags = flags & cloned;
	s->unshare_flags = flags & ~cloned;
	memcpy(s->fds, fds, 5 * sizeof fds[0]);
	s->nfds = 5;
	s->ambient_last_cap = executes && flags & CLONE_NEWUSER ? ambient_last_cap() : -1;
	s->ready_fd = s->go_fd = s->go_end = s->err_fd = -1;
}

pid_t jail_spawn(struct jail_spawn *s) {
	const size_t size = 64 * 1024;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -errno;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &s->mask);
	pid_t pid = clone(jail_spawn_child, stack + size, s->flags | CLONE_VM | CLONE_VFORK | CLONE_PARENT_SETTID | SIGCHLD, s,
	                  &s->pid);
	int e = errno;
	pthread_sigmask(SIG_SETMASK, &s->mask, NULL);
	munmap(stack, size);
	return pid < 0 ? -e : pid;
}
