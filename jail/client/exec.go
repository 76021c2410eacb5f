package client

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/rundir"
	"github.com/jail-sandbox/jail/jail/internal/session"
	"github.com/jail-sandbox/jail/jail/internal/tty"
)

// Command is a command to start in a sandbox, and where its stdio goes.
type Command struct {
	Argv    []string
	Env     map[string]string // over the sandbox's environment
	Cwd     string            // "": the sandbox's
	Timeout time.Duration     // 0: the sandbox's default (its profile's timeout); <0: none
	// Stdin is passed to the command as it is; nil with StdinPipe false: /dev/null.
	Stdin     *os.File
	StdinPipe bool // a pipe whose write end the spawner keeps (Stdin, CloseStdin)
	// Stdout and Stderr are passed as they are; both nil: /dev/null (unless Background or TTY).
	Stdout, Stderr *os.File
	// TTY gives the command a pseudo-terminal of the sandbox's own; with Master, its master comes
	// back in Running.Master.
	TTY    *api.TTYSize
	Master bool
	Merge  bool // stderr goes where stdout goes
	// Background keeps the process's record once it ended and its output, the last bytes of
	// each stream, in the sandbox's directory (Output).
	Background bool
	// Foreground ties the command to the session that started it: Running.Wait gets its end,
	// and closing the session (or dying) kills its process group.
	Foreground bool
	helper     bool // jail's own binary, as Argv[0] names it (files.go)
}

// keepOutput is how much of each stream a background process keeps.
const keepOutput = 1 << 20

// Running is a command started in a sandbox.
type Running struct {
	PID     int
	Started time.Time
	Master  *os.File      // the pseudo-terminal's master, when Command.Master asked for it
	Timeout time.Duration // once Wait returned: the timeout the command ran under (0: none)
	id, dir string
	conn    *session.Conn
}

// Start starts cmd in the sandbox idOrName names, with every restriction of the sandbox, and
// returns once it runs (or could not: then an *api.Error, Exit 126 or 127 for the command
// itself as a run reports them).
func (c *Client) Start(idOrName string, cmd Command) (*Running, error) {
	id, dir, err := resolve(idOrName) // whether it lives, connecting tells (dial)
	if err != nil {
		return nil, err
	}
	return start(id, dir, cmd)
}

func start(id, dir string, cmd Command) (*Running, error) {
	m, payload, err := execMessage(cmd)
	if err != nil {
		return nil, err
	}
	var fds []int
	var out [2]*os.File
	switch {
	case cmd.Stdin != nil:
		m.Flags |= session.ExecStdinFd
		fds = append(fds, int(cmd.Stdin.Fd()))
	case cmd.StdinPipe:
		m.Flags |= session.ExecStdinPipe
	}
	switch {
	case cmd.Background:
		m.Flags |= session.ExecCapture | session.ExecRecord
		m.Value = keepOutput
		if out, err = outputFiles(dir); err != nil {
			return nil, err
		}
		defer closeFiles(out[:])
		fds = append(fds, int(out[0].Fd()), int(out[1].Fd()))
	case cmd.Stdout != nil || cmd.Stderr != nil:
		if cmd.Stdout == nil || cmd.Stderr == nil {
			return nil, api.Errorf(api.Internal, "start: stdout and stderr come together")
		}
		m.Flags |= session.ExecOutFd
		fds = append(fds, int(cmd.Stdout.Fd()), int(cmd.Stderr.Fd()))
	}
	conn, err := dial(id, dir)
	if err != nil {
		return nil, err
	}
	r, _, files, err := conn.Call(m, payload, session.MsgStarted, fds...)
	if err != nil {
		conn.Close()
		return nil, startError(id, r, err, cmd)
	}
	run := &Running{PID: int(r.PID), Started: time.Unix(0, r.NS1).UTC(), id: id, dir: dir, conn: conn}
	if len(files) > 0 {
		run.Master = files[0]
	}
	if cmd.Background {
		// The output files are named after the pid now that there is one.
		for i, f := range out {
			os.Rename(f.Name(), outputPath(dir, run.PID, i+1))
		}
	}
	if !cmd.Foreground {
		conn.Close()
		run.conn = nil
	}
	return run, nil
}

