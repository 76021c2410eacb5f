package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/random"
)

// beneath is how every path in the tree is looked up: beneath its root, through no symlink and
// no mount point. A symlink in the tree (the user's, or one planted since the check) can then
// never carry a write out of it.
const beneathFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// treeWriter writes changes into the tree through descriptors.
type treeWriter struct {
	root  int    // the tree's root, O_PATH
	upper string // the change set's upper layer, whose directories' modes new ones take ("": 0755)
	// modes are the directories' modes to set once everything is written: a directory is made
	// (or kept) open to its owner until then, since its final mode may forbid the writes in it.
	modes map[string]fs.FileMode
}

func openTree(tree, upper string) (*treeWriter, error) {
	fd, err := unix.Open(tree, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open tree %s: %w", tree, err)
	}
	return &treeWriter{root: fd, upper: upper, modes: map[string]fs.FileMode{}}, nil
}

func (t *treeWriter) close() { unix.Close(t.root) }

// op is one step of an apply: write a change's new entry at its path, or remove a path.
type op struct {
	path   string
	entry  *Entry // to write; nil removes
	remove bool
	dir    bool // what is removed is a directory
}

// apply writes the changes in an order that keeps every step possible: first what stands in
// the way of a new entry (a file where a directory comes, a directory where a file comes), then
// the new entries, parents first, then the other removals, deepest first. applied records each
// path done.
func (t *treeWriter) apply(changes []Change, applied map[string]string) error {
	var writes, removes []op
	for _, c := range changes {
		if c.New != nil {
			writes = append(writes, op{path: c.Path, entry: c.New})
		}
		switch {
		case c.From != "":
			removes = append(removes, op{path: c.From, remove: true})
		case c.New == nil:
			removes = append(removes, op{path: c.Path, remove: true, dir: c.Old.Mode.IsDir()})
		}
	}
	inTheWay := func(r op) bool {
		return slices.ContainsFunc(writes, func(w op) bool { return beneath(w.path, r.path) || beneath(r.path, w.path) })
	}
	first := slices.DeleteFunc(slices.Clone(removes), func(r op) bool { return !inTheWay(r) })
	last := slices.DeleteFunc(removes, inTheWay)
	for _, list := range [][]op{reversed(first), writes, reversed(last)} {
		for _, o := range list {
			if err := t.do(o); err != nil {
				t.setModes()
				return fmt.Errorf("apply %s: %w (the changes listed before it are in the tree; this one and the rest are not)", quote(o.path), err)
			}
			if o.remove {
				applied[o.path] = state(nil)
			} else {
				applied[o.path] = state(o.entry)
			}
		}
	}
	return t.setModes()
}

// setModes gives the directories apply made or changed their modes, deepest first.
func (t *treeWriter) setModes() error {
	dirs := slices.Sorted(maps.Keys(t.modes))
	slices.Reverse(dirs)
	for _, rel := range dirs {
		how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneathFlags}
		fd, err := unix.Openat2(t.root, rel, &how)
		if err == nil {
			err = unix.Fchmod(fd, unixMode(t.modes[rel]))
			unix.Close(fd)
		}
		if err != nil {
			return fmt.Errorf("apply %s: set the directory's mode: %w", quote(rel), err)
		}
	}
	return nil
}

// reversed returns ops in reverse (path) order: children before their parents.
func reversed(ops []op) []op {
	slices.SortFunc(ops, func(a, b op) int { return strings.Compare(b.path, a.path) })
	return ops
}

// do runs one op.
func (t *treeWriter) do(o op) error {
	dir, name := path.Split(o.path)
	parent, err := t.openDir(strings.TrimSuffix(dir, "/"), !o.remove)
	if errors.Is(err, unix.ENOENT) && o.remove {
		return nil // already gone with its directory
	}
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	if o.remove {
		flags := 0
		if o.dir {
			flags = unix.AT_REMOVEDIR
		}
		if err := unix.Unlinkat(parent, name, flags); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("remove: %w", err)
		}
		return nil
	}
	e := o.entry
	if e.Mode.IsDir() {
		return t.makeDir(parent, o.path, e.Mode)
	}
	id, _ := random.Hex(8) // all zeros where getrandom fails, as before
	tmp := ".jail-apply-" + id
	if err := t.create(parent, tmp, e); err != nil {
		unix.Unlinkat(parent, tmp, 0)
		return err
	}
	if err := unix.Renameat(parent, tmp, parent, name); err != nil {
		unix.Unlinkat(parent, tmp, 0)
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}

