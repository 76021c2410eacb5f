package mount

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/jail/internal/spawn"
	"github.com/jail-sandbox/jail/plan"
)

// A mount whose mountpoint lies inside a writable bind is at the host's mercy: the kernel drops
// it in the sandbox's namespace when the host removes its mountpoint or renames another file over
// it (a host's `git config` writes .git/config that way; `rmdir .vscode` removes a placeholder),
// and the name is then the sandbox's to fill. Such mounts — protections, hides, read-only binds,
// and the self-binds that pin the directories above a protection — are watched: the setup names
// each to pid 1 with the id of the mount it made there, and pid 1 stops the sandbox when the path
// no longer leads to that mount (spawn/watch.h).

// exposed says m makes a protective mount whose mountpoint lies inside a writable bind made
// before it.
func (r *Roots) exposed(m plan.Mount) bool {
	switch m.Kind {
	case plan.MountProtect, plan.MountHideDir, plan.MountHideFile, plan.MountROBind, plan.MountBind:
	default:
		return false
	}
	for _, w := range r.writable {
		if m.Target != w && within(m.Target, w) {
			return true
		}
	}
	return false
}

// watch records the mount just made at m's target, to be named to pid 1: mnt, its descriptor
// from apply, names it without looking the target up again. Without pid 1 to watch it
// (watchErr), the protection could not hold for the run: the setup fails.
func (r *Roots) watch(m plan.Mount, mnt int) error {
	if r.watchErr != nil {
		return r.watchErr
	}
	var st unix.Statx_t
	if err := unix.Statx(mnt, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &st); err != nil {
		return err
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return errors.New("statx: the kernel gives no mount id")
	}
	r.Watched = append(r.Watched, spawn.Watched{MntID: uint32(st.Mnt_id), Path: m.Target})
	return nil
}

// within reports whether p is base or beneath it (both absolute and clean).
func within(p, base string) bool {
	return p == base || base == "/" || len(p) > len(base) && p[:len(base)] == base && p[len(base)] == '/'
}
