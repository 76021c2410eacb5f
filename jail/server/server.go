// Package server is jail's local API over HTTP/1.1 and JSON (docs/api.md). Each route is one
// call of package client, which the command line calls too. It serves connections that are
// already trusted: jail serve checks each peer (Listen), and a sandbox's keeper checks it before
// it hands the connection to jail's binary run as a handler (ServeHandler).
package server

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/internal/http1"
	"github.com/jail-sandbox/jail/jail/client"
)

// Server answers the API's routes.
type Server struct {
	Client  *client.Client
	Version string
	// Idle is how long a connection may wait for its next request (0: as long as it likes).
	Idle time.Duration
}

// ServeConn serves the requests that come on conn, one after the other, until the client closes
// it, asks to, or stays idle too long; then it closes conn.
func (s *Server) ServeConn(conn net.Conn) {
	http1.ServeConn(conn, s.Idle, func(hw *http1.Response, r *http1.Request, err error) {
		w := &response{hw}
		if err != nil {
			w.error(api.Errorf(api.InvalidArgument, "%s", err))
			return
		}
		s.serve(w, r)
		if !w.Started {
			w.error(api.Errorf(api.Internal, "no answer"))
		}
	})
}

// decode reads a JSON body into v, strictly: an unknown field is an error.
func decode(r *http1.Request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return api.Errorf(api.InvalidArgument, "the request needs a JSON body")
		}
		return api.Errorf(api.InvalidArgument, "the request's JSON: %s", err)
	}
	return nil
}

// notFound is the answer for a route that does not exist; wrongMethod for one that does,
// asked with a method it does not answer.
func notFound(r *http1.Request) error {
	return api.Errorf(api.NotFound, "no route %s (docs/api.md lists them)", r.URLPath())
}

func wrongMethod(r *http1.Request) error {
	return api.Errorf(api.Unimplemented, "%s %s: not a method this route answers", r.Method, r.URLPath())
}

// serve routes one request.
func (s *Server) serve(w *response, r *http1.Request) {
	p := r.Path
	if len(p) < 2 || p[0] != "v1" {
		w.error(notFound(r))
		return
	}
	switch {
	case len(p) == 2 && p[1] == "version":
		s.method(w, r, "GET", func() { w.json(200, api.Version{Version: s.Version, API: api.APIVersion}) })
	case len(p) == 2 && p[1] == "prune":
		s.method(w, r, "POST", func() { s.prune(w) })
	case len(p) == 2 && p[1] == "sandboxes":
		switch r.Method {
		case "GET":
			s.list(w, r)
		case "POST":
			s.create(w, r)
		default:
			w.error(wrongMethod(r))
		}
	case len(p) == 3 && p[1] == "sandboxes":
		s.sandbox(w, r, p[2])
	case len(p) >= 4 && p[1] == "sandboxes" && p[3] == "exec" && len(p) == 4:
		s.method(w, r, "POST", func() { s.exec(w, r, p[2]) })
	case len(p) >= 4 && p[1] == "sandboxes" && p[3] == "processes":
		s.processes(w, r, p[2], p[4:])
	case len(p) >= 4 && p[1] == "sandboxes" && p[3] == "changes":
		s.changes(w, r, p[2], p[4:])
	case len(p) == 5 && p[1] == "sandboxes" && p[3] == "fs":
		s.files(w, r, p[2], p[4])
	default:
		w.error(notFound(r))
	}
}

// method runs f when r has method m, else answers that it does not.
func (s *Server) method(w *response, r *http1.Request, m string, f func()) {
	if r.Method != m {
		w.error(wrongMethod(r))
		return
	}
	f()
}

// query returns the query parameter name as an integer (dflt when absent).
func queryInt(r *http1.Request, name string, dflt int64) (int64, error) {
	v := r.Query.Get(name)
	if v == "" {
		return dflt, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, api.Errorf(api.InvalidArgument, "query %s=%q: not an integer", name, v)
	}
	return n, nil
}

// queryDuration returns the query parameter name as a duration (0 when absent).
func queryDuration(r *http1.Request, name string) (time.Duration, error) {
	d, err := api.ParseDuration(r.Query.Get(name))
	if err != nil {
		return 0, api.Errorf(api.InvalidArgument, "query %s: %s", name, err)
	}
	return d, nil
}

// queryBool reads a flag parameter: 1 or true.
func queryBool(r *http1.Request, name string) bool {
	v := r.Query.Get(name)
	return v == "1" || v == "true"
}
