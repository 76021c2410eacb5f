package e2b

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/client"
	pb "github.com/jail-sandbox/jail/jail/e2b/envd/process"
)

// processService is envd's Process service on a jail sandbox. Every E2B process is a jail
// background process: it outlives the request that started it (as envd's do), its output is
// kept by jail and streamed from there, and its pid is its pid in the sandbox.
type processService struct{ s *Server }

// Start runs a command and streams its events: start, output as it comes, end. The request's
// Connect-Timeout-Ms bounds the command's life (envd's rule, background commands included);
// closing the stream leaves it running.
func (p *processService) Start(ctx context.Context, req *connect.Request[pb.StartRequest], st *connect.ServerStream[pb.StartResponse]) error {
	id, m := sandboxOf(ctx), req.Msg
	cfg := m.GetProcess()
	if cfg.GetCmd() == "" {
		return connect.NewError(connect.CodeInvalidArgument, errors.New("jail: start: no command"))
	}
	cmd := client.Command{
		Argv:       append([]string{cfg.GetCmd()}, cfg.GetArgs()...),
		Env:        cfg.GetEnvs(),
		Background: true,
		Timeout:    -1,
		StdinPipe:  m.Stdin == nil || m.GetStdin(), // envd's default is a pipe
	}
	if cfg.Cwd != nil {
		cmd.Cwd = resolvePath(cfg.GetCwd())
	}
	if d, ok := ctx.Deadline(); ok {
		cmd.Timeout = max(time.Until(d), time.Millisecond)
	}
	if size := m.GetPty().GetSize(); m.Pty != nil {
		cmd.TTY = &api.TTYSize{Cols: uint16(size.GetCols()), Rows: uint16(size.GetRows())}
		cmd.StdinPipe = false // input goes to the terminal
	}
	run, err := p.s.Client.Start(id, cmd)
	if err != nil {
		return connectError(err)
	}
	pid := uint32(run.PID)
	p.s.procs.add(id, pid, procEntry{config: cfg, tag: m.GetTag()})
	send := func(ev *pb.ProcessEvent) error { return st.Send(&pb.StartResponse{Event: ev}) }
	ended, err := p.s.follow(ctx, req.Header(), id, pid, [2]int64{}, m.Pty != nil, send)
	if ended {
		// Its end is told: envd forgets an ended process, and so does jail now.
		p.s.procs.remove(id, pid)
		p.s.Client.Release(id, int(pid))
	}
	return err
}

// Connect streams the events of a running process from now on: start (its pid), its output,
// its end.
func (p *processService) Connect(ctx context.Context, req *connect.Request[pb.ConnectRequest], st *connect.ServerStream[pb.ConnectResponse]) error {
	id := sandboxOf(ctx)
	pid, err := p.s.selectProcess(id, req.Msg.GetProcess())
	if err != nil {
		return err
	}
	proc, err := p.s.Client.Process(id, int(pid))
	if err != nil || !proc.Running || !proc.Background {
		return processNotFound(pid)
	}
	var since [2]int64
	if proc.StdoutBytes != nil && proc.StderrBytes != nil {
		since = [2]int64{*proc.StdoutBytes, *proc.StderrBytes}
	}
	send := func(ev *pb.ProcessEvent) error { return st.Send(&pb.ConnectResponse{Event: ev}) }
	_, err = p.s.follow(ctx, req.Header(), id, pid, since, proc.TTY, send)
	return err
}

