package profiles

import "github.com/jail-sandbox/jail/plan"

// A grant whose final name is a symlink (~/.gitconfig → dotfiles/gitconfig) is bound at the
// link's own path, so the program finds it where it looks. That works on a fresh tmpfs, but
// beneath another bind the link itself is there already, and the launcher never mounts over a
// symlink. settleLinkGrants resolves those: the link inside the outer bind already leads to its
// destination, so the grant moves there — or, for a read grant whose destination is visible
// anyway, goes away.

// settleLinkGrants rewrites the grants recorded in pl.linkGrants that lie beneath another bind.
func (pl *planner) settleLinkGrants() {
	kept := pl.mounts[:0]
	for _, m := range pl.mounts {
		if pl.linkGrants[m.Target] && pl.beneathBind(m.Target) {
			if m.Kind == plan.MountROBind && pl.beneathBind(m.Source) {
				continue // the link inside the outer bind already shows it
			}
			m.Target = m.Source
			if pl.at(m.Target) != nil {
				continue // granted at its destination too
			}
		}
		kept = append(kept, m)
	}
	pl.mounts = kept
}

// beneathBind reports whether path lies strictly beneath a bind grant, where it is the host's
// own file.
func (pl *planner) beneathBind(path string) bool {
	for _, m := range pl.mounts {
		if (m.Kind == plan.MountBind || m.Kind == plan.MountROBind) && m.Target != path && within(path, m.Target) {
			return true
		}
	}
	return false
}
