package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIDsAndNames(t *testing.T) {
	id := NewID()
	if !IsID(id) || IsID("jb_0123") || IsID("jb_0123456789AB") || IsID("xx_0123456789ab") {
		t.Errorf("IsID: %s is one; the others are not", id)
	}
	for _, ok := range []string{"a", "proj-1", "A.b_c", strings.Repeat("x", 63)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-a", ".a", "a/b", "a b", "jb_0123456789ab", "jb_x", strings.Repeat("x", 64), "é"} {
		if CheckName(bad) == nil {
			t.Errorf("CheckName(%q) passed", bad)
		}
	}
}

// TestOpenRefusesOthersDirectories: a runtime directory that is a symlink, or open to others,
// is refused (another user could have made it, in /tmp, to watch or swap what jail puts there).
func TestOpenRefusesOthersDirectories(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o700)
	for name, setup := range map[string]func(string) error{
		"symlink":   func(p string) error { return os.Symlink(real, p) },
		"file":      func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"open mode": func(p string) error { return os.Mkdir(p, 0o755) },
	} {
		dir := filepath.Join(base, strings.ReplaceAll(name, " ", "-"))
		if err := setup(dir); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o755) // a mode umask may have cut
		t.Setenv("JAIL_RUNTIME_DIR", dir)
		if _, err := Open(); err == nil {
			t.Errorf("%s: Open accepted it", name)
		}
	}
	t.Setenv("JAIL_RUNTIME_DIR", filepath.Join(base, "new"))
	r, err := Open()
	if fi, serr := os.Stat(string(r)); err != nil || serr != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("a new runtime directory: %v, %v", err, serr)
	}
}