// follow sends a process's start event, then its output from the offsets since, then its end;
// keepalive events while it is quiet, as often as the client's Keepalive-Ping-Interval asks.
// ended says whether the end was sent.
func (s *Server) follow(ctx context.Context, h interface{ Get(string) string }, id string, pid uint32, since [2]int64, tty bool, send func(*pb.ProcessEvent) error) (ended bool, err error) {
	var mu sync.Mutex
	locked := func(ev *pb.ProcessEvent) error {
		mu.Lock()
		defer mu.Unlock()
		return send(ev)
	}
	if err := locked(&pb.ProcessEvent{Event: &pb.ProcessEvent_Start{Start: &pb.ProcessEvent_StartEvent{Pid: pid}}}); err != nil {
		return false, err
	}
	if secs, err := strconv.Atoi(h.Get("Keepalive-Ping-Interval")); err == nil && secs > 0 {
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			t := time.NewTicker(time.Duration(secs) * time.Second)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					locked(&pb.ProcessEvent{Event: &pb.ProcessEvent_Keepalive{Keepalive: &pb.ProcessEvent_KeepAlive{}}})
				case <-stop:
					return
				}
			}
		}()
	}
	var exit *api.Exit
	err = s.Client.Attach(ctx, id, int(pid), since, func(e api.Event) error {
		data := &pb.ProcessEvent_DataEvent{}
		switch {
		case e.Event == api.EventExit:
			exit = e.Exit
			return nil
		case tty:
			data.Output = &pb.ProcessEvent_DataEvent_Pty{Pty: e.Data}
		case e.Event == api.EventStdout:
			data.Output = &pb.ProcessEvent_DataEvent_Stdout{Stdout: e.Data}
		case e.Event == api.EventStderr:
			data.Output = &pb.ProcessEvent_DataEvent_Stderr{Stderr: e.Data}
		default:
			return nil
		}
		return locked(&pb.ProcessEvent{Event: &pb.ProcessEvent_Data{Data: data}})
	})
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || exit != nil && exit.TimedOut:
		return exit != nil, connect.NewError(connect.CodeDeadlineExceeded, fmt.Errorf("jail: process %d ran past the request's timeout (Connect-Timeout-Ms) and was killed", pid))
	case ctx.Err() != nil:
		return false, ctx.Err()
	case err != nil:
		return false, connectError(err)
	case exit == nil:
		return false, connect.NewError(connect.CodeInternal, fmt.Errorf("jail: process %d: its output ended without its exit", pid))
	}
	return true, locked(&pb.ProcessEvent{Event: &pb.ProcessEvent_End{End: endEvent(exit)}})
}

// endEvent is how a process ended, as envd tells it: Go's os.ProcessState (exit code -1 when a
// signal ended it) and cmd.Wait's error text when it failed.
func endEvent(e *api.Exit) *pb.ProcessEvent_EndEvent {
	if e.Signal != nil {
		status := "signal: " + signalNumber(*e.Signal).String()
		return &pb.ProcessEvent_EndEvent{ExitCode: -1, Status: status, Error: &status}
	}
	status := fmt.Sprintf("exit status %d", e.ExitCode)
	end := &pb.ProcessEvent_EndEvent{ExitCode: int32(e.ExitCode), Exited: true, Status: status}
	if e.ExitCode != 0 {
		end.Error = &status
	}
	return end
}

// signalNumber is the signal jail's API names ("KILL", or a number).
func signalNumber(name string) syscall.Signal {
	var s api.SignalName
	json.Unmarshal([]byte(strconv.Quote(name)), &s)
	return syscall.Signal(s)
}

// List returns the running processes E2B started in the sandbox.
func (p *processService) List(ctx context.Context, req *connect.Request[pb.ListRequest]) (*connect.Response[pb.ListResponse], error) {
	id := sandboxOf(ctx)
	procs, err := p.s.Client.Processes(id, true)
	if err != nil {
		return nil, connectError(err)
	}
	out := &pb.ListResponse{}
	for _, proc := range procs {
		if !proc.Background {
			continue // the file operations' helpers
		}
		info := &pb.ProcessInfo{Pid: uint32(proc.PID)}
		if e, ok := p.s.procs.get(id, uint32(proc.PID)); ok {
			info.Config = e.config
			if e.tag != "" {
				info.Tag = &e.tag
			}
		} else if len(proc.Cmd) > 0 {
			info.Config = &pb.ProcessConfig{Cmd: proc.Cmd[0], Args: proc.Cmd[1:], Cwd: &proc.Cwd}
		}
		out.Processes = append(out.Processes, info)
	}
	return connect.NewResponse(out), nil
}

