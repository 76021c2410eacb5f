package fail

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Op: "exec", Path: "ls", Errno: syscall.ENOENT}, "exec ls: no such file or directory"},
		{&Error{Op: "create sandbox namespaces", Errno: syscall.EPERM, Hint: "fix it"},
			"create sandbox namespaces: operation not permitted (fix it)"},
		{&Error{Op: "timeout", Detail: "killed the sandbox after 1s"}, "timeout: killed the sandbox after 1s"},
		{&Error{Op: "setup", Detail: "two\nlines"}, "setup: two lines"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestNewErrorKeepsContextAndErrno(t *testing.T) {
	wrapped := fmt.Errorf("bind /usr: %w", syscall.EPERM)
	e := New("build the root filesystem", "", wrapped)
	if e.Errno != syscall.EPERM || e.Exit != ExitSetup || !errors.Is(e, syscall.EPERM) {
		t.Errorf("newError(%v) = %#v, want errno EPERM and exit 125", wrapped, e)
	}
	if want := "build the root filesystem: bind /usr: operation not permitted"; e.Error() != want {
		t.Errorf("text %q, want %q", e, want)
	}
	inner := &Error{Op: "chdir", Path: "/x", Errno: syscall.ENOENT, Exit: ExitSetup}
	if got := New("setup", "", inner); got != inner {
		t.Errorf("newError re-wrapped a jail error: %v", got)
	}
}

func TestExecErrorStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&os.PathError{Op: "fork/exec", Path: "/x", Err: syscall.ENOENT}, ExitNotFound},
		{syscall.ENOTDIR, ExitNotFound},
		{syscall.EACCES, ExitNotExecutable},
		{syscall.ENOEXEC, ExitNotExecutable},
		{syscall.EPERM, ExitNotExecutable},
	} {
		if e := Exec("x", tc.err); e.Exit != tc.want {
			t.Errorf("execError(%v).Exit = %d, want %d", tc.err, e.Exit, tc.want)
		}
	}
}

func TestExitStatusOfWaitStatus(t *testing.T) {
	// A wait status holds the exit code in bits 8-15, or the signal in bits 0-6.
	if got := ExitStatus(syscall.WaitStatus(3 << 8)); got != 3 {
		t.Errorf("exit 3 → %d", got)
	}
	if got := ExitStatus(syscall.WaitStatus(syscall.SIGKILL)); got != 137 {
		t.Errorf("SIGKILL → %d, want 137", got)
	}
}
