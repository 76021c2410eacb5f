package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// ApplyOptions choose what Apply writes.
type ApplyOptions struct {
	// Paths, relative to the tree, select the changes at or beneath them (a rename by either
	// name); none selects every change. Each must select something.
	Paths []string
	// Allow takes the changes of these classes, which are otherwise refused.
	Allow Class
	// Overwrite takes conflicting changes, over the user's edits.
	Overwrite bool
}

// Applied is what Apply did, or (when Refused or Conflicts is not empty) would not do.
type Applied struct {
	Written   []Change  // written into the tree
	Refused   []Refusal // nothing is written while any is left
	Conflicts []Conflict
	// Removed says the change set held nothing more once applied, and is gone: a change set
	// lives until it is applied or discarded.
	Removed bool
}

// Apply writes the change set's selected changes into its tree, or none: every change is checked
// first, and a refusal or a conflict writes nothing. Each file is written to a temporary name in
// its directory and renamed into place, so that whatever happens, a file holds either its old
// content or its new one. What was written is recorded in the manifest, as the base of the next
// apply's three-way check.
func (cs *ChangeSet) Apply(opt ApplyOptions) (*Applied, error) {
	unlock, err := cs.lockForApply()
	if err != nil {
		return nil, err
	}
	defer unlock()
	changes, err := cs.Changes()
	if err != nil {
		return nil, err
	}
	if changes, err = selectPaths(changes, opt.Paths); err != nil {
		return nil, err
	}
	res, write := cs.sort(changes, opt)
	if len(res.Refused) > 0 || len(res.Conflicts) > 0 {
		return res, nil
	}
	t, err := openTree(cs.Manifest.Tree, cs.Upper())
	if err != nil {
		return res, err
	}
	defer t.close()
	if cs.Manifest.Applied == nil {
		cs.Manifest.Applied = map[string]string{}
	}
	err = t.apply(write, cs.Manifest.Applied)
	for _, c := range write {
		if _, ok := cs.Manifest.Applied[c.Path]; ok {
			res.Written = append(res.Written, c)
		}
	}
	if merr := cs.writeManifest(); err == nil && merr != nil {
		err = fmt.Errorf("record what was applied: %w", merr)
	}
	if err == nil {
		if left, cerr := cs.Changes(); cerr == nil && len(left) == 0 && cs.removable() {
			res.Removed = RemoveTree(cs.Dir) == nil
		}
	}
	return res, err
}

// sort sorts the changes into those to write, refusals and conflicts.
func (cs *ChangeSet) sort(changes []Change, opt ApplyOptions) (*Applied, []Change) {
	res := &Applied{}
	var write []Change
	git := newGitView(cs)
	conflicts := cs.conflicts(changes)
	for i, c := range changes {
		var left []Refusal
		for _, r := range cs.refusals(c, git) {
			if opt.Allow&r.Class == 0 {
				left = append(left, r)
			}
		}
		if len(left) > 0 {
			res.Refused = append(res.Refused, left...)
			continue
		}
		if why, ok := conflicts[i]; ok && !opt.Overwrite {
			res.Conflicts = append(res.Conflicts, Conflict{Path: c.Path, Reason: why})
			continue
		}
		write = append(write, c)
	}
	return res, write
}

// refusals lists every class c falls in.
func (cs *ChangeSet) refusals(c Change, git *gitView) []Refusal {
	var out []Refusal
	refuse := func(p string, class Class, reason, group string) {
		out = append(out, Refusal{Path: p, Class: class, Reason: reason, Group: group})
	}
	for _, p := range []string{c.From, c.Path} {
		if p == "" {
			continue
		}
		if dir, treeRepo := git.dirOf(p); dir != "" {
			switch {
			case treeRepo:
				refuse(p, ClassGit, "in the git directory "+quote(dir)+", whose files git executes or obeys", dir)
			default:
				refuse(p, ClassGit, "in "+quote(dir)+", a git directory the command made (git obeys its config and hooks)", dir)
			}
		}
		for _, prot := range cs.Manifest.Protected {
			if beneath(p, prot) {
				refuse(p, ClassProtected, "protected by the profile ("+quote(prot)+")", prot)
				break
			}
		}
		if why := autorun(p); why != "" {
			refuse(p, ClassAutorun, why, "")
		}
	}
	if e := c.New; e != nil {
		if e.Mode.Type() == os.ModeSymlink {
			if why := symlinkEscapes(c.Path, e.Link, cs.Manifest.Tree, cs.isLink); why != "" {
				refuse(c.Path, ClassLink, why, "")
			}
		}
		if why := specialReason(e); why != "" {
			refuse(c.Path, ClassSpecial, why, "")
		}
	}
	return out
}

