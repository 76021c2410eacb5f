package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// apply applies s's change set with opt, failing the test on an error.
func (s *testSet) apply(opt ApplyOptions) *Applied {
	s.t.Helper()
	res, err := s.cs.Apply(opt)
	if err != nil {
		s.t.Fatalf("apply: %v", err)
	}
	return res
}

// TestApplyMakesTheTree: apply writes what the change set describes, modes the git format
// cannot hold included, and removes a one-shot change set it has emptied.
func TestApplyMakesTheTree(t *testing.T) {
	s, want := gitScenario(t)
	s.both(want, "private", "p", 0o600)
	s.both(want, "ro/inside", "i", 0o644)
	for _, root := range []string{s.upper(), want} {
		if err := os.Chmod(filepath.Join(root, "ro"), 0o555); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { // for TempDir's cleanup, as an ordinary user
		for _, root := range []string{s.upper(), want, s.tree} {
			os.Chmod(filepath.Join(root, "ro"), 0o755)
		}
	})
	res := s.apply(ApplyOptions{})
	if len(res.Refused)+len(res.Conflicts) > 0 {
		t.Fatalf("refused %v, conflicts %v", res.Refused, res.Conflicts)
	}
	if got, wantList := listing(t, s.tree), listing(t, want); got != wantList {
		t.Errorf("apply made:\n%s\nwant:\n%s", got, wantList)
	}
	if !res.Removed {
		t.Error("the emptied change set was kept")
	}
	if _, err := os.Stat(s.cs.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the change set's directory is still there: %v", err)
	}
}

// TestApplyStopsOnConflicts: a file the user changed in the tree after the run started is a
// conflict; nothing is written until it is taken (--overwrite) or left out (paths).
func TestApplyStopsOnConflicts(t *testing.T) {
	s := newTestSet(t)
	s.write(s.tree, "mine.txt", "base\n", 0o644)
	s.write(s.tree, "other.txt", "base\n", 0o644)
	s.start()
	s.write(s.upper(), "mine.txt", "theirs from the sandbox\n", 0o644)
	s.write(s.upper(), "other.txt", "sandbox\n", 0o644)
	s.write(s.tree, "mine.txt", "the user's edit\n", 0o644) // after the start

	res := s.apply(ApplyOptions{})
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "mine.txt" || len(res.Written) != 0 {
		t.Fatalf("conflicts %v, written %v; want mine.txt in conflict and nothing written", res.Conflicts, res.Written)
	}
	if got := readFileT(t, s.tree, "other.txt"); got != "base\n" {
		t.Errorf("other.txt was written while a conflict stood: %q", got)
	}
	res = s.apply(ApplyOptions{Paths: []string{"other.txt"}})
	if len(res.Written) != 1 || readFileT(t, s.tree, "other.txt") != "sandbox\n" || readFileT(t, s.tree, "mine.txt") != "the user's edit\n" {
		t.Fatalf("apply other.txt: %+v; tree other %q mine %q", res, readFileT(t, s.tree, "other.txt"), readFileT(t, s.tree, "mine.txt"))
	}
	// What apply wrote is the base from now on: no conflict for other.txt after a second
	// edit in the change set, though the tree's file is newer than the run's start.
	s.write(s.upper(), "other.txt", "sandbox, again\n", 0o644)
	res = s.apply(ApplyOptions{Paths: []string{"other.txt"}})
	if len(res.Conflicts) != 0 || readFileT(t, s.tree, "other.txt") != "sandbox, again\n" {
		t.Fatalf("second apply of other.txt: %+v", res)
	}
	res = s.apply(ApplyOptions{Overwrite: true})
	if len(res.Written) != 1 || readFileT(t, s.tree, "mine.txt") != "theirs from the sandbox\n" {
		t.Fatalf("apply --overwrite: %+v", res)
	}
}

// TestApplyConflictOnDeletion: a file the sandbox deletes, edited by the user since, conflicts.
func TestApplyConflictOnDeletion(t *testing.T) {
	s := newTestSet(t)
	s.write(s.tree, "d/edited", "base\n", 0o644)
	s.start()
	s.opaque("d")
	s.write(s.tree, "d/edited", "the user's edit\n", 0o644)
	res := s.apply(ApplyOptions{})
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "d/edited" {
		t.Fatalf("conflicts %v, want d/edited", res.Conflicts)
	}
}

