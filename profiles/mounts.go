package profiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// systemLinks are the root directories a merged-/usr host has as symlinks into /usr. They are
// recreated as the host has them; a grant naming one of them is covered by the link.
var systemLinks = []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// planner turns an expanded profile's [filesystem] into the ordered mount list.
type planner struct {
	p        *Profile
	host     Host
	mounts   []plan.Mount
	warnings []*Error
	// selfBinds are the directories bound onto themselves between a writable grant and a
	// protected path: mountpoints, not grants of their own.
	selfBinds map[string]bool
	// named records, for each grant's target, the path the profile named it by: the symlinks on
	// the way are recreated inside (links.go).
	named map[string]string
	paths *resolver   // the host's symlinks, as followed so far
	repo  *repository // the working directory's git repository, or nil
	// gitPlan is what [git] made of repo, for the Spec.
	gitPlan *plan.Git
	// cwdWrites are the write entries only $CWD named, and writes every write grant planned
	// (homewrite.go).
	cwdWrites map[string]bool
	writes    []written
	// creatableIn answers creatable for the paths in each directory asked about.
	creatableIn map[string]bool
}

// plan builds the mount list (see the contract's "Spec.Mounts semantics"): grants, masks,
// protections, the host's merged-/usr links, a home directory, /proc and /dev, in mount order.
func (pl *planner) plan() ([]plan.Mount, error) {
	fsys := pl.p.Filesystem
	steps := []struct {
		key   string
		paths []string
		add   func(entry) error
	}{
		{"filesystem.write", fsys.Write, func(e entry) error { return pl.grant(plan.MountBind, e) }},
		{"filesystem.read", fsys.Read, func(e entry) error { return pl.grant(plan.MountROBind, e) }},
		{"filesystem.tmpfs", fsys.Tmpfs, pl.tmpfs},
		{"", nil, nil}, // all grants are known: file grants named through a symlink find their place
		{"filesystem.hide", fsys.Hide, pl.hide},
		{"filesystem.protect", fsys.Protect, pl.protect},
	}
	var errs ErrorList // every path in error, each left out
	for _, step := range steps {
		if step.add == nil {
			pl.placeFileLinks()
		}
		for _, raw := range step.paths {
			e, err := pl.p.parseEntry(step.key, raw)
			if err == nil {
				err = step.add(e)
			}
			errs.add(err)
		}
	}
	errs.add(pl.homeFromCwd())
	if err := errs.err(); err != nil {
		return nil, err
	}
	var err error
	if pl.gitPlan, err = pl.git(); err != nil {
		return nil, err
	}
	pl.dropRedundant()
	pl.systemLinks()
	pl.recreateLinks()
	if err := pl.home(); err != nil {
		return nil, err
	}
	pl.mounts = append(pl.mounts, plan.Mount{Kind: plan.MountProc, Target: "/proc"}, plan.Mount{Kind: plan.MountDev, Target: "/dev"})
	return sortMounts(pl.mounts), nil
}

// grant adds a read-only or writable bind of e at its physical path (Source and Target alike);
// the symlinks on the way to it are recreated inside (links.go).
func (pl *planner) grant(kind plan.MountKind, e entry) error {
	w := pl.paths.walk(e.path)
	switch {
	case w.err != nil:
		return pl.p.errorAt(e.key, e.raw, "resolve %s: %w", e.path, w.err)
	case !w.exists && e.optional:
		return nil
	case !w.exists:
		return pl.p.errorAt(e.key, e.raw, "missing required path %s (mark it optional with a trailing ?)", e.path)
	}
	if kind == plan.MountBind {
		pl.writes = append(pl.writes, written{e, w.physical, pl.cwdWrites[e.raw]})
	}
	if pl.at(w.physical) != nil {
		return nil // writes come first: a path both read and written is writable
	}
	if kind == plan.MountBind && w.physical == "/" {
		pl.warn(e, "the whole host filesystem is writable (is the working directory /?)")
	}
	pl.named[w.physical] = e.path
	pl.mounts = append(pl.mounts, plan.Mount{Kind: kind, Source: w.physical, Target: w.physical, IsDir: w.dir})
	return nil
}

// tmpfs adds an empty writable tmpfs at e's physical path. An optional tmpfs is dropped when e
// does not exist.
func (pl *planner) tmpfs(e entry) error {
	w := pl.paths.walk(e.path)
	switch {
	case w.err != nil:
		return pl.p.errorAt(e.key, e.raw, "resolve %s: %w", e.path, w.err)
	case !w.exists && e.optional:
		return nil
	}
	switch prev := pl.at(w.physical); {
	case prev == nil:
		pl.named[w.physical] = e.path
		pl.mounts = append(pl.mounts, plan.Mount{Kind: plan.MountTmpfs, Target: w.physical, IsDir: true})
	case prev.Kind != plan.MountTmpfs:
		pl.warn(e, "%s is also granted as a %s, which replaces the tmpfs", e.path, prev.Kind)
	}
	return nil
}

