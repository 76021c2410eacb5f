package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input gets one clear line naming file, line and key, and exit 125 — never a panic.
func TestBadProfiles(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		want       []string // substrings of the one-line error
	}{
		{"unknown-key", "description = \"x\"\n[filesystem]\nread = [\"/usr\"]\nreed = [\"/etc\"]\n", []string{"unknown-key.toml:4", "reed"}},
		{"wrong-type", "[filesystem]\nread = \"/usr\"\n", []string{"wrong-type.toml:2", "read"}},
		{"missing-path", "[filesystem]\nread = [\"/usr\", \"/no/such/jail/path\"]\n", []string{"missing-path.toml:2", "/no/such/jail/path"}},
		{"unknown-var", "[filesystem]\nread = [\"$NOPE/x\"]\n", []string{"unknown-var.toml:2", "$NOPE"}},
		{"self-extends", "extends = [\"self-extends.toml\"]\n", []string{"self-extends.toml", "extends"}},
		{"bad-net", "[network]\nmode = \"internet\"\n", []string{"bad-net.toml:2", "mode"}},
	} {
		file := filepath.Join(dir, tc.name+".toml")
		if err := os.WriteFile(file, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runJailIn(t, dir, "", "-p", file, "--", "true")
		if code != exitFailure || !strings.HasPrefix(errOut, "jail: ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 125 and one line", tc.name, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: error %q does not name %q", tc.name, errOut, w)
			}
		}
		if strings.Contains(errOut, "panic") || strings.Contains(errOut, "goroutine") {
			t.Errorf("%s: Go panic: %s", tc.name, errOut)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--no-such-flag", "true"},
		{"--net", "everything", "--", "true"},
		{"--timeout", "soon", "--", "true"},
		{"--rw", "/no/such/jail/dir", "--", "true"},
		{},
	} {
		_, errOut, code := runJail(t, args...)
		if code != exitFailure || !strings.Contains(errOut, "jail") {
			t.Errorf("%q: exit %d, stderr %q; want 125 and an error", args, code, errOut)
		}
	}
}

func TestDryRunPrintsThePlan(t *testing.T) {
	out, errOut, code := runJail(t, "--dry-run", "--", "echo", "hi")
	if code != 0 || !strings.Contains(out, `"argv"`) || !strings.Contains(out, `"mounts"`) {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestProfileShowAndList(t *testing.T) {
	out, errOut, code := runJail(t, "profile", "list")
	for _, name := range []string{"agent", "readonly", "minimal"} {
		if code != 0 || !strings.Contains(out, name) {
			t.Fatalf("profile list: exit %d, %q %q", code, out, errOut)
		}
	}
	out, errOut, code = runJail(t, "profile", "show", "agent")
	if code != 0 || !strings.Contains(out, "[filesystem]") || strings.Contains(out, "$CWD") ||
		!strings.Contains(out, "# Effective syscall policy") || !strings.Contains(out, "ptrace") {
		t.Fatalf("profile show agent: exit %d, %q %q", code, out, errOut)
	}
}
