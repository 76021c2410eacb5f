// Package server is jail's local API over HTTP/1.1 and JSON (docs/api.md). Each route is one
// call of package client, which the command line calls too. It serves connections that are
// already trusted: jail serve checks each peer (Listen), and a sandbox's keeper checks it before
// it hands the connection to jail's binary run as a handler (ServeHandler).
package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/jail-sandbox/jail/api"
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
	defer conn.Close()
	br := bufio.NewReader(conn)
	for {
		if s.Idle > 0 {
			conn.SetReadDeadline(time.Now().Add(s.Idle))
		}
		if _, err := br.Peek(1); err != nil {
			return
		}
		conn.SetReadDeadline(time.Time{})
		r, err := readRequest(br)
		w := &response{conn: conn, bw: bufio.NewWriter(conn)}
		if err != nil {
			w.close = true
			w.error(api.Errorf(api.InvalidArgument, "%s", err))
			w.finish()
			return
		}
		w.close = r.close
		s.serve(w, r, br)
		if !w.started {
			w.error(api.Errorf(api.Internal, "no answer"))
		}
		w.finish()
		// What the handler left of the body goes, within reason, so that the next request is
		// read from its start.
		if n, _ := io.Copy(io.Discard, io.LimitReader(r.body, 1<<20)); n == 1<<20 {
			return
		}
		if w.close || w.failed {
			return
		}
	}
}

// longRequest returns a context that ends when the client closes the connection, for a request
// that may take long (a stream, a wait): its body must be read by now, and the connection closes
// after it, since the watch reads from it.
func longRequest(w *response, br *bufio.Reader) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	w.close = true
	go func() {
		br.ReadByte() // the client speaks no more before the answer: EOF once it is gone
		cancel()
	}()
	return ctx
}

// decode reads a JSON body into v, strictly: an unknown field is an error.
func decode(r *request, v any) error {
	dec := json.NewDecoder(io.LimitReader(r.body, 1<<20))
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
func notFound(r *request) error {
	return api.Errorf(api.NotFound, "no route /%s (docs/api.md lists them)", joinPath(r.path))
}

func wrongMethod(r *request) error {
	return api.Errorf(api.Unimplemented, "%s /%s: not a method this route answers", r.method, joinPath(r.path))
}

func joinPath(p []string) string {
	s := ""
	for i, seg := range p {
		if i > 0 {
			s += "/"
		}
		s += seg
	}
	return s
}

// serve routes one request.
func (s *Server) serve(w *response, r *request, br *bufio.Reader) {
	p := r.path
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
		switch r.method {
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
		s.method(w, r, "POST", func() { s.exec(w, r, p[2], br) })
	case len(p) >= 4 && p[1] == "sandboxes" && p[3] == "processes":
		s.processes(w, r, p[2], p[4:], br)
	case len(p) == 5 && p[1] == "sandboxes" && p[3] == "fs":
		s.files(w, r, p[2], p[4])
	default:
		w.error(notFound(r))
	}
}

// method runs f when r has method m, else answers that it does not.
func (s *Server) method(w *response, r *request, m string, f func()) {
	if r.method != m {
		w.error(wrongMethod(r))
		return
	}
	f()
}

// query returns the query parameter name as an integer (dflt when absent).
func queryInt(r *request, name string, dflt int64) (int64, error) {
	v := r.query.Get(name)
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
func queryDuration(r *request, name string) (time.Duration, error) {
	d, err := api.ParseDuration(r.query.Get(name))
	if err != nil {
		return 0, api.Errorf(api.InvalidArgument, "query %s: %s", name, err)
	}
	return d, nil
}

// queryBool reads a flag parameter: 1 or true.
func queryBool(r *request, name string) bool {
	v := r.query.Get(name)
	return v == "1" || v == "true"
}
