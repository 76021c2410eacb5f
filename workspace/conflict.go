package workspace

import (
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
)

// Conflict is a change whose path the user changed in the tree since the run started: apply
// stops there rather than overwrite the user's edit.
type Conflict struct {
	Path   string
	Reason string
}

func (c Conflict) String() string {
	return fmt.Sprintf("conflict %s: %s (--overwrite takes the change set's version)", quote(c.Path), c.Reason)
}

// conflicts is the three-way check of every change: base is the tree when the run started (or
// what apply last wrote at the path, when it did), ours the change set, theirs the tree now.
// It answers, by change, why theirs is no longer the base.
//
// A file the command changed and the user has since deleted shows as a file the change set
// creates, copied up from the tree (overlayfs's origin mark); but so does a file the command
// renamed and changed, whose old name it deleted. In a user namespace the mark names no source,
// so such a creation counts as a deletion in the tree only when the change set deletes no file
// it could have come from.
func (cs *ChangeSet) conflicts(changes []Change) map[int]string {
	renamedAway := slices.ContainsFunc(changes, func(c Change) bool {
		return c.New == nil && c.Old.Mode.IsRegular()
	})
	out := map[int]string{}
	for i, c := range changes {
		why := ""
		switch {
		case c.From != "":
			why = cs.theirs(c.From, c.Old)
			if why == "" {
				why = cs.theirs(c.Path, nil)
			}
		case c.Old == nil && c.New != nil && c.New.Origin && !renamedAway && !cs.applied(c.Path):
			why = "deleted from the tree since the run started"
		default:
			why = cs.theirs(c.Path, c.Old)
		}
		if why != "" {
			out[i] = why
		}
	}
	return out
}

// theirs checks the tree's entry at p (nil: none) against the base. Directories hold no content
// of their own to lose: their entries are checked one by one.
func (cs *ChangeSet) theirs(p string, tree *Entry) string {
	m := &cs.Manifest
	if base, ok := m.Applied[p]; ok {
		if now := state(tree); now != base {
			return "changed in the tree since jail applied it"
		}
		return ""
	}
	if tree == nil || tree.Mode.IsDir() || tree.Ctime < m.Since {
		return ""
	}
	return "changed in the tree since the run started"
}

// applied reports whether apply has written p before.
func (cs *ChangeSet) applied(p string) bool {
	_, ok := cs.Manifest.Applied[p]
	return ok
}

// state describes an entry for the record apply keeps of what it wrote: a file's mode and
// content hash, a symlink's target, "dir", or "absent".
func state(e *Entry) string {
	switch {
	case e == nil:
		return "absent"
	case e.Mode.IsDir():
		return "dir"
	case e.Mode.Type() == fs.ModeSymlink:
		return "link:" + e.Link
	case e.Mode.IsRegular():
		h := contentHash(e)
		if h == "" {
			return "unreadable"
		}
		return "file:" + octal(e.Mode) + ":" + hex.EncodeToString([]byte(h))
	}
	return "special:" + e.Mode.String()
}