// TestApplyRefuses: each class of change is refused, naming its path and flag, and nothing is
// written; the flag takes it.
func TestApplyRefuses(t *testing.T) {
	type tc struct {
		name  string
		make  func(s *testSet)
		path  string
		class Class
	}
	cases := []tc{
		{"a hook", func(s *testSet) { s.write(s.upper(), ".git/hooks/post-checkout", "id\n", 0o755) }, ".git/hooks/post-checkout", ClassGit},
		{"git config", func(s *testSet) { s.write(s.upper(), ".git/config", "[core]\nfsmonitor = id\n", 0o644) }, ".git/config", ClassGit},
		{"commondir", func(s *testSet) { s.write(s.upper(), ".git/commondir", "../x\n", 0o644) }, ".git/commondir", ClassGit},
		{"the index", func(s *testSet) { s.write(s.upper(), ".git/index", "DIRC", 0o644) }, ".git/index", ClassGit},
		{"a .git in a subdirectory", func(s *testSet) { s.write(s.upper(), "sub/.git/config", "[core]\n", 0o644) }, "sub/.git/config", ClassGit},
		{"a .git file", func(s *testSet) { s.write(s.upper(), "lib/.git", "gitdir: /home\n", 0o644) }, "lib/.git", ClassGit},
		{"a repository under another name", func(s *testSet) {
			s.write(s.upper(), "x/HEAD", "ref: refs/heads/main\n", 0o644)
			s.write(s.upper(), "x/config", "[core]\nfsmonitor = id\n", 0o644)
			s.write(s.upper(), "x/objects/.keep", "", 0o644)
			s.write(s.upper(), "x/refs/.keep", "", 0o644)
		}, "x/config", ClassGit},
		{"a protected path", func(s *testSet) { s.write(s.upper(), "conf/secret.toml", "x", 0o644) }, "conf/secret.toml", ClassProtected},
		{".envrc", func(s *testSet) { s.write(s.upper(), ".envrc", "id\n", 0o644) }, ".envrc", ClassAutorun},
		{"~/.bashrc", func(s *testSet) { s.write(s.upper(), ".bashrc", "id\n", 0o644) }, ".bashrc", ClassAutorun},
		{".vscode", func(s *testSet) { s.write(s.upper(), ".vscode/tasks.json", "{}", 0o644) }, ".vscode/tasks.json", ClassAutorun},
		{"husky", func(s *testSet) { s.write(s.upper(), ".husky/pre-commit", "id\n", 0o755) }, ".husky/pre-commit", ClassAutorun},
		{"a .pth file", func(s *testSet) { s.write(s.upper(), ".venv/lib/python3/site-packages/x.pth", "import os\n", 0o644) }, ".venv/lib/python3/site-packages/x.pth", ClassAutorun},
		{"cargo config", func(s *testSet) { s.write(s.upper(), ".cargo/config.toml", "[build]\n", 0o644) }, ".cargo/config.toml", ClassAutorun},
		{"a link out", func(s *testSet) { s.symlink(s.upper(), "etc", "/etc/passwd") }, "etc", ClassLink},
		{"a link backing out", func(s *testSet) { s.symlink(s.upper(), "deep/up", "../../..") }, "deep/up", ClassLink},
		{"a setuid bit", func(s *testSet) { s.write(s.upper(), "suid", "x", 0o644|os.ModeSetuid) }, "suid", ClassSpecial},
		{"a fifo", func(s *testSet) {
			if err := unix.Mkfifo(filepath.Join(s.upper(), "fifo"), 0o644); err != nil {
				s.t.Fatal(err)
			}
		}, "fifo", ClassSpecial},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newTestSet(t)
			s.write(s.tree, ".git/HEAD", "ref: refs/heads/main\n", 0o644)
			s.write(s.tree, ".git/config", "[core]\n", 0o644)
			s.write(s.tree, ".git/objects/.keep", "", 0o644)
			s.write(s.tree, ".git/refs/heads/.keep", "", 0o644)
			s.cs.Manifest.Protected = []string{"conf"}
			s.start()
			c.make(s)
			s.write(s.upper(), "fine.txt", "fine\n", 0o644)
			before := listing(t, s.tree)
			res := s.apply(ApplyOptions{})
			if !slices.ContainsFunc(res.Refused, func(r Refusal) bool { return r.Path == c.path && r.Class == c.class }) {
				t.Fatalf("refused %v; want %s refused as %s", res.Refused, c.path, c.class.Flag())
			}
			for _, r := range res.Refused {
				if !strings.Contains(r.String(), r.Class.Flag()) || !strings.Contains(r.String(), quote(r.Path)) {
					t.Errorf("%q does not name the path and the flag", r)
				}
			}
			if after := listing(t, s.tree); after != before || len(res.Written) != 0 {
				t.Errorf("a refused change set wrote the tree:\n%s\nwas:\n%s", after, before)
			}
			var all Class
			for _, r := range res.Refused {
				all |= r.Class
			}
			res = s.apply(ApplyOptions{Allow: all})
			if len(res.Refused) != 0 || !slices.ContainsFunc(res.Written, func(ch Change) bool { return ch.Path == c.path }) {
				t.Errorf("with %v: refused %v, written %v", all, res.Refused, res.Written)
			}
		})
	}
}

