package server

import (
	"bytes"
	"os"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/http1"
	"github.com/jail-sandbox/jail/jail/client"
)

// decodeCommand reads an exec or start request and turns it into the client's Command (without
// its stdio).
func decodeCommand(r *http1.Request) (*api.ExecRequest, client.Command, error) {
	req := &api.ExecRequest{}
	if err := decode(r, req); err != nil {
		return nil, client.Command{}, err
	}
	cmd, err := command(req)
	return req, cmd, err
}

// command turns an exec or start request into the client's Command (without its stdio).
func command(req *api.ExecRequest) (client.Command, error) {
	argv, err := req.Argv()
	if err != nil {
		return client.Command{}, err
	}
	cmd := client.Command{Argv: argv, Env: req.Env, Cwd: req.Cwd, TTY: req.TTY, Merge: req.MergeOutput}
	if req.Timeout != nil {
		cmd.Timeout = time.Duration(*req.Timeout)
		if cmd.Timeout == 0 {
			cmd.Timeout = -1 // "0s": none, whatever the sandbox's default
		}
	}
	switch req.Stdin {
	case "", api.StdinIgnore:
		cmd.StdinPipe = req.Input != nil
	case api.StdinPipe:
		cmd.StdinPipe = true
	default:
		return cmd, api.Errorf(api.InvalidArgument, "stdin %q: ignore or pipe", req.Stdin)
	}
	return cmd, nil
}

// feed writes the request's input to the command's stdin and closes it.
func (s *Server) feed(id string, pid int, req *api.ExecRequest) error {
	if req.Input == nil {
		return nil
	}
	return s.Client.Stdin(id, pid, bytes.NewReader(req.Input), true)
}

// exec answers POST /v1/sandboxes/{id}/exec: the command's output as events while it runs, its
// exit last. The command writes into pipes of this process's (or its terminal's master, which
// the spawner sends back); closing the connection kills it.
func (s *Server) exec(w *response, r *http1.Request, id string) {
	req, cmd, err := decodeCommand(r)
	if err != nil {
		w.error(err)
		return
	}
	cmd.Foreground = true
	var pipes []*os.File // read ends: stdout, stderr
	if req.TTY != nil {
		cmd.Master = true
	} else {
		outR, outW, err := os.Pipe()
		if err != nil {
			w.error(err)
			return
		}
		errR, errW, err := os.Pipe()
		if err != nil {
			outR.Close()
			outW.Close()
			w.error(err)
			return
		}
		defer outW.Close()
		defer errW.Close()
		cmd.Stdout, cmd.Stderr, pipes = outW, errW, []*os.File{outR, errR}
	}
	began := time.Now()
	run, err := s.Client.Start(id, cmd)
	for _, p := range []*os.File{cmd.Stdout, cmd.Stderr} {
		if p != nil {
			p.Close() // the command has them now
		}
	}
	if err != nil {
		closeAll(pipes)
		w.error(err)
		return
	}
	defer run.Close()
	if run.Master != nil {
		pipes = []*os.File{run.Master}
		run.Master = nil
	}
	ctx := http1.Watch(w.Response, r)
	w.Head(200, "application/x-ndjson", -1)
	w.event(api.Event{Event: api.EventStart, PID: run.PID})
	if err := s.feed(id, run.PID, req); err != nil {
		w.event(api.Event{Event: api.EventError, Error: api.AsError(err)})
		return
	}
	exited := make(chan struct{})
	var exit api.Exit
	var waitErr error
	go func() {
		exit, waitErr = run.Wait()
		close(exited)
	}()
	copied := relayOutput(w, pipes, exited)
	select {
	case <-copied:
	case <-ctx.Done():
		return // run.Close kills it
	}
	<-exited
	if waitErr != nil {
		w.event(api.Event{Event: api.EventError, Error: api.AsError(waitErr)})
		return
	}
	w.event(api.Event{Event: api.EventExit, Exit: &exit, Duration: time.Since(began).Round(time.Microsecond).String()})
}

// relayOutput sends what comes on the pipes (stdout, then stderr; one for a terminal) as events
// until each ends or, once exited is closed, stays quiet for a moment: processes the command left
// running may hold them for good. The returned channel closes when it is done.
func relayOutput(w *response, pipes []*os.File, exited <-chan struct{}) <-chan struct{} {
	const quiet = 20 * time.Millisecond
	done := make(chan struct{})
	kinds := []string{api.EventStdout, api.EventStderr}
	left := make(chan struct{}, len(pipes))
	for i, p := range pipes {
		p := client.Pollable(p)
		go func() { // once the command has ended, a read waits no longer than quiet
			<-exited
			p.SetReadDeadline(time.Now().Add(quiet))
		}()
		go func(kind string) {
			defer func() { left <- struct{}{} }()
			defer p.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := p.Read(buf)
				if n > 0 {
					if w.event(api.Event{Event: kind, Data: append([]byte(nil), buf[:n]...)}) != nil {
						return
					}
					select {
					case <-exited:
						p.SetReadDeadline(time.Now().Add(quiet))
					default:
					}
				}
				if err != nil {
					return
				}
			}
		}(kinds[i])
	}
	go func() {
		for range pipes {
			<-left
		}
		close(done)
	}()
	return done
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// background answers POST /v1/sandboxes/{id}/processes: the command starts with its output
// kept, and the answer is its record.
func (s *Server) background(w *response, r *http1.Request, id string) {
	req, cmd, err := decodeCommand(r)
	if err != nil {
		w.error(err)
		return
	}
	cmd.Background = true
	run, err := s.Client.Start(id, cmd)
	if err != nil {
		w.error(err)
		return
	}
	if err := s.feed(id, run.PID, req); err != nil {
		w.error(err)
		return
	}
	p, err := s.Client.Process(id, run.PID)
	if err != nil {
		w.error(err)
		return
	}
	w.json(201, p)
}
