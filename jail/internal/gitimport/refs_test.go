package gitimport

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

const (
	a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	b = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// TestChangedRefs: loose refs and packed-refs of the upper layer that differ from the lower
// one's come out, and a detached HEAD; unchanged and symbolic ones, files that are no ref (a
// symlink, a lock, a bad name) do not.
func TestChangedRefs(t *testing.T) {
	upper, common := t.TempDir(), t.TempDir()
	testutil.WriteFile(t, common+"/refs/heads/same", a+"\n")
	testutil.WriteFile(t, common+"/packed-refs", "# pack-refs with: peeled\n"+a+" refs/tags/v1\n"+a+" refs/heads/packed\n")
	testutil.WriteFile(t, common+"/HEAD", "ref: refs/heads/main\n")
	testutil.WriteFile(t, upper+"/refs/heads/same", a+"\n")
	testutil.WriteFile(t, upper+"/refs/heads/new", b+"\n")
	testutil.WriteFile(t, upper+"/refs/heads/moved.lock", b+"\n")
	testutil.WriteFile(t, upper+"/refs/heads/..evil", b+"\n")
	testutil.WriteFile(t, upper+"/refs/heads/sym", "ref: refs/heads/new\n")
	testutil.WriteFile(t, upper+"/packed-refs", a+" refs/tags/v1\n"+b+" refs/heads/packed\n^"+a+"\n")
	testutil.WriteFile(t, upper+"/HEAD", b+"\n")
	if err := os.Symlink("/etc/passwd", upper+"/refs/heads/link"); err != nil {
		t.Fatal(err)
	}
	changed, refused := changedRefs(upper, common, ".")
	var names []string
	for _, r := range changed {
		names = append(names, r.name+"="+r.oid[:1])
	}
	slices.Sort(names)
	if want := []string{"HEAD=b", "refs/heads/new=b", "refs/heads/packed=b"}; !slices.Equal(names, want) {
		t.Errorf("changed %q, want %q", names, want)
	}
	slices.Sort(refused)
	if want := []string{"refs/heads/..evil", "refs/heads/moved.lock"}; !slices.Equal(refused, want) {
		t.Errorf("refused %q, want %q", refused, want)
	}
}

func TestValidRefName(t *testing.T) {
	for name, want := range map[string]bool{
		"refs/heads/main": true, "refs/tags/v1.2": true, "refs/stash": true, "refs/heads/feat/x-y_z": true,
		"refs/heads/.hidden": false, "refs/heads/a..b": false, "refs/heads/x.lock": false, "HEAD": false,
		"refs/heads/a b": false, "refs/heads/\x1b[2J": false, "refs//x": false, "refs/heads/x.": false,
	} {
		if got := validRefName(name); got != want {
			t.Errorf("validRefName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestQuarantineTakesOnlyObjects: loose objects and packs move; alternates, commit-graph and
// symlinks stay.
func TestQuarantineTakesOnlyObjects(t *testing.T) {
	upper, dir := t.TempDir(), t.TempDir()
	testutil.WriteFile(t, upper+"/objects/ab/"+a[2:], "x")
	testutil.WriteFile(t, upper+"/objects/pack/pack-"+a+".pack", "p")
	testutil.WriteFile(t, upper+"/objects/pack/pack-"+a+".idx", "i")
	testutil.WriteFile(t, upper+"/objects/info/alternates", "/home\n")
	testutil.WriteFile(t, upper+"/objects/info/commit-graph", "g")
	if err := os.Symlink("/etc/passwd", upper+"/objects/ab/"+b[2:]); err != nil {
		t.Fatal(err)
	}
	if err := quarantine(upper, dir); err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			got = append(got, rel)
		}
		return nil
	})
	slices.Sort(got)
	want := []string{"ab/" + a[2:], "pack/pack-" + a + ".idx", "pack/pack-" + a + ".pack"}
	if !slices.Equal(got, want) {
		t.Errorf("quarantined %q, want %q", got, want)
	}
}
