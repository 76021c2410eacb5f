package workspace

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Change is one path's change: what the tree holds there now (Old) and what the change set
// holds (New), nil meaning absent. A directory appears when it is created empty, deleted (after
// the changes beneath it) or changes mode. A rename is a deletion and a creation of the same
// content paired: Path is the new name, From the old, Old the tree's entry at From.
type Change struct {
	Path string
	From string
	Old  *Entry
	New  *Entry
}

// Entry is a file, directory, symlink or special file on one side of a change.
type Entry struct {
	Mode  fs.FileMode // type and permission bits, setuid, setgid and sticky included
	Size  int64
	Link  string // a symlink's text
	Rdev  uint64 // a device's number
	Mtime time.Time
	Ctime int64 // nanoseconds
	// Origin marks a change-set entry that overlayfs copied up from the tree: the tree had
	// this path when the command first wrote it.
	Origin bool
	file   string // where the content is, on the host
	upper  bool   // file is in the upper layer
}

// Changes reads the change set against its tree as the tree is now, sorted by path.
func (cs *ChangeSet) Changes() ([]Change, error) {
	w := &walker{cs: cs, upper: cs.Upper(), tree: cs.Manifest.Tree}
	root, err := os.Lstat(w.tree)
	if err != nil {
		return nil, cs.damaged("its tree %s: %s", w.tree, errText(err))
	}
	if _, err := w.dir("", false, root.IsDir()); err != nil {
		return nil, err
	}
	changes := pairRenames(w.changes)
	slices.SortFunc(changes, func(a, b Change) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return cmp.Compare(deletion(b), deletion(a)) // a path's deletion before its creation
	})
	return changes, nil
}

// walker walks a change set's upper layer beside the tree.
type walker struct {
	cs          *ChangeSet
	upper, tree string
	changes     []Change
}

// dir compares the upper directory rel with the tree's. opaque says the upper one replaces the
// tree's (overlayfs's opaque mark, or a directory new where the tree has none): tree entries it
// does not hold are deleted. treeDir says the tree has a directory at rel. It returns how many
// changes lie beneath rel.
func (w *walker) dir(rel string, opaque, treeDir bool) (int, error) {
	before := len(w.changes)
	names, err := readNames(hostPath(w.upper, rel), true)
	if err != nil {
		return 0, w.cs.damaged("read %s: %s", upperPath(rel), errText(err))
	}
	for _, name := range names {
		var tree *Entry
		if treeDir {
			if tree, err = w.treeEntry(join(rel, name)); err != nil {
				return 0, err
			}
		}
		if err := w.entry(join(rel, name), tree); err != nil {
			return 0, err
		}
	}
	if opaque && treeDir {
		treeNames, err := readNames(hostPath(w.tree, rel), false)
		if err != nil {
			return 0, err
		}
		for _, name := range treeNames {
			if _, found := slices.BinarySearch(names, name); found {
				continue
			}
			tree, err := w.treeEntry(join(rel, name))
			if err != nil {
				return 0, err
			}
			if tree != nil {
				if err := w.deleteTree(join(rel, name), tree); err != nil {
					return 0, err
				}
			}
		}
	}
	return len(w.changes) - before, nil
}

// entry compares the upper entry rel with tree, the tree's entry there (nil: none).
func (w *walker) entry(rel string, tree *Entry) error {
	up, opaque, err := w.upperEntry(rel)
	if err != nil {
		return err
	}
	switch {
	case whiteout(up):
		if tree != nil {
			return w.deleteTree(rel, tree)
		}
		return nil
	case up.Mode.IsDir():
		if tree != nil && tree.Mode.IsDir() {
			if modeBits(tree.Mode) != modeBits(up.Mode) {
				w.add(Change{Path: rel, Old: tree, New: up})
			}
			_, err := w.dir(rel, opaque, true)
			return err
		}
		if tree != nil {
			if err := w.deleteTree(rel, tree); err != nil {
				return err
			}
		}
		n, err := w.dir(rel, true, false)
		if err == nil && n == 0 {
			w.add(Change{Path: rel, New: up}) // a directory created empty
		}
		return err
	case tree != nil && tree.Mode.IsDir():
		if err := w.deleteTree(rel, tree); err != nil {
			return err
		}
		w.add(Change{Path: rel, New: up})
		return nil
	case tree == nil:
		w.add(Change{Path: rel, New: up})
		return nil
	}
	same, err := w.unchanged(tree, up)
	if err == nil && !same {
		w.add(Change{Path: rel, Old: tree, New: up})
	}
	return err
}

