package mount

import (
	"errors"
	"fmt"
	"path"

	"golang.org/x/sys/unix"
)

// resolveFlags make a lookup stay inside its root and refuse every symlink and magic link on the
// way, the last component included: the paths in the Spec were resolved on the host, so a symlink
// met here was planted since, and following it could redirect a grant or a mask. The lookup fails
// with ELOOP instead.
const resolveFlags = unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openIn opens rel beneath the root dirfd with openat2 and resolveFlags. openat2 answers EAGAIN
// when a concurrent rename raced the lookup; it is retried a few times.
func openIn(dirfd int, rel string, flags uint64) (int, error) {
	how := unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: resolveFlags}
	for range 8 {
		fd, err := unix.Openat2(dirfd, rel, &how)
		if err != unix.EAGAIN && err != unix.EINTR {
			return fd, err
		}
	}
	return -1, unix.EAGAIN
}

// relPath turns an absolute, clean sandbox path into one relative to its root ("." for /).
func relPath(p string) (string, error) {
	if !path.IsAbs(p) || path.Clean(p) != p {
		return "", fmt.Errorf("path %q is not absolute and clean: %w", p, unix.EINVAL)
	}
	if p == "/" {
		return ".", nil
	}
	return p[1:], nil
}

// create says what to do when a target does not exist.
type create int

const (
	mustExist create = iota // fail with ENOENT
	makeDir                 // create it as an empty directory, with its missing parents
	makeFile                // create it as an empty file, with its missing parent directories
)

// createAs is how a missing target is created for an op that has a Create/IsDir choice.
func createAs(want, isDir bool) create {
	switch {
	case !want:
		return mustExist
	case isDir:
		return makeDir
	}
	return makeFile
}

// openTarget opens the sandbox path p beneath root as an O_PATH descriptor to mount on, creating
// it (and missing parent directories) as c says. It never follows a symlink: one anywhere on
// the path, or planted where the target should be created, fails the lookup with ELOOP. A target
// inside a writable bind would be created on the host: the plan's ops never ask for one there
// (protected paths' placeholders are the host's, package placeholder).
func openTarget(root int, p string, c create) (int, error) {
	rel, err := relPath(p)
	if err != nil {
		return -1, err
	}
	return openRel(root, rel, c)
}

// openRel is openTarget for a path already relative to root. Only the common case, a target
// that exists, costs a single syscall.
func openRel(root int, rel string, c create) (int, error) {
	flags := uint64(unix.O_PATH)
	if c == makeDir {
		flags |= unix.O_DIRECTORY // a file where a directory is wanted: ENOTDIR
	}
	fd, err := openIn(root, rel, flags)
	if !errors.Is(err, unix.ENOENT) || c == mustExist {
		return fd, pathError("open", rel, err)
	}
	parent, base := path.Split(rel)
	pfd := root // a target just below the root: no lookup of "." (every op's first on the root)
	if parent != "" {
		if pfd, err = openRel(root, path.Clean(parent), makeDir); err != nil {
			return -1, err
		}
		defer CloseFd(pfd)
	}
	if c == makeDir {
		err = unix.Mkdirat(pfd, base, 0o755)
	} else {
		err = makeFileAt(pfd, base)
	}
	if err != nil && !errors.Is(err, unix.EEXIST) { // EEXIST: made meanwhile, or a planted symlink
		return -1, pathError("create", rel, err)
	}
	fd, err = openIn(pfd, base, flags)
	return fd, pathError("open", rel, err)
}

// makeFileAt creates an empty regular file name in dirfd; it never follows a symlink there.
func makeFileAt(dirfd int, name string) error {
	return unix.Mknodat(dirfd, name, unix.S_IFREG|0o644, 0)
}

// pathError wraps a non-nil err as "STEP /PATH: err", keeping the errno reachable.
func pathError(step, rel string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", step, path.Join("/", rel), err)
}
