package mount

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// procReadOnly are the /proc entries that reach beyond the sandbox's namespaces (global sysctls,
// SysRq, IRQ affinity, bus devices), rebound read-only as bubblewrap does. When root runs jail
// its uid is the host's root, and /proc/sys checks the uid, not a capability.
var procReadOnly = []string{"sys", "sysrq-trigger", "irq", "bus"}

// procAttrs are the mount flags of either /proc.
const procAttrs = unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC

// proc mounts a fresh procfs of the sandbox's pid namespace on Target (nosuid, nodev, noexec),
// the one made before the plan when there is one (ready.go), with procReadOnly rebound read-only.
//
// A container that masks parts of its /proc (Docker's and Podman's default masked paths:
// /proc/kcore, /proc/keys, … covered by /dev/null, /proc/acpi by an empty tmpfs) keeps the
// kernel from mounting a new procfs in a user namespace at all (EPERM): it would show what the
// masks hide. With the plan's AllowWeaker, the container's own /proc is bound instead
// (containerProc); without it the EPERM stands, and mountError says what to do.
func (r *Roots) proc(m plan.Mount) error {
	var mnt int
	var err error
	if ready := take(&r.ready.proc); ready >= 0 {
		mnt, err = r.attachAt(ready, m.Target, makeDir)
	} else {
		mnt, err = r.mountNew(m.Target, makeDir, "proc", procAttrs)
	}
	if errors.Is(err, unix.EPERM) && r.allowWeaker {
		mnt, err = r.containerProc(m.Target)
		r.ContainerProc = err == nil
	}
	if err != nil {
		return err
	}
	defer CloseFd(mnt)
	for _, name := range procReadOnly {
		fd, err := openIn(mnt, name, unix.O_PATH)
		if errors.Is(err, unix.ENOENT) {
			continue // not built into this kernel
		}
		if err != nil {
			return pathError("open", name, err)
		}
		err = closed(mountCopy(fd, fd, true))
		CloseFd(fd)
		if err != nil {
			return pathError("read-only", name, err)
		}
	}
	return nil
}

// containerProc binds the host's (the container's) /proc on target, whole and read-only, and
// returns a descriptor of it. Its masks come with it: the kernel locks them in a user namespace,
// so nothing inside can lift one. The view is the container's pid namespace: /proc lists the
// container's processes with the container's pids (their command lines and status, which any
// process may read; their memory, environment and descriptors take ptrace's access check, which
// asks for CAP_SYS_PTRACE in the container's user namespace, where the sandbox holds none, and
// which Landlock refuses too), while the sandbox keeps its own pid namespace (its kill and ptrace
// reach only its own processes). /proc/self and
// /proc/thread-self still name the reader. Read-only: a process of the container's own uid
// could otherwise write to another's /proc files (oom_score_adj, coredump_filter).
func (r *Roots) containerProc(target string) (int, error) {
	src, err := openIn(r.host, "proc", unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return -1, pathError("open", "proc", err)
	}
	defer CloseFd(src)
	tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return -1, pathError("open_tree", "proc", err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | procAttrs}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
		CloseFd(tree)
		return -1, pathError("mount_setattr read-only", "proc", err)
	}
	return r.attachAt(tree, target, makeDir)
}
