package wire

import (
	"encoding/json"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/explain"
	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/landlock"
)

// Message is one line init sends the host on ReportFd, as JSON, with exactly one field set.
// An Error ends init; the others tell the host what only init sees, for --report and
// --json-status-fd: what Landlock applied, that the command started, how it ended.
type Message struct {
	Error    *fail.Error      `json:"error,omitempty"`
	Landlock *landlock.Report `json:"landlock,omitempty"`
	Started  *Started         `json:"started,omitempty"`
	Exited   *Exited          `json:"exited,omitempty"`
	// Denial is a call --explain predicts the sandbox refuses (explain.Start); MoreDenials says
	// init stopped sending them.
	Denial      *explain.Denial `json:"denial,omitempty"`
	MoreDenials bool            `json:"more_denials,omitempty"`
}

// Started says the command runs, as pid PID of the sandbox's pid namespace, in init's
// namespaces.
type Started struct {
	PID        int      `json:"pid"`
	Namespaces NSInodes `json:"namespaces"`
}

// Exited is how the command ended, and the resources it and everything it started used,
// measured by pid 1 once it has reaped them all (what the kernel's RUSAGE_CHILDREN would say,
// less the setup's share). pid 1 is C: pid1.c's report_end writes this message, with the times
// and the peak RSS of Rusage, the fields the report reads.
type Exited struct {
	WaitStatus syscall.WaitStatus `json:"wait_status"`
	Rusage     syscall.Rusage     `json:"rusage"`
}

// Tell sends msg to the host, in one write: ReportFd is a pipe and a message is far below
// PIPE_BUF, so messages sent from different threads never interleave. It fails when the host is
// gone (EPIPE).
func Tell(msg Message) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = unix.Write(ReportFd, append(b, '\n'))
	return err
}

// NSInodes are a process's namespaces, each named by its inode as /proc/PID/ns/KIND ->
// "KIND:[INODE]" shows it.
type NSInodes struct {
	Cgroup uint64 `json:"cgroup-namespace,omitempty"`
	IPC    uint64 `json:"ipc-namespace,omitempty"`
	Mnt    uint64 `json:"mnt-namespace,omitempty"`
	Net    uint64 `json:"net-namespace,omitempty"`
	PID    uint64 `json:"pid-namespace,omitempty"`
	User   uint64 `json:"user-namespace,omitempty"`
	UTS    uint64 `json:"uts-namespace,omitempty"`
}

// ReadNSInodes returns the namespaces of the process whose /proc/PID/ns directory is dir (0
// for one unreadable). Init reads its own, from a descriptor it opened while /proc was the
// host's: jail may not read those of a non-dumpable init that it forked rather than executed
// (its memory belongs to jail's user namespace, not the sandbox's).
func ReadNSInodes(dir int) NSInodes {
	var ns NSInodes
	for _, n := range []struct {
		kind string
		ino  *uint64
	}{
		{"cgroup", &ns.Cgroup}, {"ipc", &ns.IPC}, {"mnt", &ns.Mnt}, {"net", &ns.Net},
		{"pid", &ns.PID}, {"user", &ns.User}, {"uts", &ns.UTS},
	} {
		var st unix.Stat_t
		if unix.Fstatat(dir, n.kind, &st, 0) == nil {
			*n.ino = st.Ino
		}
	}
	return ns
}