// isLink reports whether rel is a symlink in the tree or the change set.
func (cs *ChangeSet) isLink(rel string) bool {
	for _, root := range []string{cs.Upper(), cs.Manifest.Tree} {
		if info, err := os.Lstat(hostPath(root, rel)); err == nil {
			return info.Mode().Type() == os.ModeSymlink
		}
	}
	return false
}

// ErrNoChange is the error of a path that selects no change of a change set.
var ErrNoChange = errors.New("no change")

// selectPaths keeps the changes at or beneath one of paths; every path must select one.
func selectPaths(changes []Change, paths []string) ([]Change, error) {
	if len(paths) == 0 {
		return changes, nil
	}
	var out []Change
	for _, c := range changes {
		if slices.ContainsFunc(paths, func(p string) bool {
			return beneath(c.Path, p) || c.From != "" && beneath(c.From, p)
		}) {
			out = append(out, c)
		}
	}
	for _, p := range paths {
		if !slices.ContainsFunc(out, func(c Change) bool { return beneath(c.Path, p) || c.From != "" && beneath(c.From, p) }) {
			return nil, fmt.Errorf("%w at %s", ErrNoChange, quote(p))
		}
	}
	return out, nil
}

// lockForApply takes the lock an apply holds while it works. A run's change set is applied once
// its run is over, by one apply at a time: the directory's lock (ChangeSet.lock). A persistent
// sandbox's is applied while the sandbox lives too — apply writes the tree, never the layer the
// sandbox's overlay writes — so, its keeper holding the directory's lock, appliers take a file's.
func (cs *ChangeSet) lockForApply() (func(), error) {
	if !cs.Manifest.Sandbox {
		f, err := cs.lock(unix.LOCK_EX)
		if err != nil {
			return nil, err
		}
		return func() { f.Close() }, nil
	}
	f, err := os.OpenFile(filepath.Join(cs.Dir, applyLockName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err == nil {
		if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
		}
	}
	switch {
	case errors.Is(err, unix.EWOULDBLOCK):
		return nil, fmt.Errorf("change set %s: %w: another jail is applying it", cs.ID, ErrInUse)
	case err != nil:
		return nil, fmt.Errorf("lock change set %s: %w", cs.ID, err)
	}
	return func() { f.Close() }, nil
}

// removable reports whether a change set applied in full may go: not while its sandbox lives,
// whose overlay still has it as its upper layer.
func (cs *ChangeSet) removable() bool {
	return !cs.Manifest.Sandbox || !cs.running()
}

// remove deletes the change set, unless its sandbox is still running or it is being applied.
func (cs *ChangeSet) remove() error {
	f, err := cs.lock(unix.LOCK_EX)
	if err != nil {
		return err
	}
	defer f.Close()
	if cs.Manifest.Sandbox {
		unlock, err := cs.lockForApply()
		if err != nil {
			return err
		}
		defer unlock()
	}
	if err := RemoveTree(cs.Dir); err != nil {
		return fmt.Errorf("discard change set %s: %w", cs.ID, err)
	}
	return nil
}

// Discard removes the change set: its changes are gone.
func (cs *ChangeSet) Discard() error { return cs.remove() }

// Running reports whether the change set's sandbox is still running.
func (cs *ChangeSet) Running() bool { return cs.running() }

// Rel turns a path as the user typed it (absolute, or relative to cwd) into one relative to
// the change set's tree.
func (cs *ChangeSet) Rel(p, cwd string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	p = filepath.Clean(p)
	if real, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(real, filepath.Base(p))
	}
	rel, ok := relTo(cs.Manifest.Tree, p)
	if !ok {
		return "", fmt.Errorf("%s is outside the change set's tree %s", p, cs.Manifest.Tree)
	}
	return rel, nil
}
