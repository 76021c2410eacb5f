package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/api"
)

// The local API (docs/api.md), route by route, through jail serve and through a sandbox's own
// socket, with Go's net/http as the client.

func TestAPISandboxes(t *testing.T) {
	c := apiClient(startServe(t))
	var v api.Version
	if status, _ := call(t, c, "GET", "/v1/version", nil, &v); status != 200 || v.API != api.APIVersion {
		t.Fatalf("GET /v1/version: %d %+v", status, v)
	}
	work := t.TempDir()
	req := api.CreateRequest{
		Name: "api-test", Workdir: work, Cwd: "/workspace", Grants: api.Grants{Tmpfs: []string{"/workspace"}},
		Env: map[string]string{"FROM_CREATE": "yes"}, Labels: map[string]string{"owner": "api-test"},
		IdleTimeout: api.Duration(time.Hour), Timeout: api.Duration(time.Minute),
	}
	var sb api.Sandbox
	status, body := call(t, c, "POST", "/v1/sandboxes", req, &sb)
	if status != 201 || sb.Name != "api-test" || sb.State != api.StateRunning || sb.Cwd != "/workspace" || sb.Timeout != api.Duration(time.Minute) {
		t.Fatalf("POST /v1/sandboxes: %d %s", status, body)
	}
	t.Cleanup(func() { call(t, c, "DELETE", "/v1/sandboxes/"+sb.ID+"?force=1", nil, nil) })
	if out := mustExec(t, "api-test", "pwd; echo $FROM_CREATE"); out != "/workspace\nyes\n" {
		t.Errorf("exec in the created sandbox: %q", out)
	}
	if status, body := call(t, c, "POST", "/v1/sandboxes", req, nil); status != 409 || errorCode(body) != api.AlreadyExists {
		t.Errorf("a second create of the name: %d %s", status, body)
	}
	for _, bad := range []string{`{}`, `{"workdir":"relative"}`, `{"workdir":"/","profile":"nosuchprofile"}`, `{"workdir":"/","bogus":1}`, `{"workdir":"/","ttl":"soon"}`} {
		if status, body := call(t, c, "POST", "/v1/sandboxes", bad, nil); status != 400 || errorCode(body) != api.InvalidArgument {
			t.Errorf("create %s: %d %s; want 400", bad, status, body)
		}
	}
	var list api.ListResponse
	call(t, c, "GET", "/v1/sandboxes?label=owner%3Dapi-test", nil, &list)
	if len(list.Sandboxes) != 1 || list.Sandboxes[0].ID != sb.ID || list.NextCursor != nil {
		t.Errorf("list by label: %+v", list)
	}
	call(t, c, "GET", "/v1/sandboxes?label=owner%3Dnobody", nil, &list)
	if len(list.Sandboxes) != 0 {
		t.Errorf("list by another label: %+v", list)
	}
	var patched api.Sandbox
	status, body = call(t, c, "PATCH", "/v1/sandboxes/api-test", `{"ttl":"30m","labels":{"owner":"api-test","step":"patched"}}`, &patched)
	if status != 200 || patched.TTL != api.Duration(30*time.Minute) || patched.ExpiresAt == nil || patched.Labels["step"] != "patched" ||
		time.Until(*patched.ExpiresAt) > 31*time.Minute {
		t.Errorf("PATCH: %d %s", status, body)
	}
	if status, _ := call(t, c, "DELETE", "/v1/sandboxes/api-test", nil, nil); status != 204 {
		t.Errorf("DELETE: %d", status)
	}
	if status, body := call(t, c, "GET", "/v1/sandboxes/"+sb.ID, nil, nil); status != 404 || errorCode(body) != api.NotFound {
		t.Errorf("GET after DELETE: %d %s", status, body)
	}
	var pruned api.PruneResponse
	if status, _ := call(t, c, "POST", "/v1/prune", nil, &pruned); status != 200 || pruned.Removed == nil {
		t.Errorf("POST /v1/prune: %d %+v", status, pruned)
	}
	if status, body := call(t, c, "GET", "/v1/nothing", nil, nil); status != 404 || errorCode(body) != api.NotFound {
		t.Errorf("an unknown route: %d %s", status, body)
	}
	if status, body := call(t, c, "PUT", "/v1/version", nil, nil); status != 501 || errorCode(body) != api.Unimplemented {
		t.Errorf("a method a route does not answer: %d %s", status, body)
	}
}

