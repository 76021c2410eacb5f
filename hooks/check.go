package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/hooks/fakemodel"
	"github.com/jail-sandbox/jail/internal/random"
)

// Check is `jail hook check HARNESS`: a live self-test of the installed CLI with the user's own
// configuration. A fake model server on loopback (package fakemodel) stands in for the model
// and asks for one shell command; the CLI runs non-interactively against it, only its model
// endpoint (and a dummy key) overridden. The command reports its pid namespace, tries to read a
// canary file and to create a marker next to it, in a fresh directory outside the working
// directory; it ran inside jail only if its pid namespace is not the caller's, the canary was
// hidden and the marker was not created.

// CheckResult is the verdict: OK only when the command provably ran inside jail. Otherwise
// Reason is one line saying why and Fix the command or edit that mends it.
type CheckResult struct {
	OK       bool
	Version  string   // the CLI's version
	Reason   string   // why not OK
	Fix      string   // what mends it
	Evidence []string // what was seen, for -v
}

// CheckOptions tunes Check. CLI is the CLI's path ("" finds it on PATH); Timeout bounds its run.
type CheckOptions struct {
	CLI     string
	Timeout time.Duration
}

// minor versions are compared numerically, "2.1.332" as [2 1 332].
var versionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+\.\d+\.\d+`) })

func parseVersion(s string) []int {
	var v []int
	for _, p := range strings.Split(versionRE().FindString(s), ".") {
		n, _ := strconv.Atoi(p)
		v = append(v, n)
	}
	return v
}

func olderThan(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// Check runs the self-test for harnessName in e.Dir.
func Check(ctx context.Context, harnessName string, e Env, opts CheckOptions) CheckResult {
	var r CheckResult
	s, ok := setups[harnessName]
	if !ok {
		r.Reason = fmt.Sprintf("unknown harness %q (known: %q)", harnessName, Harnesses())
		return r
	}
	if opts.Timeout == 0 {
		opts.Timeout = 3 * time.Minute
	}
	cli := opts.CLI
	if cli == "" {
		var err error
		if cli, err = exec.LookPath(s.cli); err != nil {
			r.Reason, r.Fix = s.cli+" is not installed (not on PATH)", "npm install -g "+s.pkg
			return r
		}
	}
	out, err := exec.CommandContext(ctx, cli, "--version").Output()
	r.Version = versionRE().FindString(string(out))
	if err != nil || r.Version == "" {
		r.Reason, r.Fix = fmt.Sprintf("%s --version did not answer with a version (%v)", cli, err), "npm install -g "+s.pkg
		return r
	}
	if olderThan(parseVersion(r.Version), parseVersion(s.minimum)) {
		r.Reason = fmt.Sprintf("CLI version not supported: %s %s is older than %s", s.cli, r.Version, s.minimum)
		r.Fix = "npm install -g " + s.pkg + "@latest"
		return r
	}
	static := Inspect(harnessName, e)
	r.Evidence = append(r.Evidence, "static: "+static.String())
	verdict, err := probe(ctx, harnessName, cli, e, opts.Timeout, &r)
	switch {
	case err != nil:
		r.Reason = err.Error()
	case verdict == "":
		r.OK = true
		return r
	default:
		r.Reason = verdict
	}
	// Explain the failure by the setup's own fault where the static check found one.
	if static.Status == StatusFail {
		r.Reason, r.Fix = static.Problem+": "+static.Detail+" ("+r.Reason+")", static.Fix
	}
	return r
}

// probe runs the CLI against the fake model and returns "" when the command ran inside jail, or
// what it saw instead.
func probe(ctx context.Context, harnessName, cli string, e Env, timeout time.Duration, r *CheckResult) (string, error) {
	dir, err := os.MkdirTemp("", "jail-hook-check-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if rel, err := filepath.Rel(e.Dir, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("the check's directory %s is inside the working directory %s: run it from a project directory", dir, e.Dir)
	}
	canary, _ := random.Hex(8)
	if err := os.WriteFile(filepath.Join(dir, "canary"), []byte(canary+"\n"), 0o644); err != nil {
		return "", err
	}
	marker := filepath.Join(dir, "marker")
	// No $(…): Gemini CLI refuses command substitution in a shell command's arguments.
	command := fmt.Sprintf("echo jail-check-begin; readlink /proc/self/ns/pid; "+
		"cat %[1]s/canary 2>/dev/null || echo hidden; touch %[1]s/marker 2>/dev/null; echo jail-check-end", dir)
	model, err := fakemodel.Start(command)
	if err != nil {
		return "", err
	}
	defer model.Close()

	args, env, cleanup, err := cliRun(harnessName, model.URL(), e)
	if err != nil {
		return "", err
	}
	defer cleanup()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Dir = e.Dir
	cmd.Env = append(os.Environ(), env...)
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	tail := lastLines(output.String(), 3)
	r.Evidence = append(r.Evidence, fmt.Sprintf("%s %q: %v; output ends: %s", cli, args, runErr, tail))

	rep := model.Report()
	r.Evidence = append(r.Evidence, fmt.Sprintf("model server: requests %q, tools %q, result %q", rep.Requests, rep.Tools, rep.Result))
	host, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "", err
	}
	_, markerErr := os.Stat(marker)
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("%s did not finish within %s (output ends: %s)", filepath.Base(cli), timeout, tail), nil
	case len(rep.Requests) == 0:
		return fmt.Sprintf("%s never reached the fake model server (exit: %v; output ends: %s)", filepath.Base(cli), runErr, tail), nil
	case !rep.Called:
		return fmt.Sprintf("%s offered no shell tool to the model (tools: %q)", filepath.Base(cli), rep.Tools), nil
	case errors.Is(markerErr, nil):
		return "the command ran outside jail: it created " + marker, nil
	case !rep.Returned:
		return fmt.Sprintf("%s ran the model's command but returned no result (exit: %v; output ends: %s)", filepath.Base(cli), runErr, tail), nil
	}
	pidns, canaryText, found := probeOutput(rep.Result)
	switch {
	case !found && jailError(rep.Result) != "":
		// jail's own one-line error: inside the harness's own sandbox it names that sandbox
		// and what to change.
		return "jail did not start: " + jailError(rep.Result), nil
	case !found && strings.Contains(rep.Result, "Process running with session ID"):
		return "the command did not finish: Codex left it running (see where jail stops: jail -v -- true, run by Codex)", nil
	case !found:
		return "the command did not run; the CLI answered: " + oneLine(rep.Result), nil
	case pidns == host:
		return "the command ran outside jail: in the caller's pid namespace " + host, nil
	case canaryText != "hidden":
		return "the command read the canary " + filepath.Join(dir, "canary") + ": the profile does not hide it", nil
	}
	return "", nil
}

// jailError is the first of jail's own error lines ("jail: …", not a warning or notice) in
// text, without the prefix, or "".
func jailError(text string) string {
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "jail: ")
		if ok && !strings.HasPrefix(rest, "warning: ") && !strings.HasPrefix(rest, "notice: ") {
			return rest
		}
	}
	return ""
}

// probeOutput finds the probe's two lines between its begin and end markers: the pid namespace
// and the canary's content (or "hidden").
func probeOutput(text string) (pidns, canary string, ok bool) {
	_, rest, ok1 := strings.Cut(text, "jail-check-begin\n")
	body, _, ok2 := strings.Cut(rest, "jail-check-end")
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if !ok1 || !ok2 || len(lines) != 2 {
		return "", "", false
	}
	return strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1]), true
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return oneLine(strings.Join(lines, " | "))
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// checkPrompt is the user's turn; the fake model ignores what it says.
const checkPrompt = "jail hook check: run the command you are given."

// cliRun is how to run harnessName's CLI non-interactively against the model at url: arguments,
// environment additions, and a cleanup for anything made for the run.
func cliRun(harnessName, url string, e Env) (args, env []string, cleanup func(), err error) {
	cleanup = func() {}
	switch harnessName {
	case "claude-code":
		return []string{"-p", checkPrompt}, []string{
			"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=jail-check-dummy-key", "ANTHROPIC_AUTH_TOKEN=",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		}, cleanup, nil
	case "codex":
		provider := fmt.Sprintf(`{name="jail-check", base_url=%s, wire_api="responses", env_key="JAIL_CHECK_API_KEY"}`, tomlString(url+"/v1"))
		return []string{"exec", "--skip-git-repo-check", "-c", "model_provider=jail-check",
			"-c", "model_providers.jail-check=" + provider, "-m", "jail-check", checkPrompt,
		}, []string{"JAIL_CHECK_API_KEY=jail-check-dummy-key"}, cleanup, nil
	case "gemini":
		home, err := geminiCheckHome(e)
		if err != nil {
			return nil, nil, cleanup, err
		}
		return []string{"--approval-mode", "yolo", "-p", checkPrompt}, []string{
			"GEMINI_API_KEY=jail-check-dummy-key", "GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_CLI_HOME=" + home,
		}, func() { os.RemoveAll(home) }, nil
	}
	return nil, nil, cleanup, fmt.Errorf("unknown harness %q", harnessName)
}
