package profiles

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// repository is the git repository the working directory belongs to, found on the host as git
// finds it (the nearest .git upwards, not across a filesystem boundary) and validated. Every
// path is physical.
//
// Nothing a sandbox could have written may decide a later sandbox's grants, and a .git file, a
// commondir file and a .git directory in a subdirectory are all things an earlier sandbox could
// have written. So a pointer is followed only where it has the shape git itself creates — a
// linked worktree (GIT_DIR = COMMON/worktrees/NAME, whose gitdir file points back at this
// .git) or a submodule (GIT_DIR beneath an enclosing repository's .git/modules/) — and no part
// of the repository may be the home directory, hold it, or (for a git directory) hold shell
// start-up files. A repository that fails is refused with its reason, and gets no grant.
type repository struct {
	top       string // the work tree's top level ("" inside a git directory)
	gitDir    string // the git directory (HEAD, index)
	commonDir string // the shared git directory (objects, refs, config, hooks); holds gitDir
	// dotGits are the places from the working directory up to top where a .git would take
	// over from this repository: each directory's .git, deepest first.
	dotGits []string
}

// shellFiles are start-up files that a shell runs on the host; no git directory holds them.
var shellFiles = []string{".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin"}

// findRepository finds the repository that cwd (physical) belongs to. It returns nil and no
// error outside any repository, and nil and the reason when one was found but refused.
func findRepository(cwd, home string, uid int) (*repository, error) {
	var dotGits []string
	var dev uint64 // cwd's filesystem, once the search climbs: git stops looking at a boundary
	for dir := cwd; ; {
		dotGit := filepath.Join(dir, ".git")
		info, err := os.Lstat(dotGit)
		switch {
		case err == nil && info.Mode()&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("%s is a symlink; jail does not follow a repository's .git through one", dotGit)
		case err == nil && info.Mode().IsRegular():
			gitDir, err := readGitFile(dotGit)
			if err != nil {
				return nil, err
			}
			return checked(&repository{top: dir, gitDir: gitDir, dotGits: append(dotGits, dotGit)}, dotGit, home, uid)
		case err == nil && info.IsDir() && isGitDir(dotGit, dotGit):
			return checked(&repository{top: dir, gitDir: dotGit, dotGits: dotGits}, "", home, uid)
		}
		// Not here (missing, or a directory that is no repository, such as jail's placeholder):
		// inside a git directory, that one; else the parent, on the same filesystem.
		if isGitDir(dir, dir) {
			return checked(&repository{gitDir: dir}, "", home, uid)
		}
		dotGits = append(dotGits, dotGit)
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, nil
		}
		if dir == cwd {
			var ok bool
			if dev, ok = device(cwd); !ok {
				return nil, nil
			}
		}
		if parentDev, ok := device(parent); !ok || parentDev != dev {
			return nil, nil
		}
		dir = parent
	}
}

// readGitFile reads a .git file ("gitdir: PATH") and returns the physical git directory.
func readGitFile(file string) (string, error) {
	data, err := readSmall(file)
	if err != nil {
		return "", err
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s is not a \"gitdir: PATH\" file", file)
	}
	gitDir, err := filepath.EvalSymlinks(absFrom(filepath.Dir(file), strings.TrimSpace(target)))
	if err != nil {
		return "", fmt.Errorf("%s points at %s: %w", file, strings.TrimSpace(target), err)
	}
	return gitDir, nil
}

// checked fills in r's common directory and checks r as the type comment says; gitFile is the
// .git file that named r.gitDir ("" for a .git directory).
func checked(r *repository, gitFile, home string, uid int) (*repository, error) {
	common, err := commonDir(r.gitDir)
	if err != nil {
		return nil, err
	}
	r.commonDir = common
	switch {
	case !isGitDir(r.gitDir, r.commonDir):
		return nil, fmt.Errorf("%s is not a git directory (no HEAD, objects and refs)", r.gitDir)
	case r.gitDir != r.commonDir && !isWorktreeOf(r.gitDir, r.commonDir, gitFile):
		return nil, fmt.Errorf("%s names %s as its common directory, which is not the linked-worktree layout git creates (%s/worktrees/NAME pointing back at %s)",
			r.gitDir, r.commonDir, r.commonDir, cmp.Or(gitFile, "a .git file"))
	case gitFile != "" && r.gitDir == r.commonDir && !isSubmoduleOf(r.gitDir, r.top):
		return nil, fmt.Errorf("%s points at %s, which is neither a linked worktree nor a submodule's git directory (beneath an enclosing repository's .git/modules/)",
			gitFile, r.gitDir)
	}
	for _, dir := range []string{r.top, r.gitDir, r.commonDir} {
		if dir != "" && within(home, dir) {
			return nil, fmt.Errorf("%s holds the home directory %s; jail grants no repository there", dir, home)
		}
	}
	for _, dir := range []string{r.gitDir, r.commonDir} {
		for _, name := range shellFiles {
			if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
				return nil, fmt.Errorf("%s holds %s, which no git directory does", dir, name)
			}
		}
	}
	for _, dir := range []string{r.top, r.gitDir, r.commonDir} {
		if dir != "" && !ownedBy(dir, uid) {
			return nil, fmt.Errorf("%s is not owned by uid %d (git refuses it too: safe.directory)", dir, uid)
		}
	}
	return r, nil
}

