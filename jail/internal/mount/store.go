package mount

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// The sandbox's private writable tmpfs mounts (tmpfs grants such as /tmp and the home, /dev,
// /dev/shm) are host memory. Rather than one tmpfs each, with a size each, they are directories
// of a single tmpfs, the store, sized to spec.Limits.Tmpfs and bound where the plan puts them:
// the bound is exact for the sandbox as a whole, and no mount is starved while another sits
// empty (a build that fills /tmp may have the home's share too). Full, the store gives the
// command ENOSPC: the tmpfs refuses the page, the host's memory is not asked.
//
// The store is mounted in the scratch root, which nothing of the sandbox can reach, and leaves
// with it when setup enters the new root: only the directories bound into the new root stay
// visible, each a mount of its own (a lookup of ".." at its root stays on the mount it sits on).
const storeDir = "/store"

// bytesPerInode bounds the store's inodes to one per 4 KiB of its size: a file the kernel
// counts nowhere in size= still costs it about 1 KiB (inode and dentry), so a command creating
// millions of empty files holds at most a quarter of the size again, not half the host's RAM
// (tmpfs's default nr_inodes).
const (
	bytesPerInode = 4096
	minInodes     = 1024
)

// storeInodes is the store's nr_inodes for a store of size bytes.
func storeInodes(size uint64) uint64 {
	return max(size/bytesPerInode, minInodes)
}

// openStore mounts the store, size bytes, at storeDir in the scratch root, the first time a
// private mount is asked for.
func (r *Roots) openStore() error {
	if r.store >= 0 {
		return nil
	}
	if r.storeSize == 0 {
		return fmt.Errorf("no size for the private tmpfs mounts (limits.tmpfs): %w", unix.EINVAL)
	}
	if err := unix.Mkdir(storeDir, 0o700); err != nil {
		return pathError("mkdir", storeDir[1:], err)
	}
	mnt, err := newFS("tmpfs", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, "mode=0700",
		"size="+strconv.FormatUint(r.storeSize, 10), "nr_inodes="+strconv.FormatUint(storeInodes(r.storeSize), 10))
	if err != nil {
		return err
	}
	err = unix.MoveMount(mnt, "", unix.AT_FDCWD, storeDir, unix.MOVE_MOUNT_F_EMPTY_PATH)
	if err != nil {
		CloseFd(mnt)
		return fmt.Errorf("move_mount %s: %w", storeDir, err)
	}
	r.store = mnt
	return nil
}

// privateDir makes a new directory of the store, mode mode, and returns a detached bind of it
// with the MOUNT_ATTR_* attrs set (the caller attaches it and closes the descriptor, which then
// refers to the mounted directory: its contents can be made with *at calls).
func (r *Roots) privateDir(attrs int, mode uint32) (int, error) {
	if err := r.openStore(); err != nil {
		return -1, err
	}
	name := strconv.Itoa(r.storeDirs)
	r.storeDirs++
	if err := unix.Mkdirat(r.store, name, 0o700); err != nil {
		return -1, pathError("mkdir", "store/"+name, err)
	}
	if err := unix.Fchmodat(r.store, name, mode, 0); err != nil { // the umask cannot take a bit
		return -1, pathError("chmod", "store/"+name, err)
	}
	tree, err := unix.OpenTree(r.store, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("open_tree store/%s: %w", name, err)
	}
	attr := unix.MountAttr{Attr_set: uint64(attrs)}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		CloseFd(tree)
		return -1, fmt.Errorf("mount_setattr store/%s: %w", name, err)
	}
	return tree, nil
}

// mountPrivate binds a new directory of the store on the sandbox path target, created as c
// says, and returns a descriptor of it (the caller closes it).
func (r *Roots) mountPrivate(target string, c create, attrs int, mode uint32) (int, error) {
	tree, err := r.privateDir(attrs, mode)
	if err != nil {
		return -1, err
	}
	return r.attachAt(tree, target, c)
}

// mountPrivateAt binds a new directory of the store on a new directory name in dir.
func (r *Roots) mountPrivateAt(dir int, name string, attrs int, mode uint32) error {
	if err := unix.Mkdirat(dir, name, 0o755); err != nil {
		return err
	}
	tree, err := r.privateDir(attrs, mode)
	if err != nil {
		return err
	}
	defer CloseFd(tree)
	return unix.MoveMount(tree, "", dir, name, unix.MOVE_MOUNT_F_EMPTY_PATH)
}
