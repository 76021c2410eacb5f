package client

import (
	"io"
	"os"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/internal/session"
)

// listProcesses returns the process records the spawner of sandbox id keeps: running processes
// started by an exec or a start, and ended background ones.
func listProcesses(id, dir string) ([]api.Process, error) {
	conn, err := dial(id, dir)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.Send(session.Msg{Type: session.MsgList}, nil); err != nil {
		return nil, api.Errorf(api.Internal, "sandbox %s: list processes: %s", id, err)
	}
	procs := []api.Process{}
	for {
		m, payload, files, err := conn.Recv()
		closeFiles(files)
		if err != nil {
			return nil, api.Errorf(api.Internal, "sandbox %s: list processes: %s", id, err)
		}
		if m.Type == session.MsgEnd {
			return procs, nil
		}
		if m.Type != session.MsgProc {
			continue
		}
		argv, rest, err := session.SplitStrings(payload, int(m.Argc))
		if err != nil {
			continue
		}
		cwd, _, _ := session.SplitStrings(rest, 1)
		p := api.Process{
			PID: int(m.PID), Cmd: argv, Background: m.Flags&session.ProcRecord != 0,
			TTY: m.Flags&session.ProcTTY != 0, Running: m.Flags&session.ProcRunning != 0,
			StartedAt: time.Unix(0, m.NS1).UTC(), Stdin: api.StdinIgnore,
		}
		if len(cwd) == 1 {
			p.Cwd = cwd[0]
		}
		if m.Flags&session.ProcStdin != 0 {
			p.Stdin = api.StdinPipe
		}
		if !p.Running {
			e := exitOf(m)
			p.ExitCode, p.Signal, p.TimedOut = &e.ExitCode, e.Signal, e.TimedOut
			ended := time.Unix(0, m.NS2).UTC()
			p.EndedAt = &ended
		}
		if p.Background {
			for i, n := range []**int64{&p.StdoutBytes, &p.StderrBytes} {
				if fi, err := os.Stat(outputPath(dir, p.PID, i+1)); err == nil {
					size := fi.Size()
					*n = &size
				}
			}
		}
		procs = append(procs, p)
	}
}

// Processes returns a sandbox's process records (running only, with running).
func (c *Client) Processes(idOrName string, running bool) ([]api.Process, error) {
	id, dir, err := live(idOrName)
	if err != nil {
		return nil, err
	}
	procs, err := listProcesses(id, dir)
	if err != nil || !running {
		return procs, err
	}
	out := []api.Process{}
	for _, p := range procs {
		if p.Running {
			out = append(out, p)
		}
	}
	return out, nil
}

// Process returns the record of process pid.
func (c *Client) Process(idOrName string, pid int) (*api.Process, error) {
	id, dir, err := live(idOrName)
	if err != nil {
		return nil, err
	}
	return process(id, dir, pid)
}

func process(id, dir string, pid int) (*api.Process, error) {
	procs, err := listProcesses(id, dir)
	if err != nil {
		return nil, err
	}
	for _, p := range procs {
		if p.PID == pid {
			return &p, nil
		}
	}
	return nil, processError(id, pid, syscall.ESRCH)
}

// Signal sends sig to the process group of process pid.
func (c *Client) Signal(idOrName string, pid int, sig syscall.Signal) error {
	id, dir, err := live(idOrName)
	if err != nil {
		return err
	}
	return signal(id, dir, pid, sig, true)
}

// Resize sets the size of process pid's pseudo-terminal.
func (c *Client) Resize(idOrName string, pid int, size api.TTYSize) error {
	id, dir, err := live(idOrName)
	if err != nil {
		return err
	}
	return processCall(id, dir, pid, session.Msg{Type: session.MsgResize, PID: int32(pid), Cols: size.Cols, Rows: size.Rows})
}

// Stdin writes what data holds to process pid's stdin (its pipe, or its terminal), and closes
// it after when close is set.
func (c *Client) Stdin(idOrName string, pid int, data io.Reader, close bool) error {
	id, dir, err := live(idOrName)
	if err != nil {
		return err
	}
	conn, err := dial(id, dir)
	if err != nil {
		return err
	}
	defer conn.Close()
	_, _, files, err := conn.Call(session.Msg{Type: session.MsgStdin, PID: int32(pid)}, nil, session.MsgFd)
	if err == nil && len(files) != 1 {
		closeFiles(files)
		err = syscall.EPIPE
	}
	if err != nil {
		return processError(id, pid, err)
	}
	in := files[0]
	_, werr := io.Copy(in, data)
	in.Close()
	if werr != nil {
		return api.Errorf(api.FailedPrecondition, "sandbox %s: process %d: write its stdin: %s", id, pid, unwrapOp(werr))
	}
	if close {
		_, _, _, err = conn.Call(session.Msg{Type: session.MsgCloseIn, PID: int32(pid)}, nil, session.MsgOK)
		return processError(id, pid, err)
	}
	return nil
}

// Wait returns process pid's record once it has ended, or a deadline_exceeded error after
// timeout (0: as long as it takes).
func (c *Client) Wait(idOrName string, pid int, timeout time.Duration) (*api.Process, error) {
	id, dir, err := live(idOrName)
	if err != nil {
		return nil, err
	}
	conn, err := dial(id, dir)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if timeout > 0 {
		conn.SetDeadline(time.Now().Add(timeout))
	}
	if _, _, _, err := conn.Call(session.Msg{Type: session.MsgWait, PID: int32(pid)}, nil, session.MsgExited); err != nil {
		if os.IsTimeout(err) {
			return nil, api.Errorf(api.DeadlineExceeded, "sandbox %s: process %d still runs after %s", id, pid, timeout)
		}
		return nil, processError(id, pid, err)
	}
	return process(id, dir, pid)
}

// Release kills process pid's group if it runs, and forgets it and its output.
func (c *Client) Release(idOrName string, pid int) error {
	id, dir, err := live(idOrName)
	if err != nil {
		return err
	}
	if err := processCall(id, dir, pid, session.Msg{Type: session.MsgRelease, PID: int32(pid)}); err != nil {
		return err
	}
	os.Remove(outputPath(dir, pid, 1))
	os.Remove(outputPath(dir, pid, 2))
	return nil
}