// create makes e's copy at the name tmp in parent.
func (t *treeWriter) create(parent int, tmp string, e *Entry) error {
	perm := unixMode(e.Mode)
	switch typ := e.Mode.Type(); {
	case typ == fs.ModeSymlink:
		return unix.Symlinkat(e.Link, parent, tmp)
	case typ == fs.ModeNamedPipe:
		return mknod(parent, tmp, unix.S_IFIFO|perm, 0)
	case typ&fs.ModeCharDevice != 0:
		return mknod(parent, tmp, unix.S_IFCHR|perm, e.Rdev)
	case typ == fs.ModeDevice:
		return mknod(parent, tmp, unix.S_IFBLK|perm, e.Rdev)
	case typ != 0:
		return errors.New("a socket cannot be copied; its program makes it when it listens")
	}
	src, err := openContent(e)
	if err != nil {
		return fmt.Errorf("read the change set's copy: %w", err)
	}
	defer src.Close()
	fd, err := unix.Openat(parent, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	dst := os.NewFile(uintptr(fd), tmp)
	defer dst.Close()
	if _, err := io.Copy(dst, src); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := unix.Fchmod(fd, perm); err != nil { // past the umask, special bits included
		return fmt.Errorf("chmod: %w", err)
	}
	mtime := unix.NsecToTimespec(e.Mtime.UnixNano())
	if err := unix.UtimesNanoAt(parent, tmp, []unix.Timespec{mtime, mtime}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("set mtime: %w", err)
	}
	return nil
}

// makeDir makes the directory rel (in parent, its directory), or keeps the one there, and gives
// it mode once everything is written.
func (t *treeWriter) makeDir(parent int, rel string, mode fs.FileMode) error {
	name := path.Base(rel)
	err := unix.Mkdirat(parent, name, 0o700)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("mkdir: %w", err)
	}
	if err != nil { // there already: it must be a directory, reached through no symlink
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneathFlags}
		fd, err := unix.Openat2(parent, name, &how)
		if err != nil {
			return fmt.Errorf("open directory: %w", err)
		}
		unix.Close(fd)
	}
	t.modes[rel] = mode
	return nil
}

// openDir opens the tree's directory rel ("" is the root), beneath the root and through no
// symlink. With create, missing directories are made, with the modes the change set's have.
func (t *treeWriter) openDir(rel string, create bool) (int, error) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: beneathFlags}
	name := rel
	if name == "" {
		name = "."
	}
	fd, err := unix.Openat2(t.root, name, &how)
	if !errors.Is(err, unix.ENOENT) || !create || rel == "" {
		return fd, err
	}
	dir, base := path.Split(rel)
	parent, err := t.openDir(strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	mode := fs.FileMode(0o755)
	if info, err := os.Lstat(hostPath(t.upper, rel)); t.upper != "" && err == nil && info.IsDir() {
		mode = info.Mode()
	}
	if err := t.makeDir(parent, rel, mode); err != nil {
		return -1, fmt.Errorf("%s: %w", rel, err)
	}
	return unix.Openat2(parent, base, &how)
}

// mknod makes a special file at name in dir.
func mknod(dir int, name string, mode uint32, dev uint64) error {
	if err := unix.Mknodat(dir, name, mode, int(dev)); err != nil {
		return fmt.Errorf("mknod: %w", err)
	}
	return nil
}

// unixMode is a FileMode's permission and special bits as chmod(2) takes them.
func unixMode(m fs.FileMode) uint32 {
	v := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		v |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		v |= unix.S_ISVTX
	}
	return v
}
