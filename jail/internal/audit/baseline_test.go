package audit

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBaselineRoundTrip: what the host encodes for jail's waiter decodes to the same baseline,
// touched directories (which count only past their ctime) included.
func TestBaselineRoundTrip(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	b := Begin([]string{dir}, []string{sub}, "/home/u", "/home/u/.config")
	b.Sentinels = []string{dir, sub, filepath.Join(sub, "x")}
	b.Partial = true
	got, err := Decode(b.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Start != b.Start || !slices.Equal(got.Grants, b.Grants) || got.Home != b.Home || got.Config != b.Config ||
		!got.Partial || got.Touched[sub] != b.Touched[sub] || len(got.Sentinels) != 3 {
		t.Errorf("decoded %+v\nwant %+v", got, b)
	}
}

// TestTouchedDirectoryCountsOnlyPastTheHost: the directory the host made placeholders in does
// not count as written at once; a file the run makes there does.
func TestTouchedDirectoryCountsOnlyPastTheHost(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".vscode"), 0o755); err != nil { // the host's placeholder
		t.Fatal(err)
	}
	b := Begin([]string{dir}, []string{dir, filepath.Join(dir, ".vscode")}, t.TempDir(), t.TempDir())
	b.Walk()
	if b.Changed() {
		t.Fatal("the host's own placeholder counts as the run's change")
	}
	if err := os.WriteFile(filepath.Join(dir, "new"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !b.Changed() {
		t.Error("a file made after the start is not seen")
	}
}
