package mount

import (
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// devNodes are the host device nodes bound into the minimal /dev.
var devNodes = [...]string{"null", "zero", "full", "random", "urandom", "tty"}

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
	for i, name := range devNodes {
		if err := r.bindDevNode(dev, name, take(&r.ready.nodes[i])); err != nil {
			return pathError("bind", "dev/"+name, err)
		}
	}
	if err := r.mountPts(dev); err != nil {
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

// bindDevNode binds the host's /dev/NAME on a new empty file NAME in the directory dev: node, its
// clone made before the plan (ready.go), or one made now (node -1).
func (r *Roots) bindDevNode(dev int, name string, node int) error {
	if node < 0 {
		var err error
		if node, err = cloneDevNode(r.host, name); err != nil {
			return err
		}
	}
	defer CloseFd(node)
	if err := makeFileAt(dev, name); err != nil {
		return err
	}
	return unix.MoveMount(node, "", dev, name, unix.MOVE_MOUNT_F_EMPTY_PATH)
}

// mountPts mounts the devpts instance made before the plan (ready.go), or a new one, on a new
// directory pts in dir.
func (r *Roots) mountPts(dir int) error {
	if err := unix.Mkdirat(dir, "pts", 0o755); err != nil {
		return err
	}
	mnt := take(&r.ready.pts)
	if mnt < 0 {
		var err error
		if mnt, err = newPts(); err != nil {
			return err
		}
	}
	defer CloseFd(mnt)
	return unix.MoveMount(mnt, "", dir, "pts", unix.MOVE_MOUNT_F_EMPTY_PATH)
}