// hide masks e's physical path (a symlink at e is followed: what is hidden is what it names)
// wherever a grant makes it visible. A grant at or beneath the hidden path loses to the mask: a
// read grant with a warning, a writable one or a tmpfs with an error. A hide of a missing path,
// or of one no grant shows, is dropped: there is nothing to mask.
func (pl *planner) hide(e entry) error {
	w := pl.paths.walk(e.path)
	if w.err != nil {
		return pl.p.errorAt(e.key, e.raw, "resolve %s: %w", e.path, w.err)
	}
	if !w.exists {
		return nil
	}
	target := w.physical
	if err := pl.yieldTo(e, target); err != nil {
		return err
	}
	g := pl.innermostGrant(target)
	switch {
	case g == nil || g.Kind == plan.MountTmpfs && g.Target != target:
		return nil
	case g.Target == target && g.Kind == plan.MountROBind:
		pl.warn(e, "%s is also granted read; the mask wins", e.path)
	case g.Target == target:
		return pl.p.errorAt(e.key, e.raw, "%s is both hidden and granted as %s; remove one", e.path, g.Kind)
	}
	kind := plan.MountHideFile
	if w.dir {
		kind = plan.MountHideDir
	}
	pl.mounts = append(pl.mounts, plan.Mount{Kind: kind, Target: target, IsDir: w.dir})
	return nil
}

// yieldTo removes the grants that would show the hidden path target from somewhere else than
// its own place: those beneath it, and file grants placed at a symlink to it. A writable grant
// or a tmpfs there is an error: the two readings differ too much to guess.
func (pl *planner) yieldTo(e entry, target string) error {
	kept := pl.mounts[:0]
	for _, m := range pl.mounts {
		source := m.Source
		if m.Kind == plan.MountTmpfs {
			source = m.Target
		}
		if !isGrant(m.Kind) || !within(source, target) || m.Target == target {
			kept = append(kept, m)
			continue
		}
		if m.Kind != plan.MountROBind {
			return pl.p.errorAt(e.key, e.raw, "%s is hidden, but %s beneath it is granted as %s; remove one", e.path, source, m.Kind)
		}
		pl.warn(e, "%s is hidden, and the read grant of %s beneath it is dropped; the mask wins", e.path, source)
	}
	pl.mounts = kept
	return nil
}

// protect keeps e read-only inside a writable grant. A missing e gets a placeholder, so it can
// neither be created nor written; an optional e whose parent directory is missing too is
// dropped. The directories between the grant and e become self-binds (mountpoints cannot be
// renamed or removed, so the protection cannot be moved aside). A writable grant at or beneath
// e would undo the protection: an error.
func (pl *planner) protect(e entry) error {
	info, target, err := pl.maskable(e)
	if err != nil {
		return err
	}
	if info == nil && e.optional && !pl.paths.isDir(filepath.Dir(e.path)) || pl.protected(target) {
		return nil
	}
	for _, m := range pl.mounts {
		if m.Kind == plan.MountBind && !pl.selfBinds[m.Target] && within(m.Source, target) {
			if m.Target == target {
				return pl.p.errorAt(e.key, e.raw, "%s is both protected and granted write; remove one", e.path)
			}
			return pl.p.errorAt(e.key, e.raw, "%s is protected, but %s beneath it is granted write; remove one", e.path, m.Source)
		}
	}
	g := pl.innermostGrant(target)
	switch {
	case g != nil && g.Kind == plan.MountROBind:
		return nil // already read-only
	case g == nil || g.Kind == plan.MountTmpfs:
		if !e.optional && !e.quiet {
			pl.warn(e, "%s is not beneath any writable grant; nothing to protect", e.path)
		}
		return nil
	case info == nil && !pl.creatable(e.path):
		return nil // what this user cannot create, the sandbox cannot either
	}
	for _, dir := range between(g.Target, target) {
		_, statErr := os.Stat(dir)
		if pl.at(dir) == nil {
			pl.mounts = append(pl.mounts, plan.Mount{Kind: plan.MountBind, Source: dir, Target: dir, IsDir: true, Create: statErr != nil})
			pl.selfBinds[dir] = true
		}
	}
	m := plan.Mount{Kind: plan.MountProtect, Source: target, Target: target, IsDir: e.dir, Create: info == nil}
	if info != nil {
		m.IsDir = info.IsDir()
	}
	pl.mounts = append(pl.mounts, m)
	return nil
}

// protected reports whether a protection is planned at target already.
func (pl *planner) protected(target string) bool {
	return slices.ContainsFunc(pl.mounts, func(m plan.Mount) bool { return m.Kind == plan.MountProtect && m.Target == target })
}

