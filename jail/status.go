package jail

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/jail/internal/wire"
)

// startStatus is the --json-status-fd record written once the command runs, in bubblewrap's
// format: child-pid is the host pid of the sandbox's first process (jail's init, pid 1 inside;
// in the fallback, the command), and each namespace the sandbox was created in is named with
// its inode. command-pid, jail's addition, is the command's host pid.
type startStatus struct {
	ChildPID   int `json:"child-pid"`
	CommandPID int `json:"command-pid,omitempty"`
	wire.NSInodes
}

// exitStatusRecord is the last --json-status-fd record, also after jail's own failure.
type exitStatusRecord struct {
	ExitCode int `json:"exit-code"`
}

// writeStartStatus writes the start record for the sandbox whose first process is child: with
// its namespaces ns, also the host pid of the command, pid commandNSPid inside; without (nil),
// child is the command.
func writeStartStatus(w io.Writer, child, commandNSPid int, ns *wire.NSInodes) {
	rec := startStatus{ChildPID: child}
	if ns != nil {
		rec.CommandPID = hostPid(child, commandNSPid)
		rec.NSInodes = *ns
	}
	writeRecord(w, rec)
}

// WriteExitStatus writes the exit record: the status jail exits with.
func WriteExitStatus(w io.Writer, status int) error {
	return writeRecord(w, exitStatusRecord{ExitCode: status})
}

// writeRecord writes one record as a line of JSON, in one write.
func writeRecord(w io.Writer, rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write status record: %w", err)
	}
	return nil
}

// hostPid finds the host pid of parent's child that is nsPid in its own pid namespace (0 when
// not found): the last field of a process's NSpid line is its pid in the innermost namespace.
// A child may have been forked by any of parent's threads, so each one's children are looked at.
func hostPid(parent, nsPid int) int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(parent) + "/task")
	for _, task := range tasks {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(parent) + "/task/" + task.Name() + "/children")
		for _, child := range strings.Fields(string(b)) {
			if pid, _ := strconv.Atoi(child); pid > 0 && innermostPid(pid) == nsPid {
				return pid
			}
		}
	}
	return 0
}

// innermostPid is pid's number in its innermost pid namespace, from /proc/PID/status.
func innermostPid(pid int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[len(f)-1])
				return n
			}
		}
	}
	return 0
}
