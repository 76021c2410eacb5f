package mount

import (
	"cmp"
	"errors"
	"fmt"
	"path"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
)

// A mount whose mountpoint lies inside a writable bind is at the host's mercy: the kernel drops
// it in the sandbox's namespace when the host removes its mountpoint or renames another file over
// it (a host's `git config` writes .git/config that way; `rmdir .vscode` removes a placeholder),
// and the name is then the sandbox's to fill. Such mounts — protections, hides, read-only binds,
// and the self-binds that pin the directories above a protection — are watched: before one is
// made, its directory gets an inotify watch on pid 1's instance (spawn/watch.h), and the setup
// names the mountpoint to pid 1, which stops the sandbox when that name is removed, renamed away
// or renamed over (fail closed). Watching before mounting leaves no moment unwatched: a name gone
// before the watch fails the mount itself.

// watchMask is what a mountpoint's directory is watched for: the name removed, renamed away,
// renamed over.
const watchMask = unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR

// errNoWatch is the error of a mountpoint to watch without an instance to watch it on.
var errNoWatch = errors.New("no inotify instance")

// Watched is a mountpoint pid 1 must be told about: the watch on its directory and its path.
type Watched struct {
	Wd   int
	Path string
}

// watchIfExposed watches m's mountpoint when it lies inside a writable bind made before it.
func (r *Roots) watchIfExposed(m plan.Mount) error {
	switch m.Kind {
	case plan.MountProtect, plan.MountHideDir, plan.MountHideFile, plan.MountROBind, plan.MountBind:
	default:
		return nil
	}
	exposed := false
	for _, w := range r.writable {
		exposed = exposed || m.Target != w && within(m.Target, w)
	}
	if !exposed {
		return nil
	}
	dir := path.Dir(m.Target)
	if r.watchFd < 0 {
		return fmt.Errorf("watch %s: %w", dir, cmp.Or(r.watchErr, errNoWatch))
	}
	wd, ok := r.watchedDirs[dir]
	if !ok {
		fd, err := openTarget(r.new, dir, mustExist)
		if err != nil {
			return err
		}
		// inotify takes a path, not a descriptor: the directory, as the current one.
		err = unix.Fchdir(fd)
		CloseFd(fd)
		if err == nil {
			wd, err = unix.InotifyAddWatch(r.watchFd, ".", watchMask)
		}
		if errors.Is(err, unix.ENOSPC) {
			err = fmt.Errorf("%w (the user's inotify watches are used up: raise fs.inotify.max_user_watches)", err)
		}
		if err != nil {
			return fmt.Errorf("watch %s: %w", dir, err)
		}
		r.watchedDirs[dir] = wd
	}
	r.Watched = append(r.Watched, Watched{Wd: wd, Path: m.Target})
	return nil
}

// within reports whether p is base or beneath it (both absolute and clean).
func within(p, base string) bool {
	return p == base || base == "/" || len(p) > len(base) && p[:len(base)] == base && p[len(base)] == '/'
}
