package server

import (
	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/http1"
)

// files answers /v1/sandboxes/{id}/fs/OP.
func (s *Server) files(w *response, r *http1.Request, id, op string) {
	path := r.Query.Get("path")
	needPath := func() bool {
		if path == "" {
			w.error(api.Errorf(api.InvalidArgument, "fs/%s: give the path (?path=)", op))
			return false
		}
		return true
	}
	c := s.Client
	switch {
	case op == "file" && r.Method == "GET":
		offset, err := queryInt(r, "offset", 0)
		if err != nil {
			w.error(err)
			return
		}
		length, err := queryInt(r, "length", -1)
		if err != nil {
			w.error(err)
			return
		}
		if needPath() {
			s.body(w, "application/octet-stream", c.ReadFile(id, path, offset, length, &lazyBody{w: w, contentType: "application/octet-stream"}))
		}
	case op == "file" && r.Method == "PUT":
		if needPath() {
			out, err := c.WriteFile(id, path, r.Query.Get("mode"), r.Body)
			answer(w, out, err)
		}
	case op == "stat" && r.Method == "GET":
		if needPath() {
			out, err := c.Stat(id, path)
			answer(w, out, err)
		}
	case op == "list" && r.Method == "GET":
		depth, err := queryInt(r, "depth", 1)
		if err != nil {
			w.error(err)
			return
		}
		if needPath() {
			out, err := c.ListFiles(id, path, int(depth))
			answer(w, out, err)
		}
	case op == "mkdir" && r.Method == "POST":
		var req api.MkdirRequest
		if err := decode(r, &req); err != nil {
			w.error(err)
			return
		}
		out, err := c.Mkdir(id, req)
		if err != nil {
			w.error(err)
			return
		}
		w.json(201, out)
	case op == "move" && r.Method == "POST":
		var req api.MoveRequest
		if err := decode(r, &req); err != nil {
			w.error(err)
			return
		}
		out, err := c.Move(id, req)
		answer(w, out, err)
	case op == "remove" && r.Method == "POST":
		var req api.RemoveRequest
		if err := decode(r, &req); err != nil {
			w.error(err)
			return
		}
		done(w, c.Remove(id, req))
	case op == "archive" && r.Method == "GET":
		if needPath() {
			s.body(w, "application/x-tar", c.ArchiveOut(id, path, &lazyBody{w: w, contentType: "application/x-tar"}))
		}
	case op == "archive" && r.Method == "PUT":
		if needPath() {
			out, err := c.ArchiveIn(id, path, "", r.Body)
			answer(w, out, err)
		}
	case op == "file" || op == "stat" || op == "list" || op == "mkdir" || op == "move" || op == "remove" || op == "archive":
		w.error(wrongMethod(r))
	default:
		w.error(notFound(r))
	}
}

// body ends a response whose body went out as it came: an error before its first byte is
// answered as one; after, the connection closes without the body's end, which the client sees
// as a cut response.
func (s *Server) body(w *response, contentType string, err error) {
	switch {
	case err == nil && !w.Started:
		w.Head(200, contentType, 0)
	case err != nil && !w.Started:
		w.error(err)
	case err != nil:
		w.Failed = true
		w.Close = true
	}
}
