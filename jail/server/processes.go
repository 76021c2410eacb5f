package server

import (
	"context"
	"strconv"
	"syscall"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/http1"
	"github.com/jail-sandbox/jail/jail/client"
)

// processes answers /v1/sandboxes/{id}/processes[/{pid}[/ACTION]].
func (s *Server) processes(w *response, r *http1.Request, id string, rest []string) {
	if len(rest) == 0 {
		switch r.Method {
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
		switch r.Method {
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
		s.method(w, r, "GET", func() { s.output(w, r, id, pid) })
	case "attach":
		s.method(w, r, "GET", func() { s.attach(w, r, id, pid) })
	case "wait":
		s.method(w, r, "GET", func() { s.wait(w, r, id, pid) })
	case "stdin":
		s.method(w, r, "POST", func() { done(w, s.Client.Stdin(id, pid, r.Body, queryBool(r, "close"))) })
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
func offsets(r *http1.Request) ([2]int64, error) {
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
func (s *Server) output(w *response, r *http1.Request, id string, pid int) {
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
		ctx = http1.Watch(w.Response, r)
	}
	out, err := s.Client.Output(ctx, id, pid, client.OutputRequest{Stdout: o[0], Stderr: o[1], Wait: wait, MaxBytes: int(max)})
	answer(w, out, err)
}

// attach answers GET …/processes/{pid}/attach: the exec stream of a background process, from
// the offsets on; closing the connection leaves the process running.
func (s *Server) attach(w *response, r *http1.Request, id string, pid int) {
	o, err := offsets(r)
	if err != nil {
		w.error(err)
		return
	}
	ctx := http1.Watch(w.Response, r)
	err = s.Client.Attach(ctx, id, pid, o, func(e api.Event) error {
		if !w.Started {
			w.Head(200, "application/x-ndjson", -1)
		}
		return w.event(e)
	})
	if err != nil && ctx.Err() == nil {
		if !w.Started {
			w.error(err)
			return
		}
		w.event(api.Event{Event: api.EventError, Error: api.AsError(err)})
	}
}

// wait answers GET …/processes/{pid}/wait.
func (s *Server) wait(w *response, r *http1.Request, id string, pid int) {
	timeout, err := queryDuration(r, "timeout")
	if err != nil {
		w.error(err)
		return
	}
	http1.Watch(w.Response, r)
	p, err := s.Client.Wait(id, pid, timeout)
	answer(w, p, err)
}
