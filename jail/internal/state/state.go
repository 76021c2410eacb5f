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

	"golang.org/x/sys/unix"
)

// Open opens jail's per-user state directory, making it when missing: jail under
// $XDG_RUNTIME_DIR (the user's, mode 0700, emptied at logout), else /tmp/jail-UID. Either must be
// a directory of this user that no one else can enter: another user could otherwise plant or
// remove what jail keeps there, or point the name elsewhere.
func Open() (*os.File, error) {
	uid := os.Getuid()
	dir := "/tmp/jail-" + strconv.Itoa(uid)
	if rt := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		dir = filepath.Join(rt, "jail")
	}
	if err := unix.Mkdir(dir, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, fmt.Errorf("state directory %s: %w", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("state directory %s: %w (remove it, or set XDG_RUNTIME_DIR)", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || int(st.Uid) != uid || st.Mode&0o077 != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("state directory %s is not private to uid %d (owner %d, mode %#o): remove it, or set XDG_RUNTIME_DIR",
			dir, uid, st.Uid, st.Mode&0o7777)
	}
	return os.NewFile(uintptr(fd), dir), nil
}
