package workspace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// readNames returns the names in the directory path, sorted. In the upper layer (lend), a
// directory the command left without read or search permission for its owner is read anyway.
func readNames(path string, lend bool) ([]string, error) {
	f, err := openRead(path, unix.O_DIRECTORY, lend)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// openRead opens path for reading without following a symlink there. With lend, a file or
// directory that its mode makes unreadable to its owner (the command may chmod its own files to
// 0) is opened as lent describes. Only the upper layer is worth this: in the tree it would
// change the file's ctime, which the three-way check reads.
func openRead(path string, flags int, lend bool) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|flags, 0)
	if !lend || !errors.Is(err, os.ErrPermission) {
		return f, err
	}
	lent(path, func() error {
		f, err = os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|flags, 0)
		return err
	})
	return f, err
}

// lent runs fn with the owner of path (a regular file or directory of the user's, in the upper
// layer) lent read and search permission, and restores path's mode after: a descriptor opened
// meanwhile stays good, and reading a user.* attribute needs it too.
func lent(path string, fn func() error) error {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() && !info.IsDir() || int(info.Sys().(*syscall.Stat_t).Uid) != os.Getuid() {
		return fn()
	}
	if err := os.Chmod(path, info.Mode().Perm()|0o500); err != nil {
		return fn()
	}
	defer os.Chmod(path, info.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
	return fn()
}

// openContent opens a change set's or the tree's regular file for reading.
func openContent(e *Entry) (*os.File, error) {
	return openRead(e.file, 0, e.upper)
}

// readContent reads a regular file's content.
func readContent(e *Entry) ([]byte, error) {
	f, err := openContent(e)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// sameContent reports whether two regular files hold the same bytes.
func sameContent(a, b *Entry) (bool, error) {
	fa, err := openContent(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := openContent(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, erra := io.ReadFull(fa, ba)
		nb, errb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if erra != nil || errb != nil {
			endA := erra == io.EOF || erra == io.ErrUnexpectedEOF
			endB := errb == io.EOF || errb == io.ErrUnexpectedEOF
			if !endA {
				return false, erra
			}
			if !endB {
				return false, errb
			}
			return true, nil
		}
	}
}

// listXattr returns the names of path's extended attributes, without following a symlink.
func listXattr(path string) ([]string, error) {
	for size := 256; ; size *= 4 {
		buf := make([]byte, size)
		n, err := unix.Llistxattr(path, buf)
		if errors.Is(err, unix.ERANGE) && size < 1<<20 {
			continue
		}
		if errors.Is(err, unix.ENOTSUP) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return strings.FieldsFunc(string(buf[:n]), func(r rune) bool { return r == 0 }), nil
	}
}

// RemoveTree removes a change set's directory, or any directory an overlay used. The command may
// have left directories without write or search permission, and overlayfs leaves its work
// directory's own subdirectory mode 0: those are opened up first.
func RemoveTree(path string) error {
	if err := os.RemoveAll(path); err == nil {
		return nil
	}
	openUp(path)
	return os.RemoveAll(path)
}

// openUp gives the owner every permission on the directories beneath path.
func openUp(path string) {
	info, err := os.Lstat(path)
	if err != nil || !info.IsDir() {
		return
	}
	os.Chmod(path, 0o700)
	names, _ := readNames(path, true)
	for _, name := range names {
		openUp(filepath.Join(path, name))
	}
}
