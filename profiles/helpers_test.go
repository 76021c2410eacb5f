package profiles

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/plan"
)

// testHost is a host whose home and working directory are fresh temporary directories.
func testHost(t *testing.T) Host {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	return Host{
		Home: home, Cwd: cwd,
		Environ: []string{"HOME=" + home, "PATH=/usr/bin:/bin", "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")},
		UID:     os.Getuid(), GID: os.Getgid(),
	}
}

// parse parses a profile from text, failing the test on error.
func parse(t *testing.T, text string) *Profile {
	t.Helper()
	p, err := Parse("test.toml", []byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// resolve parses and resolves a profile from text.
func resolve(t *testing.T, host Host, text string) (*plan.Spec, error) {
	t.Helper()
	return Resolve(parse(t, text), host, []string{"true"})
}

// mustResolve is resolve that fails the test on error.
func mustResolve(t *testing.T, host Host, text string) *plan.Spec {
	t.Helper()
	spec, err := resolve(t, host, text)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return spec
}

// mkdir creates a directory and its parents.
func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// symlink creates link pointing to target.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// wantError checks that err is an *Error at file (base name), line and key, mentioning msg.
func wantError(t *testing.T, err error, file string, line int, key, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *profiles.Error", err, err)
	}
	if filepath.Base(e.File) != file || e.Line != line || e.Key != key || !strings.Contains(e.Error(), msg) {
		t.Errorf("error %q: got file %q line %d key %q, want %s:%d key %q mentioning %q",
			e.Error(), e.File, e.Line, e.Key, file, line, key, msg)
	}
}

// gitInit runs the host's git to make dir a repository, then the further commands given.
func gitInit(t testing.TB, dir string, more ...[]string) {
	t.Helper()
	gitInitWith(t, dir, []string{"init", "-q"}, more...)
}

// gitInitWith is gitInit with its own init command.
func gitInitWith(t testing.TB, dir string, init []string, more ...[]string) {
	t.Helper()
	for _, args := range append([][]string{init}, more...) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q in %s: %v: %s", args, dir, err, out)
		}
	}
}

// find returns the mounts with the given target.
func find(spec *plan.Spec, target string) []plan.Mount {
	var out []plan.Mount
	for _, m := range spec.Mounts {
		if m.Target == target {
			out = append(out, m)
		}
	}
	return out
}
