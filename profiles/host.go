package profiles

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Host is what resolution needs to know about the caller: it fills the variables and the
// environment passed through. Tests build one by hand; the CLI uses HostFromOS.
type Host struct {
	Home, Cwd, TmpDir string   // TmpDir "" means $TMPDIR is unset
	Environ           []string // KEY=VALUE, as os.Environ
	UID, GID          int
	// RunID names the files one run makes on the host (the egress proxy's socket directory):
	// random, so that no other user can guess them and make them first.
	RunID string
}

// HostFromOS describes the calling process.
func HostFromOS() (Host, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Host{}, fmt.Errorf("home directory: %w", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return Host{}, fmt.Errorf("working directory: %w", err)
	}
	// 64 bits from getrandom(2), in a short name (a unix socket's path must be short); not
	// crypto/rand, whose package set-up every run of jail would pay for.
	id := make([]byte, 8)
	if _, err := unix.Getrandom(id, 0); err != nil {
		return Host{}, fmt.Errorf("getrandom: %w", err)
	}
	return Host{
		Home: home, Cwd: cwd, TmpDir: os.Getenv("TMPDIR"),
		Environ: os.Environ(), UID: os.Getuid(), GID: os.Getgid(), RunID: hex.EncodeToString(id),
	}, nil
}

// getenv returns the value of name in the host's environment, "" when unset.
func (h Host) getenv(name string) string {
	for _, kv := range h.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// variables returns every variable a profile path may use; "" marks one that is known but
// unset here (a path using it is dropped when optional, an error otherwise).
func (h Host) variables() map[string]string {
	gitDir, commonDir := worktreeGitDirs(h.Cwd)
	gitFile := ""
	if gitDir != "" {
		gitFile = filepath.Join(h.Cwd, ".git")
	}
	return map[string]string{
		"HOME":           h.Home,
		"CWD":            h.Cwd,
		"TMPDIR":         h.TmpDir,
		"GIT_DIR":        gitDir,
		"GIT_COMMON_DIR": commonDir,
		"GIT_FILE":       gitFile, // the worktree's .git file, which names GIT_DIR
	}
}

// worktreeGitDirs returns the git directories of a linked worktree checked out at cwd: the one
// its .git file points to ("gitdir: PATH") and the shared one named by that directory's
// commondir file (the main repository's .git, where hooks and config live). Both are "" when
// cwd/.git is not such a file: a plain repository's .git lies in $CWD and needs no variable.
func worktreeGitDirs(cwd string) (gitDir, commonDir string) {
	data, err := os.ReadFile(filepath.Join(cwd, ".git"))
	if err != nil {
		return "", ""
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", ""
	}
	gitDir = absFrom(cwd, strings.TrimSpace(target))
	commonDir = gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		commonDir = absFrom(gitDir, strings.TrimSpace(string(data)))
	}
	return gitDir, commonDir
}

// absFrom makes path absolute relative to dir.
func absFrom(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}
