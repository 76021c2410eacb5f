package placeholder

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/plan"
)

// setup gives the test a state directory of its own and a directory to protect paths in.
func setup(t *testing.T) (dir string) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func protect(dir, name string, isDir bool) plan.Mount {
	p := filepath.Join(dir, name)
	return plan.Mount{Kind: plan.MountProtect, Source: p, Target: p, IsDir: isDir, Create: true}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// stateEmpty says the state directory holds no record file.
func stateEmpty(t *testing.T) bool {
	entries, err := os.ReadDir(filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "jail"))
	return err == nil && len(entries) == 0
}

// TestReleaseRemovesOnlyWhatIsStillJails: at the end, a placeholder is removed only while it is
// the socket or empty directory jail made: not once the user replaced it with a file or a
// directory of their own, nor a pinned directory the sandbox wrote into.
func TestReleaseRemovesOnlyWhatIsStillJails(t *testing.T) {
	dir := setup(t)
	pin := filepath.Join(dir, ".d")
	mounts := []plan.Mount{protect(dir, ".a", true), protect(dir, ".b", false), protect(dir, ".c", true),
		{Kind: plan.MountBind, Source: pin, Target: pin, IsDir: true, Create: true}, protect(pin, "e", true),
		{Kind: plan.MountBind, Source: pin + "2", Target: pin + "2", IsDir: true, Create: true}, protect(pin+"2", "f", false)}
	held, err := Take(mounts)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if st, err := os.Lstat(m.Target); err != nil || (m.Kind == plan.MountBind) != st.IsDir() ||
			m.Kind == plan.MountProtect && st.Mode()&os.ModeSocket == 0 {
			t.Fatalf("%s: %v %v: want a socket, or a directory for a pinned one", m.Target, st, err)
		}
	}
	// The user's own .b (another inode) and .c (a directory); a file in the pinned .d2.
	for _, p := range []string{".b", ".c"} {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".b"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, ".c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pin+"2", "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	held.Release()
	for name, want := range map[string]bool{".a": false, ".b": true, ".c": true, ".d": false, ".d2/f": false, ".d2/keep": true} {
		if got := exists(filepath.Join(dir, name)); got != want {
			t.Errorf("%s exists: %v, want %v", name, got, want)
		}
	}
	if !stateEmpty(t) {
		t.Error("a record file was left in the state directory")
	}
}

// TestReleaseWaitsForTheLastHolder: of two holds on the same placeholders, the first released
// leaves them (the other's protections sit on them); the last removes them.
func TestReleaseWaitsForTheLastHolder(t *testing.T) {
	dir := setup(t)
	mounts := []plan.Mount{protect(dir, ".vscode", true), protect(dir, ".envrc", false)}
	first, err := Take(mounts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Take(mounts)
	if err != nil {
		t.Fatal(err)
	}
	first.Release()
	if !exists(filepath.Join(dir, ".vscode")) || !exists(filepath.Join(dir, ".envrc")) {
		t.Fatal("the first release removed placeholders the second hold relies on")
	}
	second.Release()
	if exists(filepath.Join(dir, ".vscode")) || exists(filepath.Join(dir, ".envrc")) || !stateEmpty(t) {
		t.Error("the last release left placeholders or their record")
	}
}

// TestKilledRunIsReclaimed: a run killed between announcing a placeholder and recording it as
// made left only the intent; the next run's release removes what that intent made, but not an
// entry born long before it (the user's).
func TestKilledRunIsReclaimed(t *testing.T) {
	dir := setup(t)
	users := filepath.Join(dir, ".idea")
	if err := os.Mkdir(users, 0o755); err != nil {
		t.Fatal(err)
	}
	killed, err := Take([]plan.Mount{protect(dir, ".keep", true)})
	if err != nil {
		t.Fatal(err)
	}
	// What a killed run leaves: intents, the first one's directory made.
	lock := killed.files[1]
	for _, r := range []spawn.PlaceholderRecord{
		{IntentNs: time.Now().UnixNano(), Dir: true, Name: ".vscode"},
		{IntentNs: time.Now().Add(time.Minute).UnixNano(), Dir: true, Name: ".idea"},
	} {
		if _, err := appendRecord(lock, r.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range killed.files { // killed: its descriptors close, nothing is released
		f.Close()
	}
	next, err := Take([]plan.Mount{protect(dir, ".envrc", false)})
	if err != nil {
		t.Fatal(err)
	}
	next.Release()
	for name, want := range map[string]bool{".vscode": false, ".keep": false, ".envrc": false, ".idea": true} {
		if got := exists(filepath.Join(dir, name)); got != want {
			t.Errorf("%s exists: %v, want %v", name, got, want)
		}
	}
}

// TestStateDirectoryMustBePrivate: a state directory another user could enter is refused.
func TestStateDirectoryMustBePrivate(t *testing.T) {
	dir := setup(t)
	state := filepath.Join(os.Getenv("XDG_RUNTIME_DIR"), "jail")
	if err := os.Mkdir(state, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(state, 0o777)
	if _, err := Take([]plan.Mount{protect(dir, ".envrc", false)}); err == nil {
		t.Error("a world-writable state directory was used")
	}
}
