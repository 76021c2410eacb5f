package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// homeAttack appends a payload to ~/.bashrc, which the next interactive shell on the host runs.
const homeAttack = `echo payload >> ~/.bashrc`

// homeWithBashrc makes a home directory holding a .bashrc, and returns it with its content.
func homeWithBashrc(t *testing.T) (home, rc string) {
	t.Helper()
	home = t.TempDir()
	rc = "# rc\n"
	testutil.WriteFile(t, filepath.Join(home, ".bashrc"), rc)
	return home, rc
}

// TestHomeAsWorkingDirectoryRefused: run from the home directory itself, agent's working
// directory grant would make the home writable; jail refuses to start with one line saying
// why and what to do, and ~/.bashrc stays as it was. Without jail the attack changes it.
func TestHomeAsWorkingDirectoryRefused(t *testing.T) {
	home, rc := homeWithBashrc(t)
	cmd := exec.Command("sh", "-c", homeAttack)
	cmd.Dir, cmd.Env = home, append(os.Environ(), "HOME="+home)
	if err := cmd.Run(); err != nil || readFile(t, filepath.Join(home, ".bashrc")) == rc {
		t.Fatalf("without jail, the attack did not change ~/.bashrc (%v): the test shows nothing", err)
	}

	home, rc = homeWithBashrc(t)
	o := runOpts{dir: home, env: []string{"HOME=" + home}}
	_, errOut, code := runJailWith(t, o, "--", "sh", "-c", homeAttack)
	if got := readFile(t, filepath.Join(home, ".bashrc")); got != rc {
		t.Errorf("inside jail, ~/.bashrc changed: %q", got)
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if code != exitFailure || len(lines) != 1 || !strings.HasPrefix(lines[0], "jail: builtin:agent:") ||
		!strings.Contains(errOut, "working directory "+home+": it is the home directory") ||
		!strings.Contains(errOut, "run jail from a project directory") || !strings.Contains(errOut, "--rw ~") {
		t.Errorf("exit %d, want 125 and one line refusing the home:\n%s", code, errOut)
	}
	for _, args := range [][]string{{"--dry-run", "--", "true"}, {"profile", "show", "agent"}} {
		if _, out, c := runJailDirect(t, o, args...); c != exitFailure || out != errOut {
			t.Errorf("jail %s: exit %d, want the run's refusal:\n%s", strings.Join(args, " "), c, out)
		}
	}
}

// TestHomeNamedIsWritable: a home granted by name (--rw) is the user's choice and stays
// writable, the working directory being the home or not.
func TestHomeNamedIsWritable(t *testing.T) {
	home, rc := homeWithBashrc(t)
	for _, dir := range []string{home, t.TempDir()} {
		if _, errOut, code := runJailWith(t, runOpts{dir: dir, env: []string{"HOME=" + home}}, "--rw", home, "--", "sh", "-c", homeAttack); code != 0 {
			t.Fatalf("from %s: exit %d: %s", dir, code, errOut)
		}
	}
	if got, want := readFile(t, filepath.Join(home, ".bashrc")), rc+"payload\npayload\n"; got != want {
		t.Errorf("~/.bashrc %q, want %q", got, want)
	}
}

// TestProjectBelowHomeUnchanged: run from a project directory beneath the home, the project is
// writable and the home is the sandbox's own, as before.
func TestProjectBelowHomeUnchanged(t *testing.T) {
	home, rc := homeWithBashrc(t)
	project := filepath.Join(home, "proj")
	testutil.WriteFile(t, filepath.Join(project, "main.go"), "package main\n")
	_, errOut, code := runJailWith(t, runOpts{dir: project, env: []string{"HOME=" + home}},
		"--", "sh", "-c", "echo edited > main.go; "+homeAttack)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := readFile(t, filepath.Join(project, "main.go")); got != "edited\n" {
		t.Errorf("main.go %q, want the edit", got)
	}
	if got := readFile(t, filepath.Join(home, ".bashrc")); got != rc {
		t.Errorf("~/.bashrc changed: %q", got)
	}
}
