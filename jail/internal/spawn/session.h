// The messages of a persistent sandbox: between jail's host-side programs and the sandbox's
// keeper (keeper.c), and between them and its spawner (spawner.c), over unix SOCK_SEQPACKET
// sockets, one message per packet, descriptors as SCM_RIGHTS beside it. Package
// jail/internal/session is the Go side; a test there ties its layout to this one.
#include <stdint.h>
#include <sys/types.h>

// jail_msg is every message's header; len bytes of payload follow it in the same packet.
struct jail_msg {
	uint32_t type;       // JAIL_MSG_*
	uint32_t flags;      // by type: JAIL_EXEC_*, JAIL_PROC_*, JAIL_FAILED_*, JAIL_SIGNAL_GROUP
	int32_t pid;         // a process of the sandbox, as its pid namespace numbers it
	int32_t value;       // by type: a signal, an errno, a wait status, bytes to keep, clone flags
	uint32_t argc, envc; // exec: the payload's strings are argc of argv, envc of env, then cwd
	uint16_t cols, rows; // a pseudo-terminal's size
	uint32_t len;        // payload bytes after the header
	int64_t ns1, ns2;    // by type: exec timeout; a process's start and end; keeper timers
};

// Most a packet carries: its header, payload and descriptors.
enum { JAIL_MSG_MAX = 200 * 1024, JAIL_MSG_MAX_FDS = 4 };

// Message types. Upper case: requests; lower case: answers.
enum {
	// To the spawner, on a session (a connection to the keeper's ctl.sock it handed over).
	JAIL_MSG_EXEC = 'E',    // start argv: flags, value, timeout (ns1; 0: the sandbox's, <0: none), size; fds by flags
	JAIL_MSG_LIST = 'L',    // every process record: 'p' each, then 'e'
	JAIL_MSG_SIGNAL = 'S',  // value to pid (its process group with JAIL_SIGNAL_GROUP)
	JAIL_MSG_STDIN = 'I',   // the write end of pid's stdin, as a 'd'
	JAIL_MSG_CLOSE_IN = 'C',// close pid's stdin
	JAIL_MSG_RESIZE = 'R',  // pid's pseudo-terminal to cols x rows
	JAIL_MSG_WAIT = 'W',    // an 'x' once pid has ended (at once if it has)
	JAIL_MSG_RELEASE = 'D', // kill pid's group if it runs, and forget it
	// To the keeper, on a connection to ctl.sock.
	JAIL_MSG_STOP = 'Q',   // remove the sandbox: a 'k' once nothing of it is left
	JAIL_MSG_TIMERS = 'T', // idle timeout (ns1, 0: none) and deadline (ns2, CLOCK_REALTIME, 0: none)
	// From jail create to the keeper it forked, on their own socket pair.
	JAIL_MSG_SPAWN = 'N', // (again) start init in the namespaces value: an 'i'
	JAIL_MSG_DIR = 'P',   // the state directory, the name's link (payload) and its lock (fd)
	JAIL_MSG_GO = 'G',    // ready: the listening sockets (fds: api, ctl[, egress]) and timers
	JAIL_MSG_HOLD = 'H',  // hold fds, appended to those before, until the sandbox is gone: the
	                      // placeholders' hold (jail_release_placeholders' fds, in order)
	JAIL_MSG_KEEP = 'K',  // keep the fd open until the sandbox is gone: an overlay workspace's
	                      // change-set lock (flock), which tells jail the sandbox is live
	// From the keeper to the spawner.
	JAIL_MSG_SESSION = 'O', // a client's connection (fd): it speaks to the spawner now
	// Answers.
	JAIL_MSG_INIT = 'i',    // init's pid, its namespaces (flags); fds: its plan's write end, its messages' read end
	JAIL_MSG_STARTED = 's', // pid runs (fd: the pseudo-terminal's master with JAIL_EXEC_TTY_MASTER)
	JAIL_MSG_FAILED = 'f',  // it did not start: errno in value, the step in flags
	JAIL_MSG_EXITED = 'x',  // pid ended: wait status in value, JAIL_PROC_TIMED_OUT, its timeout in ns1, end in ns2
	JAIL_MSG_PROC = 'p',    // a process record: flags, value, ns1/ns2, argv (argc) and cwd
	JAIL_MSG_END = 'e',     // the end of a list
	JAIL_MSG_OK = 'k',
	JAIL_MSG_ERROR = 'r', // errno in value
	JAIL_MSG_FD = 'd',    // a descriptor
};

