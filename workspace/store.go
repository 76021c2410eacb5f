package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/random"
)

// The store holds one directory per change set, named by its ID:
//
//	$XDG_STATE_HOME/jail/changes/ID/     flock'ed by the jail whose sandbox writes it, for the run
//	    changeset.json   the manifest: tree, command, start, end, what apply wrote
//	    upper/           overlayfs's upper layer: the command's writes, whiteouts for deletions
//	    work/            overlayfs's work directory (empty between runs)
//	    apply.lock       a persistent sandbox's: flock'ed by apply (the keeper holds the directory's)
const (
	manifestName  = "changeset.json"
	applyLockName = "apply.lock" // a sandbox's appliers' lock (lockForApply)
	upperName     = "upper"
	workName      = "work"
)

// StoreDir is where change sets are kept: $XDG_STATE_HOME/jail/changes, by default
// ~/.local/state/jail/changes. A relative XDG_STATE_HOME is ignored, as the XDG base directory
// specification asks.
func StoreDir(home string, getenv func(string) string) string {
	state := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(state) {
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(filepath.Clean(state), "jail", "changes")
}

// UserStore is the store of the user running jail.
func UserStore() (Store, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Store{}, fmt.Errorf("home directory: %w", err)
	}
	return Store{Dir: StoreDir(home, os.Getenv)}, nil
}

// Layout is where a change set's overlay layers lie, beneath its directory in the store.
func Layout(dir string) (upper, work string) {
	return filepath.Join(dir, upperName), filepath.Join(dir, workName)
}

// NewID returns a fresh change-set ID: 8 random hex digits, short enough to type.
func NewID() string {
	id, _ := random.Hex(4) // all zeros where getrandom fails, as ever
	return id
}

// ValidID reports whether id can name a change set: letters, digits, '.', '_' and '-', not
// starting with '.', at most 64 bytes. A persistent sandbox's change set takes its name.
func ValidID(id string) bool {
	if id == "" || len(id) > 64 || id[0] == '.' {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Store is a directory of change sets.
type Store struct {
	Dir string
}

// ErrNoChangeSet is returned when an ID names no change set.
var ErrNoChangeSet = errors.New("no such change set")

// List returns every change set in the store, oldest first. A directory whose manifest cannot
// be read is listed with Err set, so that it can still be shown and discarded. A persistent
// sandbox's that ended unsettled is settled first (and gone when it held nothing).
func (s Store) List() ([]*ChangeSet, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read change-set store %s: %w", s.Dir, err)
	}
	var out []*ChangeSet
	for _, e := range entries {
		if !e.IsDir() || !ValidID(e.Name()) {
			continue
		}
		if cs := s.load(e.Name()); cs.Err != nil || !cs.settled() {
			out = append(out, cs)
		}
	}
	slices.SortStableFunc(out, func(a, b *ChangeSet) int { return a.Manifest.Started.Compare(b.Manifest.Started) })
	return out, nil
}

// minPrefix is the shortest ID prefix Open takes for a whole ID.
const minPrefix = 4

// Open returns the change set named id; else the newest persistent sandbox's whose name is id;
// else the only one whose ID starts with id (at least minPrefix characters). An ambiguous
// prefix is an error that lists the candidates.
func (s Store) Open(id string) (*ChangeSet, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q: %w (an ID is letters, digits, '.', '_' and '-'; jail changes lists them)", id, ErrNoChangeSet)
	}
	if info, err := os.Lstat(filepath.Join(s.Dir, id)); err == nil && info.IsDir() {
		return s.loaded(id)
	}
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, cs := range slices.Backward(all) {
		if cs.Err == nil && cs.Manifest.Sandbox && cs.Manifest.Name == id {
			return cs, nil // the newest sandbox of that name: a live one, if any
		}
	}
	var match []string
	for _, cs := range all {
		if len(id) >= minPrefix && strings.HasPrefix(cs.ID, id) {
			match = append(match, cs.ID)
		}
	}
	switch len(match) {
	case 0:
		return nil, fmt.Errorf("%s: %w (jail changes lists them)", id, ErrNoChangeSet)
	case 1:
		return s.loaded(match[0])
	}
	return nil, fmt.Errorf("%s: ambiguous: it starts %s", id, strings.Join(match, ", "))
}

// Latest returns the newest change set whose tree holds dir (a physical path).
func (s Store) Latest(dir string) (*ChangeSet, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, cs := range slices.Backward(all) {
		if _, ok := relTo(cs.Manifest.Tree, dir); cs.Err == nil && ok {
			return cs, nil
		}
	}
	return nil, fmt.Errorf("%w for %s (jail changes lists them all)", ErrNoChangeSet, dir)
}

// OpenAny is Open for a change set that may be damaged (Err set): discard takes those too.
func (s Store) OpenAny(id string) (*ChangeSet, error) {
	cs, err := s.Open(id)
	var damaged *damagedError
	if errors.As(err, &damaged) {
		return damaged.cs, nil
	}
	return cs, err
}

// loaded is load for a change set that must be sound.
func (s Store) loaded(id string) (*ChangeSet, error) {
	cs := s.load(id)
	switch {
	case cs.Err != nil:
		return nil, cs.Err
	case cs.settled():
		return nil, fmt.Errorf("%s: %w: its sandbox ended without a change", id, ErrNoChangeSet)
	}
	return cs, nil
}

// load reads the change set id's manifest and checks its layout.
func (s Store) load(id string) *ChangeSet {
	cs := &ChangeSet{ID: id, Dir: filepath.Join(s.Dir, id)}
	cs.Err = cs.check()
	return cs
}
