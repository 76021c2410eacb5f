package client

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/internal/session"
)

// OutputRequest asks for a background process's output from two offsets (next_stdout and
// next_stderr of the answer before), waiting up to Wait for some to come.
type OutputRequest struct {
	Stdout, Stderr int64
	Wait           time.Duration
	MaxBytes       int // of each stream; 0: 64 KiB
}

const defaultMaxBytes = 64 << 10

// Output returns what a background process wrote from the offsets on, as soon as there is some
// or it has ended, else after req.Wait.
func (c *Client) Output(ctx context.Context, idOrName string, pid int, req OutputRequest) (*api.Output, error) {
	id, dir, err := live(idOrName)
	if err != nil {
		return nil, err
	}
	p, err := keptProcess(id, dir, pid)
	if err != nil {
		return nil, err
	}
	out := readOutput(dir, pid, req)
	if len(out.Stdout)+len(out.Stderr) > 0 || !p.Running || req.Wait <= 0 {
		return finishOutput(out, p, dir), nil
	}
	f, err := follow(id, dir, pid)
	if err != nil {
		return nil, err
	}
	defer f.close()
	timer := time.NewTimer(req.Wait)
	defer timer.Stop()
	for {
		if out = readOutput(dir, pid, req); len(out.Stdout)+len(out.Stderr) > 0 {
			break
		}
		select {
		case <-f.changed:
			continue
		case <-f.exited:
		case <-timer.C:
		case <-ctx.Done():
		}
		break
	}
	if p, err = process(id, dir, pid); err != nil {
		return nil, err
	}
	return finishOutput(readOutput(dir, pid, req), p, dir), nil
}

// keptProcess returns the record of process pid, which must be a background one.
func keptProcess(id, dir string, pid int) (*api.Process, error) {
	p, err := process(id, dir, pid)
	if err == nil && !p.Background {
		err = api.Errorf(api.FailedPrecondition, "sandbox %s: process %d runs in the foreground of an exec: its output is not kept", id, pid)
	}
	return p, err
}

// finishOutput adds the process's state: running, and how it ended once the offsets reach the
// end of its output.
func finishOutput(out *api.Output, p *api.Process, dir string) *api.Output {
	out.Running = p.Running
	if p.Running || out.NextStdout < fileSize(outputPath(dir, p.PID, 1)) || out.NextStderr < fileSize(outputPath(dir, p.PID, 2)) {
		return out
	}
	out.Exit = &api.Exit{ExitCode: *p.ExitCode, Signal: p.Signal, TimedOut: p.TimedOut}
	return out
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readOutput reads both streams from the request's offsets.
func readOutput(dir string, pid int, req OutputRequest) *api.Output {
	max := req.MaxBytes
	if max <= 0 {
		max = defaultMaxBytes
	}
	out := &api.Output{Stdout: []byte{}, Stderr: []byte{}}
	out.Stdout, out.NextStdout, out.StdoutDropped = readKept(outputPath(dir, pid, 1), req.Stdout, max)
	out.Stderr, out.NextStderr, out.StderrDropped = readKept(outputPath(dir, pid, 2), req.Stderr, max)
	return out
}

// readKept reads up to max bytes of a kept output file from offset since. What the spawner gave
// back (a hole at the start: spawner.c's relay) is skipped and counted as dropped.
func readKept(path string, since int64, max int) (data []byte, next, dropped int64) {
	data = []byte{}
	f, err := os.Open(path)
	if err != nil {
		return data, since, 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return data, since, 0
	}
	size := fi.Size()
	first, err := unix.Seek(int(f.Fd()), 0, unix.SEEK_DATA)
	if err != nil { // ENXIO: no data at all (empty, or all given back)
		first = size
	}
	from := since
	if from < first {
		dropped, from = first-since, first
	}
	if from >= size {
		return data, max64(from, since), dropped
	}
	n := min(size-from, int64(max))
	data = make([]byte, n)
	got, _ := f.ReadAt(data, from)
	return data[:got], from + int64(got), dropped
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// follower tells when a background process's output files change (inotify) and when it ends
// (a wait on a session of its own).
type follower struct {
	changed chan struct{}
	exited  chan struct{}
	ino     *os.File
	conn    *session.Conn
}

func follow(id, dir string, pid int) (*follower, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, api.Errorf(api.Internal, "inotify: %s", err)
	}
	for i := 1; i <= 2; i++ {
		unix.InotifyAddWatch(fd, outputPath(dir, pid, i), unix.IN_MODIFY)
	}
	f := &follower{changed: make(chan struct{}, 1), exited: make(chan struct{}), ino: os.NewFile(uintptr(fd), "inotify")}
	if f.conn, err = dial(id, dir); err != nil {
		f.ino.Close()
		return nil, err
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := f.ino.Read(buf); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
			select {
			case f.changed <- struct{}{}:
			default:
			}
		}
	}()
	go func() {
		f.conn.Call(session.Msg{Type: session.MsgWait, PID: int32(pid)}, nil, session.MsgExited)
		close(f.exited)
	}()
	return f, nil
}

func (f *follower) close() {
	f.ino.Close()
	f.conn.Close()
}

// Attach calls emit with a background process's output from the offsets on as it comes, as
// stdout and stderr events, and then with its exit event, once it has ended and its output is
// all read. It returns early when emit fails or ctx ends.
func (c *Client) Attach(ctx context.Context, idOrName string, pid int, since [2]int64, emit func(api.Event) error) error {
	id, dir, err := live(idOrName)
	if err != nil {
		return err
	}
	if _, err := keptProcess(id, dir, pid); err != nil {
		return err
	}
	f, err := follow(id, dir, pid)
	if err != nil {
		return err
	}
	defer f.close()
	exited := false
	for {
		out := readOutput(dir, pid, OutputRequest{Stdout: since[0], Stderr: since[1]})
		since = [2]int64{out.NextStdout, out.NextStderr}
		for _, e := range []api.Event{{Event: api.EventStdout, Data: out.Stdout}, {Event: api.EventStderr, Data: out.Stderr}} {
			if len(e.Data) > 0 {
				if err := emit(e); err != nil {
					return err
				}
			}
		}
		if len(out.Stdout)+len(out.Stderr) > 0 {
			continue
		}
		if exited {
			p, err := process(id, dir, pid)
			if err != nil {
				return err
			}
			return emit(api.Event{Event: api.EventExit, Exit: &api.Exit{ExitCode: *p.ExitCode, Signal: p.Signal, TimedOut: p.TimedOut}})
		}
		select {
		case <-f.changed:
		case <-f.exited:
			exited = true
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
