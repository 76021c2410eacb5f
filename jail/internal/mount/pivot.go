package mount

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/fail"
)

// Setup happens in a scratch tmpfs, as bubblewrap does: it is mounted on the host's /tmp and
// pivoted into, so the host's tree sits at /oldroot, whole (nothing is covered, not even the
// host's /tmp), and the new root is a tmpfs at /newroot on which any op, even one targeting /,
// can stack.
const (
	scratchDir = "/tmp"
	oldRoot    = "/oldroot"
	newRoot    = "/newroot"
)

// OpenRoots makes the host's mounts private to this namespace (no mount or unmount propagates in
// either direction; a host mount appearing later under a read-only bind cannot show up writable),
// pivots into the scratch tmpfs and opens both roots.
func OpenRoots() (*Roots, error) {
	err := runCalls("setup root", []call{
		{"make / private", func() error { return unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "") }},
		{"mount tmpfs on " + scratchDir, func() error {
			return unix.Mount("tmpfs", scratchDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700")
		}},
		{"mkdir " + scratchDir + oldRoot, func() error { return unix.Mkdir(scratchDir+oldRoot, 0o700) }},
		{"mkdir " + scratchDir + newRoot, func() error { return unix.Mkdir(scratchDir+newRoot, 0o755) }},
		{"mount tmpfs on " + scratchDir + newRoot, func() error {
			return unix.Mount("tmpfs", scratchDir+newRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755")
		}},
		{"chdir " + scratchDir, func() error { return unix.Chdir(scratchDir) }},
		{"pivot_root to " + scratchDir, func() error { return unix.PivotRoot(".", oldRoot[1:]) }},
		{"chdir /", func() error { return unix.Chdir("/") }},
	})
	if err != nil {
		return nil, err
	}
	r := &Roots{host: -1, new: -1, rootfs: -1, store: -1, ready: noneReady()}
	if r.host, err = unix.Open(oldRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		return nil, fail.New("open", oldRoot, err)
	}
	if r.new, err = unix.Open(newRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		r.close()
		return nil, fail.New("open", newRoot, err)
	}
	r.rootfs = r.new
	return r, nil
}

// reopenNew opens the new root again by path, so the descriptor is on whatever mount an op
// stacked on it. The new root's tmpfs keeps its own descriptor for the final read-only remount.
func (r *Roots) reopenNew() error {
	fd, err := unix.Open(newRoot, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return pathError("reopen", newRoot[1:], err)
	}
	if r.new != r.rootfs {
		CloseFd(r.new)
	}
	r.new = fd
	return nil
}

// close closes the roots' descriptors. The host's must not outlive setup: it would be a way out
// of the sandbox.
func (r *Roots) close() {
	fds := []int{r.host, r.rootfs, r.store}
	if r.new != r.rootfs {
		fds = append(fds, r.new)
	}
	for _, fd := range fds {
		if fd >= 0 {
			CloseFd(fd)
		}
	}
	r.host, r.new, r.rootfs, r.store = -1, -1, -1, -1
	r.ready.close()
}

// enter makes the new root the root: the new root's tmpfs is made read-only (only it: a
// writable bind an op stacked on / stays writable; other flags are kept), then pivot_root into
// the new root (by path, so a mount stacked on it is the one entered), and the scratch tmpfs is
// detached with the host's whole tree beneath it.
func (r *Roots) enter() error {
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	err := unix.MountSetattr(r.rootfs, "", unix.AT_EMPTY_PATH, &attr)
	r.close()
	if err != nil {
		return fail.New("enter root", "", fmt.Errorf("remount the new root read-only: %w", err))
	}
	return runCalls("enter root", []call{
		{"chdir " + newRoot, func() error { return unix.Chdir(newRoot) }},
		{"pivot_root to " + newRoot, func() error { return unix.PivotRoot(".", ".") }},
		{"detach the host's root", func() error { return unix.Unmount(".", unix.MNT_DETACH) }},
		{"chdir /", func() error { return unix.Chdir("/") }},
	})
}

// call is one system call of entering or leaving the scratch root, named for its error. Together
// they make one setup phase each (OpenRoots, enter).
type call struct {
	what string
	do   func() error
}

// runCalls makes calls in order and stops at the first failure, an *Error naming op and the call.
func runCalls(op string, calls []call) error {
	for _, s := range calls {
		if err := s.do(); err != nil {
			return fail.New(op, "", fmt.Errorf("%s: %w", s.what, err))
		}
	}
	return nil
}
