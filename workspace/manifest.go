package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Manifest is what jail records about a change set beside its layers.
type Manifest struct {
	ID string `json:"id"`
	// Tree is the real tree the overlay lay over: its lower layer, a physical host path. Apply
	// writes there.
	Tree    string   `json:"tree"`
	Command []string `json:"command,omitempty"`
	Profile string   `json:"profile,omitempty"`
	// Started is when the change set was made, before the sandbox started. Since is the
	// kernel's coarse wall clock then, in nanoseconds: a tree file whose ctime is not before
	// Since has changed since the run started (the kernel stamps ctime from that clock, or a
	// finer one, on every change; no process can set it back).
	Started time.Time `json:"started"`
	Since   int64     `json:"since_ns"`
	// Ended and Status are set when the run ends; a change set without them whose lock is free
	// belongs to a jail that was killed.
	Ended  *time.Time `json:"ended,omitempty"`
	Status *int       `json:"status,omitempty"`
	// Sandbox says the change set is a persistent sandbox's workspace (jail create): its ID is
	// the sandbox's, Name the sandbox's name when it has one. It lives as long as the sandbox,
	// every command of it writing here, and after it until applied or discarded.
	Sandbox bool   `json:"sandbox,omitempty"`
	Name    string `json:"name,omitempty"`
	// Protected are the paths (relative to Tree) the profile kept read-only inside the
	// workspace; apply refuses changes there.
	Protected []string `json:"protected,omitempty"`
	// Applied records, by path, what apply wrote into the tree (see state): the base of the
	// next three-way check there, in place of Since.
	Applied map[string]string `json:"applied,omitempty"`
}

// ChangeSet is one change set in a store.
type ChangeSet struct {
	ID       string
	Dir      string
	Manifest Manifest
	// Err says why the change set cannot be read (a damaged or foreign directory); only
	// List returns change sets with Err set.
	Err error
}

// Upper is the change set's upper layer.
func (cs *ChangeSet) Upper() string { return filepath.Join(cs.Dir, upperName) }

// damagedError is the error of a change set whose files do not fit what jail writes.
type damagedError struct {
	cs  *ChangeSet
	why string
}

// ErrDamaged is what a damaged change set's errors are (errors.Is).
var ErrDamaged = errors.New("damaged change set")

func (e *damagedError) Is(target error) bool { return target == ErrDamaged }

func (e *damagedError) Error() string {
	return fmt.Sprintf("change set %s is damaged: %s (jail discard %s removes it; %s holds it)", e.cs.ID, e.why, e.cs.ID, e.cs.Dir)
}

// damaged makes a damagedError.
func (cs *ChangeSet) damaged(format string, args ...any) error {
	return &damagedError{cs: cs, why: fmt.Sprintf(format, args...)}
}

// check reads the manifest and checks the layout: nothing is guessed from a directory that
// does not look as jail left it.
func (cs *ChangeSet) check() error {
	b, err := os.ReadFile(filepath.Join(cs.Dir, manifestName))
	if err != nil {
		return cs.damaged("read %s: %s", manifestName, errText(err))
	}
	if err := json.Unmarshal(b, &cs.Manifest); err != nil {
		return cs.damaged("%s: %s", manifestName, err)
	}
	m := &cs.Manifest
	switch {
	case m.ID != cs.ID:
		return cs.damaged("%s names change set %q", manifestName, m.ID)
	case !filepath.IsAbs(m.Tree) || filepath.Clean(m.Tree) != m.Tree:
		return cs.damaged("tree %q is not an absolute, clean path", m.Tree)
	}
	for _, p := range m.Protected {
		if !validRel(p) {
			return cs.damaged("protected path %q is not inside the tree", p)
		}
	}
	for p := range m.Applied {
		if !validRel(p) {
			return cs.damaged("applied path %q is not inside the tree", p)
		}
	}
	info, err := os.Lstat(cs.Upper())
	if err != nil {
		return cs.damaged("%s: %s", upperName, errText(err))
	}
	if !info.IsDir() {
		return cs.damaged("%s is not a directory", upperName)
	}
	return nil
}

// writeManifest replaces the manifest atomically.
func (cs *ChangeSet) writeManifest() error {
	b, err := json.MarshalIndent(&cs.Manifest, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(cs.Dir, manifestName+".new")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(cs.Dir, manifestName)); err != nil {
		return fmt.Errorf("write %s: %w", manifestName, err)
	}
	return nil
}

// errText is err without the path an *os.PathError repeats.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
