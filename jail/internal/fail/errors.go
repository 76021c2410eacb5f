package fail

import (
	"errors"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/jail/internal/userns"
)

// Exit statuses of jail's own failures, as env, podman and docker use them.
const (
	ExitTimeout       = 124 // --timeout expired and the sandbox was killed
	ExitSetup         = 125 // jail itself failed: bad plan, setup step refused
	ExitNotExecutable = 126 // the command exists but cannot be executed
	ExitNotFound      = 127 // the command does not exist inside the sandbox
)

// Error is one of jail's own failures, from the host or from inside the sandbox (where it is sent
// back to the host as JSON over the error pipe). It names the operation and the object, the
// errno when there is one, and a hint when the cause is known.
type Error struct {
	Op    string        `json:"op"`
	Path  string        `json:"path,omitempty"`
	Errno syscall.Errno `json:"errno,omitempty"`
	// Detail, when set, is printed instead of the errno's text: the context the errno came
	// wrapped in ("bind /usr: operation not permitted"), or a failure without errno (a timeout).
	Detail string `json:"detail,omitempty"`
	Hint   string `json:"hint,omitempty"`
	// Exit is the status jail exits with: ExitSetup, ExitNotExecutable, ExitNotFound or
	// ExitTimeout.
	Exit int `json:"exit"`
}

// Error returns one line: "OP PATH: ERRNO-TEXT (hint)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(e.Path)
	}
	switch {
	case e.Detail != "":
		b.WriteString(": ")
		b.WriteString(e.Detail)
	case e.Errno != 0:
		b.WriteString(": ")
		b.WriteString(e.Errno.Error())
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return strings.ReplaceAll(b.String(), "\n", " ")
}

// Unwrap lets errors.Is(err, syscall.EPERM) see the errno.
func (e *Error) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return e.Errno
}

// New makes a setup Error for op on path from err, keeping its errno when it has one.
func New(op, path string, err error) *Error {
	var je *Error
	if errors.As(err, &je) {
		return je
	}
	e := &Error{Op: op, Path: path, Exit: ExitSetup}
	errors.As(err, &e.Errno)
	if _, bare := err.(syscall.Errno); !bare && err != nil {
		e.Detail = err.Error() // keeps the context the errno was wrapped in
	}
	return e
}

// Exec classifies a failed execve of the command as podman and env do: 127 when it (or its
// interpreter) does not exist, 126 when it exists but cannot be executed.
func Exec(name string, err error) *Error {
	e := &Error{Op: "exec", Path: name, Exit: ExitNotExecutable}
	if !errors.As(err, &e.Errno) {
		e.Detail = err.Error()
	}
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
		e.Exit = ExitNotFound
		e.Hint = "not found inside the sandbox; is its directory granted?"
	}
	return e
}

// Errno returns the errno err wraps, or 0.
func Errno(err error) syscall.Errno {
	var errno syscall.Errno
	errors.As(err, &errno)
	return errno
}

// AddUsernsHint adds to a setup step refused with EPERM what refuses it, where jail knows.
func (e *Error) AddUsernsHint() {
	if e.Hint == "" && e.Exit == ExitSetup && e.Errno == syscall.EPERM {
		e.Hint = userns.StepHint()
	}
}

// ExitStatus is a wait status as a shell reports it: the exit code, or 128+N for signal N.
func ExitStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
