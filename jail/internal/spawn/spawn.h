#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

// jail_spawn's request: execve(path, argv, envp) in a child created with clone flags flags,
// in a new session, dying with the calling thread, with fds[i] as descriptor i.
struct jail_spawn {
	const char *path;
	char *const *argv, *const *envp;
	int flags;
	// unshare_flags are namespaces the child creates itself, in its new user namespace (which
	// owns them as it would have from the clone), while jail writes its id maps. Creating them
	// (the network's above all, half a millisecond here) is then off jail's own way: the clone
	// only makes the user and pid namespaces (the child must be its pid namespace's first).
	int unshare_flags;
	int fds[8], nfds;
	// go_fd (-1: no user namespace): the child waits for a byte on it, which jail writes once
	// it has written the child's id maps; go_end is jail's end of that pipe, which the child
	// closes first, so that it reads EOF and gives up when jail closes its own unwritten (the
	// kernel refused the maps). ready_fd (-1: none): the child first writes a byte on it, for a
	// caller that cannot tell when the child exists.
	int ready_fd, go_fd, go_end;
	int err_fd; // the child writes errno here when it fails; EOF once execve succeeded
	int ambient_last_cap; // >= 0: raise capabilities 0..ambient_last_cap as ambient
	pid_t pid;            // the child's pid, set before it runs (CLONE_PARENT_SETTID)
	sigset_t mask;        // the calling thread's signal mask, restored in the child
};

// jail_spawn starts the child and returns its pid, or -errno. It returns once the child has
// called execve or exited.
pid_t jail_spawn(struct jail_spawn *s);

// jail_spawn_child is the child's side of a spawn, given its struct jail_spawn: jail_spawn_setup,
// then execve. It never returns.
int jail_spawn_child(void *s);

// jail_spawn_setup makes the calling child what *s asks for, short of executing anything: a new
// session, dying with its parent's thread, the remaining namespaces, its id maps awaited, its
// descriptors, capabilities, RLIMIT_NOFILE and signal mask. Returns 0, or -1 with errno set.
int jail_spawn_setup(struct jail_spawn *s);

// jail_spawn_fail sends errno to s->err_fd and exits the child.
void jail_spawn_fail(const struct jail_spawn *s) __attribute__((noreturn));

// JAIL_ID_MAP_MAX holds an id map file's longest content: 340 lines (the kernel's limit).
#define JAIL_ID_MAP_MAX (340 * 33 + 1)

// jail_id_maps is what jail_write_id_maps wrote, or the file it failed on.
struct jail_id_maps {
	char uid_map[JAIL_ID_MAP_MAX], gid_map[JAIL_ID_MAP_MAX];
	char path[64]; // the file a failure was on; "" once all are written
};

// jail_write_id_maps maps the caller's identity into the user namespace of process pid, with
// setgroups denied (an ordinary user must deny it before writing gid_map): root keeps every id
// its own namespace has (the whole range on the host, what a container's namespace was granted
// inside one), an ordinary user itself alone. Returns 0 or -errno, with *m saying what was
// written and where it failed.
int jail_write_id_maps(pid_t pid, struct jail_id_maps *m);

// jail_init_arg0 is argv[0] of jail's init (spawn.go's InitArg0): MaybeInit runs the init when it
// sees it.
extern const char *const jail_init_arg0;

// jail_init_spawn fills *s to start jail's init: /proc/self/exe as jail_init_arg0 (when it
// executes), with no environment (the command's travels in the plan), in the namespaces of
// flags, with fds (stdin, stdout, stderr, then wire.ConfigFd's and wire.ReportFd's ends) as its
// descriptors 0 to 4. The clone makes only the user and pid namespaces, the child the others
// (unshare_flags). When the child executes init (executes != 0), an ordinary uid keeps the
// namespace's capabilities across execve as ambient ones (init builds the sandbox with them and
// drops them all before the command); spawn_early.c's child becomes init without an execve. The
// caller sets the pipes.
void jail_init_spawn(struct jail_spawn *s, int flags, const int fds[5], int executes);

// jail_early is the init spawn_early.c started before Go's runtime (pid -1: none): plan_fd and
// msg_fd are jail's ends of its wire.ConfigFd and wire.ReportFd pipes, err_fd as jail_spawn's
// err_fd, ns the clone flags of its namespaces (as it was sent them: wire.SendNamespaces). hand_fd
// and back_fd (-1: none) are the host's ends of the pipes to the waiter, init's parent (waiter.c).
struct jail_early {
	pid_t pid;
	int plan_fd, msg_fd, err_fd;
	uint32_t ns;
	int hand_fd, back_fd;
	int end_fd; // the read end of init's end pipe (jail_fork_init), the waiter's; -1: none
};
extern struct jail_early jail_early;

