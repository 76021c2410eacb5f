package audit

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBaselineRoundTrip: what the host encodes for jail's waiter decodes to the same baseline.
func TestBaselineRoundTrip(t *testing.T) {
	b := Begin([]string{"/g"}, "/home/u", "/home/u/.config")
	b.Sentinels = []Sentinel{
		{Path: "/g", Ino: 7, Ctime: stamp{11, 12}, Dir: true, Names: "a b\x00.git\x00"},
		{Path: "/g/a b", Ino: 8, Ctime: stamp{13, 14}},
	}
	b.Partial = true
	b.places = []place{{top: "/", gitDir: "/.git"}}
	got, err := Decode(b.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Start != b.Start || !slices.Equal(got.Grants, b.Grants) || got.Home != b.Home || got.Config != b.Config || !got.Partial ||
		len(got.Sentinels) != 2 || got.Sentinels[0].Names != b.Sentinels[0].Names ||
		got.Sentinels[0].Ino != 7 || got.Sentinels[1].Ctime != (stamp{13, 14}) || got.Sentinels[1].Dir ||
		!slices.Equal(got.places, b.places) {
		t.Errorf("decoded %+v\nwant %+v", got, b)
	}
}

// TestWhatTheWalkSawIsNotTheRuns: what was there when the walk ran does not count as written,
// however recently it was made; what is made after does, and what git shows is not listed.
func TestWhatTheWalkSawIsNotTheRuns(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "just-made"), nil, 0o644); err != nil { // the harness's script
		t.Fatal(err)
	}
	b := Begin([]string{dir}, t.TempDir(), t.TempDir())
	b.Walk()
	if b.Changed() {
		t.Fatal("what was there at the walk counts as the run's change")
	}
	if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !b.Changed() {
		t.Fatal("a file made after the walk is not seen")
	}
	fs := b.Findings()
	if len(fs) != 1 || fs[0].Path != filepath.Join(dir, "new") {
		t.Errorf("findings %+v, want only %s", fs, filepath.Join(dir, "new"))
	}
}

// TestARepositoryAboveDoesNotHideWrites: outside any repository everything the run writes is
// listed, though a .git appear above the grant or in it: an empty one (another run's placeholder,
// there while it runs) is no repository for git, and one made after the walk (the run's own
// `git init`) is not where the walk saw the grant. The build before listed nothing in any of them.
func TestARepositoryAboveDoesNotHideWrites(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after string // a .git made before the walk, after it (relative to the grant's parent)
		repository    bool   // a git directory, not an empty one
	}{
		{"an empty .git above, there all along", ".git", "", false},
		{"an empty .git above, made since", "", ".git", false},
		{"a repository above, made since", "", ".git", true},
		{"a repository in the grant, made since", "", "grant/.git", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			grant := filepath.Join(parent, "grant")
			dotGit := func(rel string) { // an empty directory, or a git directory: a HEAD and objects
				if rel == "" {
					return
				}
				dir := filepath.Join(parent, rel)
				err := os.Mkdir(dir, 0o755)
				if err == nil && c.repository {
					if err = os.Mkdir(filepath.Join(dir, "objects"), 0o755); err == nil {
						err = os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
					}
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Mkdir(grant, 0o755); err != nil {
				t.Fatal(err)
			}
			dotGit(c.before)
			b := Begin([]string{grant}, t.TempDir(), t.TempDir())
			b.Walk()
			dotGit(c.after)
			if err := os.WriteFile(filepath.Join(grant, "a.txt"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			fs := b.Findings()
			i := slices.IndexFunc(fs, func(f Finding) bool { return f.Path == filepath.Join(grant, "a.txt") })
			if i < 0 || fs[i].NotShownByGit != noRepository {
				t.Errorf("findings %+v: a.txt is not listed as outside any git repository", fs)
			}
		})
	}
}

// TestOwnOutputIsLeftOutAfterTheWalk: a file this process writes to (jail's standard output
// redirected into a grant) is a sentinel of the walk, which runs before they are noted, and is left
// out once they are: writing to it is no change, writing to another file of the grant still is.
func TestOwnOutputIsLeftOutAfterTheWalk(t *testing.T) {
	dir := t.TempDir() // outside any repository: every file is a sentinel
	out, err := os.OpenFile(filepath.Join(dir, "out.log"), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := os.WriteFile(filepath.Join(dir, "other.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b := Begin([]string{dir}, t.TempDir(), t.TempDir())
	b.Walk()
	sentinel := func(p string) bool {
		return slices.ContainsFunc(b.Sentinels, func(s Sentinel) bool { return s.Path == filepath.Join(dir, p) })
	}
	if !sentinel("out.log") || !sentinel("other.log") {
		t.Fatalf("sentinels %+v: want out.log and other.log", b.Sentinels)
	}
	b.LeaveOutStdio()
	if sentinel("out.log") || !sentinel("other.log") {
		t.Fatalf("sentinels %+v: want other.log alone", b.Sentinels)
	}
	if _, err := out.WriteString("jail: a line of jail's own\n"); err != nil {
		t.Fatal(err)
	}
	if b.Changed() {
		t.Error("a write to jail's own output counts as the run's")
	}
	if err := os.WriteFile(filepath.Join(dir, "other.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !b.Changed() {
		t.Error("a write to another file of the grant is not seen")
	}
}
