package profiles

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/jail-sandbox/jail/plan"
)

// Grants named through symlinks. Every mount sits at its physical path, where the masks
// planned for that path apply; the symlinks the profile's name passed through are recreated
// inside, pointing at the physical path, so the name keeps working (as the host's merged-/usr
// links are). A directory seen through a symlink is thus never a second, unmasked view of what
// it holds: `--ro /tmp/l` with /tmp/l → ~ is `--ro ~`, ~/.ssh hidden.
//
// One exception keeps dotfile managers working: a file grant whose final name is a symlink
// (~/.gitconfig → dotfiles/gitconfig) on the sandbox's own tmpfs is mounted at the link's place.
// A program that replaces such a file by renaming over it then gets EBUSY instead of silently
// writing into the tmpfs, and a file holds no paths beneath it that a mask could miss (a hide or
// protect of the file itself finds it by its Source).

// placeFileLinks moves file grants whose final name is a symlink to the link's place when that
// place is on the sandbox's own tmpfs (beneath a bind the host's link is already there).
func (pl *planner) placeFileLinks() {
	for i, m := range pl.mounts {
		name, ok := pl.named[m.Target]
		if !ok || m.IsDir || (m.Kind != plan.MountBind && m.Kind != plan.MountROBind) {
			continue
		}
		if info, err := os.Lstat(name); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		place, err := pl.paths.place(name)
		if err != nil || pl.beneathBind(place) || pl.at(place) != nil {
			continue
		}
		delete(pl.named, m.Target)
		pl.named[place] = filepath.Dir(name) // only the links up to the file's directory
		pl.mounts[i].Target = place
	}
}

// recreateLinks adds a symlink for every link met on the way to a grant, pointing at its
// physical destination, where the sandbox's own tmpfs holds the link's place. Beneath a bind the
// host's link is there already, beneath a hidden directory it stays hidden, and a place taken by
// a mount (a merged-/usr link, a file grant) keeps the mount.
func (pl *planner) recreateLinks() {
	var links []string
	for _, m := range pl.mounts {
		if name, ok := pl.named[m.Target]; ok && isGrant(m.Kind) {
			links = append(links, pl.paths.walk(name).links...)
		}
	}
	for _, link := range links {
		if pl.taken(link) || pl.beneathBind(link) || pl.beneathHidden(link) {
			continue
		}
		dest, err := pl.paths.physical(link)
		if err != nil {
			continue // a grant through it would have failed already
		}
		pl.mounts = append(pl.mounts, plan.Mount{Kind: plan.MountSymlink, Source: dest, Target: link})
	}
}

// dropRedundant removes read-only binds that sit directly inside another read-only bind of the
// same host tree: they show nothing new (the merged-/usr grants /bin, /lib … inside /usr, a
// git directory inside a read-only working directory). One beneath a mask, a writable bind or a
// tmpfs is kept, since it changes what is seen there.
func (pl *planner) dropRedundant() {
	kept := pl.mounts[:0]
	for _, m := range pl.mounts {
		if m.Kind == plan.MountROBind && m.Source == m.Target && pl.count(m.Target) == 1 {
			if c := pl.container(m.Target); c != nil && c.Kind == plan.MountROBind && c.Source == c.Target {
				continue
			}
		}
		kept = append(kept, m)
	}
	pl.mounts = kept
}

// container returns the innermost mount strictly above target that changes what is seen
// beneath it (a bind, tmpfs, hidden directory or protection), or nil.
func (pl *planner) container(target string) *plan.Mount {
	var best *plan.Mount
	for i, m := range pl.mounts {
		covers := isGrant(m.Kind) || m.Kind == plan.MountHideDir || m.Kind == plan.MountProtect
		if covers && m.Target != target && within(target, m.Target) && (best == nil || depth(m.Target) > depth(best.Target)) {
			best = &pl.mounts[i]
		}
	}
	return best
}

// count counts the mounts and symlinks planned at target.
func (pl *planner) count(target string) int {
	n := 0
	for _, m := range pl.mounts {
		if m.Target == target {
			n++
		}
	}
	return n
}

// taken reports whether a mount or symlink is planned at path.
func (pl *planner) taken(path string) bool {
	return pl.count(path) > 0
}

// beneathBind reports whether path lies strictly beneath a bind, where it is the host's own.
func (pl *planner) beneathBind(path string) bool {
	for _, m := range pl.mounts {
		if (m.Kind == plan.MountBind || m.Kind == plan.MountROBind) && m.Target != path && within(path, m.Target) {
			return true
		}
	}
	return false
}

// beneathHidden reports whether path lies strictly beneath a hidden directory.
func (pl *planner) beneathHidden(path string) bool {
	for _, m := range pl.mounts {
		if m.Kind == plan.MountHideDir && m.Target != path && within(path, m.Target) {
			return true
		}
	}
	return false
}
