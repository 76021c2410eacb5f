package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/workspace/workspacetest"
)

// testSet is a change set built by hand: a tree, and an upper layer written as overlayfs would
// (files whole, opaque directories marked with user.overlay.opaque). Whiteouts need CAP_MKNOD,
// so these tests delete through opaque directories; cmd/jail's tests delete through real ones.
type testSet struct {
	t    *testing.T
	cs   *ChangeSet
	tree string
}

// newTestSet makes an empty tree and change set, with the run started now.
func newTestSet(t *testing.T) *testSet {
	t.Helper()
	tree, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := Store{Dir: t.TempDir()}
	cs := &ChangeSet{ID: "0123abcd", Dir: filepath.Join(store.Dir, "0123abcd")}
	upper, work := Layout(cs.Dir)
	for _, d := range []string{upper, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cs.Manifest = Manifest{ID: cs.ID, Tree: tree, Started: time.Now()}
	if err := cs.writeManifest(); err != nil {
		t.Fatal(err)
	}
	return &testSet{t: t, cs: cs, tree: tree}
}

// start marks the run's start: tree files changed after it conflict.
func (s *testSet) start() {
	s.t.Helper()
	time.Sleep(20 * time.Millisecond) // past the coarse clock's tick, so that the tree's files are older
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &now); err != nil {
		s.t.Fatal(err)
	}
	s.cs.Manifest.Since = now.Nano()
	if err := s.cs.writeManifest(); err != nil {
		s.t.Fatal(err)
	}
}

// write creates root/rel with content and mode (and its parents).
func (s *testSet) write(root, rel, content string, mode os.FileMode) {
	s.t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		s.t.Fatal(err)
	}
}

func (s *testSet) upper() string { return s.cs.Upper() }

// symlink creates root/rel pointing to target.
func (s *testSet) symlink(root, rel, target string) {
	s.t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		s.t.Fatal(err)
	}
}

// opaque makes the upper layer's directory rel replace the tree's.
func (s *testSet) opaque(rel string) {
	s.t.Helper()
	p := filepath.Join(s.upper(), rel)
	if err := os.MkdirAll(p, 0o755); err != nil {
		s.t.Fatal(err)
	}
	if err := unix.Setxattr(p, "user.overlay.opaque", []byte("y"), 0); err != nil {
		s.t.Fatalf("mark %s opaque: %v", p, err)
	}
}

// changes reads the change set.
func (s *testSet) changes() []Change {
	s.t.Helper()
	changes, err := s.cs.Changes()
	if err != nil {
		s.t.Fatal(err)
	}
	return changes
}

// status is the change set's changes as StatusLine lines.
func (s *testSet) status() string {
	s.t.Helper()
	var lines []string
	for _, c := range s.changes() {
		lines = append(lines, StatusLine(c))
	}
	return strings.Join(lines, "\n")
}

// listing is the state of the tree at root (workspacetest.State): equal listings, equal trees.
func listing(t *testing.T, root string) string {
	t.Helper()
	s, err := workspacetest.State(root)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// copyTree copies src to dst with cp -a.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v: %s", src, dst, err, out)
	}
}
