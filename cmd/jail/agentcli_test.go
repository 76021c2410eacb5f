package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Whole-agent mode: a stand-in agent CLI (testdata/agentcli/fake-agent, installed in
// ~/.local/bin as a real one would be) runs under a profile extending agent-cli. It keeps state
// in its config directory, calls its "API" (a loopback server on the host, reached only through
// jail's proxy) and edits the project; writes outside its grant are refused.
func TestAgentCLI(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	type call struct{ method, path, key, body string }
	var mu sync.Mutex
	var calls []call
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		calls = append(calls, call{r.Method, r.URL.Path, r.Header.Get("x-api-key"), string(body)})
		mu.Unlock()
		fmt.Fprint(w, `{"edit": "the fix from the API"}`)
	}))
	defer api.Close()
	_, port, _ := net.SplitHostPort(api.Listener.Addr().String())

	root := t.TempDir()
	home, project, outside := filepath.Join(root, "home"), filepath.Join(root, "project"), filepath.Join(root, "outside")
	bin := filepath.Join(home, ".local", "bin")
	for _, dir := range []string{filepath.Join(home, ".claude"), bin, project, outside} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	agent, err := os.ReadFile("../../testdata/agentcli/fake-agent")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "fake-agent"), agent, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", project).CombinedOutput(); err != nil {
		t.Fatalf("git init: %s %s", err, out)
	}
	// The API host of the real profile is api.anthropic.com; here it is the loopback server.
	profile := filepath.Join(root, "agent-cli-test.toml")
	toml := fmt.Sprintf("extends = [\"agent-cli\"]\n[network]\nallow = [\"127.0.0.1:%s\"]\nallow_private = true\n", port)
	if err := os.WriteFile(profile, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := runJailWith(t, runOpts{dir: project, env: []string{
		"HOME=" + home,
		"PATH=" + bin + ":" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=test-key",
		"ANTHROPIC_BASE_URL=http://127.0.0.1:" + port,
	}}, "-p", profile, "--", "fake-agent", outside)
	if code != 0 {
		t.Fatalf("fake-agent: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	t.Logf("fake-agent:\n%s%s", out, errOut)
	mu.Lock()
	if len(calls) != 1 || calls[0] != (call{"POST", "/v1/messages", "test-key", `{"prompt": "fix the bug"}`}) {
		t.Errorf("the API saw %+v", calls)
	}
	mu.Unlock()
	for file, want := range map[string]string{
		filepath.Join(project, "fix.txt"):    "{\"edit\": \"the fix from the API\"}\n",
		filepath.Join(project, "src/new.go"): "package src\n",
	} {
		if got, err := os.ReadFile(file); err != nil || string(got) != want {
			t.Errorf("%s: %q %v, want %q", file, got, err, want)
		}
	}
	if got, err := os.ReadFile(filepath.Join(home, ".claude", "history.jsonl")); err != nil || !strings.HasPrefix(string(got), `{"session": `) {
		t.Errorf("the agent's state in ~/.claude: %q %v", got, err)
	}

	for _, what := range []string{"write outside the grant", "write the project's agent settings", "write a git hook", "write /usr"} {
		if !strings.Contains(out, "refused "+what+"\n") {
			t.Errorf("%s was not refused: %s", what, out)
		}
	}
	for _, planted := range []string{filepath.Join(outside, "planted"), filepath.Join(project, ".claude", "settings.json"),
		filepath.Join(project, ".git", "hooks", "pre-commit")} {
		if _, err := os.Stat(planted); err == nil {
			t.Errorf("%s was written", planted)
		}
	}
}

// The built-in agent-cli grants the agents' API hosts through the proxy, on top of agent-net's
// registries, and their config directories where they exist.
func TestAgentCLIProfile(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runJailWith(t, runOpts{dir: t.TempDir(), env: []string{"HOME=" + home}}, "-p", "agent-cli", "--dry-run", "--", "true")
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, errOut)
	}
	for _, want := range []string{`"api.anthropic.com"`, `"api.openai.com"`, `"generativelanguage.googleapis.com"`, `"pypi.org"`,
		`"mode": "proxy"`, `"kind": "bind",` + "\n      \"source\": \"" + filepath.Join(home, ".codex") + `"`} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, filepath.Join(home, ".gemini")) {
		t.Errorf("a config directory that does not exist is in the plan")
	}
}