// sandboxAPI creates a sandbox and returns a client of its own socket and its routes' prefix.
func sandboxAPI(t *testing.T, args ...string) (*http.Client, string) {
	id := createSandbox(t, t.TempDir(), args...)
	return apiClient(filepath.Join(sandboxDir(id), "api.sock")), "/v1/sandboxes/" + id
}

func TestAPIExec(t *testing.T) {
	c, sb := sandboxAPI(t)
	run := func(body string) ([]api.Event, int, []byte) {
		status, raw := call(t, c, "POST", sb+"/exec", body, nil)
		if status != 200 {
			return nil, status, raw
		}
		return stream(t, raw), status, raw
	}
	events, status, raw := run(`{"cmd":["sh","-c","echo out; echo err >&2; exit 3"]}`)
	stdout, stderr, exit := output(events)
	if status != 200 || events[0].Event != api.EventStart || events[0].PID <= 0 || stdout != "out\n" || stderr != "err\n" ||
		exit == nil || exit.ExitCode != 3 || events[len(events)-1].Event != api.EventExit {
		t.Errorf("exec: %d %s", status, raw)
	}
	for _, tc := range []struct {
		body, stdout string
		code         int
	}{
		{`{"shell":"cat; echo $X","input":"aW5wdXQK","env":{"X":"env"}}`, "input\nenv\n", 0},
		{`{"shell":"echo a; echo b >&2; echo c","merge_output":true}`, "a\nb\nc\n", 0},
		{`{"cmd":["pwd"],"cwd":"/tmp"}`, "/tmp\n", 0},
		{`{"shell":"tty","tty":{"cols":100,"rows":30}}`, "/dev/pts/", 0},
		{`{"shell":"stty size","tty":{"cols":100,"rows":30}}`, "30 100", 0},
		{`{"cmd":["sleep","30"],"timeout":"100ms"}`, "", 124},
		{`{"shell":"kill -TERM $$"}`, "", 143},
	} {
		events, status, raw := run(tc.body)
		stdout, _, exit := output(events)
		if status != 200 || exit == nil || exit.ExitCode != tc.code || !strings.Contains(stdout, tc.stdout) {
			t.Errorf("exec %s: %d %s; want exit %d, stdout with %q", tc.body, status, raw, tc.code, tc.stdout)
		}
		if tc.code == 124 && !exit.TimedOut || tc.code == 143 && (exit.Signal == nil || *exit.Signal != "TERM") {
			t.Errorf("exec %s: exit %+v", tc.body, exit)
		}
	}
	for body, msg := range map[string]string{
		`{"cmd":["nosuchcommand"]}`:             "jail: exec nosuchcommand: no such file or directory (not found inside the sandbox; is its directory granted?)",
		`{"cmd":["true"],"cwd":"/nonexistent"}`: "jail: chdir /nonexistent: no such file or directory",
		`{}`:                                    "no command",
		`{"cmd":["true"],"shell":"true"}`:       "not both",
	} {
		if status, raw := call(t, c, "POST", sb+"/exec", body, nil); status != 400 || !strings.Contains(string(raw), msg) {
			t.Errorf("exec %s: %d %s; want 400 with %q", body, status, raw, msg)
		}
	}
}

// TestAPIExecDisconnectKills: closing the connection before the exit event kills the command.
func TestAPIExecDisconnectKills(t *testing.T) {
	c, sb := sandboxAPI(t)
	req, _ := http.NewRequest("POST", "http://jail"+sb+"/exec", strings.NewReader(`{"shell":"echo ready; exec sleep 300"}`))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 64)
	resp.Body.Read(line) // the start event
	resp.Body.Close()
	id := strings.TrimPrefix(sb, "/v1/sandboxes/")
	eventually(t, "the command of a closed exec killed", func() bool {
		return !strings.Contains(mustExec(t, id, "ps -eo comm"), "sleep")
	})
}

