#include <signal.h>
#include <sys/types.h>

// jail_spawn's request: execve(path, argv, envp) in a child created with clone flags flags,
// in a new session, dying with the calling thread, with fds[i] as descriptor i.
struct jail_spawn {
	const char *path;
	char *const *argv, *const *envp;
	int flags;
	int fds[8], nfds;
	// ready_fd/go_fd (-1: no user namespace): the child writes a byte on ready_fd and waits
	// for one on go_fd, which jail writes once it has written the child's id maps.
	int ready_fd, go_fd;
	int err_fd; // the child writes errno here when it fails; EOF once execve succeeded
	int ambient_last_cap; // >= 0: raise capabilities 0..ambient_last_cap as ambient
	pid_t pid;            // the child's pid, set before it runs (CLONE_PARENT_SETTID)
	sigset_t mask;        // the calling thread's signal mask, restored in the child
};

// jail_spawn starts the child and returns its pid, or -errno. It returns once the child has
// called execve or exited.
pid_t jail_spawn(struct jail_spawn *s);
