// Package fakemodel is a scripted stand-in for the model APIs the agent CLIs speak — Anthropic
// Messages (Claude Code), OpenAI Responses (Codex) and the Gemini API (Gemini CLI) — for
// `jail hook check`. It listens on loopback only and plays one short conversation: asked with a
// shell tool on offer, the "model" calls that tool with one given command; once the tool's result
// comes back, it records the output and ends the turn. Any other request (titles, summaries,
// routing, token counts) gets a short plain answer, so that the CLI carries on.
//
// Only what the CLIs need is served: streaming where they stream, and the few fields they read.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is one fake model endpoint. Its zero value is not usable: see Start.
type Server struct {
	command string
	ln      net.Listener
	srv     *http.Server

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
	s := &Server{command: command, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", s.anthropic)
	mux.HandleFunc("POST /v1/messages/count_tokens", s.anthropicCount)
	mux.HandleFunc("POST /v1/responses", s.openai)
	mux.HandleFunc("GET /v1/models", s.openaiModels)
	mux.HandleFunc("POST /{version}/models/{call}", s.gemini)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.note(r)
		http.Error(w, `{"error":{"message":"not served by jail's fake model"}}`, http.StatusNotFound)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed at Close
	return s, nil
}

// URL is the server's base URL, http://127.0.0.1:PORT (no trailing slash).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and every connection it holds.
func (s *Server) Close() error { return s.srv.Close() }

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

func (s *Server) note(r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
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
func readJSON(r *http.Request, v any) error {
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

// sse writes one server-sent event (event may be "" for data-only streams) and flushes it.
func sse(w http.ResponseWriter, event string, data any) error {
	payload, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	if _, err := fmt.Fprintf(w, "data: %s\n\n", payload); err != nil {
		return err
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client sees a cut answer
}

func badRequest(w http.ResponseWriter, err error) {
	http.Error(w, fmt.Sprintf(`{"error":{"message":%q}}`, err.Error()), http.StatusBadRequest)
}

// event is one server-sent event: its name and its JSON payload.
type event struct {
	name string
	data map[string]any
}
