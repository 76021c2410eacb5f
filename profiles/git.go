package profiles

import (
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/jail-sandbox/jail/plan"
)

// Git's metadata is a class, not a list of names: config, hooks, commondir, the index and its
// gitlinks, info/, modules/, worktrees/, rebase and sequencer state all decide what the host's
// git runs later. So the repository's common directory (which holds its git directory) is
// protected as a whole, and every place where a .git would take over from it is protected too.

// maxGitlinks bounds the submodule paths protected, nested ones included.
const maxGitlinks = 4096

// git applies [git] mode to the working directory's repository, after the profile's own
// protections, and returns what the plan says about it (nil when nothing applies). Outside a
// repository there is nothing to apply: `git init` works, and the new repository is the
// sandbox's own.
func (pl *planner) git() (*plan.Git, error) {
	mode := cmp.Or(pl.p.Git.Mode, "read-only")
	r := pl.repo
	if mode == "off" {
		return nil, nil
	}
	for _, m := range pl.mounts {
		if r != nil && m.Kind == plan.MountBind && within(m.Source, r.commonDir) {
			return nil, pl.p.errorAt("git.mode", pl.p.Git.Mode, "%s is granted write, inside the repository's git directory %s, which git.mode = %q keeps read-only (run from the work tree)",
				m.Source, r.commonDir, mode)
		}
	}
	if err := pl.protectDotGits(r); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, nil
	}
	g := &plan.Git{Mode: mode, WorkTree: r.top, GitDir: r.gitDir, CommonDir: r.commonDir}
	if mode == "commit" {
		pl.commitOverlay(g)
	} else if err := pl.protect(pl.gitEntry(r.commonDir, true)); err != nil {
		return nil, err
	}
	for _, dotGit := range r.dotGits {
		if err := pl.protect(pl.gitEntry(dotGit, true)); err != nil {
			return nil, err
		}
	}
	if r.top == "" || !pl.writableWithin(r.top) {
		return g, nil
	}
	links, err := submodules(r.top, r.gitDir, 0)
	if err != nil {
		pl.warnings = append(pl.warnings, pl.p.errorAt("git.mode", pl.p.Git.Mode,
			"%v: submodule paths are not protected; do not run git on the host in a submodule this sandbox could write", err))
	}
	for _, dotGit := range links {
		if err := pl.protect(pl.gitEntry(dotGit, true)); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// commitOverlay makes the common directory a private overlay for commit mode, in place of any
// grant of that directory itself: the host's directory is its read-only lower layer, and the
// run's import directory holds the upper one, from which the new objects and refs are imported
// at exit (plan.GitImport). The names the profile protects in the work tree go with it: commits
// through them are not imported.
func (pl *planner) commitOverlay(g *plan.Git) {
	dir := filepath.Join(tempDir(pl.host, pl.paths), "jail-git-"+pl.host.RunID)
	g.Import = &plan.GitImport{Dir: dir, Refs: "refs/jail/" + cmp.Or(pl.host.RunID, "run") + "/", Protected: []string{".gitmodules"}}
	for _, raw := range pl.p.Filesystem.Protect {
		e, err := pl.p.parseEntry("filesystem.protect", raw)
		if err != nil {
			continue // reported by the protect step already
		}
		place, err := pl.paths.place(e.path)
		name := filepath.Base(place)
		if err == nil && g.WorkTree != "" && within(place, g.WorkTree) && !slices.Contains(g.Import.Protected, name) {
			g.Import.Protected = append(g.Import.Protected, name)
		}
	}
	pl.mounts = slices.DeleteFunc(pl.mounts, func(m plan.Mount) bool { return m.Target == g.CommonDir && isGrant(m.Kind) })
	pl.mounts = append(pl.mounts, plan.Mount{Kind: plan.MountOverlay, Source: g.CommonDir, Target: g.CommonDir, IsDir: true,
		Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work")})
}

// protectDotGits protects every .git that exists in the working directory or above it, what
// ever the repository check made of it: a repository refused (at the home, say) grants nothing,
// but where a grant makes its .git writable, it stays read-only all the same. A symlinked .git
// is left alone (findRepository refused it with a warning): a mask on a symlink could be
// redirected. The repository's own git directory r is left to its mode.
func (pl *planner) protectDotGits(r *repository) error {
	dir, err := pl.paths.physical(filepath.Clean(pl.host.Cwd))
	if err != nil || !filepath.IsAbs(dir) {
		return nil
	}
	for ; ; dir = filepath.Dir(dir) {
		dotGit := filepath.Join(dir, ".git")
		if info, err := os.Lstat(dotGit); err == nil && info.Mode()&fs.ModeSymlink == 0 && (r == nil || !within(dotGit, r.commonDir)) {
			if err := pl.protect(pl.gitEntry(dotGit, info.IsDir())); err != nil {
				return err
			}
		}
		if dir == "/" {
			return nil
		}
	}
}

// gitEntry is a protection [git] adds: located at git.mode, a directory placeholder where the
// path is missing, and no warning where no writable grant holds it (it is read-only there).
func (pl *planner) gitEntry(path string, dir bool) entry {
	return entry{key: "git.mode", raw: pl.p.Git.Mode, path: path, dir: dir, quiet: true}
}

// writableWithin reports whether a writable bind lies at, above or beneath dir.
func (pl *planner) writableWithin(dir string) bool {
	for _, m := range pl.mounts {
		if m.Kind == plan.MountBind && (within(m.Target, dir) || within(dir, m.Target)) {
			return true
		}
	}
	return false
}

// submodules returns the .git places of the gitlinks in gitDir's index, beneath top, and of
// the gitlinks of every submodule checked out there whose git directory lies where git keeps
// them (nested submodules), up to maxGitlinks places.
func submodules(top, gitDir string, found int) ([]string, error) {
	paths, err := gitlinks(gitDir)
	if err != nil {
		return nil, fmt.Errorf("read %s/index: %w", gitDir, err)
	}
	var places []string
	for _, p := range paths {
		if found+len(places) >= maxGitlinks {
			return places, fmt.Errorf("more than %d submodules", maxGitlinks)
		}
		sub := filepath.Join(top, filepath.FromSlash(p))
		if !within(sub, top) || sub == top {
			continue // git refuses such paths; nothing of the work tree is there
		}
		places = append(places, filepath.Join(sub, ".git"))
		subGitDir, err := readGitFile(filepath.Join(sub, ".git"))
		if err != nil || !isSubmoduleOf(subGitDir, sub) {
			continue // not checked out, or not a submodule git made: its own gitlinks are not read
		}
		nested, err := submodules(sub, subGitDir, found+len(places))
		places = append(places, nested...)
		if err != nil {
			return places, err
		}
	}
	return places, nil
}
