package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
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

// TestProfileFilesStaySmall: a profile path that is not a regular file or a pipe (a device that
// never ends, a directory) or is over the size bound is refused with one line and exit 125,
// wherever it is named: -p, extends, profile check and show. Before the bound, /dev/zero grew
// jail by gigabytes. A pipe (`-p <(generate)`) is read, up to the bound.
func TestProfileFilesStaySmall(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	testutil.WriteFile(t, big, "# "+strings.Repeat("x", 1<<20)+"\n")
	extends := filepath.Join(dir, "extends.toml")
	testutil.WriteFile(t, extends, "extends = [\"/dev/zero\"]\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "/dev/zero", "--", "true"}, "a character device, not a regular file"},
		{[]string{"profile", "check", "/dev/zero"}, "a character device, not a regular file"},
		{[]string{"profile", "show", "/dev/zero"}, "a character device, not a regular file"},
		{[]string{"-p", extends, "--", "true"}, "extends.toml:1: extends: profile /dev/zero: a character device"},
		{[]string{"-p", dir, "--", "true"}, "a directory, not a regular file"},
		{[]string{"-p", big, "--", "true"}, "too large for a profile"},
		{[]string{"-p", "/dev/stdin", "--", "true"}, "too large for a profile"}, // an endless pipe
	} {
		o := runOpts{dir: dir}
		if tc.args[1] == "/dev/stdin" {
			o.wrap = []string{"sh", "-c", `yes | "$0" "$@"`}
		}
		_, errOut, code := runJailWith(t, o, tc.args...)
		if code != exitFailure || !strings.HasPrefix(errOut, "jail: ") || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 125 and one line saying %q", tc.args, code, errOut, tc.want)
		}
	}
	out, errOut, code := runJailWith(t, runOpts{dir: dir, wrap: []string{"sh", "-c", `echo 'extends = ["agent"]' | "$0" "$@"`}},
		"-p", "/dev/stdin", "--", "echo", "read from a pipe")
	if code != 0 || out != "read from a pipe\n" {
		t.Errorf("a profile from a pipe: exit %d, %q %q", code, out, errOut)
	}
}

// A mistyped option is one line, naming the option as typed and the one it is close to, with the
// pointer to --help; never the whole usage.
func TestUnknownOptionIsOneLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		line string
		code int
	}{
		{[]string{"--allow-hots", "x", "--", "true"}, "jail: unknown option --allow-hots (did you mean --allow-host?); see jail --help", exitFailure},
		{[]string{"--verbos", "true"}, "jail: unknown option --verbos (did you mean --verbose?); see jail --help", exitFailure},
		{[]string{"-x", "true"}, "jail: unknown option -x; see jail --help", exitFailure},
		{[]string{"--timeout"}, "jail: option --timeout needs a value; see jail --help", exitFailure},
		{[]string{"seccomp", "export", "--profle", "agent"}, "jail: seccomp export: unknown option --profle (did you mean --profile?); see jail --help", exitFailure},
		{[]string{"doctor", "--jsn"}, "jail: doctor: unknown option --jsn (did you mean --json?); see jail --help", exitFailure},
		// A harness reads 2 from a hook as "block the call".
		{[]string{"hook", "claude-code", "--profil", "agent"}, "jail: hook: unknown option --profil (did you mean --profile?); see jail --help", exitHookUsage},
	} {
		out, errOut, code := runJail(t, tc.args...)
		if code != tc.code || errOut != tc.line+"\n" || out != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out, errOut, tc.code, tc.line)
		}
	}
}

// `jail profile check` shows every mistake of a file in one run, a jail: line each with its line
// and key, and exits 125; a good file beside it still checks ok.
func TestProfileCheckReportsEveryError(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	testutil.WriteFile(t, bad, "[filesystem]\nreed = [\"/etc\"]\nread = [\"/no/such/jail/path\"]\n[process]\nhostname = 5\n[network]\nmode = \"internet\"\n")
	good := filepath.Join(dir, "good.toml")
	testutil.WriteFile(t, good, "extends = [\"agent\"]\n")
	out, errOut, code := runJailIn(t, dir, "", "profile", "check", bad, good)
	want := []string{
		bad + ":2: filesystem.reed: unknown key",
		bad + ":3: filesystem.read: missing required path /no/such/jail/path",
		bad + ":5: process.hostname: wrong type: want a string",
		bad + ":7: network.mode: \"internet\" is not valid",
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if code != exitFailure || len(lines) != len(want) || out != good+": ok\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant 125, %q ok, and %d lines", code, out, errOut, good, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], "jail: "+w) {
			t.Errorf("line %d: %q, want it to start %q", i+1, lines[i], "jail: "+w)
		}
	}
}
