package jail

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/jail-sandbox/jail/jail/internal/audit"
)

// TestStowedBaselineListsTheSame: a host that stays keeps the walked baseline out of its heap
// (stow) and lists at the end what a baseline kept in memory lists: a file made in a grant
// outside any repository, and that the grant's directory changed.
func TestStowedBaselineListsTheSame(t *testing.T) {
	grant := t.TempDir()
	if err := os.MkdirAll(filepath.Join(grant, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	walked := func() *unseen {
		u := &unseen{b: audit.Begin([]string{grant}, home, filepath.Join(home, ".config"))}
		u.walk()
		return u
	}
	kept, stowed := walked(), walked()
	stowed.stow()
	if stowed.b != nil || stowed.stowed == nil {
		t.Fatalf("stow kept the baseline in memory (b %v, file %v)", stowed.b != nil, stowed.stowed)
	}
	if err := os.WriteFile(filepath.Join(grant, "sub", "planted"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var keptErr, stowedErr bytes.Buffer
	want, _ := kept.end(&keptErr)
	got, _ := stowed.end(&stowedErr)
	if len(want) == 0 || !slices.Equal(got, want) || keptErr.String() != stowedErr.String() {
		t.Errorf("stowed baseline listed %v, %q; kept in memory %v, %q", got, stowedErr.String(), want, keptErr.String())
	}
}
