package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestConversations plays each API's conversation with net/http's client, as a stand-in for the
// CLIs (which `jail hook check` drives for real in cmd/jail's harness tests): asked with the shell
// tool on offer, the model streams a call of it; given the call's output, it streams its last
// words, and the report holds that output.
func TestConversations(t *testing.T) {
	const command = `echo "hi"`
	for _, tc := range []struct {
		name, path  string
		ask, answer string // request bodies: the first turn, and the one with the tool's output
		call        string // in the first stream: the tool call
	}{
		{"anthropic", "/v1/messages?beta=true",
			`{"stream":true,"tools":[{"name":"Read"},{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`,
			`{"stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_jail_check_1","content":[{"type":"text","text":"out\n"}]}]}]}`,
			`"partial_json":"{\"command\":\"echo \\\"hi\\\"\"`},
		{"openai", "/v1/responses",
			`{"stream":true,"tools":[{"type":"function","name":"shell_command"}],"input":[]}`,
			`{"stream":true,"tools":[{"type":"function","name":"shell_command"}],"input":[{"type":"function_call_output","call_id":"call_jail_check_1","output":"out\n"}]}`,
			`"arguments":"{\"command\":\"echo \\\"hi\\\"\"}"`},
		{"gemini", "/v1beta/models/gemini-x:streamGenerateContent?alt=sse",
			`{"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}],"contents":[]}`,
			`{"contents":[{"parts":[{"functionResponse":{"id":"call_jail_check_1","name":"run_shell_command","response":{"output":"out\n"}}}]}]}`,
			`"args":{"command":"echo \"hi\"","description":"jail hook check"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(command)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if first := stream(t, s.URL()+tc.path, tc.ask); !strings.Contains(first, tc.call) {
				t.Errorf("first turn: no %s in\n%s", tc.call, first)
			}
			if last := stream(t, s.URL()+tc.path, tc.answer); !strings.Contains(last, doneText) {
				t.Errorf("second turn: no %q in\n%s", doneText, last)
			}
			if r := s.Report(); !r.Called || !r.Returned || r.Result != "out\n" || len(r.Requests) != 2 {
				t.Errorf("report: %+v", r)
			}
		})
	}
}

// stream posts body to url and returns the server-sent events' data, each checked to be JSON.
func stream(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %d %q, %v: %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), err, raw)
	}
	var data []string
	for _, event := range strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n") {
		_, d, ok := strings.Cut(event, "data: ")
		if !ok || !json.Valid([]byte(d)) {
			t.Fatalf("%s: not an event with JSON data: %q", url, event)
		}
		data = append(data, d)
	}
	return strings.Join(data, "\n")
}

// TestNotServed: a route no API has is answered 404 with an error object, and recorded.
func TestNotServed(t *testing.T) {
	s, err := Start("true")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(s.URL() + "/v2/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(body), `"error":{"message":"not served by jail's fake model"}`) {
		t.Errorf("answer %d %s", resp.StatusCode, body)
	}
	if r := s.Report(); len(r.Requests) != 1 || r.Requests[0] != "GET /v2/elsewhere" {
		t.Errorf("requests %q", r.Requests)
	}
}
