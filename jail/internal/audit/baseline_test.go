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
		{Path: "/g", Ino: 7, Ctime: stamp{11, 12}, Dir: true, Names: []string{"a b", ".git"}},
		{Path: "/g/a b", Ino: 8, Ctime: stamp{13, 14}},
	}
	b.Partial = true
	got, err := Decode(b.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if got.Start != b.Start || !slices.Equal(got.Grants, b.Grants) || got.Home != b.Home || got.Config != b.Config || !got.Partial ||
		len(got.Sentinels) != 2 || !slices.Equal(got.Sentinels[0].Names, b.Sentinels[0].Names) ||
		got.Sentinels[0].Ino != 7 || got.Sentinels[1].Ctime != (stamp{13, 14}) || got.Sentinels[1].Dir {
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