// commonDir returns gitDir's common directory: what its commondir file names, else gitDir.
func commonDir(gitDir string) (string, error) {
	file := filepath.Join(gitDir, "commondir")
	data, err := readSmall(file)
	if errors.Is(err, fs.ErrNotExist) {
		return gitDir, nil
	}
	if err != nil {
		return "", err
	}
	common, err := filepath.EvalSymlinks(absFrom(gitDir, strings.TrimSpace(string(data))))
	if err != nil {
		return "", fmt.Errorf("%s names %s: %w", file, strings.TrimSpace(string(data)), err)
	}
	return common, nil
}

// isGitDir reports whether dir looks like a git directory to git: a HEAD file, and objects and
// refs directories in its common directory common.
func isGitDir(dir, common string) bool {
	head, err := os.Lstat(filepath.Join(dir, "HEAD"))
	return err == nil && head.Mode().IsRegular() && isDir(filepath.Join(common, "objects")) && isDir(filepath.Join(common, "refs"))
}

// isWorktreeOf reports whether gitDir is the git directory git made for a linked worktree of
// common: COMMON/worktrees/NAME, whose gitdir file names gitFile, the worktree's .git.
func isWorktreeOf(gitDir, common, gitFile string) bool {
	if gitFile == "" || filepath.Dir(gitDir) != filepath.Join(common, "worktrees") {
		return false
	}
	data, err := readSmall(filepath.Join(gitDir, "gitdir"))
	if err != nil {
		return false
	}
	back, err := filepath.EvalSymlinks(absFrom(gitDir, strings.TrimSpace(string(data))))
	return err == nil && back == gitFile
}

// isSubmoduleOf reports whether gitDir is a submodule's git directory for the work tree top:
// beneath the modules/ of an enclosing repository's git directory (a .git directory above top,
// or the git directory of a linked worktree above it, which is where git keeps the submodules of
// a worktree).
func isSubmoduleOf(gitDir, top string) bool {
	for dir := filepath.Dir(top); ; dir = filepath.Dir(dir) {
		if enclosing := enclosingGitDir(dir); enclosing != "" {
			modules := filepath.Join(enclosing, "modules")
			if gitDir != modules && within(gitDir, modules) {
				return true
			}
		}
		if dir == "/" {
			return false
		}
	}
}

// enclosingGitDir returns the git directory whose work tree's top level is dir: its .git
// directory, or what its .git file names when that is a linked worktree as git makes it; "" for
// anything else.
func enclosingGitDir(dir string) string {
	dotGit := filepath.Join(dir, ".git")
	info, err := os.Lstat(dotGit)
	switch {
	case err != nil:
		return ""
	case info.IsDir():
		return dotGit
	case !info.Mode().IsRegular():
		return ""
	}
	gitDir, err := readGitFile(dotGit)
	if err != nil {
		return ""
	}
	common, err := commonDir(gitDir)
	if err != nil || !isWorktreeOf(gitDir, common, dotGit) {
		return ""
	}
	return gitDir
}

// readSmall reads a pointer file, refusing what is not a small regular file.
func readSmall(file string) ([]byte, error) {
	info, err := os.Stat(file)
	switch {
	case err != nil:
		return nil, err
	case !info.Mode().IsRegular() || info.Size() > 4096:
		return nil, fmt.Errorf("%s is not a small regular file", file)
	}
	return os.ReadFile(file)
}

// device returns the filesystem path is on (symlinks followed), and whether it could tell.
func device(path string) (uint64, bool) {
	var st syscall.Stat_t
	err := syscall.Stat(path, &st)
	return st.Dev, err == nil
}

// ownedBy reports whether path is owned by uid, as git's safe.directory check wants.
func ownedBy(path string, uid int) bool {
	var st syscall.Stat_t
	return syscall.Stat(path, &st) == nil && int(st.Uid) == uid
}

// variables are the repository's paths as profile variables; all "" without one.
func (r *repository) variables() map[string]string {
	if r == nil {
		return map[string]string{"GIT_WORK_TREE": "", "GIT_DIR": "", "GIT_COMMON_DIR": ""}
	}
	return map[string]string{"GIT_WORK_TREE": r.top, "GIT_DIR": r.gitDir, "GIT_COMMON_DIR": r.commonDir}
}
