package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/hooks"
	"github.com/jail-sandbox/jail/hooks/hookstest"
	"github.com/jail-sandbox/jail/internal/testutil"
)

const hookSamples = "../../testdata/hooks"

// rewriteWithJail answers event for harness the way `jail hook HARNESS -p agent` would, with the
// real binary's path in the rewritten command, and returns that command.
func rewriteWithJail(t *testing.T, harness string, event []byte) string {
	t.Helper()
	var out, errw bytes.Buffer
	if code := hooks.Run(harness, "agent", jailBin, bytes.NewReader(event), &out, &errw); code != 0 || errw.Len() != 0 {
		t.Fatalf("hook exit %d, stderr %q", code, errw.String())
	}
	answer, err := hookstest.ParseAnswer(harness, out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return answer.Command
}

// bashIn runs command with bash -c in dir, as a harness runs its shell tool.
func bashIn(t *testing.T, dir, command string) hookstest.Result {
	t.Helper()
	r, err := hookstest.Bash(dir, command)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHookSamplesRunInJail rewrites every recorded shell-tool event with the real binary's path,
// runs the result as the harness would (bash -c) and checks the original command ran unchanged
// inside jail: same output, same exit status as when run directly.
func TestHookSamplesRunInJail(t *testing.T) {
	samples, err := hookstest.Samples(hookSamples)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if s.Kind != hookstest.Rewrite {
			continue
		}
		t.Run(s.Harness+"/"+s.Name, func(t *testing.T) {
			input, err := s.ToolInput()
			if err != nil {
				t.Fatal(err)
			}
			var original string
			if err := json.Unmarshal(input["command"], &original); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			direct := bashIn(t, dir, original)
			wrapped := bashIn(t, dir, rewriteWithJail(t, s.Harness, s.Event))
			if wrapped.Stdout != s.Stdout || wrapped.Code != direct.Code {
				t.Errorf("in jail: stdout %q exit %d; want %q exit %d (stderr %q)",
					wrapped.Stdout, wrapped.Code, s.Stdout, direct.Code, wrapped.Stderr)
			}
			if !strings.Contains(wrapped.Stderr, direct.Stderr) {
				t.Errorf("in jail stderr %q lacks the command's own %q", wrapped.Stderr, direct.Stderr)
			}
		})
	}
}

// hostNamespaces is what the test process itself sees: its user and pid namespaces.
func hostNamespaces(t *testing.T) string {
	t.Helper()
	var ns []string
	for _, kind := range []string{"user", "pid"} {
		link, err := os.Readlink("/proc/self/ns/" + kind)
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, link)
	}
	return strings.Join(ns, "\n") + "\n"
}

// nsCommand prints the user and pid namespaces of the shell running it, like hostNamespaces.
const nsCommand = "readlink /proc/self/ns/user /proc/self/ns/pid"