// failure is a start the spawner reports as failed (session.MsgFailed).
type failure session.Msg

// apiError is the error of a failed start, as a run reports it: exec NAME (126 or 127), chdir
// DIR, or the step that failed.
func (f failure) apiError(cmd Command) *api.Error {
	errno := syscall.Errno(f.Value)
	var e *fail.Error
	switch f.Flags {
	case session.FailedExec:
		e = fail.Exec(cmd.Argv[0], errno)
	case session.FailedChdir:
		e = &fail.Error{Op: "chdir", Path: cmd.Cwd, Errno: errno, Exit: fail.ExitSetup}
	case session.FailedTTY:
		e = &fail.Error{Op: "open a pseudo-terminal", Errno: errno, Exit: fail.ExitSetup}
	default:
		e = &fail.Error{Op: "start", Path: cmd.Argv[0], Errno: errno, Exit: fail.ExitSetup}
	}
	code := api.InvalidArgument
	if f.Flags == session.FailedTTY || f.Flags == session.FailedSetup {
		code = api.Internal
	}
	return &api.Error{Code: code, Message: "jail: " + e.Error(), Exit: e.Exit}
}

// startError is the error of a start that got no answer, or an unexpected one.
func startError(id string, r session.Msg, err error, cmd Command) error {
	if r.Type == session.MsgFailed {
		return failure(r).apiError(cmd)
	}
	return api.Errorf(api.Internal, "sandbox %s: start %s: %s", id, cmd.Argv[0], err)
}

// execMessage encodes cmd as a session.MsgExec and its payload.
func execMessage(cmd Command) (session.Msg, []byte, error) {
	m := session.Msg{Type: session.MsgExec, Argc: uint32(len(cmd.Argv))}
	if len(cmd.Argv) == 0 {
		return m, nil, api.Errorf(api.InvalidArgument, "no command given")
	}
	env := make([]string, 0, len(cmd.Env))
	for k, v := range cmd.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") {
			return m, nil, api.Errorf(api.InvalidArgument, "env %q: a name without '=' and NUL, a value without NUL", k)
		}
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	for _, s := range append([]string{cmd.Cwd}, cmd.Argv...) {
		if strings.Contains(s, "\x00") {
			return m, nil, api.Errorf(api.InvalidArgument, "%q: a command line or directory holds no NUL byte", s)
		}
	}
	m.Envc = uint32(len(env))
	m.NS1 = int64(cmd.Timeout) // 0: the spawner applies the sandbox's own
	if cmd.TTY != nil {
		m.Flags |= session.ExecTTY
		m.Cols, m.Rows = cmd.TTY.Cols, cmd.TTY.Rows
		if cmd.Master {
			m.Flags |= session.ExecTTYMaster
		}
	}
	if cmd.Merge {
		m.Flags |= session.ExecMerge
	}
	if cmd.Foreground {
		m.Flags |= session.ExecWait | session.ExecKillOnClose
	}
	if cmd.helper {
		m.Flags |= session.ExecHelper
	}
	payload := session.Strings(cmd.Argv, env, []string{cmd.Cwd})
	if len(payload) > session.MaxMsg {
		return m, nil, api.Errorf(api.InvalidArgument, "command line and environment: %d bytes, more than the %d jail passes", len(payload), session.MaxMsg)
	}
	return m, payload, nil
}

// Wait returns how a foreground command ended.
func (r *Running) Wait() (api.Exit, error) {
	if r.conn == nil {
		return api.Exit{}, api.Errorf(api.Internal, "wait for %d: not a foreground command", r.PID)
	}
	for {
		m, _, files, err := r.conn.Recv()
		closeFiles(files)
		if err != nil {
			return api.Exit{}, api.Errorf(api.Internal, "sandbox %s: wait for %d: %s (did the sandbox end?)", r.id, r.PID, err)
		}
		if m.Type == session.MsgExited && int(m.PID) == r.PID {
			r.Timeout = time.Duration(max(m.NS1, 0))
			return exitOf(m), nil
		}
	}
}

