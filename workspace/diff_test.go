package workspace

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// both writes a file into the upper layer and into want, the tree the change set should make.
func (s *testSet) both(want, rel, content string, mode os.FileMode) {
	s.write(s.upper(), rel, content, mode)
	s.write(want, rel, content, mode)
}

// gitScenario is a change set whose every change git's format holds: edits (with and without a
// final newline, in a name with a space), a created file with a quote in its name, deletions
// and an exact rename through opaque directories, a mode change, a symlink. It returns the tree
// the change set should make.
func gitScenario(t *testing.T) (*testSet, string) {
	s := newTestSet(t)
	tree := s.tree
	s.write(tree, "a.txt", "hello\n", 0o644)
	s.write(tree, "b.txt", strings.Repeat("line\n", 20)+"last\n", 0o644)
	s.write(tree, "keep.txt", "same\n", 0o644)
	s.write(tree, "with space.txt", "x", 0o644)
	s.write(tree, "script.sh", "#!/bin/sh\necho hi\n", 0o644)
	s.write(tree, "old/a", "a\n", 0o644)
	s.write(tree, "old/b", "b\n", 0o644)
	s.write(tree, "r/src.txt", "moved content\n", 0o644)
	s.start()
	want := t.TempDir()
	copyTree(t, tree, want)

	s.both(want, "a.txt", "hello\nworld\n", 0o644)
	s.both(want, "b.txt", "first\n"+strings.Repeat("line\n", 20)+"last\nmore\n", 0o644)
	s.both(want, "with space.txt", "y", 0o644)
	s.both(want, `quote"d.txt`, "q\n", 0o644)
	s.both(want, "script.sh", "#!/bin/sh\necho hi\n", 0o755)
	s.opaque("old")
	os.RemoveAll(filepath.Join(want, "old"))
	s.both(want, "old/new.txt", "new\n", 0o644)
	s.opaque("r")
	os.RemoveAll(filepath.Join(want, "r"))
	s.both(want, "r/dst.txt", "moved content\n", 0o644)
	s.symlink(s.upper(), "link", "a.txt")
	s.symlink(want, "link", "a.txt")
	return s, want
}

func TestChanges(t *testing.T) {
	s, _ := gitScenario(t)
	want := strings.Join([]string{
		"M  a.txt", "M  b.txt", "A  link", "D  old/a", "D  old/b", "A  old/new.txt",
		`A  "quote\"d.txt"`, "R  r/src.txt -> r/dst.txt", "M  script.sh", "M  with space.txt",
	}, "\n")
	if got := s.status(); got != want {
		t.Errorf("changes:\n%s\nwant:\n%s", got, want)
	}
}

// TestDiffGitApplies: git apply reads jail's diff and makes the same tree the change set
// describes; git apply --stat counts it.
func TestDiffGitApplies(t *testing.T) {
	s, want := gitScenario(t)
	var patch bytes.Buffer
	if err := Diff(&patch, s.changes()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyTree(t, s.tree, dir)
	cmd := exec.Command("git", "apply", "--verbose", "-")
	cmd.Dir, cmd.Stdin = dir, bytes.NewReader(patch.Bytes())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\npatch:\n%s", err, out, patch.String())
	}
	if got, wantList := listing(t, dir), listing(t, want); got != wantList {
		t.Errorf("git apply made:\n%s\nwant:\n%s\npatch:\n%s", got, wantList, patch.String())
	}
	stat := exec.Command("git", "apply", "--stat", "-")
	stat.Dir, stat.Stdin = t.TempDir(), bytes.NewReader(patch.Bytes()) // outside any repository: in one, git apply sees only the paths beneath its directory
	out, err := stat.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "10 files changed") {
		t.Errorf("git apply --stat: %v\n%s", err, out)
	}
}

// TestDiffSaysWhatGitCannot: modes other than 644 and 755, new directories and special bits are
// named on the notes before the patch; binary files as git does.
func TestDiffSaysWhatGitCannot(t *testing.T) {
	s := newTestSet(t)
	s.write(s.tree, "secret", "s", 0o644)
	s.start()
	s.write(s.upper(), "secret", "s", 0o600)
	s.write(s.upper(), "blob.bin", "a\x00b", 0o644)
	if err := os.Mkdir(filepath.Join(s.upper(), "empty"), 0o750); err != nil {
		t.Fatal(err)
	}
	var patch bytes.Buffer
	if err := Diff(&patch, s.changes()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# mode of secret: 0644 -> 0600\n",
		"# new directory empty/ (mode 0750)\n",
		"Binary files /dev/null and b/blob.bin differ\n",
	} {
		if !strings.Contains(patch.String(), want) {
			t.Errorf("diff lacks %q:\n%s", want, patch.String())
		}
	}
	if strings.Contains(patch.String(), "diff --git a/secret") {
		t.Errorf("a patch for a mode git cannot hold:\n%s", patch.String())
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"plain/name.go": "plain/name.go",
		`a"b`:           `"a\"b"`,
		"tab\there":     `"tab\there"`,
		"é":             `"\303\251"`,
		`back\slash`:    `"back\\slash"`,
	} {
		if got := quote(in); got != want {
			t.Errorf("quote(%q) = %s, want %s", in, got, want)
		}
	}
}
