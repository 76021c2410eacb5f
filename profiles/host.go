package profiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/random"
	"github.com/jail-sandbox/jail/workspace"
)

// Host is what resolution needs to know about the caller: it fills the variables and the
// environment passed through. Tests build one by hand; the CLI uses HostFromOS.
type Host struct {
	Home, Cwd, TmpDir string   // TmpDir "" means $TMPDIR is unset
	Environ           []string // KEY=VALUE, as os.Environ
	UID, GID          int
	// RunID names the files one run makes on the host (git commit mode's import directory):
	// random, so that no other user can guess them and make them first.
	RunID string
	// ChangeSet names the change set an overlay workspace writes to (package workspace):
	// HostFromOS makes a fresh one; a persistent sandbox passes its own name.
	ChangeSet string
	RAM       uint64 // bytes of memory the host has; 0: unknown (limits.tmpfs's default)
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
	runID, err := random.Hex(8) // 64 bits, in a short name
	if err != nil {
		return Host{}, err
	}
	var info unix.Sysinfo_t
	if err := unix.Sysinfo(&info); err != nil {
		return Host{}, fmt.Errorf("sysinfo: %w", err)
	}
	return Host{
		Home: home, Cwd: cwd, TmpDir: os.Getenv("TMPDIR"),
		Environ: os.Environ(), UID: os.Getuid(), GID: os.Getgid(), RunID: runID,
		ChangeSet: workspace.NewID(),
		RAM:       uint64(info.Totalram) * uint64(info.Unit),
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
// unset here (a path using it is dropped when optional, an error otherwise). repo is the
// working directory's repository (nil outside one, or when it was refused).
func (h Host) variables(repo *repository) map[string]string {
	vars := repo.variables()
	vars["HOME"], vars["CWD"], vars["TMPDIR"] = h.Home, h.Cwd, h.TmpDir
	return vars
}

// repository finds the working directory's git repository (see findRepository): nil and no
// error outside one, nil and the reason when one was refused.
func (h Host) repository(paths *resolver) (*repository, error) {
	if !filepath.IsAbs(h.Cwd) || !filepath.IsAbs(h.Home) {
		return nil, nil
	}
	cwd, err := paths.physical(filepath.Clean(h.Cwd))
	if err != nil {
		return nil, nil
	}
	home, err := paths.physical(filepath.Clean(h.Home))
	if err != nil {
		return nil, nil
	}
	return findRepository(cwd, home, h.UID)
}

// absFrom makes path absolute relative to dir.
func absFrom(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}
