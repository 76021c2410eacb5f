package setup

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]os.FileMode{"run": 0o755, "data": 0o644} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	env := []string{"HOME=/h", "PATH=/nonexistent:" + dir}
	for _, tc := range []struct {
		name, want string
		err        error
	}{
		{"run", filepath.Join(dir, "run"), nil},
		{"data", filepath.Join(dir, "data"), nil}, // found but not executable: execve says EACCES
		{"sub", "", syscall.ENOENT},               // directories are skipped
		{"missing", "", syscall.ENOENT},
		{"./rel/x", "/work/rel/x", nil}, // a slash: taken as is, relative to the cwd
		{"/abs/x", "/abs/x", nil},
	} {
		got, err := LookPath(tc.name, "/work", env)
		if got != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("lookPath(%q) = %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
	if got, _ := LookPath("sh", "/", nil); got != "/usr/bin/sh" && got != "/bin/sh" && got != "/usr/local/bin/sh" {
		t.Errorf("lookPath without PATH = %q, want sh from the default path", got)
	}
}
