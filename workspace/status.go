package workspace

import "fmt"

// Select returns the change set's changes at or beneath paths (all without paths).
func (cs *ChangeSet) Select(paths []string) ([]Change, error) {
	changes, err := cs.Changes()
	if err != nil {
		return nil, err
	}
	return selectPaths(changes, paths)
}

// Conflicts lists the changes that apply would stop on, the user having changed their paths in
// the tree since the run started.
func (cs *ChangeSet) Conflicts(changes []Change) []Conflict {
	var out []Conflict
	found := cs.conflicts(changes)
	for i, c := range changes {
		if why, ok := found[i]; ok {
			out = append(out, Conflict{Path: c.Path, Reason: why})
		}
	}
	return out
}

// StatusLine describes a change in one line, as git status --short does (Status's letter).
func StatusLine(c Change) string {
	if c.From != "" {
		return fmt.Sprintf("R  %s -> %s", quote(c.From), quote(c.Path))
	}
	return Status(c) + "  " + quote(c.Path)
}

// Status is a change's letter in git status --short: A added, M modified, D deleted, R renamed,
// T type changed.
func Status(c Change) string {
	switch {
	case c.From != "":
		return "R"
	case c.Old == nil:
		return "A"
	case c.New == nil:
		return "D"
	case c.Old.Mode.Type() != c.New.Mode.Type():
		return "T"
	}
	return "M"
}