// SendInput writes to a process's stdin, or its terminal.
func (p *processService) SendInput(ctx context.Context, req *connect.Request[pb.SendInputRequest]) (*connect.Response[pb.SendInputResponse], error) {
	id := sandboxOf(ctx)
	pid, err := p.s.selectProcess(id, req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	in := req.Msg.GetInput()
	data := in.GetStdin()
	if in.GetPty() != nil {
		data = in.GetPty()
	}
	if err := p.s.Client.Stdin(id, int(pid), bytes.NewReader(data), false); err != nil {
		return nil, processError(pid, err)
	}
	return connect.NewResponse(&pb.SendInputResponse{}), nil
}

// CloseStdin closes a process's stdin: it reads end of file.
func (p *processService) CloseStdin(ctx context.Context, req *connect.Request[pb.CloseStdinRequest]) (*connect.Response[pb.CloseStdinResponse], error) {
	id := sandboxOf(ctx)
	pid, err := p.s.selectProcess(id, req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if err := p.s.Client.Stdin(id, int(pid), bytes.NewReader(nil), true); err != nil {
		return nil, processError(pid, err)
	}
	return connect.NewResponse(&pb.CloseStdinResponse{}), nil
}

// SendSignal sends SIGKILL or SIGTERM to a process's group (the command and what it started).
func (p *processService) SendSignal(ctx context.Context, req *connect.Request[pb.SendSignalRequest]) (*connect.Response[pb.SendSignalResponse], error) {
	id := sandboxOf(ctx)
	pid, err := p.s.selectProcess(id, req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	sig := syscall.Signal(req.Msg.GetSignal())
	if sig != syscall.SIGKILL && sig != syscall.SIGTERM {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("jail: signal %s: envd sends SIGKILL or SIGTERM", req.Msg.GetSignal()))
	}
	if err := p.s.Client.Signal(id, int(pid), sig); err != nil {
		return nil, processError(pid, err)
	}
	return connect.NewResponse(&pb.SendSignalResponse{}), nil
}

// Update resizes a process's terminal.
func (p *processService) Update(ctx context.Context, req *connect.Request[pb.UpdateRequest]) (*connect.Response[pb.UpdateResponse], error) {
	id := sandboxOf(ctx)
	pid, err := p.s.selectProcess(id, req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if size := req.Msg.GetPty().GetSize(); size != nil {
		if err := p.s.Client.Resize(id, int(pid), api.TTYSize{Cols: uint16(size.GetCols()), Rows: uint16(size.GetRows())}); err != nil {
			return nil, processError(pid, err)
		}
	}
	return connect.NewResponse(&pb.UpdateResponse{}), nil
}

// StreamInput is input as a client stream, which no SDK sends (they call SendInput).
func (p *processService) StreamInput(context.Context, *connect.ClientStream[pb.StreamInputRequest]) (*connect.Response[pb.StreamInputResponse], error) {
	return nil, notImplemented("Process/StreamInput (client streaming); send input with SendInput")
}

// selectProcess returns the pid a selector names: a pid, or a tag Start was given.
func (s *Server) selectProcess(id string, sel *pb.ProcessSelector) (uint32, error) {
	if tag, ok := sel.GetSelector().(*pb.ProcessSelector_Tag); ok {
		if pid, ok := s.procs.byTag(id, tag.Tag); ok {
			return pid, nil
		}
		return 0, connect.NewError(connect.CodeNotFound, fmt.Errorf("jail: process with tag %q not found", tag.Tag))
	}
	return sel.GetPid(), nil
}

func processNotFound(pid uint32) error {
	return connect.NewError(connect.CodeNotFound, fmt.Errorf("jail: process with pid %d not found", pid))
}

// processError is a process request's failure; a process that has ended is not found, as envd
// has it.
func processError(pid uint32, err error) error {
	if api.AsError(err).Code == api.NotFound {
		return processNotFound(pid)
	}
	return connectError(err)
}

// processTable keeps what E2B gave each process at its start and jail does not keep: its
// configuration as sent (environment included) and its tag.
type processTable struct {
	mu sync.Mutex
	m  map[string]map[uint32]procEntry
}

type procEntry struct {
	config *pb.ProcessConfig
	tag    string
}

func (t *processTable) add(id string, pid uint32, e procEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]map[uint32]procEntry{}
	}
	if t.m[id] == nil {
		t.m[id] = map[uint32]procEntry{}
	}
	t.m[id][pid] = e
}

func (t *processTable) get(id string, pid uint32) (procEntry, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id][pid]
	return e, ok
}

func (t *processTable) byTag(id, tag string) (uint32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid, e := range t.m[id] {
		if e.tag == tag {
			return pid, true
		}
	}
	return 0, false
}

func (t *processTable) remove(id string, pid uint32) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m[id], pid)
}

func (t *processTable) forget(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, id)
}