func TestAPIProcesses(t *testing.T) {
	c, sb := sandboxAPI(t)
	var p api.Process
	status, raw := call(t, c, "POST", sb+"/processes", `{"shell":"echo hi; cat; echo done","stdin":"pipe"}`, &p)
	if status != 201 || p.PID <= 0 || !p.Background || p.Stdin != api.StdinPipe || p.Cmd[0] != "/bin/sh" {
		t.Fatalf("start: %d %s", status, raw)
	}
	procs := fmt.Sprintf("%s/processes/%d", sb, p.PID)
	var out api.Output
	if call(t, c, "GET", procs+"/output?wait=20s", nil, &out); string(out.Stdout) != "hi\n" || !out.Running || out.NextStdout != 3 {
		t.Errorf("output: %+v", out)
	}
	if status, raw := call(t, c, "POST", procs+"/stdin?close=1", "data\n", nil); status != 204 {
		t.Errorf("stdin: %d %s", status, raw)
	}
	var ended api.Process
	if status, raw := call(t, c, "GET", procs+"/wait?timeout=20s", nil, &ended); status != 200 || ended.Running || *ended.ExitCode != 0 || ended.EndedAt == nil {
		t.Errorf("wait: %d %s", status, raw)
	}
	call(t, c, "GET", procs+"/output?stdout=3", nil, &out)
	if string(out.Stdout) != "data\ndone\n" || out.Running || out.Exit == nil || out.Exit.ExitCode != 0 {
		t.Errorf("output after the end: %+v", out)
	}
	status, raw = call(t, c, "GET", procs+"/attach", nil, nil)
	if stdout, _, exit := output(stream(t, raw)); status != 200 || stdout != "hi\ndata\ndone\n" || exit == nil {
		t.Errorf("attach: %d %s", status, raw)
	}
	if status, raw := call(t, c, "POST", procs+"/stdin", "more", nil); status != 409 || errorCode(raw) != api.FailedPrecondition {
		t.Errorf("stdin after close: %d %s", status, raw)
	}
	// A process killed by a signal; one without a terminal refuses a resize.
	var sleeper api.Process
	call(t, c, "POST", sb+"/processes", `{"cmd":["sleep","300"]}`, &sleeper)
	sp := fmt.Sprintf("%s/processes/%d", sb, sleeper.PID)
	var list api.ProcessList
	if call(t, c, "GET", sb+"/processes?running=1", nil, &list); len(list.Processes) != 1 || list.Processes[0].PID != sleeper.PID {
		t.Errorf("running processes: %+v", list)
	}
	if status, raw := call(t, c, "POST", sp+"/resize", `{"cols":80,"rows":24}`, nil); status != 409 {
		t.Errorf("resize without a terminal: %d %s", status, raw)
	}
	if status, raw := call(t, c, "GET", sp+"/wait?timeout=10ms", nil, nil); status != 504 || errorCode(raw) != api.DeadlineExceeded {
		t.Errorf("wait with a timeout: %d %s", status, raw)
	}
	if status, raw := call(t, c, "POST", sp+"/signal", `{"signal":"KILL"}`, nil); status != 204 {
		t.Errorf("signal: %d %s", status, raw)
	}
	call(t, c, "GET", sp+"/wait", nil, &ended)
	if ended.ExitCode == nil || *ended.ExitCode != 137 || ended.Signal == nil || *ended.Signal != "KILL" {
		t.Errorf("after KILL: %+v", ended)
	}
	if status, _ := call(t, c, "DELETE", sp, nil, nil); status != 204 {
		t.Errorf("DELETE process: %d", status)
	}
	if status, raw := call(t, c, "GET", sp, nil, nil); status != 404 {
		t.Errorf("GET a deleted process: %d %s", status, raw)
	}
	if status, raw := call(t, c, "POST", sb+"/processes", `{"cmd":["nosuchcommand"]}`, nil); status != 400 || !strings.Contains(string(raw), "not found inside the sandbox") {
		t.Errorf("start of a missing command: %d %s", status, raw)
	}
}

// TestAPIOutputKeepsTheEnd: a background process's kept output is the last MiB of each stream;
// what is older is dropped and counted.
func TestAPIOutputKeepsTheEnd(t *testing.T) {
	c, sb := sandboxAPI(t)
	var p api.Process
	call(t, c, "POST", sb+"/processes", `{"shell":"head -c 3000000 /dev/zero | tr '\\0' a; echo end"}`, &p)
	procs := fmt.Sprintf("%s/processes/%d", sb, p.PID)
	call(t, c, "GET", procs+"/wait", nil, nil)
	var out api.Output
	call(t, c, "GET", procs+"/output?max_bytes=10000000", nil, &out)
	total := out.StdoutDropped + int64(len(out.Stdout))
	if total != 3000004 || out.StdoutDropped < 3000004-(2<<20) || !bytes.HasSuffix(out.Stdout, []byte("aend\n")) {
		t.Errorf("kept %d bytes, dropped %d (of 3000004)", len(out.Stdout), out.StdoutDropped)
	}
}

