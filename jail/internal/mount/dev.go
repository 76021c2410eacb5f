package mount

import (
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// devNodes are the host device nodes bound into the minimal /dev.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// devLinks are the symlinks of the minimal /dev, name → text.
var devLinks = [][2]string{
	{"ptmx", "pts/ptmx"},
	{"fd", "/proc/self/fd"},
	{"stdin", "/proc/self/fd/0"},
	{"stdout", "/proc/self/fd/1"},
	{"stderr", "/proc/self/fd/2"},
}

// dev mounts a minimal /dev on Target: a directory of the store (store.go) holding devNodes
// bound from the host, a new devpts instance at pts (ptmx linked to its own), another directory
// of the store at shm and devLinks. The mount is nodev: the nodes work because each is its own
// bind of the host's /dev.
func (r *Roots) dev(m plan.Mount) error {
	dev, err := r.mountPrivate(m.Target, makeDir, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, 0o755)
	if err != nil {
		return err
	}
	defer CloseFd(dev)
	for _, name := range devNodes {
		if err := r.bindDevNode(dev, name); err != nil {
			return pathError("bind", "dev/"+name, err)
		}
	}
	if err := mountNewAt(dev, "pts", "devpts", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC,
		"newinstance", "ptmxmode=0666", "mode=0620"); err != nil {
		return pathError("mount", "dev/pts", err)
	}
	if err := r.mountPrivateAt(dev, "shm", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, 0o1777); err != nil {
		return pathError("mount", "dev/shm", err)
	}
	for _, l := range devLinks {
		if err := unix.Symlinkat(l[1], dev, l[0]); err != nil {
			return pathError("symlink", "dev/"+l[0], err)
		}
	}
	return nil
}

// bindDevNode binds the host's /dev/NAME on a new empty file NAME in the directory dev.
func (r *Roots) bindDevNode(dev int, name string) error {
	if err := makeFileAt(dev, name); err != nil {
		return err
	}
	node, err := unix.OpenTree(r.host, "dev/"+name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return err
	}
	defer CloseFd(node)
	return unix.MoveMount(node, "", dev, name, unix.MOVE_MOUNT_F_EMPTY_PATH)
}

// mountNewAt mounts a new fstype filesystem on a new directory name in dir.
func mountNewAt(dir int, name, fstype string, attrs int, opts ...string) error {
	if err := unix.Mkdirat(dir, name, 0o755); err != nil {
		return err
	}
	mnt, err := newFS(fstype, attrs, opts...)
	if err != nil {
		return err
	}
	defer CloseFd(mnt)
	return unix.MoveMount(mnt, "", dir, name, unix.MOVE_MOUNT_F_EMPTY_PATH)
}
