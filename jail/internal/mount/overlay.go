package mount

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// overlay mounts the host's Source read-only beneath the host's Upper at Target: what the
// command writes there lands in Upper, Source never changes (git commit mode). The layers are
// given to overlayfs as descriptors opened without following a symlink (openIn), so no path is
// looked up twice (Linux 6.13; opened for reading, since O_PATH ones need 6.15); userxattr
// keeps overlayfs's own metadata in user.* attributes, as it must in a user namespace.
func (r *Roots) overlay(m plan.Mount) error {
	layers := []struct{ key, path string }{{"lowerdir+", m.Source}, {"upperdir", m.Upper}, {"workdir", m.Work}}
	fsfd, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("fsopen overlay: %w", err)
	}
	defer CloseFd(fsfd)
	for _, l := range layers {
		rel, err := relPath(l.path)
		if err != nil {
			return err
		}
		fd, err := openIn(r.host, rel, unix.O_RDONLY|unix.O_DIRECTORY)
		if err != nil {
			return pathError("open "+l.key, rel, err)
		}
		err = unix.FsconfigSetFd(fsfd, l.key, fd)
		CloseFd(fd)
		if err != nil {
			return fmt.Errorf("overlay %s %s: %w", l.key, l.path, err)
		}
	}
	if err := unix.FsconfigSetFlag(fsfd, "userxattr"); err != nil {
		return fmt.Errorf("overlay option userxattr: %w", err)
	}
	if err := unix.FsconfigCreate(fsfd); err != nil {
		return fmt.Errorf("create overlay: %w", err)
	}
	mnt, err := unix.Fsmount(fsfd, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return fmt.Errorf("fsmount overlay: %w", err)
	}
	defer CloseFd(mnt)
	dst, err := openTarget(r.new, m.Target, makeDir)
	if err != nil {
		return err
	}
	defer CloseFd(dst)
	return attach(mnt, dst)
}