// jail_fork_host forks jail's host from the process that forked jail_early's init: the child
// returns, with jail_early's hand_fd and back_fd set, and goes on into Go's runtime; this process
// waits for init and the host, and exits (waiter.c). When it cannot fork, it returns here alone.
void jail_fork_host(void);

// jail_waited is what the waiter sends the host on back_fd once it has reaped init.
struct jail_waited {
	int wait_status;
	struct rusage rusage;
};

// jail_is_early_init is set in the child spawn_early.c (or keeper.c) started, which goes on as
// jail's init.
extern int jail_is_early_init;

// jail_fork_init forks init in the namespaces ns, with fds as its descriptors 0 to 4 (see
// jail_init_spawn) and mask as its signal mask, without executing anything. end_fd (-1: none),
// the write end of a pipe, becomes pid 1's JAIL_PID1_END_FD: pid 1 writes a byte on it once
// nothing of the sandbox runs any more, before its own exit (jail_pid1_end_fd). In the child it
// returns 0, with jail_is_early_init set: the caller returns from its constructor, and the child
// goes on into Go's runtime as init's setup (pid 1 stays in C, pid1.c). In the caller it returns
// init's pid once its id maps are written, and sets *errs to the read end of the pipe init
// reports a failed start on (an errno; EOF once it is on its way); -1 with errno set when it
// could not.
pid_t jail_fork_init(uint32_t ns, const int fds[5], int end_fd, const sigset_t *mask, int *errs);

// jail_set_cmdline makes name this process's command line (what /proc/PID/cmdline shows, within
// the room jail's own arguments took) and its name.
void jail_set_cmdline(const char *name);

// jail_fork_keeper forks the keeper of a sandbox `jail create` builds (keeper.c), which forks its
// init in the namespaces ns. It returns the keeper's pid in the caller, with jail_keeper_link
// set to the caller's end of their socket pair (session.h's messages; the keeper's answer to its
// init comes first), -1 when it could not fork; and 0 in the child that is to become init.
pid_t jail_fork_keeper(uint32_t ns);
extern int jail_keeper_link;

// jail_exec_fast runs `jail exec`'s common form before Go's runtime and exits with the command's
// status; jail_rm_fast runs `jail rm -f ID...` (fast.c). Each returns when the command line or a
// sandbox is not one it takes, for Go.
void jail_exec_fast(int argc, char **argv);
void jail_rm_fast(int argc, char **argv);

// jail_become_pid1 makes the calling init the sandbox's pid 1 (pid1.c), which never returns here,
// and returns in its child, the setup, which goes on into Go's runtime with jail_pid1_link_fd and
// jail_pid1_back_fd set. It fails by writing why to wire.ReportFd (4) and exiting 125.
void jail_become_pid1(void);

// The setup's ends of its pipes to pid 1 (-1: none): it writes a struct jail_link on the first
// once it has started the command, and reads a struct jail_waited from the second when it stays.
// jail_pid1_watch_errno says why pid 1 cannot watch the protections' mountpoints (watch.h); 0:
// it can.
extern int jail_pid1_link_fd, jail_pid1_back_fd, jail_pid1_watch_errno;

// jail_pid1_end_fd (-1: none) is pid 1's end of the end pipe to jail's waiter, its parent: once
// the command and everything else in the sandbox is reaped, pid 1 writes a byte on it and only
// then exits. The sandbox can write nothing more from then on, so the waiter checks the audit's
// sentinels while pid 1's exit tears the namespaces down (0.25-0.3 ms here), not after.
// JAIL_PID1_END_FD is the descriptor init holds it as, after its 0 to 4.
extern int jail_pid1_end_fd;
#define JAIL_PID1_END_FD 5

// jail_link names the command to pid 1: its pid (the setup started it as pid 1's child), and
// what the setup does while it runs.
struct jail_link {
	int32_t pid;
	int32_t flags;
};
enum {
	JAIL_LINK_STAYS = 1, // the setup stays for the command's end: a struct jail_waited on back_fd
	JAIL_LINK_WINCH = 2, // SIGWINCH goes to the setup, which relays the command's terminal
	// JAIL_LINK_REPORT: the run is reported (wire.Config.Observe): at its end pid 1 sends the
	// host how the command ended, and the usage of all it reaped but the setup (wire.Exited).
	JAIL_LINK_REPORT = 4,
	// JAIL_LINK_WATCH names a watched mountpoint (watch.h): pid is the id of the mount made
	// there, the flags' bits from JAIL_LINK_WATCH_LEN_SHIFT the length of its path, which follows.
	JAIL_LINK_WATCH = 8,
	JAIL_LINK_WATCH_LEN_SHIFT = 8,
	JAIL_LINK_HOST_LEAVES = 16, // the host reads no report: pid 1 prints its own error
};