// checkSandboxed fails unless r printed namespaces other than the test process's.
func checkSandboxed(t *testing.T, r hookstest.Result) {
	t.Helper()
	if r.Code != 0 || strings.Count(r.Stdout, "\n") != 2 {
		t.Fatalf("exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	host := hostNamespaces(t)
	for i, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if strings.Contains(host, line) {
			t.Errorf("namespace %d %s is the caller's: the command ran outside the sandbox", i, line)
		}
	}
}

// TestHookCommandRunsInsideSandbox: the rewritten command is really sandboxed — it sees its own
// user and pid namespaces, not the caller's.
func TestHookCommandRunsInsideSandbox(t *testing.T) {
	event := []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"` + nsCommand + `"}}`)
	checkSandboxed(t, bashIn(t, t.TempDir(), rewriteWithJail(t, "claude-code", event)))
}

// requireWired skips a test of a CLI entry point that cli.go does not dispatch yet (the hooks
// package is ready; the dispatch lines are the CLI owner's). notWired is what the undispatched
// call prints.
func requireWired(t *testing.T, stderr, notWired string) {
	t.Helper()
	if strings.Contains(stderr, notWired) {
		t.Skipf("not dispatched by cli.go yet: %s", strings.TrimSpace(stderr))
	}
}

// TestHookCLI runs `jail hook HARNESS -p agent` on every sample through the binary, as the
// harness would, and runs each rewritten command.
func TestHookCLI(t *testing.T) {
	_, stderr, code := runJail(t, "hook")
	requireWired(t, stderr, "exec hook")
	if code != exitHookUsage || !strings.Contains(stderr, "usage: jail hook") {
		t.Fatalf("jail hook without a harness: exit %d stderr %q; want usage and exit 2", code, stderr)
	}
	if _, stderr, code := runJail(t, "hook", "cursor"); code != exitHookUsage || !strings.Contains(stderr, "unknown harness") {
		t.Errorf("unknown harness: exit %d stderr %q; want exit 2", code, stderr)
	}
	self, err := filepath.EvalSymlinks(jailBin)
	if err != nil {
		t.Fatal(err)
	}
	samples, err := hookstest.Samples(hookSamples)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		t.Run(s.Harness+"/"+s.Name, func(t *testing.T) {
			dir := t.TempDir()
			out, stderr, code := runJailIn(t, dir, string(s.Event), "hook", s.Harness, "-p", "agent")
			if code != 0 {
				t.Fatalf("exit %d stderr %q", code, stderr)
			}
			switch s.Kind {
			case hookstest.Skip:
				if out != "" || stderr != "" {
					t.Errorf("want silence, got stdout %q stderr %q", out, stderr)
				}
				return
			case hookstest.Malformed:
				if out != "" || !strings.Contains(stderr, "malformed event") {
					t.Errorf("want no decision and a message, got stdout %q stderr %q", out, stderr)
				}
				return
			}
			answer, err := hookstest.ParseAnswer(s.Harness, []byte(out))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(answer.Command, self+" -p agent -- bash -c ") {
				t.Errorf("command %q does not run %s", answer.Command, self)
			}
			if r := bashIn(t, dir, answer.Command); r.Stdout != s.Stdout {
				t.Errorf("stdout %q; want %q (stderr %q)", r.Stdout, s.Stdout, r.Stderr)
			}
		})
	}
}

// TestShellShim points harness-like callers at a jail-sh symlink: a program running
// `$SHELL -c CMD ARG0 ARGS…`, and make, which runs every recipe line with $(SHELL) -c.
func TestShellShim(t *testing.T) {
	dir := t.TempDir()
	shim := filepath.Join(dir, "jail-sh")
	if err := os.Symlink(jailBin, shim); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, name string, args ...string) hookstest.Result {
		t.Helper()
		r, err := hookstest.Exec(dir, env, name, args...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	requireWired(t, run(nil, shim, "-c", "true").Stderr, "flag provided but not defined: -c")

	r := run(nil, shim, "-c", `printf '[%s]' "$0" "$@"; echo`, "name", "a b", "it's")
	if r.Code != 0 || r.Stdout != "[name][a b][it's]\n" {
		t.Errorf("jail-sh -c: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	checkSandboxed(t, run(nil, shim, "-c", nsCommand))
	if r := run(nil, shim, "-c", "exit 3"); r.Code != 3 {
		t.Errorf("exit status %d; want 3", r.Code)
	}
	if r := run(nil, shim, "-c"); r.Code != 2 || !strings.Contains(r.Stderr, "jail-sh: -c: option requires an argument") {
		t.Errorf("jail-sh -c without command: exit %d stderr %q", r.Code, r.Stderr)
	}
	if r := run([]string{"JAIL_PROFILE=readonly"}, shim, "-c", "true"); r.Code != exitFailure || !strings.Contains(r.Stderr, "is not read") {
		t.Errorf("$JAIL_PROFILE not refused: exit %d stderr %q", r.Code, r.Stderr)
	}
	named := filepath.Join(dir, "jail-sh@no-such-profile")
	if err := os.Symlink(jailBin, named); err != nil {
		t.Fatal(err)
	}
	if r := run(nil, named, "-c", "true"); r.Code != exitFailure || !strings.Contains(r.Stderr, "no-such-profile") {
		t.Errorf("the profile in the link's name not applied: exit %d stderr %q", r.Code, r.Stderr)
	}

	// Without -c, sh reads its commands from stdin (a pipe here; a terminal makes it interactive).
	r, err := hookstest.ExecIn(dir, "echo from-stdin $((2+3))\n"+nsCommand+"\nexit 4\n", nil, shim)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(r.Stdout, "\n")
	if r.Code != 4 || first != "from-stdin 5" {
		t.Fatalf("jail-sh < script: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	checkSandboxed(t, hookstest.Result{Stdout: rest})

	// On a terminal it is an interactive shell (script(1) gives it one).
	if _, err := exec.LookPath("script"); err == nil {
		r, err := hookstest.ExecIn(dir, "echo interactive $((2+3)); exit 4\n", nil, "script", "-qec", shim, "/dev/null")
		if err != nil {
			t.Fatal(err)
		}
		// The terminal echoes the input line with $((2+3)) unexpanded; only the shell prints 5.
		if r.Code != 4 || !strings.Contains(r.Stdout, "interactive 5") {
			t.Errorf("interactive jail-sh: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
		}
	} else {
		t.Log("script(1) not installed: interactive use not checked")
	}

	makefile := "all:\n\t@echo made $$((6*7))\n\t@" + nsCommand + "\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(makefile), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(nil, "make", "-s", "SHELL="+shim)
	first, rest, _ = strings.Cut(r.Stdout, "\n")
	if r.Code != 0 || first != "made 42" {
		t.Fatalf("make: exit %d stdout %q stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	checkSandboxed(t, hookstest.Result{Stdout: rest})

	// Node's child_process and Python's subprocess, which agent harnesses are written in, run
	// [shell, "-c", command] when given a shell.
	for _, caller := range [][]string{
		{"node", "-e", `require("child_process").exec("echo caller $((6*7))", {shell: process.argv[1]}, (e, out) => { process.stdout.write(out); process.exitCode = e ? 1 : 0 })`, shim},
		{"python3", "-c", `import subprocess, sys; sys.stdout.write(subprocess.run("echo caller $((6*7))", shell=True, executable=sys.argv[1], capture_output=True, text=True, check=True).stdout)`, shim},
	} {
		if _, err := exec.LookPath(caller[0]); err != nil {
			t.Logf("%s not installed: not checked as a caller", caller[0])
			continue
		}
		if r := run(nil, caller[0], caller[1:]...); r.Code != 0 || r.Stdout != "caller 42\n" {
			t.Errorf("%s caller: exit %d stdout %q stderr %q", caller[0], r.Code, r.Stdout, r.Stderr)
		}
	}

	// `jail shell` is the same shim without a symlink.
	if _, stderr, code := runJail(t, "shell", "-p", "no-such-profile", "-c", "true"); code != exitFailure || !strings.Contains(stderr, "no-such-profile") {
		t.Errorf("jail shell -p not applied: exit %d stderr %q", code, stderr)
	}
	stdout, stderr, code := runJail(t, "shell", "-c", `echo "$0"`, "via-subcommand")
	requireWired(t, stderr, "exec shell")
	if code != 0 || stdout != "via-subcommand\n" {
		t.Errorf("jail shell -c: exit %d stdout %q stderr %q", code, stdout, stderr)
	}
}

// harnessConfigs are project files that an agent harness, or jail itself, later reads on the
// host outside any sandbox: Claude Code's project settings (hooks there are host commands, and
// permission rules) and MCP servers (host commands), Codex's and Gemini CLI's project hooks and
// settings, and the project-local profile that the next `jail -p agent` in this directory loads
// in place of the built-in one.
var harnessConfigs = []string{
	".claude/settings.json", ".claude/settings.local.json", ".mcp.json",
	".codex/hooks.json", ".codex/config.toml", ".gemini/settings.json",
	".jail/agent.toml",
}

// TestHarnessConfigProtected attacks from inside a hook-wrapped command, as a model's command
// would: plant (or overwrite) each harness configuration file in the working directory, which
// the agent profile makes writable. Every attempt must be refused and leave the host file as it
// was; one that succeeds turns the next session's hook or the next jail run into an escape.
func TestHarnessConfigProtected(t *testing.T) {
	for _, rel := range harnessConfigs {
		for _, existing := range []bool{false, true} {
			name := rel + "/missing"
			if existing {
				name = rel + "/existing"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, rel)
				if existing {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					testutil.WriteFile(t, path, "original\n")
				}
				quoted, err := hooks.Quote(rel)
				if err != nil {
					t.Fatal(err)
				}
				script := `mkdir -p "$(dirname ` + quoted + `)"; echo planted > ` + quoted
				event, err := json.Marshal(map[string]any{"tool_name": "Bash", "tool_input": map[string]string{"command": script}})
				if err != nil {
					t.Fatal(err)
				}
				r := bashIn(t, dir, rewriteWithJail(t, "claude-code", event))
				if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), "planted") {
					t.Errorf("the sandboxed command wrote %s on the host (exit %d)", rel, r.Code)
				}
			})
		}
	}
}

// TestPlantedProfileInSubdirectory: a wrapped command plants sub/.jail/agent.toml, granting a
// directory outside the project (the working directory's own .jail is protected, a
// subdirectory's is not). A later wrapped command that runs in sub — Gemini's dir_path, Codex's
// workdir, or the user starting the agent there — must still get the built-in agent profile,
// not the planted one.
func TestPlantedProfileInSubdirectory(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	profile, err := hooks.Quote("extends = [\"readonly\"]\n[filesystem]\nwrite = [\"$CWD\", \"" + outside + "\"]\n")
	if err != nil {
		t.Fatal(err)
	}
	shellEvent := func(command string) []byte {
		event, err := json.Marshal(map[string]any{"tool_name": "run_shell_command", "tool_input": map[string]string{"command": command, "dir_path": "sub"}})
		if err != nil {
			t.Fatal(err)
		}
		return event
	}
	bashIn(t, dir, rewriteWithJail(t, "gemini", shellEvent("mkdir -p sub/.jail && printf %s "+profile+" > sub/.jail/agent.toml")))
	escaped := filepath.Join(outside, "escaped")
	r := bashIn(t, sub, rewriteWithJail(t, "gemini", shellEvent("touch "+escaped)))
	if _, err := os.Stat(escaped); err == nil {
		t.Errorf("a profile planted in sub/.jail by an earlier command granted writes outside the project (exit %d)", r.Code)
	}
}

// TestHookOptionLikeCommands: a model's command that starts with - or + is the command, never an
// option of jail or of the shell inside. Each is run plainly first (bash -c -- CMD) to learn what
// it does, then through the hook: same output, same status, and no option took effect (-x would
// trace to stderr, +e/-e change error handling, --version would print bash's version).
func TestHookOptionLikeCommands(t *testing.T) {
	dir := t.TempDir()
	for _, command := range []string{"-x", "--version", "+e", "-e; echo after", "--rcfile /etc/passwd", "-c 'echo injected'", "+x -c id"} {
		t.Run(command, func(t *testing.T) {
			direct := bashIn(t, dir, "bash -c -- "+shellQuote(t, command))
			for _, harness := range hooks.Harnesses() {
				tool := map[string]string{"claude-code": "Bash", "codex": "Bash", "gemini": "run_shell_command"}[harness]
				event, err := json.Marshal(map[string]any{"tool_name": tool, "tool_input": map[string]string{"command": command}})
				if err != nil {
					t.Fatal(err)
				}
				r := bashIn(t, dir, rewriteWithJail(t, harness, event))
				if r.Stdout != direct.Stdout || r.Code != direct.Code || strings.Contains(r.Stdout+r.Stderr, "GNU bash, version") || strings.Contains(r.Stdout, "injected") {
					t.Errorf("%s: stdout %q exit %d stderr %q; run as a command it gives stdout %q exit %d",
						harness, r.Stdout, r.Code, r.Stderr, direct.Stdout, direct.Code)
				}
				if !strings.Contains(r.Stderr, "command not found") {
					t.Errorf("%s: stderr %q; want bash's \"command not found\" for the word %q", harness, r.Stderr, command)
				}
			}
		})
	}
}

func shellQuote(t *testing.T, s string) string {
	t.Helper()
	q, err := hooks.Quote(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestShimProfileFromMakefile is issue 22's two-step attack on the shim. A recipe run under
// `make SHELL=jail-sh` (sandboxed) writes a Makefile that exports JAIL_PROFILE naming a weak
// profile it also wrote, granting a directory outside the project; the next host `make` with the
// same SHELL must not run its recipe under that profile. The effect is checked on the host: the
// planted recipe's marker outside the project. The same Makefile run with a plain shell writes
// the marker, so the test can fail.
func TestShimProfileFromMakefile(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	root := t.TempDir()
	proj, outside := filepath.Join(root, "proj"), filepath.Join(root, "outside")
	for _, d := range []string{proj, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	shim := filepath.Join(root, "jail-sh")
	if err := os.Symlink(jailBin, shim); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(outside, "planted")
	weak := "extends = [\"agent\"]\n[filesystem]\nwrite = [\"" + outside + "\"]\n"
	planted := "export JAIL_PROFILE := $(CURDIR)/weak.toml\nall:\n\t@touch " + marker + "\n"
	// Step 1: the sandboxed recipe plants both files (the project is writable in agent).
	// printf's format carries each file on one recipe line; $ is doubled for make.
	format := func(content string) string {
		r := strings.NewReplacer(`\`, `\\`, "%", "%%", "\n", `\n`, "\t", `\t`)
		return strings.ReplaceAll(shellQuote(t, r.Replace(content)), "$", "$$")
	}
	step1 := "all:\n\t@printf " + format(weak) + " > weak.toml; printf " + format(planted) + " > Makefile\n"
	testutil.WriteFile(t, filepath.Join(proj, "Makefile"), step1)
	r, err := hookstest.Exec(proj, nil, "make", "-s", "SHELL="+shim)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(proj, "Makefile")); r.Code != 0 || string(data) != planted {
		t.Fatalf("step 1 did not plant the Makefile: exit %d stderr %q", r.Code, r.Stderr)
	}
	// Step 2: the host runs make again, as before.
	r, err = hookstest.Exec(proj, nil, "make", "-s", "SHELL="+shim)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the planted JAIL_PROFILE took effect: the recipe wrote %s on the host (exit %d)", marker, r.Code)
	}
	if r.Code == 0 || !strings.Contains(r.Stderr, "JAIL_PROFILE is not read") {
		t.Errorf("step 2: exit %d stderr %q; want the shim to refuse the exported JAIL_PROFILE", r.Code, r.Stderr)
	}
	// The payload itself works: with a plain shell the same Makefile writes the marker.
	if r, err := hookstest.Exec(proj, nil, "make", "-s", "SHELL=/bin/sh"); err != nil || r.Code != 0 {
		t.Fatalf("control run: %v exit %d stderr %q", err, r.Code, r.Stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("control run with /bin/sh did not write %s: the test cannot tell an escape", marker)
	}
}
