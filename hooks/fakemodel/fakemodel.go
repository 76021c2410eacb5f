// Package fakemodel is a scripted stand-in for the model APIs the agent CLIs speak — Anthropic
// Messages (Claude Code), OpenAI Responses (Codex) and the Gemini API (Gemini CLI) — for
// `jail hook check`. It listens on loopback only and plays one short conversation: asked with a
// shell tool on offer, the "model" calls that tool with one given command; once the tool's result
// comes back, it records the output and ends the turn. Any other request (titles, summaries,
// routing, token counts) gets a short plain answer, so that the CLI carries on.
//
// Only what the CLIs need is served: streaming where they stream, and the few fields they read.
// It speaks HTTP/1.1 through internal/http1, not net/http, which jail's binary leaves out.
package fakemodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

	"github.com/jail-sandbox/jail/internal/http1"
)

// Server is one fake model endpoint. Its zero value is not usable: see Start.
type Server struct {
	command string
	ln      net.Listener
	serving sync.WaitGroup // the accept loop and each connection's

	connsMu sync.Mutex
	conns   map[net.Conn]bool // the connections open, for Close
	closed  bool

	mu       sync.Mutex
	called   bool     // the model asked for the command
	result   *string  // the tool's output as the CLI handed it back
	tools    []string // the tool names offered in the last request that offered any
	requests []string // "METHOD PATH" of every request, for diagnostics
}

// Start serves on a fresh loopback port until Close. command is the shell command the model asks
// for.
func Start(command string) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake model server: listen on loopback: %w", err)
	}
	s := &Server{command: command, ln: ln, conns: map[net.Conn]bool{}}
	s.serving.Add(1)
	go s.accept()
	return s, nil
}

// accept serves each connection it accepts, each on a goroutine of its own, until the listener
// closes.
func (s *Server) accept() {
	defer s.serving.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if !s.track(c, true) {
			c.Close()
			return
		}
		s.serving.Add(1)
		go func() {
			defer s.serving.Done()
			http1.ServeConn(c, 0, s.serve)
			s.track(c, false)
		}()
	}
}

// track records c as open or closed; it returns false once the server is closed.
func (s *Server) track(c net.Conn, open bool) bool {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if open {
		s.conns[c] = true
	} else {
		delete(s.conns, c)
	}
	return !s.closed
}

// serve routes one request.
func (s *Server) serve(w *http1.Response, r *http1.Request, err error) {
	if err != nil {
		writeError(w, 400, err)
		return
	}
	route := r.Method + " " + r.URLPath()
	s.mu.Lock()
	s.requests = append(s.requests, route)
	s.mu.Unlock()
	switch p := r.Path; {
	case route == "POST /v1/messages":
		s.anthropic(w, r)
	case route == "POST /v1/messages/count_tokens":
		writeJSON(w, map[string]any{"input_tokens": 1}) // Claude Code may count before a turn
	case route == "POST /v1/responses":
		s.openai(w, r)
	case route == "GET /v1/models": // for clients that look before they ask
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": "jail-check", "object": "model"}}})
	case r.Method == "POST" && len(p) == 3 && p[1] == "models": // /VERSION/models/MODEL:METHOD
		s.gemini(w, r, p[2])
	default:
		notFound(w)
	}
}

// URL is the server's base URL, http://127.0.0.1:PORT (no trailing slash).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and every connection it holds, and waits for them to end.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.connsMu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.connsMu.Unlock()
	s.serving.Wait()
	return err
}

// Report is what the conversation came to.
type Report struct {
	Called   bool     // the model's tool call was sent
	Result   string   // the tool's output, as the CLI returned it to the model
	Returned bool     // a result came back at all
	Tools    []string // the tools the CLI offered
	Requests []string // every request seen, "METHOD PATH"
}

// Report returns what happened so far.
func (s *Server) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{Called: s.called, Tools: s.tools, Requests: append([]string(nil), s.requests...)}
	if s.result != nil {
		r.Result, r.Returned = *s.result, true
	}
	return r
}

// turn decides the model's next move. result is the output of an earlier call of ours found in
// the request (nil if none); offered lists the request's tool names. It returns the name of the
// tool to call, or "" to answer with text.
func (s *Server) turn(result *string, offered []string, shellTools ...string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(offered) > 0 {
		s.tools = offered
	}
	if result != nil {
		if s.result == nil {
			s.result = result
		}
		return ""
	}
	if s.result != nil {
		return ""
	}
	for _, want := range shellTools {
		for _, name := range offered {
			if name == want {
				s.called = true
				return name
			}
		}
	}
	return ""
}

// callID is the id of the one tool call this model makes, in every API.
const callID = "call_jail_check_1"

// doneText ends the conversation once the result is in.
const doneText = "jail hook check: done."

// readJSON decodes the request body into v.
func readJSON(r *http1.Request, v any) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	return nil
}

// textOf flattens a tool result's content: a string, or a list of {"type":"text","text":…}
// blocks (or any objects with a "text" or "output" field), or any other JSON value as it is.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(raw, &blocks) == nil {
		var b strings.Builder
		for _, block := range blocks {
			for _, key := range []string{"text", "output"} {
				if v, ok := block[key]; ok {
					b.WriteString(textOf(v))
				}
			}
		}
		return b.String()
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		for _, key := range []string{"output", "content", "text", "stdout"} {
			if v, ok := obj[key]; ok {
				return textOf(v)
			}
		}
	}
	return string(raw)
}

// startSSE starts a stream of server-sent events: a chunked body, whose every event sse flushes.
func startSSE(w *http1.Response) { w.Head(200, "text/event-stream", -1) }

// sse writes one server-sent event (event may be "" for data-only streams), flushed.
func sse(w *http1.Response, event string, data any) error {
	payload, err := json.Marshal(data)
	if err != nil {
		return err
	}
	var b []byte
	if event != "" {
		b = fmt.Appendf(b, "event: %s\n", event)
	}
	_, err = w.Write(fmt.Appendf(b, "data: %s\n\n", payload))
	return err
}

// writeJSON answers 200 with v, which is always JSON here.
func writeJSON(w *http1.Response, v any) { w.JSON(200, v) } //nolint:errcheck // v is JSON

// writeError answers status with an error object as the model APIs give one.
func writeError(w *http1.Response, status int, err error) {
	w.JSON(status, map[string]any{"error": map[string]any{"message": err.Error()}}) //nolint:errcheck // JSON
}

func notFound(w *http1.Response) {
	writeError(w, 404, errors.New("not served by jail's fake model"))
}

// event is one server-sent event: its name and its JSON payload.
type event struct {
	name string
	data map[string]any
}
