package hooks

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/hooks/hookstest"
)

const samplesDir = "../testdata/hooks"

// TestSamplesThroughFakeJail rewrites every recorded event and, for shell tools, runs the
// rewritten command the way the harness would (bash -c) with a stand-in jail that logs its argv
// and execs what follows "--". It proves the envelope has the harness's shape, every other input
// field survived, jail got the profile, the inner shell got the original command byte for byte,
// and the command printed and exited exactly as it does when run directly.
// cmd/jail/hooks_test.go repeats the execution with the real binary.
func TestSamplesThroughFakeJail(t *testing.T) {
	samples, err := hookstest.Samples(samplesDir)
	if err != nil {
		t.Fatal(err)
	}
	jail, err := hookstest.FakeJailIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		t.Run(s.Harness+"/"+s.Name, func(t *testing.T) {
			var out, errw bytes.Buffer
			code := Run(s.Harness, "agent", jail, bytes.NewReader(s.Event), &out, &errw)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errw.String())
			}
			switch s.Kind {
			case hookstest.Skip:
				if out.Len() != 0 || errw.Len() != 0 {
					t.Fatalf("want silence, got stdout %q stderr %q", out.String(), errw.String())
				}
				return
			case hookstest.Malformed:
				if out.Len() != 0 {
					t.Fatalf("malformed event answered %q; want no decision", out.String())
				}
				if !strings.Contains(errw.String(), "malformed event") {
					t.Fatalf("stderr %q does not explain the malformed event", errw.String())
				}
				return
			}
			if errw.Len() != 0 {
				t.Errorf("stderr %q", errw.String())
			}
			checkRewrite(t, s, jail, out.Bytes())
		})
	}
}

func checkRewrite(t *testing.T, s hookstest.Sample, jail string, out []byte) {
	t.Helper()
	answer, err := hookstest.ParseAnswer(s.Harness, out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer.Reason, `"agent"`) {
		t.Errorf("reason %q does not name the profile", answer.Reason)
	}
	orig, err := s.ToolInput()
	if err != nil {
		t.Fatal(err)
	}
	if err := hookstest.SameExceptCommand(orig, answer.Input); err != nil {
		t.Error(err)
	}
	var original string
	if err := json.Unmarshal(orig["command"], &original); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(answer.Command, jail+" ") {
		t.Errorf("rewritten command %q does not start with the jail path", answer.Command)
	}

	log := filepath.Join(t.TempDir(), "argv")
	wrapped, err := hookstest.Bash("", answer.Command, "FAKE_JAIL_LOG="+log)
	if err != nil {
		t.Fatal(err)
	}
	argv, err := hookstest.ReadArgv(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"-p", "agent", "--", "bash", "-c", "--", original}; !slices.Equal(argv, want) {
		t.Fatalf("jail argv %q; want %q", argv, want)
	}
	direct, err := hookstest.Bash("", original)
	if err != nil {
		t.Fatal(err)
	}
	if wrapped != direct {
		t.Errorf("wrapped run %+v differs from direct run %+v", wrapped, direct)
	}
	if wrapped.Stdout != s.Stdout {
		t.Errorf("stdout %q; want %q", wrapped.Stdout, s.Stdout)
	}
}

func TestRunUnknownHarnessFailsClosed(t *testing.T) {
	var out, errw bytes.Buffer
	in := strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"id"}}`)
	if code := Run("cursor", "agent", "/usr/bin/jail", in, &out, &errw); code != 2 {
		t.Errorf("exit %d; want 2 (blocks the tool call)", code)
	}
	if out.Len() != 0 || !strings.Contains(errw.String(), `unknown harness "cursor"`) {
		t.Errorf("stdout %q stderr %q", out.String(), errw.String())
	}
}

func TestRunRelativeJailPathFailsClosed(t *testing.T) {
	var out, errw bytes.Buffer
	in := strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"id"}}`)
	if code := Run("claude-code", "agent", "jail", in, &out, &errw); code != 2 {
		t.Errorf("exit %d; want 2", code)
	}
	if out.Len() != 0 || !strings.Contains(errw.String(), "not absolute") {
		t.Errorf("stdout %q stderr %q", out.String(), errw.String())
	}
}