// exitOf is how a process ended, from its wait status.
func exitOf(m session.Msg) api.Exit {
	ws := syscall.WaitStatus(m.Value)
	e := api.Exit{ExitCode: fail.ExitStatus(ws), TimedOut: m.Flags&session.ProcTimedOut != 0}
	if ws.Signaled() {
		name := api.SignalText(ws.Signal())
		e.Signal = &name
	}
	if e.TimedOut {
		e.ExitCode = fail.ExitTimeout
	}
	return e
}

// Close lets go of a command: a foreground one is killed if it still runs.
func (r *Running) Close() {
	if r.conn != nil {
		r.conn.Close()
	}
	if r.Master != nil {
		r.Master.Close()
	}
}

// Signal sends sig to the process, or to its process group.
func (r *Running) Signal(sig syscall.Signal, group bool) error {
	return signal(r.id, r.dir, r.PID, sig, group)
}

func signal(id, dir string, pid int, sig syscall.Signal, group bool) error {
	m := session.Msg{Type: session.MsgSignal, PID: int32(pid), Value: int32(sig)}
	if group {
		m.Flags = session.SignalGroup
	}
	return processCall(id, dir, pid, m)
}

// processCall sends the spawner a request about process pid and waits for its OK.
func processCall(id, dir string, pid int, m session.Msg) error {
	conn, err := dial(id, dir)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, _, _, err = conn.Call(m, nil, session.MsgOK)
	return processError(id, pid, err)
}

// processError names what a process request's errno means.
func processError(id string, pid int, err error) error {
	switch err {
	case nil:
		return nil
	case syscall.ESRCH:
		return api.Errorf(api.NotFound, "sandbox %s: process %d: no such process (or it has ended)", id, pid)
	case syscall.EPIPE:
		return api.Errorf(api.FailedPrecondition, "sandbox %s: process %d: its stdin is not a pipe, or is closed", id, pid)
	case syscall.ENOTTY:
		return api.Errorf(api.FailedPrecondition, "sandbox %s: process %d: it has no terminal", id, pid)
	}
	return api.Errorf(api.Internal, "sandbox %s: process %d: %s", id, pid, err)
}

// outputFiles creates the two files a background process's output is kept in, under temporary
// names until its pid is known.
func outputFiles(dir string) ([2]*os.File, error) {
	var out [2]*os.File
	outDir := filepath.Join(dir, rundir.OutDir)
	if err := os.Mkdir(outDir, 0o700); err != nil && !os.IsExist(err) {
		return out, api.Errorf(api.Internal, "output directory: %s", err)
	}
	for i := range out {
		f, err := os.CreateTemp(outDir, ".new-*")
		if err != nil {
			closeFiles(out[:i])
			return out, api.Errorf(api.Internal, "output file: %s", err)
		}
		out[i] = f
	}
	return out, nil
}

// outputPath is the file of stream (1 stdout, 2 stderr) of background process pid.
func outputPath(dir string, pid, stream int) string {
	return filepath.Join(dir, rundir.OutDir, fmt.Sprintf("%d.%d", pid, stream))
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// Pollable returns f as a file Go's poller waits on, so that its reads can have deadlines: f
// itself when it is one, else a non-blocking duplicate of its descriptor (f is closed).
func Pollable(f *os.File) *os.File {
	if f.SetReadDeadline(time.Time{}) == nil {
		return f
	}
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return f
	}
	f.Close()
	unix.SetNonblock(fd, true)
	unix.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "pollable")
}

// Stdio is the caller's stdin, stdout and stderr.
type Stdio = tty.Stdio

// Relay relays a command's pseudo-terminal (Master) to the caller's terminal — its keystrokes
// too with input — until the returned drain is called once the command has ended, which gives
// the caller its terminal back. Resize copies the caller's window size to it.
func (r *Running) Relay(stdio Stdio, input bool) (drain func(), resize func()) {
	p := tty.Attach(Pollable(r.Master), stdio, input)
	r.Master = nil
	p.Start()
	return func() { p.Drain(50 * time.Millisecond) }, p.Resize
}
