package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// nestedProfile keeps both sandboxes where the harness's refuses jail's namespaces: the Landlock
// fallback, its losses accepted (docs/harnesses.md).
const nestedProfile = "extends = [\"agent\"]\n[sandbox]\nfallback = \"landlock\"\nallow_weaker = true\n"

// TestHarnessOwnSandbox runs jail inside the agent harnesses' own sandboxes, for real, as issue
// 25 asks: where the outer sandbox refuses what jail needs, jail exits 125 with one line naming
// that sandbox and the command does not run; with a profile asking for the Landlock fallback the
// command runs there; where the harness lets jail nest (Codex with its network on, Claude Code
// with allowNestedUserNamespaces, as an ordinary user), jail's own pid namespace holds. Each
// time the command tries to read a canary in the home that the harness's sandbox alone lets it
// read (checked first): jail's layer must hide it.
func TestHarnessOwnSandbox(t *testing.T) {
	t.Parallel() // about a minute of agent CLIs starting up, mostly waiting: beside the other tests
	bin := harnessBin(t)
	root := os.Geteuid() == 0

	t.Run("codex", func(t *testing.T) {
		t.Parallel()
		home, proj := harnessHome(t)
		canary := filepath.Join(home, "secret", "canary")
		testutil.WriteFile(t, canary, "s3cret\n")
		script := "echo ran; cat " + canary + " 2>/dev/null || echo hidden"
		codex := func(network bool) []string {
			args := []string{filepath.Join(bin, "codex"), "sandbox", "-c", `sandbox_mode="workspace-write"`}
			if network {
				args = append(args, "-c", "sandbox_workspace_write.network_access=true")
			}
			// The outer sandbox's pid namespace first, then jail's.
			return append(args, "--", "sh", "-c", `readlink /proc/self/ns/pid; exec "$@"`, "sh")
		}
		run := func(network bool, args ...string) (stdout, stderr string, code int) {
			t.Helper()
			return runJailWith(t, runOpts{dir: proj, env: []string{"HOME=" + home}, wrap: codex(network)}, args...)
		}
		control, err := exec.Command(codex(false)[0], append(codex(false)[1:], "cat", canary)...).Output()
		if !strings.Contains(string(control), "s3cret") {
			t.Fatalf("Codex's sandbox alone does not let the command read %s (%v: %q): the test cannot tell jail's layer", canary, err, control)
		}

		// Network off (Codex's default): refused in one line, before the command.
		out, errOut, code := run(false, "--", "sh", "-c", script)
		want := "jail runs inside Codex's sandbox, whose seccomp filter refuses"
		if root {
			want = "jail runs as root inside Codex's sandbox, which drops every capability"
		}
		if code != exitFailure || strings.Contains(out, "ran") || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("network off: exit %d, stdout %q, stderr %q; want 125, the command not run, and one line: %q", code, out, errOut, want)
		}

		// The Landlock fallback, as a profile asks for it.
		testutil.WriteFile(t, filepath.Join(home, ".config", "jail", "agent-nested.toml"), nestedProfile)
		out, errOut, code = run(false, "-p", "agent-nested", "--", "sh", "-c", script)
		if code != 0 || !strings.HasSuffix(out, "ran\nhidden\n") || !strings.Contains(errOut, "falling back to Landlock") || !strings.Contains(errOut, "Codex's sandbox") {
			t.Errorf("fallback: exit %d, stdout %q, stderr %q; want the command run, the canary hidden, the fallback named", code, out, errOut)
		}

		// Network on: an ordinary user's jail nests; root's cannot map itself.
		out, errOut, code = run(true, "--", "sh", "-c", "readlink /proc/self/ns/pid; "+script)
		if root {
			if code != exitFailure || strings.Contains(out, "ran") || !strings.Contains(errOut, "root inside Codex's sandbox, which drops every capability") {
				t.Errorf("network on, root: exit %d, stdout %q, stderr %q; want 125 naming the capabilities Codex drops", code, out, errOut)
			}
			return
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 4 || lines[0] == lines[1] || lines[2] != "ran" || lines[3] != "hidden" || errOut != "" {
			t.Errorf("network on: exit %d, stdout %q, stderr %q; want jail's own pid namespace inside Codex's, the canary hidden", code, out, errOut)
		}
	})

	t.Run("claude-code", func(t *testing.T) {
		t.Parallel()
		for _, tool := range []string{"bwrap", "socat"} {
			_, err := exec.LookPath(tool)
			testutil.Require(t, err == nil, "%s (Claude Code's sandbox needs it, or runs commands unsandboxed)", tool)
		}
		home, proj := harnessHome(t)
		testutil.WriteFile(t, filepath.Join(home, ".config", "jail", "agent-nested.toml"), nestedProfile)
		opts := runOpts{dir: proj, env: []string{"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH")}, timeout: hookCheckTimeout}
		settings := filepath.Join(home, ".claude", "settings.json")
		check := func(sandbox, profile string, wantOK bool, want string) {
			t.Helper()
			testutil.WriteFile(t, settings, `{"sandbox": `+sandbox+"}\n")
			if _, errOut, code := runJailWith(t, opts, "hook", "install", "claude-code", "--profile", profile); code != 0 {
				t.Fatalf("install: exit %d: %s", code, errOut)
			}
			out, errOut, code := runJailWith(t, opts, "hook", "check", "-v", "claude-code")
			if (code == 0) != wantOK || !strings.Contains(out, want) {
				t.Errorf("sandbox %s, profile %s: check exit %d, stdout %q; want ok=%v and %q\nstderr: %s", sandbox, profile, code, out, wantOK, want, errOut)
			}
		}
		check(`{"enabled": true}`, "agent", false, "jail did not start: create sandbox namespaces: operation not permitted (jail runs inside Claude Code's sandbox")
		check(`{"enabled": true}`, "agent-nested", true, "inside jail")
		if root { // Claude Code runs root's commands in a pid namespace its /proc does not show
			check(`{"enabled": true, "allowNestedUserNamespaces": true}`, "agent", false, "pid namespace that its /proc does not show")
		} else {
			check(`{"enabled": true, "allowNestedUserNamespaces": true}`, "agent", true, "inside jail")
		}
	})
}