// unchanged reports whether the upper entry up holds what the tree's entry tree does. A copy-up
// the command never wrote (its mtime is the tree's from before the run) of a file the user has
// changed since is no change either: the command did not change that file.
func (w *walker) unchanged(tree, up *Entry) (bool, error) {
	if tree.Mode.Type() != up.Mode.Type() || modeBits(tree.Mode) != modeBits(up.Mode) {
		return false, nil
	}
	switch tree.Mode.Type() {
	case fs.ModeSymlink:
		return tree.Link == up.Link, nil
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		return tree.Rdev == up.Rdev, nil
	case 0:
		if up.Origin && up.Mtime.UnixNano() < w.cs.Manifest.Since && tree.Ctime >= w.cs.Manifest.Since {
			return true, nil
		}
		if tree.Size != up.Size {
			return false, nil
		}
		return sameContent(tree, up)
	}
	return true, nil // fifos and sockets: nothing beyond their mode
}

// deleteTree records the deletion of the tree's entry rel, and of everything beneath it first.
func (w *walker) deleteTree(rel string, tree *Entry) error {
	if tree.Mode.IsDir() {
		names, err := readNames(tree.file, false)
		if err != nil {
			return err
		}
		for _, name := range names {
			child, err := w.treeEntry(join(rel, name))
			if err != nil {
				return err
			}
			if child != nil {
				if err := w.deleteTree(join(rel, name), child); err != nil {
					return err
				}
			}
		}
	}
	w.add(Change{Path: rel, Old: tree})
	return nil
}

func (w *walker) add(c Change) { w.changes = append(w.changes, c) }

// deletion is 1 for a change that only deletes, else 0.
func deletion(c Change) int {
	if c.New == nil {
		return 1
	}
	return 0
}

// treeEntry returns the tree's entry at rel, or nil when there is none.
func (w *walker) treeEntry(rel string) (*Entry, error) {
	e, err := lstatEntry(hostPath(w.tree, rel))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	return e, err
}

// upperEntry returns the upper layer's entry at rel and whether it is an opaque directory.
// overlayfs marks its upper layer with user.overlay.* attributes; those that would make it
// look elsewhere (redirect, metacopy) are never created with userxattr, so a change set holding
// one was not made by jail's overlay.
func (w *walker) upperEntry(rel string) (*Entry, bool, error) {
	path := hostPath(w.upper, rel)
	e, err := lstatEntry(path)
	if err != nil {
		return nil, false, w.cs.damaged("%s: %s", upperPath(rel), errText(err))
	}
	e.upper = true
	attrs, err := overlayAttrs(path)
	if errors.Is(err, os.ErrPermission) {
		err = lent(path, func() error {
			attrs, err = overlayAttrs(path)
			return err
		})
	}
	if err != nil {
		return nil, false, w.cs.damaged("%s: read its attributes: %s", upperPath(rel), err)
	}
	opaque := false
	for name, value := range attrs {
		switch name {
		case "opaque":
			if value != "y" {
				return nil, false, w.cs.damaged("%s: opaque mark %q", upperPath(rel), value)
			}
			opaque = true
		case "origin":
			e.Origin = true
		case "impure", "uuid", "protattr", "nlink":
		default:
			return nil, false, w.cs.damaged("%s: overlayfs attribute %q, which jail's overlay never sets", upperPath(rel), name)
		}
	}
	return e, opaque, nil
}

// upperPath names rel in the upper layer for a message, quoted: the sandbox chose the name.
func upperPath(rel string) string {
	return quote(join(upperName, rel))
}

// whiteout reports whether e is overlayfs's mark of a deletion: a character device 0/0.
func whiteout(e *Entry) bool {
	return e.Mode.Type() == fs.ModeDevice|fs.ModeCharDevice && e.Rdev == 0
}

// modeBits are the bits of a mode a change carries besides its type.
func modeBits(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// lstatEntry describes path without following a symlink there.
func lstatEntry(path string) (*Entry, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	st := info.Sys().(*syscall.Stat_t)
	e := &Entry{Mode: info.Mode(), Size: info.Size(), Mtime: info.ModTime(), Ctime: st.Ctim.Nano(), Rdev: uint64(st.Rdev), file: path}
	if e.Mode.Type() == fs.ModeSymlink {
		if e.Link, err = os.Readlink(path); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// overlayAttrs returns path's user.overlay.* extended attributes, by name without the prefix.
func overlayAttrs(path string) (map[string]string, error) {
	const prefix = "user.overlay."
	names, err := listXattr(path)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	attrs := map[string]string{}
	for _, name := range names {
		short, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		buf := make([]byte, 256)
		n, err := unix.Lgetxattr(path, name, buf)
		switch {
		case errors.Is(err, unix.ERANGE):
			attrs[short] = "" // a long file handle (origin): only its presence matters
		case err != nil:
			return nil, err
		default:
			attrs[short] = string(buf[:n])
		}
	}
	return attrs, nil
}
