package mount

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// overlay mounts an overlayfs on Target: the host's Source is its lower layer, read-only (under
// the placeholders' layer, placeholderLayer), and the host's Upper and Work its upper layer and
// work directory (a change set's for the overlay workspace, the run's import directory's for git
// commit mode): every write lands in Upper, Source never changes. Each host layer is opened
// beneath the host's root through no symlink and handed to overlayfs as its descriptor's
// /proc/self/fd link, so that no path is looked up twice (overlayfs takes layers by descriptor
// only from Linux 6.13). userxattr keeps overlayfs's marks in user.overlay.* attributes, which a
// user namespace may write (Linux 5.11); with it redirect_dir and metacopy are off, so every file
// the command writes is whole in Upper. volatile (Linux 5.10) skips overlayfs's syncs of the
// upper filesystem: without it, the sandbox's end (the overlay's unmount) synced the whole
// filesystem holding Upper, tens of milliseconds on every run; the price is that the command's
// fsync does not reach the disk, and a host crash during a run can lose its last writes (to
// Upper, never to Source).
func (r *Roots) overlay(m plan.Mount) error {
	var layers []string
	for _, p := range []string{m.Source, m.Upper, m.Work} {
		rel, err := relPath(p)
		if err != nil {
			return err
		}
		fd, err := openIn(r.host, rel, unix.O_PATH|unix.O_DIRECTORY)
		if err != nil {
			return pathError("open layer", rel, err)
		}
		defer CloseFd(fd)
		layers = append(layers, fmt.Sprintf("%s/proc/self/fd/%d", oldRoot, fd))
	}
	lower := layers[0]
	if placeholders := placeholdersBeneath(r.mounts, m.Target); len(placeholders) > 0 {
		r.overlays++
		masks, err := placeholderLayer(fmt.Sprintf("/overlay-placeholders-%d", r.overlays), m.Target, placeholders)
		if err != nil {
			return err
		}
		lower = masks + ":" + lower
	}
	mnt, err := newFS("overlay", unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV,
		"lowerdir="+lower, "upperdir="+layers[1], "workdir="+layers[2], "userxattr", "volatile")
	if err != nil {
		return err
	}
	defer CloseFd(mnt)
	dst, err := openTarget(r.new, m.Target, makeDir)
	if err != nil {
		return err
	}
	defer CloseFd(dst)
	return attach(mnt, dst)
}

// placeholdersBeneath returns the ops after the overlay at target that create a placeholder
// beneath it (plan.Mount's Create).
func placeholdersBeneath(mounts []plan.Mount, target string) []plan.Mount {
	var out []plan.Mount
	for _, m := range mounts {
		if m.Create && path.Clean(m.Target) == m.Target && strings.HasPrefix(m.Target, target+"/") {
			out = append(out, m)
		}
	}
	return out
}

// placeholderLayer makes an overlay's top lower layer at dir, a directory of the scratch root
// holding only the placeholders (empty directories and files) that the ops after the overlay
// mount on. Lower layers are read-only to overlayfs, and the scratch root is the setup's own: a
// placeholder is written neither to Source nor to Upper (where each would cost the upper
// filesystem an inode on every run). overlayfs keeps the layer when the scratch root is detached.
func placeholderLayer(dir, target string, placeholders []plan.Mount) (string, error) {
	for _, m := range placeholders {
		p := dir + strings.TrimPrefix(m.Target, target)
		parent := p
		if !m.IsDir {
			parent = path.Dir(p)
		}
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", fmt.Errorf("make placeholder %s: %w", m.Target, err)
		}
		if parent != p {
			if err := unix.Mknod(p, unix.S_IFREG|0o644, 0); err != nil && !errors.Is(err, unix.EEXIST) {
				return "", fmt.Errorf("make placeholder %s: %w", m.Target, err)
			}
		}
	}
	return dir, nil
}
