package workspace

import (
	"bytes"
	"compress/zlib"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitIn runs git in dir and returns its output, failing the test on an error.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// committedInside makes a repository in the tree, then commits on a copy of it (what the
// sandbox does in the overlay) after prepare, and copies what that commit added to the git
// directory into the upper layer, as overlayfs would hold it. It returns the new commit.
func committedInside(t *testing.T, s *testSet, prepare func(copy string)) string {
	t.Helper()
	gitIn(t, s.tree, "init", "-q")
	s.write(s.tree, "a", "a\n", 0o644)
	gitIn(t, s.tree, "add", "a")
	gitIn(t, s.tree, "commit", "-q", "-m", "base")
	s.start()
	inside := t.TempDir()
	copyTree(t, s.tree, inside)
	s.write(inside, "a", "a\nb\n", 0o644)
	s.write(s.upper(), "a", "a\nb\n", 0o644)
	gitIn(t, inside, "commit", "-q", "-am", "inside")
	if prepare != nil {
		prepare(inside)
	}
	err := filepath.Walk(filepath.Join(inside, ".git"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(inside, p)
		if old, err := os.ReadFile(filepath.Join(s.tree, rel)); err == nil {
			if now, _ := os.ReadFile(p); bytes.Equal(old, now) {
				return nil
			}
		}
		data, err := os.ReadFile(p)
		if err == nil {
			s.write(s.upper(), rel, string(data), info.Mode().Perm())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return gitIn(t, inside, "rev-parse", "HEAD")
}

// TestImportCommits: a commit made inside arrives as refs/jail/ID/heads/BRANCH, whole (git fsck
// finds nothing wrong), and the branch itself does not move.
func TestImportCommits(t *testing.T) {
	s := newTestSet(t)
	commit := committedInside(t, s, nil)
	branch := gitIn(t, s.tree, "symbolic-ref", "--short", "HEAD")
	before := gitIn(t, s.tree, "rev-parse", "HEAD")
	res := s.apply(ApplyOptions{})
	want := "refs/jail/0123abcd/heads/" + branch
	if len(res.Imported) != 1 || res.Imported[0] != (Ref{Name: want, Target: commit}) {
		t.Fatalf("imported %v, not imported %v; want %s -> %s", res.Imported, res.NotImported, want, commit)
	}
	if got := gitIn(t, s.tree, "rev-parse", want); got != commit {
		t.Errorf("%s = %s, want %s", want, got, commit)
	}
	gitIn(t, s.tree, "fsck", "--strict", "--no-dangling")
	if got := gitIn(t, s.tree, "rev-parse", "HEAD"); got != before {
		t.Errorf("HEAD moved: %s, was %s", got, before)
	}
	if !res.Removed {
		t.Error("the change set, all applied and imported, was kept")
	}
}

// TestImportRefusesBadObjects: an object that does not hash to its name, and one in a pack the
// sandbox made, stop the ref's import (named, with why); the change set keeps it.
func TestImportRefusesBadObjects(t *testing.T) {
	for name, tc := range map[string]struct {
		prepare func(t *testing.T, inside string)
		want    string
	}{
		"forged object": {func(t *testing.T, inside string) {
			tree := gitIn(t, inside, "rev-parse", "HEAD^{tree}")
			p := filepath.Join(inside, ".git", "objects", tree[:2], tree[2:])
			var buf bytes.Buffer
			zw := zlib.NewWriter(&buf)
			zw.Write([]byte("tree 0\x00"))
			zw.Close()
			os.Chmod(p, 0o644)
			if err := os.WriteFile(p, buf.Bytes(), 0o444); err != nil {
				t.Fatal(err)
			}
		}, "hashes to"},
		"packed inside": {func(t *testing.T, inside string) {
			gitIn(t, inside, "gc", "-q")
		}, "a pack made inside is not read"},
	} {
		t.Run(name, func(t *testing.T) {
			s := newTestSet(t)
			committedInside(t, s, func(inside string) { tc.prepare(t, inside) })
			res := s.apply(ApplyOptions{})
			if len(res.Imported) != 0 || len(res.NotImported) != 1 || !strings.Contains(res.NotImported[0], tc.want) {
				t.Fatalf("imported %v, not imported %v, refused %v; want it refused: %s", res.Imported, res.NotImported, res.Refused, tc.want)
			}
			if out := gitIn(t, s.tree, "for-each-ref", "refs/jail"); out != "" {
				t.Errorf("a ref was written: %s", out)
			}
			if res.Removed {
				t.Error("the change set was removed with commits left in it")
			}
		})
	}
}

func TestValidRefName(t *testing.T) {
	for name, want := range map[string]bool{
		"refs/jail/x/heads/main": true, "refs/jail/x/heads/a..b": false, "refs/jail/x/heads/.hidden": false,
		"refs/jail/x/heads/a.lock": false, "refs/jail/x/heads/a b": false, "refs/jail/x/heads/a~1": false,
	} {
		if got := validRefName(name); got != want {
			t.Errorf("validRefName(%q) = %v, want %v", name, got, want)
		}
	}
}