// maskable checks that e's final name is not a symlink (a mask there could be redirected) and
// returns its Lstat info (nil when missing) and physical target.
func (pl *planner) maskable(e entry) (fs.FileInfo, string, error) {
	info, err := os.Lstat(e.path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		info = nil
	case err != nil:
		return nil, "", pl.p.errorAt(e.key, e.raw, "stat %s: %w", e.path, err)
	case info.Mode()&fs.ModeSymlink != 0:
		return nil, "", pl.p.errorAt(e.key, e.raw, "%s is a symlink: a mask there could be redirected; name the path it points to", e.path)
	}
	target, err := pl.paths.place(e.path)
	if err != nil {
		return nil, "", pl.p.errorAt(e.key, e.raw, "resolve %s: %w", e.path, err)
	}
	return info, target, nil
}

// systemLinks recreates the host's merged-/usr symlinks.
func (pl *planner) systemLinks() {
	for _, link := range systemLinks {
		if text, isLink := pl.paths.readlink(link); isLink && pl.at(link) == nil {
			pl.mounts = append(pl.mounts, plan.Mount{Kind: plan.MountSymlink, Source: text, Target: link})
		}
	}
}

// home makes sure $HOME exists inside: an empty directory unless a mount provides it.
func (pl *planner) home() error {
	target, err := pl.paths.physical(filepath.Clean(pl.host.Home))
	if err != nil {
		return fmt.Errorf("resolve home %s: %w", pl.host.Home, err)
	}
	if g := pl.innermostGrant(target); pl.at(target) == nil && (g == nil || g.Kind == plan.MountTmpfs) {
		pl.mounts = append(pl.mounts, plan.Mount{Kind: plan.MountDir, Target: target, IsDir: true})
	}
	return nil
}

// at returns the bind, read-only bind or tmpfs already planned at target, or nil.
func (pl *planner) at(target string) *plan.Mount {
	for i, m := range pl.mounts {
		if m.Target == target && isGrant(m.Kind) {
			return &pl.mounts[i]
		}
	}
	return nil
}

// innermostGrant returns the deepest bind, read-only bind or tmpfs containing target, or nil.
func (pl *planner) innermostGrant(target string) *plan.Mount {
	var best *plan.Mount
	for i, m := range pl.mounts {
		if isGrant(m.Kind) && !pl.selfBinds[m.Target] && within(target, m.Target) &&
			(best == nil || depth(m.Target) > depth(best.Target)) {
			best = &pl.mounts[i]
		}
	}
	return best
}

// warn records a warning located at e.
func (pl *planner) warn(e entry, format string, args ...any) {
	pl.warnings = append(pl.warnings, pl.p.errorAt(e.key, e.raw, format, args...))
}

// isDir reports whether path is a directory (following symlinks).
func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// creatable is the package's creatable, asked once per directory: a profile's protections
// share a few (the working directory's, above all).
func (pl *planner) creatable(path string) bool {
	dir := filepath.Dir(path)
	ok, asked := pl.creatableIn[dir]
	if !asked {
		ok = creatable(path)
		pl.creatableIn[dir] = ok
	}
	return ok
}

// creatable reports whether this user could create the missing path: whether its deepest
// existing ancestor is writable. The sandbox runs with the same uid and no capability, so
// what this user cannot create there, the sandbox cannot either, and it needs no placeholder
// (which the launcher could not create anyway).
func creatable(path string) bool {
	dir := filepath.Dir(path)
	for ; dir != "/"; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(dir); err == nil {
			break
		}
	}
	return unix.Access(dir, unix.W_OK) == nil
}

// isGrant reports whether kind makes a path visible: a bind, a read-only bind, an overlay or a
// tmpfs.
func isGrant(kind plan.MountKind) bool {
	return kind == plan.MountBind || kind == plan.MountROBind || kind == plan.MountOverlay || kind == plan.MountTmpfs
}

// between lists the directories strictly between outer and inner (inner beneath outer),
// shallowest first.
func between(outer, inner string) []string {
	var dirs []string
	for dir := filepath.Dir(inner); dir != outer && within(dir, outer); dir = filepath.Dir(dir) {
		dirs = append([]string{dir}, dirs...)
	}
	return dirs
}

// sortMounts orders mounts by target depth, shallow first, stably; at equal target, grants
// (binds, tmpfs) come before masks (hide, protect), which must sit on top of them.
func sortMounts(mounts []plan.Mount) []plan.Mount {
	first := map[string]int{}
	for i, m := range mounts {
		if _, seen := first[m.Target]; !seen {
			first[m.Target] = i
		}
	}
	isMask := func(m plan.Mount) int {
		if m.Kind == plan.MountHideDir || m.Kind == plan.MountHideFile || m.Kind == plan.MountProtect {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(mounts, func(a, b plan.Mount) int {
		if d := depth(a.Target) - depth(b.Target); d != 0 {
			return d
		}
		if d := first[a.Target] - first[b.Target]; d != 0 {
			return d
		}
		return isMask(a) - isMask(b)
	})
	return mounts
}
