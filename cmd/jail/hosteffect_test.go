package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// hostEffect is a two-step attack as the threat model has it: the sandboxed command plants
// something, and later a routine host action (git status, git checkout, the next jail run) turns
// it into code running on the host. It worked when the host action created the marker file.
// check runs it twice from a fresh victim each time: without jail, where it must work (so that
// the test can fail), and inside jail, where it must not.
type hostEffect struct {
	// victim makes the directory the command runs in, and the environment jail and the host
	// action get on top of the test's (PWD for a directory reached through a symlink, HOME).
	victim func(t *testing.T) (dir string, env []string)
	// attack is the shell script the command runs in dir; $P in it is the marker's path.
	attack string
	// host is the host's routine action afterwards, run in dir; its failure is no verdict.
	host func(t *testing.T, dir string, env []string)
	// jail are jail's arguments before --.
	jail []string
}

// check runs the attack without and with jail, each with a marker of its own.
func (a hostEffect) check(t *testing.T) {
	t.Helper()
	a.checkMarker(t, "")
}

// checkMarker is check with the marker at marker ("" for a fresh one each run), for host
// actions that name it themselves.
func (a hostEffect) checkMarker(t *testing.T, marker string) {
	t.Helper()
	if m := a.run(t, false, marker); !exists(m) {
		t.Fatalf("without jail, the attack did not work: the test shows nothing (%q)", a.attack)
	} else if marker != "" {
		os.Remove(m)
	}
	if m := a.run(t, true, marker); exists(m) {
		t.Errorf("inside jail, the attack worked: %s was created on the host (%q)", m, a.attack)
	}
}

// run plays the attack once, in a fresh victim, and returns the marker's path.
func (a hostEffect) run(t *testing.T, jailed bool, marker string) string {
	t.Helper()
	dir, env := a.victim(t)
	if marker == "" {
		marker = filepath.Join(t.TempDir(), "P")
	}
	script := strings.ReplaceAll(a.attack, "$P", marker)
	if jailed {
		args := append(append([]string{}, a.jail...), "--", "sh", "-c", script)
		if _, errOut, code := runJailWith(t, runOpts{dir: dir, env: env}, args...); code == exitFailure {
			t.Fatalf("jail itself failed (125), so the attack was not tried: %s", errOut)
		}
	} else {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		cmd.Run() // the attack's own failures are what jail is for
	}
	a.host(t, dir, env)
	return marker
}

// hostGit runs the host's git in dir, as a person would afterwards; a failure is no verdict.
func hostGit(args ...string) func(t *testing.T, dir string, env []string) {
	return func(t *testing.T, dir string, env []string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		cmd.Run()
	}
}

// repository makes a git repository with one commit (sub/file), owned by whoever runs the test.
func repository(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "config", "user.email", "test@example.com")
	git(t, dir, "config", "user.name", "test")
	testutil.WriteFile(t, filepath.Join(dir, "sub", "file"), "one\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "one")
	return dir
}

// through returns a symlink to dir, made in a directory of its own, and the environment that
// says the caller reached it by that name (PWD, which os.Getwd honours).
func through(t *testing.T, dir string) (link string, env []string) {
	t.Helper()
	link = filepath.Join(t.TempDir(), "link")
	writeLink(t, dir, link)
	return link, []string{"PWD=" + link}
}

// writeLink creates the symlink link → target.
func writeLink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
