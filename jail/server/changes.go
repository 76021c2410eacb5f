package server

import (
	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/http1"
)

// changes answers the routes of a sandbox's overlay workspace's change set, under
// /v1/sandboxes/{id}/changes: the list (GET), the patch (GET …/diff), apply (POST …/apply) and
// discard (DELETE). They answer after the sandbox is removed too, on jail serve's socket.
func (s *Server) changes(w *response, r *http1.Request, id string, rest []string) {
	c := s.Client
	switch {
	case len(rest) == 0 && r.Method == "GET":
		out, err := c.Changes(id)
		answer(w, out, err)
	case len(rest) == 0 && r.Method == "DELETE":
		done(w, c.Discard(id))
	case len(rest) == 1 && rest[0] == "diff":
		s.method(w, r, "GET", func() {
			const patch = "text/x-diff"
			s.body(w, patch, c.Diff(id, r.Query["path"], &lazyBody{w: w, contentType: patch}))
		})
	case len(rest) == 1 && rest[0] == "apply":
		s.method(w, r, "POST", func() { s.apply(w, r, id) })
	case len(rest) == 0:
		w.error(wrongMethod(r))
	default:
		w.error(notFound(r))
	}
}

// apply answers POST …/changes/apply: 200 with what was written, or 409 with the refusals and
// conflicts when nothing was.
func (s *Server) apply(w *response, r *http1.Request, id string) {
	var req api.ApplyRequest
	if err := decode(r, &req); err != nil {
		w.error(err)
		return
	}
	out, err := s.Client.Apply(id, req)
	switch {
	case err != nil:
		w.error(err)
	case out.Error != nil:
		w.json(api.Status(out.Error.Code), out)
	default:
		w.json(200, out)
	}
}
