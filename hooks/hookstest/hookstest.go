// Package hookstest holds what the hook tests share: the recorded sample events under
// testdata/hooks, unwrapping of the harnesses' answers, and a stand-in jail binary. It is
// imported by tests only (hooks and cmd/jail), like net/http/httptest.
package hookstest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Kind is what a sample event expects from the hook.
type Kind int

const (
	Rewrite   Kind = iota // a shell-tool event: rewritten, and the command prints Stdout
	Skip                  // not for the hook: no output, no message, exit 0
	Malformed             // no output, a message on stderr, exit 0
)

// Sample is one recorded pre-tool event.
type Sample struct {
	Harness string // the directory name, which is the `jail hook` harness name
	Name    string // the file name without .json
	Kind    Kind
	Event   []byte // the file's bytes, exactly what the harness writes to stdin
	Stdout  string // for Rewrite: what the command prints
}

// Samples reads every sample under dir (testdata/hooks), ordered by harness and name.
func Samples(dir string) ([]Sample, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("list samples: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no samples under %s", dir)
	}
	slices.Sort(files)
	var samples []Sample
	for _, f := range files {
		s := Sample{Harness: filepath.Base(filepath.Dir(f)), Name: strings.TrimSuffix(filepath.Base(f), ".json")}
		if s.Event, err = os.ReadFile(f); err != nil {
			return nil, fmt.Errorf("read sample: %w", err)
		}
		switch {
		case strings.HasPrefix(s.Name, "skip-"):
			s.Kind = Skip
		case strings.HasPrefix(s.Name, "bad-"):
			s.Kind = Malformed
		default:
			s.Kind = Rewrite
			out, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".stdout")
			if err != nil {
				return nil, fmt.Errorf("sample %s/%s: expected stdout: %w", s.Harness, s.Name, err)
			}
			s.Stdout = string(out)
		}
		samples = append(samples, s)
	}
	return samples, nil
}

// ToolInput returns the event's tool_input object.
func (s Sample) ToolInput() (map[string]json.RawMessage, error) {
	var event struct {
		ToolInput map[string]json.RawMessage `json:"tool_input"`
	}
	if err := json.Unmarshal(s.Event, &event); err != nil {
		return nil, fmt.Errorf("sample %s/%s: %w", s.Harness, s.Name, err)
	}
	return event.ToolInput, nil
}

// Answer is a hook's answer unwrapped from the harness's envelope.
type Answer struct {
	Input   map[string]json.RawMessage // the replacement tool input
	Command string                     // its command
	Reason  string                     // the reason given for the decision
}

// ParseAnswer unwraps out, the hook's stdout, checking it is exactly the envelope the harness
// expects: PreToolUse + allow + updatedInput for claude-code and codex, BeforeTool +
// hookSpecificOutput.tool_input for gemini.
func ParseAnswer(harness string, out []byte) (Answer, error) {
	var a Answer
	var env struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
		HSO      struct {
			HookEventName            string                     `json:"hookEventName"`
			PermissionDecision       string                     `json:"permissionDecision"`
			PermissionDecisionReason string                     `json:"permissionDecisionReason"`
			UpdatedInput             map[string]json.RawMessage `json:"updatedInput"`
			ToolInput                map[string]json.RawMessage `json:"tool_input"`
		} `json:"hookSpecificOutput"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return a, fmt.Errorf("answer %q: %w", out, err)
	}
	switch harness {
	case "claude-code", "codex":
		if env.HSO.HookEventName != "PreToolUse" || env.HSO.PermissionDecision != "allow" ||
			env.HSO.ToolInput != nil || env.Decision != "" {
			return a, fmt.Errorf("answer %s: not a PreToolUse allow envelope", out)
		}
		a.Input, a.Reason = env.HSO.UpdatedInput, env.HSO.PermissionDecisionReason
	case "gemini":
		if env.HSO.HookEventName != "BeforeTool" || env.Decision != "allow" ||
			env.HSO.UpdatedInput != nil || env.HSO.PermissionDecision != "" {
			return a, fmt.Errorf("answer %s: not a BeforeTool envelope", out)
		}
		a.Input, a.Reason = env.HSO.ToolInput, env.Reason
	default:
		return a, fmt.Errorf("unknown harness %q", harness)
	}
	if a.Input == nil {
		return a, errors.New("answer carries no tool input")
	}
	if err := json.Unmarshal(a.Input["command"], &a.Command); err != nil {
		return a, fmt.Errorf("answer command: %w", err)
	}
	return a, nil
}

// SameExceptCommand reports how got differs from want in any field but "command"; JSON values
// are compared byte for byte after removing insignificant whitespace.
func SameExceptCommand(want, got map[string]json.RawMessage) error {
	for k := range got {
		if _, ok := want[k]; !ok {
			return fmt.Errorf("field %q added", k)
		}
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			return fmt.Errorf("field %q dropped", k)
		}
		if k == "command" {
			continue
		}
		var wc, gc bytes.Buffer
		if err := json.Compact(&wc, w); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
		if err := json.Compact(&gc, g); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
		if !bytes.Equal(wc.Bytes(), gc.Bytes()) {
			return fmt.Errorf("field %q changed: %s → %s", k, wc.Bytes(), gc.Bytes())
		}
	}
	return nil
}

// fakeJail stands in for jail until the real one runs end to end: it records its argv
// (NUL-separated) in $FAKE_JAIL_LOG, then execs whatever follows "--".
const fakeJail = `#!/bin/sh
if [ -n "$FAKE_JAIL_LOG" ]; then printf '%s\0' "$@" >"$FAKE_JAIL_LOG"; fi
while [ $# -gt 0 ]; do
	a=$1
	shift
	if [ "$a" = -- ]; then exec "$@"; fi
done
echo "fake jail: no -- in argv" >&2
exit 125
`

// FakeJailIn writes the stand-in jail into dir, creating it, and returns its absolute path.
func FakeJailIn(dir string) (string, error) {
	path, err := filepath.Abs(filepath.Join(dir, "jail"))
	if err != nil {
		return "", fmt.Errorf("fake jail: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("fake jail: %w", err)
	}
	if err := os.WriteFile(path, []byte(fakeJail), 0o755); err != nil {
		return "", fmt.Errorf("fake jail: %w", err)
	}
	return path, nil
}

// ReadArgv reads a NUL-separated argv as the fake jail logs it.
func ReadArgv(file string) ([]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read argv log: %w", err)
	}
	args := strings.Split(string(data), "\x00")
	return args[:len(args)-1], nil
}

// Result is what a shell command did.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Bash runs command as the harnesses do, `bash -c COMMAND`, in dir ("" for the current one),
// with env added to this process's environment.
func Bash(dir, command string, env ...string) (Result, error) {
	return Exec(dir, env, "bash", "-c", command)
}

// Exec runs name with args in dir ("" for the current one), env added to this process's
// environment, stdin empty, bounded to a minute. A non-zero exit is a Result, not an error.
func Exec(dir string, env []string, name string, args ...string) (Result, error) {
	return ExecIn(dir, "", env, name, args...)
}

// ExecIn is Exec with stdin.
func ExecIn(dir, stdin string, env []string, name string, args ...string) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	if exit, ok := errors.AsType[*exec.ExitError](err); ok {
		r.Code, err = exit.ExitCode(), nil
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return r, fmt.Errorf("%s %q: %w", name, args, err)
	}
	return r, nil
}
