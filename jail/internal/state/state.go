// Package state is jail's per-user state directory, where runs leave what the next run needs:
// the record files of the placeholders sandboxes share (package placeholder), and what a run's
// audit walked (package audit).
package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/userns"
)

// Open opens jail's per-user state directory, making it when missing: $JAIL_RUNTIME_DIR, else jail
// under $XDG_RUNTIME_DIR (the user's, mode 0700, emptied at logout), else /tmp/jail-UID. Either must be
// a directory of this user that no one else can enter: another user could otherwise plant or
// remove what jail keeps there, or point the name elsewhere.
//
// In a user namespace (a rootless container, `unshare -U -r`) UID is the user's outside it, where
// /tmp is often shared: root of the namespace is not the host's root, whose /tmp/jail-0 it cannot
// use, and a run inside shares the outer user's directory. Deeper down, where the name found is
// another's (its owner unmapped here), the namespace gets one of its own, /tmp/jail-UID-userns-INO.
//
// Where that directory is on a read-only mount (inside a harness's own sandbox, such as Claude
// Code's, which leaves /tmp and the runtime directory read-only and grants a temporary directory of
// its own), jail uses jail-UID in $TMPDIR: runs there coordinate among themselves. A host run's
// placeholder that such a run removes detaches the host sandbox's protection, which its pid 1 sees
// and stops it for (fail closed).
func Open() (*os.File, error) {
	f, err := openPreferred()
	if err == nil && !readOnly(f) || err != nil && !errors.Is(err, unix.EROFS) {
		return f, err
	}
	tmp := filepath.Join(os.TempDir(), "jail-"+strconv.Itoa(os.Getuid()))
	if f != nil {
		if f.Name() == tmp {
			return f, nil
		}
		f.Close()
	}
	return Private(tmp)
}

// readOnly tells whether dir is on a read-only mount.
func readOnly(dir *os.File) bool {
	var st unix.Statfs_t
	return unix.Fstatfs(int(dir.Fd()), &st) == nil && st.Flags&unix.ST_RDONLY != 0
}

// openPreferred opens the state directory named by the environment, or /tmp's.
func openPreferred() (*os.File, error) {
	if rt := os.Getenv("JAIL_RUNTIME_DIR"); filepath.IsAbs(rt) {
		return Private(rt) // as persistent sandboxes' (package rundir), whose directory this is too
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		return Private(filepath.Join(rt, "jail"))
	}
	dir := "/tmp/jail-" + strconv.Itoa(outerUID(os.Getuid()))
	f, err := Private(dir)
	var other *notPrivate
	if errors.As(err, &other) && other.owner == overflowUID() {
		if ns, e := os.Readlink("/proc/self/ns/user"); e == nil && strings.HasPrefix(ns, "user:[") {
			return Private(dir + "-userns-" + strings.Trim(ns[len("user:"):], "[]"))
		}
	}
	return f, err
}

// Private makes dir when missing and opens it, when it is a directory (not a symlink) of this
// user's that no one else may enter: jail's state directory, and persistent sandboxes' runtime
// directory (package rundir). It checks the directory it opened, not the name, so nothing can be
// swapped in between.
func Private(dir string) (*os.File, error) {
	if err := unix.Mkdir(dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w (remove it, or set XDG_RUNTIME_DIR)", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		unix.Close(fd)
		return nil, &notPrivate{dir, int(st.Uid), st.Mode & 0o7777}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// notPrivate is a state directory another user owns, or others may enter.
type notPrivate struct {
	dir   string
	owner int
	mode  uint32
}

func (e *notPrivate) Error() string {
	return fmt.Sprintf("state directory %s is not private to uid %d (owner %d, mode %#o): remove it, or set XDG_RUNTIME_DIR",
		e.dir, os.Getuid(), e.owner, e.mode)
}

// overflowUID is the uid a file of an unmapped owner shows in this user namespace.
func overflowUID() int {
	b, err := os.ReadFile("/proc/sys/kernel/overflowuid")
	if n, e := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && e == nil {
		return n
	}
	return 65534
}

// outerUID is uid as the parent user namespace knows it (uid itself in the initial namespace,
// or when /proc/self/uid_map cannot be read). Read once.
func outerUID(uid int) int {
	return mapUID(uidMap(), uid)
}

var uidMap = sync.OnceValue(func() string {
	b, _ := os.ReadFile("/proc/self/uid_map")
	return string(b)
})

// mapUID maps uid through a uid_map's text; uid where no range holds it.
func mapUID(uidMap string, uid int) int {
	outer, _ := userns.MapID(userns.ParseIDMap(uidMap), uid)
	return outer
}
