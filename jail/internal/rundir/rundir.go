// Package rundir is the layout of jail's per-user runtime directory, where each persistent
// sandbox has a directory of its own that no sandbox can see:
//
//	$XDG_RUNTIME_DIR/jail/            0700 (or $JAIL_RUNTIME_DIR, or /tmp/jail-UID)
//	  jail.sock                       jail serve's socket
//	  names/NAME -> ID                the unique names, as symlinks
//	  ID/                             0700, one sandbox:
//	    lock                          flock'ed by the keeper while it lives; mtime: last use
//	    sandbox.json                  what create recorded (Record), labels and timers as patched
//	    plan.json                     the resolved plan (jail --dry-run's output)
//	    api.sock, ctl.sock            the keeper's sockets (HTTP; session.h's messages)
//	    egress.sock, egress.json      the egress proxy's socket (bound inside) and policy
//	    out/PID.1, out/PID.2          a background process's kept output
//	    ended                         why it ended, when it ended by itself
//	    changes -> CHANGE-SET         its overlay workspace's change set (package workspace), if any
//	  DEV-INO                         the placeholders jail made in one directory (package placeholder)
//	  audit-VERSION-HASH              a large writable grant's kept walk (package audit)
//
// Package state opens this same directory for the placeholders' records and the audit's walks,
// except inside a nested user namespace or on a read-only mount, where it picks its own
// (state.Open); both check it with state.Private.
//
// Every file there is written by jail outside any sandbox; liveness is the lock, which the
// kernel releases when the keeper dies, not anything a sandbox could forge.
package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/random"
	"github.com/jail-sandbox/jail/jail/internal/state"
)

// Files of a sandbox's directory.
const (
	Lock         = "lock"
	RecordFile   = "sandbox.json"
	PlanFile     = "plan.json"
	APISocket    = "api.sock"
	CtlSocket    = "ctl.sock"
	EgressSocket = "egress.sock"
	EgressPolicy = "egress.json"
	OutDir       = "out"
	EndedFile    = "ended"
	ChangesLink  = "changes"
)

// DaemonSocket is jail serve's socket in the runtime directory; Names its names' directory.
const (
	DaemonSocket = "jail.sock"
	Names        = "names"
)

// IDPrefix starts every sandbox id.
const IDPrefix = "jb_"

// Root is the runtime directory.
type Root string

// Path returns the runtime directory this user's jail uses, without creating it:
// $JAIL_RUNTIME_DIR, else $XDG_RUNTIME_DIR/jail, else /tmp/jail-UID.
func Path() string {
	if d := os.Getenv("JAIL_RUNTIME_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "jail")
	}
	return filepath.Join(os.TempDir(), "jail-"+strconv.Itoa(os.Getuid()))
}

// Open returns the runtime directory, creating it mode 0700 when missing. It must be a
// directory (not a symlink) of this user's that no one else may enter: another user could
// otherwise have made it, in /tmp, to watch or swap what jail puts there.
func Open() (Root, error) {
	dir := Path()
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return "", fmt.Errorf("runtime directory %s: %w", dir, err)
	}
	return private(dir)
}

// Existing returns the runtime directory if it exists and is private, else "" (no sandbox can
// exist then) or the error.
func Existing() (Root, error) {
	dir := Path()
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	return private(dir)
}

// private is dir, checked as jail's state directory is.
func private(dir string) (Root, error) {
	f, err := state.Private(dir)
	if err != nil {
		return "", err
	}
	f.Close()
	return Root(dir), nil
}

// NewID returns a fresh sandbox id.
func NewID() string {
	id, _ := random.Hex(6)
	return IDPrefix + id
}

// IsID reports whether s has the form of a sandbox id.
func IsID(s string) bool {
	if len(s) != len(IDPrefix)+12 || !strings.HasPrefix(s, IDPrefix) {
		return false
	}
	for _, c := range s[len(IDPrefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckName refuses a name that is not 1–63 characters of A-Za-z0-9_.- starting with a letter or
// digit, or that could be taken for an id.
func CheckName(name string) error {
	ok := len(name) > 0 && len(name) <= 63 && !strings.HasPrefix(name, IDPrefix)
	for i, c := range name {
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("_.-", c)) {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("name %q: use 1 to 63 of A-Z a-z 0-9 _ . -, starting with a letter or digit, and not starting with %s", name, IDPrefix)
	}
	return nil
}

// Dir returns the directory of sandbox id.
func (r Root) Dir(id string) string { return filepath.Join(string(r), id) }

// NameLink returns the path of name's link.
func (r Root) NameLink(name string) string { return filepath.Join(string(r), Names, name) }

// Resolve returns the id that idOrName is, or names; "" when there is none.
func (r Root) Resolve(idOrName string) string {
	if r == "" {
		return ""
	}
	if IsID(idOrName) {
		if _, err := os.Lstat(r.Dir(idOrName)); err == nil {
			return idOrName
		}
		return ""
	}
	if CheckName(idOrName) != nil {
		return ""
	}
	id, err := os.Readlink(r.NameLink(idOrName))
	if err != nil || !IsID(id) {
		return ""
	}
	if _, err := os.Lstat(r.Dir(id)); err != nil {
		return ""
	}
	return id
}

// IDs returns the ids of every sandbox directory, live or not.
func (r Root) IDs() ([]string, error) {
	if r == "" {
		return nil, nil
	}
	entries, err := os.ReadDir(string(r))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		if IsID(e.Name()) && e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Live reports whether a keeper holds sandbox dir's lock: whether the sandbox lives.
func Live(dir string) bool {
	f, err := os.Open(filepath.Join(dir, Lock))
	if err != nil {
		return false
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return errors.Is(err, unix.EWOULDBLOCK)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false
}

// ReserveName makes name's link point at id, unless a live sandbox has the name: then
// os.ErrExist. A link left by a sandbox that is gone is taken over. Creates serialize on the
// names directory's lock.
func (r Root) ReserveName(name, id string) error {
	names := filepath.Join(string(r), Names)
	if err := os.MkdirAll(names, 0o700); err != nil {
		return err
	}
	unlock, err := lockDir(names)
	if err != nil {
		return err
	}
	defer unlock()
	link := r.NameLink(name)
	if old, err := os.Readlink(link); err == nil {
		if IsID(old) && Live(r.Dir(old)) {
			return os.ErrExist
		}
		os.Remove(link)
	}
	return os.Symlink(id, link)
}

// lockDir takes dir's flock, exclusive, and returns its release.
func lockDir(dir string) (func(), error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return func() { unix.Close(fd) }, nil
}