// TestRunQuotesProfileAndPath: a profile given as a file path with spaces and quotes, and a jail
// binary in such a directory, still reach jail as single arguments.
func TestRunQuotesProfileAndPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "it's a dir")
	jail, err := hookstest.FakeJailIn(dir)
	if err != nil {
		t.Fatal(err)
	}
	profile := "/home/u/my profiles/o'brien.toml"
	var out, errw bytes.Buffer
	in := strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"echo ok"}}`)
	if code := Run("claude-code", profile, jail, in, &out, &errw); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	answer, err := hookstest.ParseAnswer("claude-code", out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "argv")
	r, err := hookstest.Bash("", answer.Command, "FAKE_JAIL_LOG="+log)
	if err != nil || r.Stdout != "ok\n" {
		t.Fatalf("run %q: %+v, %v", answer.Command, r, err)
	}
	argv, err := hookstest.ReadArgv(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"-p", profile, "--", "bash", "-c", "--", "echo ok"}; !slices.Equal(argv, want) {
		t.Errorf("jail argv %q; want %q", argv, want)
	}
}

func TestRunDefaultProfile(t *testing.T) {
	var out, errw bytes.Buffer
	in := strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"id"}}`)
	if code := Run("codex", "", "/usr/bin/jail", in, &out, &errw); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	answer, err := hookstest.ParseAnswer("codex", out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if want := "/usr/bin/jail -p agent -- bash -c -- id"; answer.Command != want {
		t.Errorf("command %q; want %q", answer.Command, want)
	}
}

// TestRunOversizedEvent: stdin beyond the limit is refused as malformed, not half-parsed.
func TestRunOversizedEvent(t *testing.T) {
	var out, errw bytes.Buffer
	in := strings.NewReader(`{"tool_name":"Bash","tool_input":{"command":"` + strings.Repeat("x", maxEvent) + `"}}`)
	if code := Run("claude-code", "agent", "/usr/bin/jail", in, &out, &errw); code != 0 || out.Len() != 0 {
		t.Fatalf("exit %d, stdout %d bytes", code, out.Len())
	}
	if !strings.Contains(errw.String(), "larger than") {
		t.Errorf("stderr %q", errw.String())
	}
}

func TestHarnesses(t *testing.T) {
	if got, want := Harnesses(), []string{"claude-code", "codex", "gemini"}; !slices.Equal(got, want) {
		t.Errorf("Harnesses() = %q; want %q", got, want)
	}
}

// FuzzRun checks the hook's one promise for any input: it either answers nothing, or answers
// with exactly the wrapped form of the command it was given — never an unwrapped command, never
// a crash. Seeds are the recorded samples. Run with: go test -fuzz FuzzRun ./hooks/
func FuzzRun(f *testing.F) {
	samples, err := hookstest.Samples(samplesDir)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range samples {
		f.Add(s.Harness, s.Event)
	}
	f.Fuzz(func(t *testing.T, harness string, event []byte) {
		var out, errw bytes.Buffer
		code := Run(harness, "agent", "/usr/bin/jail", bytes.NewReader(event), &out, &errw)
		if out.Len() == 0 {
			if code != 0 && code != 2 {
				t.Fatalf("exit %d", code)
			}
			return
		}
		answer, err := hookstest.ParseAnswer(harness, out.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			ToolInput struct {
				Command string `json:"command"`
			} `json:"tool_input"`
		}
		if err := json.Unmarshal(event, &ev); err != nil {
			t.Fatalf("answered %s to an event that does not parse: %v", out.Bytes(), err)
		}
		want, err := Command("/usr/bin/jail", "agent", "bash", ev.ToolInput.Command)
		if err != nil || answer.Command != want {
			t.Fatalf("answered command %q; want %q (%v)", answer.Command, want, err)
		}
	})
}
