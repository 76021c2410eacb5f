package jail

import (
	"bufio"
	"encoding/json"
	"io"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/landlock"
)

// initMessage is one line init sends the host on reportFd, as JSON, with exactly one field set.
// An Error ends init; the others tell the host what only init sees, for --report and
// --json-status-fd: what Landlock applied, that the command started, how it ended.
type initMessage struct {
	Error    *Error           `json:"error,omitempty"`
	Landlock *landlock.Report `json:"landlock,omitempty"`
	Started  *startedMessage  `json:"started,omitempty"`
	Exited   *exitedMessage   `json:"exited,omitempty"`
	// Denial is a call --explain predicts the sandbox refuses (explain.go); MoreDenials says
	// init stopped sending them.
	Denial      *Denial `json:"denial,omitempty"`
	MoreDenials bool    `json:"more_denials,omitempty"`
}

// startedMessage says the command runs, as pid PID of the sandbox's pid namespace, in init's
// namespaces.
type startedMessage struct {
	PID        int      `json:"pid"`
	Namespaces nsInodes `json:"namespaces"`
}

// exitedMessage is how the command ended, and the resources it and everything it started used,
// measured by init once it has reaped them all (RUSAGE_CHILDREN, so init's own share is not in it).
type exitedMessage struct {
	WaitStatus syscall.WaitStatus `json:"wait_status"`
	Rusage     syscall.Rusage     `json:"rusage"`
}

// tellHost sends msg to the host, in one write: reportFd is a pipe and a message is far below
// PIPE_BUF, so messages sent from different threads never interleave. It fails when the host is
// gone (EPIPE).
func tellHost(msg initMessage) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = unix.Write(reportFd, append(b, '\n'))
	return err
}

// tellHostExited sends how the command ended, with ru, the usage of everything pid 1 had reaped
// by then.
func tellHostExited(ws syscall.WaitStatus, ru syscall.Rusage) {
	tellHost(initMessage{Exited: &exitedMessage{WaitStatus: ws, Rusage: ru}})
}

// readInit reads init's messages until init is gone, hands every one but an error to the
// observer as it comes, and then sends the error (or nothing) on sb.report, where wait takes it.
// A line that is not a message is passed on as the report, so decodeReport names the problem.
func (sb *sandbox) readInit(r io.ReadCloser) {
	defer r.Close()
	var report []byte
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		var msg initMessage
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			report = append([]byte(nil), sc.Bytes()...)
			break
		}
		switch {
		case msg.Error != nil:
			report, _ = json.Marshal(msg.Error)
		case msg.Landlock != nil:
			sb.obs.landlockApplied(*msg.Landlock)
		case msg.Started != nil:
			sb.obs.started(sb, msg.Started.PID, &msg.Started.Namespaces)
		case msg.Exited != nil:
			sb.obs.exited(msg.Exited)
		case msg.Denial != nil || msg.MoreDenials:
			sb.obs.denied(msg.Denial) // explain_report.go
		}
	}
	if sc.Err() != nil {
		report = []byte(sc.Err().Error()) // not JSON: decodeReport says so
	}
	io.Copy(io.Discard, r) // init blocks on nothing it writes, whatever came after
	sb.report <- report
}
