package profiles

import (
	"os"
	"path/filepath"

	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/workspace"
)

// workspace plans the working directory's workspace: an overlay when the profile asks for one,
// and in every mode a mask over the change-set store (hideStore).
func (pl *planner) workspace(cwd string) error {
	store, err := pl.paths.physical(workspace.StoreDir(pl.host.Home, pl.host.getenv))
	if err != nil {
		return pl.p.errorAt("filesystem.workspace", pl.p.Filesystem.Workspace, "resolve the change-set store: %w", err)
	}
	overlay := pl.p.Filesystem.Workspace == "overlay"
	if overlay {
		if err := pl.overlayWorkspace(cwd, store); err != nil {
			return err
		}
	}
	pl.hideStore(store, overlay)
	pl.mounts = sortMounts(pl.mounts)
	return nil
}

// overlayWorkspace makes the working directory's write grant an overlay workspace
// ([filesystem] workspace = "overlay"): the bind of the real tree becomes an overlayfs whose
// lower layer is that tree and whose upper layer is a fresh change set's, in jail's store
// (package workspace). Beneath it, the self-binds that pin protected paths in place pin the
// overlay's directories instead (a bind of the host's would uncover the real tree); any other
// writable grant there would write the real tree, and is an error. The store is hidden from the
// sandbox wherever a grant would show it, and may not lie in the workspace (its own writes
// would land in its lower layer). The placeholders the masks beneath it need are made in a layer
// of the overlay's own (plan.Mount's Create): none is written to the tree or the change set.
func (pl *planner) overlayWorkspace(cwd, store string) error {
	const key = "filesystem.workspace"
	i := -1
	for j, m := range pl.mounts {
		if m.Kind == plan.MountBind && m.Target == cwd && !pl.selfBinds[m.Target] {
			i = j
		}
	}
	if i < 0 {
		return pl.p.errorAt(key, "overlay", "the working directory %s is not a writable grant of its own (write = [\"$CWD\"]): there is nothing to lay the overlay over", cwd)
	}
	if !workspace.ValidID(pl.host.ChangeSet) {
		return pl.p.errorAt(key, "overlay", "%q cannot name a change set", pl.host.ChangeSet)
	}
	tree := pl.mounts[i].Source
	if within(store, tree) || within(tree, store) || within(store, cwd) {
		return pl.p.errorAt(key, "overlay", "the change-set store %s lies inside the workspace %s, or holds it: set XDG_STATE_HOME elsewhere", store, tree)
	}
	upper, work := workspace.Layout(filepath.Join(store, pl.host.ChangeSet))
	pl.mounts[i] = plan.Mount{Kind: plan.MountOverlay, Source: tree, Target: cwd, IsDir: true, Upper: upper, Work: work}
	for j, m := range pl.mounts {
		if m.Kind != plan.MountBind || m.Target == cwd || !within(m.Target, cwd) {
			continue
		}
		if !pl.selfBinds[m.Target] {
			return pl.p.errorAt("filesystem.write", m.Target, "%s is inside the overlay workspace %s: a writable grant there would write the real tree (grant it read-only, or use workspace = \"bind\")", m.Target, cwd)
		}
		pl.mounts[j] = plan.Mount{Kind: plan.MountPin, Target: m.Target, IsDir: true, Create: m.Create}
	}
	return nil
}

// hideStore masks the change-set store where a grant would show it: a sandbox must not read
// other runs' changes, nor rewrite what a later apply writes. An overlay run's store exists by
// the time the sandbox starts (workspace.Begin makes it), so it is masked even while missing.
func (pl *planner) hideStore(store string, willExist bool) {
	info, err := os.Lstat(store)
	if err != nil && !willExist || err == nil && !info.IsDir() {
		return
	}
	if g := pl.innermostGrant(store); g != nil && g.Kind != plan.MountTmpfs && pl.at(store) == nil {
		pl.mounts = append(pl.mounts, plan.Mount{Kind: plan.MountHideDir, Target: store, IsDir: true})
	}
}
