package mount

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// tmpfs mounts an empty writable directory of the store (store.go) on Target: mode 0755, 0700
// for $HOME.
func (r *Roots) tmpfs(m plan.Mount) error {
	mode := uint32(0o755)
	if m.Target == r.home {
		mode = 0o700
	}
	return closed(r.mountPrivate(m.Target, makeDir, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, mode))
}

// hideDir mounts an empty read-only tmpfs over Target: the directory lists as empty. Its mode is
// 0555, not 0: an unreadable directory would make every tree walk (git status, find, rg) report
// "permission denied" where an empty one is simply skipped, and empty and read-only it holds
// nothing either way. It returns the mount's descriptor (the caller closes it).
func (r *Roots) hideDir(m plan.Mount) (int, error) {
	return r.mountNew(m.Target, createAs(m.Create, true), "tmpfs",
		unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, "mode=0555")
}

// mountNew mounts a fresh fstype filesystem on the sandbox path target, created as c says, and
// returns a descriptor of the new mount's root (the caller closes it), to populate it with
// plain *at calls: nothing else can reach it yet.
func (r *Roots) mountNew(target string, c create, fstype string, attrs int, opts ...string) (int, error) {
	mnt, err := newFS(fstype, attrs, opts...)
	if err != nil {
		return -1, err
	}
	return r.attachAt(mnt, target, c)
}

// attachAt attaches the detached mount mnt on the sandbox path target, created as c says, and
// returns mnt; on failure it closes mnt.
func (r *Roots) attachAt(mnt int, target string, c create) (int, error) {
	dst, err := openTarget(r.new, target, c)
	if err == nil {
		err = attach(mnt, dst)
		CloseFd(dst)
	}
	if err != nil {
		CloseFd(mnt)
		return -1, err
	}
	return mnt, nil
}

// closed closes the descriptor a successful call returned, for ops that only need its effect.
func closed(fd int, err error) error {
	if err == nil {
		CloseFd(fd)
	}
	return err
}

// newFS makes a detached mount of a new fstype filesystem (fsopen, fsconfig, fsmount) with the
// MOUNT_ATTR_* attrs; opts are "key=value" or flag parameters. The caller closes the descriptor,
// which keeps referring to the mount once it is attached. A failure carries the filesystem's own
// words for it, from the context's message log.
func newFS(fstype string, attrs int, opts ...string) (int, error) {
	fs, err := unix.Fsopen(fstype, unix.FSOPEN_CLOEXEC)
	if err != nil {
		return -1, fmt.Errorf("fsopen %s: %w", fstype, err)
	}
	defer CloseFd(fs)
	for _, o := range opts {
		if k, v, ok := strings.Cut(o, "="); ok {
			err = unix.FsconfigSetString(fs, k, v)
		} else {
			err = unix.FsconfigSetFlag(fs, o)
		}
		if err != nil {
			return -1, fmt.Errorf("%s option %s: %w%s", fstype, o, err, fsLog(fs))
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return -1, fmt.Errorf("create %s: %w%s", fstype, err, fsLog(fs))
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, attrs)
	if err != nil {
		return -1, fmt.Errorf("fsmount %s: %w", fstype, err)
	}
	return mnt, nil
}

// fsLog returns the error messages a filesystem context logged, as " (MESSAGE; …)", or "".
func fsLog(fs int) string {
	var msgs []string
	buf := make([]byte, 1024)
	for {
		n, err := unix.Read(fs, buf)
		if err != nil || n <= 0 {
			break
		}
		if msg, ok := strings.CutPrefix(string(buf[:n]), "e "); ok {
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) == 0 {
		return ""
	}
	return " (" + strings.Join(msgs, "; ") + ")"
}
