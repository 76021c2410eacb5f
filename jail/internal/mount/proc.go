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

// proc mounts a fresh procfs of the sandbox's pid namespace on Target (nosuid, nodev, noexec),
// with procReadOnly rebound read-only.
func (r *Roots) proc(m plan.Mount) error {
	mnt, err := r.mountNew(m.Target, makeDir, "proc", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC)
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
		err = mountCopy(fd, fd, true)
		CloseFd(fd)
		if err != nil {
			return pathError("read-only", name, err)
		}
	}
	return nil
}