func TestAPIFiles(t *testing.T) {
	c, sb := sandboxAPI(t)
	fs := sb + "/fs/"
	var w api.WriteFileResponse
	if status, raw := call(t, c, "PUT", fs+"file?path=/tmp/a/b/c.txt&mode=0600", "hello world\n", &w); status != 200 || w.Path != "/tmp/a/b/c.txt" || w.Size != 12 {
		t.Errorf("PUT file: %d %s", status, raw)
	}
	if status, raw := call(t, c, "GET", fs+"file?path=/tmp/a/b/c.txt&offset=6&length=5", nil, nil); status != 200 || string(raw) != "world" {
		t.Errorf("GET file range: %d %q", status, raw)
	}
	var e api.FileEntry
	if call(t, c, "GET", fs+"stat?path=/tmp/a/b/c.txt", nil, &e); e.Type != "file" || e.Mode != "0600" || e.Size != 12 || e.Name != "c.txt" {
		t.Errorf("stat: %+v", e)
	}
	var list api.FileList
	if call(t, c, "GET", fs+"list?path=/tmp/a&depth=2", nil, &list); len(list.Entries) != 2 || list.Entries[1].Path != "/tmp/a/b/c.txt" {
		t.Errorf("list: %+v", list)
	}
	if status, raw := call(t, c, "POST", fs+"mkdir", `{"path":"/tmp/m"}`, &e); status != 201 || e.Type != "dir" {
		t.Errorf("mkdir: %d %s", status, raw)
	}
	if status, raw := call(t, c, "POST", fs+"mkdir", `{"path":"/tmp/m"}`, nil); status != 409 || errorCode(raw) != api.AlreadyExists {
		t.Errorf("mkdir again: %d %s", status, raw)
	}
	if status, raw := call(t, c, "POST", fs+"move", `{"from":"/tmp/a/b/c.txt","to":"/tmp/m/d.txt"}`, &e); status != 200 || e.Path != "/tmp/m/d.txt" {
		t.Errorf("move: %d %s", status, raw)
	}
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"path":"/tmp/m"}`, 400}, // not empty
		{`{"path":"/tmp/nothing"}`, 404},
		{`{"path":"/tmp/nothing","missing_ok":true}`, 204},
		{`{"path":"/tmp/m","recursive":true}`, 204},
	} {
		if status, raw := call(t, c, "POST", fs+"remove", tc.body, nil); status != tc.want {
			t.Errorf("remove %s: %d %s; want %d", tc.body, status, raw, tc.want)
		}
	}
	if status, raw := call(t, c, "GET", fs+"file?path=/tmp", nil, nil); status != 400 || errorCode(raw) != api.InvalidArgument {
		t.Errorf("GET file of a directory: %d %s", status, raw)
	}
	// Archives both ways.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for name, body := range map[string]string{"proj/x.txt": "x\n", "proj/sub/y.txt": "y\n"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	var res api.ArchiveResult
	if status, raw := call(t, c, "PUT", fs+"archive?path=/tmp/in", buf.Bytes(), &res); status != 200 || res.Files != 2 || res.Bytes != 4 {
		t.Errorf("PUT archive: %d %s", status, raw)
	}
	status, raw := call(t, c, "GET", fs+"archive?path=/tmp/in/proj", nil, nil)
	names := []string{}
	tr := tar.NewReader(bytes.NewReader(raw))
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		names = append(names, h.Name)
	}
	if status != 200 || strings.Join(names, " ") != "proj/ proj/sub/ proj/sub/y.txt proj/x.txt" {
		t.Errorf("GET archive: %d %v", status, names)
	}
	if status, raw := call(t, c, "PUT", fs+"archive?path=/tmp/in", tarWith(t, "../escape", "x"), nil); status != 400 {
		t.Errorf("PUT archive with ../: %d %s", status, raw)
	}
}

func tarWith(t *testing.T, name, body string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
	tw.Write([]byte(body))
	tw.Close()
	return buf.Bytes()
}

// TestAPIKeepAlive: several requests on one connection to a sandbox's socket, chunked bodies in.
func TestAPIKeepAlive(t *testing.T) {
	c, sb := sandboxAPI(t)
	for i := range 3 {
		req, _ := http.NewRequest("PUT", "http://jail"+sb+"/fs/file?path=/tmp/k", io.NopCloser(strings.NewReader(fmt.Sprint(i))))
		req.ContentLength = -1 // chunked
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var w api.WriteFileResponse
		json.NewDecoder(resp.Body).Decode(&w)
		resp.Body.Close()
		if resp.StatusCode != 200 || w.Size != 1 {
			t.Errorf("request %d: %d %+v", i, resp.StatusCode, w)
		}
	}
	_ = os.Getpid
}
