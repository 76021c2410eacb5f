package mount

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// bind mounts the host's Source on Target, with every mount beneath Source (a recursive bind),
// read-only on all of them when ro. A missing Target is created like its Source (a directory or
// a file), which is how binds land on the empty tmpfs root. Directories profiles pins above a
// protected path (self-binds: Source == Target, inside a writable bind) exist on the host by now,
// made by the host as placeholders when missing (package placeholder), never here: setup makes
// nothing in the user's tree. It returns the attached copy's descriptor (the caller closes it).
func (r *Roots) bind(m plan.Mount, ro bool) (int, error) {
	rel, err := relPath(m.Source)
	if err != nil {
		return -1, err
	}
	src, err := openIn(r.host, rel, unix.O_PATH)
	if err != nil {
		return -1, pathError("open source", rel, err)
	}
	defer CloseFd(src)
	var st unix.Stat_t
	if err := unix.Fstat(src, &st); err != nil {
		return -1, pathError("stat source", rel, err)
	}
	c := makeFile
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		c = makeDir
	}
	dst, err := openTarget(r.new, m.Target, c)
	if err != nil {
		return -1, err
	}
	defer CloseFd(dst)
	return mountCopy(src, dst, ro)
}

// selfBind rebinds Target, as the new root has it, onto itself, submounts included: read-only
// for a protect (a protected path inside a writable bind stays read-only), writable for a pin (a
// mountpoint cannot be renamed or removed). Target exists: inside a writable bind the host made
// a placeholder where it was missing (package placeholder), and one gone since (removed on the
// host) fails the run; inside an overlay, the overlay's placeholder layer holds it. It returns
// the attached copy's descriptor (the caller closes it).
func (r *Roots) selfBind(m plan.Mount, ro bool) (int, error) {
	dst, err := openTarget(r.new, m.Target, mustExist)
	if err != nil {
		return -1, err
	}
	defer CloseFd(dst)
	return mountCopy(dst, dst, ro)
}

// hideFile binds the host's /dev/null read-only over Target: the file reads empty. It returns the
// attached bind's descriptor (the caller closes it).
func (r *Roots) hideFile(m plan.Mount) (int, error) {
	dst, err := openTarget(r.new, m.Target, createAs(m.Create, false))
	if err != nil {
		return -1, err
	}
	defer CloseFd(dst)
	null, err := openIn(r.host, "dev/null", unix.O_PATH)
	if err != nil {
		return -1, pathError("open", "dev/null", err)
	}
	defer CloseFd(null)
	return mountCopy(null, dst, true)
}

// mountCopy mounts a recursive copy of the mount tree at src on dst. The copy is made detached
// (open_tree), turned read-only when ro, and only then attached (move_mount), so it is never
// seen writable. Making it read-only only sets MOUNT_ATTR_RDONLY on every mount of the copy and
// clears nothing: the nosuid, nodev, noexec and atime flags a user namespace locks stay as they
// were, where a classic MS_REMOUNT would have to restate them from statfs for each submount.
// It returns the copy's descriptor, which refers to the mount attached on dst (the caller closes
// it).
func mountCopy(src, dst int, ro bool) (int, error) {
	tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return -1, fmt.Errorf("open_tree: %w", err)
	}
	if ro {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			CloseFd(tree)
			return -1, fmt.Errorf("mount_setattr read-only: %w", err)
		}
	}
	if err := attach(tree, dst); err != nil {
		CloseFd(tree)
		return -1, err
	}
	return tree, nil
}

// attach mounts the detached mount mnt on the target descriptor dst.
func attach(mnt, dst int) error {
	err := unix.MoveMount(mnt, "", dst, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	if err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
