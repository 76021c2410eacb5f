package server

import (
	"bufio"
	"context"
	"strconv"
	"syscall"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/client"
)

// processes answers /v1/sandboxes/{id}/processes[/{pid}[/ACTION]].
func (s *Server) processes(w *response, r *request, id string, rest []string, br *bufio.Reader) {
	if len(rest) == 0 {
		switch r.method {
		case "GET":
			procs, err := s.Client.Processes(id, queryBool(r, "running"))
			if err != nil {
				w.error(err)
				return
			}
			w.json(200, api.ProcessList{Processes: procs})
		case "POST":
			s.background(w, r, id)
		default:
			w.error(wrongMethod(r))
		}
		return
	}
	pid, err := strconv.Atoi(rest[0])
	if err != nil || pid <= 0 || len(rest) > 2 {
		w.error(notFound(r))
		return
	}
	if len(rest) == 1 {
		switch r.method {
		case "GET":
			p, err := s.Client.Process(id, pid)
			answer(w, p, err)
		case "DELETE":
			done(w, s.Client.Release(id, pid))
		default:
			w.error(wrongMethod(r))
		}
		return
	}
	switch action := rest[1]; action {
	case "output":
		s.method(w, r, "GET", func() { s.output(w, r, id, pid, br) })
	case "attach":
		s.method(w, r, "GET", func() { s.attach(w, r, id, pid, br) })
	case "wait":
		s.method(w, r, "GET", func() { s.wait(w, r, id, pid, br) })
	case "stdin":
		s.method(w, r, "POST", func() { done(w, s.Client.Stdin(id, pid, r.body, queryBool(r, "close"))) })
	case "signal":
		s.method(w, r, "POST", func() {
			var req api.SignalRequest
			if err := decode(r, &req); err != nil {
				w.error(err)
				return
			}
			done(w, s.Client.Signal(id, pid, syscall.Signal(req.Signal)))
		})
	case "resize":
		s.method(w, r, "POST", func() {
			var req api.ResizeRequest
			if err := decode(r, &req); err != nil {
				w.error(err)
				return
			}
			done(w, s.Client.Resize(id, pid, req))
		})
	default:
		w.error(notFound(r))
	}
}

// answer answers with v, or err.
func answer(w *response, v any, err error) {
	if err != nil {
		w.error(err)
		return
	}
	w.json(200, v)
}

// done answers 204, or err.
func done(w *response, err error) {
	if err != nil {
		w.error(err)
		return
	}
	w.noContent()
}

// offsets reads the stdout and stderr offsets of an output or attach request.
func offsets(r *request) ([2]int64, error) {
	var o [2]int64
	for i, name := range []string{"stdout", "stderr"} {
		n, err := queryInt(r, name, 0)
		if err != nil {
			return o, err
		}
		o[i] = n
	}
	return o, nil
}

// output answers GET …/processes/{pid}/output.
func (s *Server) output(w *response, r *request, id string, pid int, br *bufio.Reader) {
	o, err := offsets(r)
	if err != nil {
		w.error(err)
		return
	}
	wait, err := queryDuration(r, "wait")
	if err != nil {
		w.error(err)
		return
	}
	max, err := queryInt(r, "max_bytes", 0)
	if err != nil {
		w.error(err)
		return
	}
	ctx := context.Background()
	if wait > 0 {
		ctx = longRequest(w, br)
	}
	out, err := s.Client.Output(ctx, id, pid, client.OutputRequest{Stdout: o[0], Stderr: o[1], Wait: wait, MaxBytes: int(max)})
	answer(w, out, err)
}

// attach answers GET …/processes/{pid}/attach: the exec stream of a background process, from
// the offsets on; closing the connection leaves the process running.
func (s *Server) attach(w *response, r *request, id string, pid int, br *bufio.Reader) {
	o, err := offsets(r)
	if err != nil {
		w.error(err)
		return
	}
	ctx := longRequest(w, br)
	err = s.Client.Attach(ctx, id, pid, o, func(e api.Event) error {
		if !w.started {
			w.head(200, "application/x-ndjson", -1)
		}
		return w.event(e)
	})
	if err != nil && ctx.Err() == nil {
		if !w.started {
			w.error(err)
			return
		}
		w.event(api.Event{Event: api.EventError, Error: api.AsError(err)})
	}
}

// wait answers GET …/processes/{pid}/wait.
func (s *Server) wait(w *response, r *request, id string, pid int, br *bufio.Reader) {
	timeout, err := queryDuration(r, "timeout")
	if err != nil {
		w.error(err)
		return
	}
	longRequest(w, br)
	p, err := s.Client.Wait(id, pid, timeout)
	answer(w, p, err)
}
