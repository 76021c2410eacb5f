package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/random"
)

// reportFile is where --report FILE goes, held so that what the command does during the run
// cannot decide what ends up there. Its directory is opened before anything runs, and FILE's
// name in it is emptied then (a report left by an earlier run is removed, so that a run that
// never gets to write one leaves none). At the end, once every sandboxed process is gone, the
// report is written to a new file of that directory (O_EXCL, a name the sandbox never saw) and
// renamed over FILE: whatever the command put at FILE meanwhile (a forged report, a symlink to
// elsewhere) is replaced, never written through, and a directory it moved or replaced on the
// way to FILE is not followed (the descriptor is the directory jail opened).
type reportFile struct {
	dir  *os.File // O_PATH
	name string
	path string // as given, for messages
}

// openReportFile checks that path can take a report: its directory exists and is writable, and
// path is missing or a regular file (removed now). A symlink or directory there is refused.
func openReportFile(path string) (*reportFile, error) {
	name := filepath.Base(path)
	if name == "." || name == ".." || name == "/" {
		return nil, fmt.Errorf("open report %s: not a file name", path)
	}
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open report %s: %w", path, err)
	}
	f := &reportFile{dir: os.NewFile(uintptr(fd), filepath.Dir(path)), name: name, path: path}
	if err := f.prepare(); err != nil {
		f.dir.Close()
		return nil, fmt.Errorf("open report %s: %w", path, err)
	}
	return f, nil
}

// prepare checks the directory and empties the name.
func (f *reportFile) prepare() error {
	if err := unix.Faccessat(int(f.dir.Fd()), ".", unix.W_OK|unix.X_OK, 0); err != nil {
		return err
	}
	var st unix.Stat_t
	err := unix.Fstatat(int(f.dir.Fd()), f.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return err
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return errors.New("is a symlink: name the file it points to")
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return errors.New("not a regular file")
	}
	return unix.Unlinkat(int(f.dir.Fd()), f.name, 0)
}

// write puts b at the report's path, as the type says. planted says something was there, which
// the command (or something else since jail started) put there.
func (f *reportFile) write(b []byte) (planted bool, err error) {
	defer f.dir.Close()
	dir := int(f.dir.Fd())
	suffix, _ := random.Hex(8)
	tmp := "." + f.name + ".jail-" + suffix
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return false, fmt.Errorf("write report %s: %w", f.path, err)
	}
	out := os.NewFile(uintptr(fd), tmp)
	_, err = out.Write(b)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	var st unix.Stat_t
	planted = unix.Fstatat(dir, f.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, f.name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return planted, fmt.Errorf("write report %s: %w", f.path, err)
	}
	return planted, nil
}