// JAIL_MSG_EXEC's flags. Descriptors come in this order: stdin (STDIN_FD), then stdout and
// stderr (OUT_FD, or the files of CAPTURE).
enum {
	JAIL_EXEC_WAIT = 1 << 0,          // send 'x' on this session when it ends
	JAIL_EXEC_KILL_ON_CLOSE = 1 << 1, // kill its group when this session closes first
	JAIL_EXEC_HELPER = 1 << 2,        // execute jail's own binary, argv[0] naming the helper
	JAIL_EXEC_RECORD = 1 << 3,        // keep its record once it ended (a background process)
	JAIL_EXEC_TTY = 1 << 4,           // a pseudo-terminal of the sandbox's, cols x rows
	JAIL_EXEC_TTY_MASTER = 1 << 5,    // send the master back with 's'
	JAIL_EXEC_STDIN_FD = 1 << 6,      // stdin is the first descriptor
	JAIL_EXEC_STDIN_PIPE = 1 << 7,    // stdin is a pipe whose write end the spawner keeps
	JAIL_EXEC_OUT_FD = 1 << 8,        // stdout and stderr are descriptors
	JAIL_EXEC_CAPTURE = 1 << 9,       // the spawner copies the output into two files, keeping the last value bytes of each
	JAIL_EXEC_MERGE = 1 << 10,        // stderr goes where stdout goes
};

// JAIL_MSG_PROC's and JAIL_MSG_EXITED's flags.
enum {
	JAIL_PROC_RUNNING = 1 << 0,
	JAIL_PROC_TIMED_OUT = 1 << 1,
	JAIL_PROC_TTY = 1 << 2,
	JAIL_PROC_STDIN = 1 << 3, // it has a stdin pipe (or a terminal) still open
	JAIL_PROC_RECORD = 1 << 4,
};

// JAIL_MSG_FAILED's flags: the step that failed.
enum { JAIL_FAILED_EXEC = 1, JAIL_FAILED_CHDIR, JAIL_FAILED_TTY, JAIL_FAILED_SETUP };

enum { JAIL_SIGNAL_GROUP = 1 };

// jail_send sends a message: *m (whose len is set from n), n bytes of payload, nfds descriptors.
// Returns 0, or -1 with errno set.
int jail_send(int sock, struct jail_msg *m, const void *payload, size_t n, const int *fds, int nfds);

// jail_recv receives a message into buf (size bytes, header first) and up to JAIL_MSG_MAX_FDS
// descriptors into fds (close-on-exec), *nfds how many. Returns the bytes received (0 at the
// end), or -1 with errno set; a short or truncated packet is EBADMSG, its descriptors closed.
ssize_t jail_recv(int sock, void *buf, size_t size, int *fds, int *nfds);

// jail_close_fds closes the n descriptors at fds that are not negative.
void jail_close_fds(const int *fds, int n);

// jail_spawner_arg0 is argv[0] of the spawner (spawner.c); jail_keeper_arg0 is the name the
// keeper shows (keeper.c); jail_api_arg0 and jail_egress_arg0 are jail's Go programs the keeper
// starts: an HTTP connection's handler and the egress proxy.
extern const char *const jail_spawner_arg0, *const jail_keeper_arg0, *const jail_api_arg0, *const jail_egress_arg0;
