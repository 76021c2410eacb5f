package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jail starts the sandbox's init before it loads the profile, guessing the namespaces from the
// command line. These runs check the guess never decides the sandbox: a profile that asks for
// the host's network gets it, without the guessed network namespace, and one that fails to
// load leaves nothing behind but its one-line error.

func TestEarlyInitFollowsTheProfilesNetwork(t *testing.T) {
	hostNet, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	profile := filepath.Join(dir, "hostnet.toml")
	writeFile(t, profile, "extends = [\"agent\"]\n[network]\nmode = \"host\"\n")
	netns := []string{"readlink", "/proc/self/ns/net"}
	out, errOut, code := runJailIn(t, dir, "", append([]string{"-v", "-p", profile, "--"}, netns...)...)
	if code != 0 || strings.TrimSpace(out) != hostNet {
		t.Fatalf("mode = \"host\" from a profile file: network namespace %q (exit %d, %s), want the host's %q", out, code, errOut, hostNet)
	}
	if !strings.Contains(errOut, "does not fit the init started early") {
		t.Errorf("no sign of a second init in -v's log:\n%s", errOut)
	}
	out, errOut, code = runJailIn(t, dir, "", append([]string{"--net", "host", "-v", "--"}, netns...)...)
	if code != 0 || strings.TrimSpace(out) != hostNet || !strings.Contains(errOut, "init started early") {
		t.Fatalf("--net host: network namespace %q (exit %d, %s), want the host's from the early init", out, code, errOut)
	}
	out, errOut, code = runJailIn(t, dir, "", append([]string{"--"}, netns...)...)
	if code != 0 || !strings.HasPrefix(out, "net:[") || strings.TrimSpace(out) == hostNet {
		t.Fatalf("agent: network namespace %q (exit %d, %s), want one of its own", out, code, errOut)
	}
}

func TestEarlyInitOfABadProfileLeavesOnlyTheError(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "bad.toml")
	writeFile(t, profile, "extends = [\"agent\"]\nbogus = 1\n")
	out, errOut, code := runJailIn(t, dir, "", "-p", profile, "--", "sh", "-c", "echo ran")
	if code != 125 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "bogus") {
		t.Fatalf("bad profile: exit %d, stdout %q, stderr %q; want 125 and one line naming the key", code, out, errOut)
	}
}