// TestApplyThroughNoSymlink: a symlink in the tree where the change set has a directory is
// replaced, never followed: nothing is written where it points.
func TestApplyThroughNoSymlink(t *testing.T) {
	s := newTestSet(t)
	outside := t.TempDir()
	s.symlink(s.tree, "dir", outside)
	s.start()
	s.opaque("dir")
	s.write(s.upper(), "dir/file", "x", 0o644)
	s.apply(ApplyOptions{})
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("apply wrote through the tree's symlink: %v", ents)
	}
	if info, err := os.Lstat(filepath.Join(s.tree, "dir")); err != nil || !info.IsDir() {
		t.Fatalf("dir: %v, %v; want the change set's directory", info, err)
	}
}

// TestDamagedChangeSet: what jail does not write is reported, not guessed at, and nothing is
// lost: the tree and the change set stay as they are.
func TestDamagedChangeSet(t *testing.T) {
	for name, damage := range map[string]func(s *testSet){
		"redirect attribute": func(s *testSet) {
			s.write(s.upper(), "d/x", "x", 0o644)
			if err := unix.Setxattr(filepath.Join(s.upper(), "d"), "user.overlay.redirect", []byte("/etc"), 0); err != nil {
				s.t.Fatal(err)
			}
		},
		"manifest gone": func(s *testSet) { os.Remove(filepath.Join(s.cs.Dir, manifestName)) },
		"manifest for another tree": func(s *testSet) {
			os.WriteFile(filepath.Join(s.cs.Dir, manifestName), []byte(`{"id":"0123abcd","tree":"relative"}`), 0o600)
		},
		"upper layer a file": func(s *testSet) {
			os.RemoveAll(s.upper())
			os.WriteFile(s.upper(), nil, 0o644)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := newTestSet(t)
			s.write(s.tree, "a", "a", 0o644)
			s.start()
			s.write(s.upper(), "a", "changed", 0o644)
			damage(s)
			before := listing(t, s.tree)
			cs, err := Store{Dir: filepath.Dir(s.cs.Dir)}.Open(s.cs.ID)
			if err == nil {
				_, err = cs.Apply(ApplyOptions{})
			}
			var damaged *damagedError
			if !errors.As(err, &damaged) || !strings.Contains(err.Error(), "jail discard 0123abcd") {
				t.Fatalf("error %v; want the change set named damaged, with the way out", err)
			}
			if listing(t, s.tree) != before {
				t.Error("the tree changed")
			}
			if _, err := os.Lstat(s.cs.Dir); err != nil {
				t.Errorf("the change set is gone: %v", err)
			}
		})
	}
}

func readFileT(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil && !errors.Is(err, syscall.ENOENT) {
		t.Fatal(err)
	}
	return string(b)
}
