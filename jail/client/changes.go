package client

import (
	"errors"
	"fmt"
	"io"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/workspace"
)

// A sandbox created with the overlay workspace keeps its working directory's writes in a change
// set named after it (package workspace): these are `jail diff`, `jail apply` and `jail discard`
// on it, while it lives and after it is removed.

// changeSet opens the change set of sandbox idOrName: a live sandbox's, named by its id or name,
// or one of a sandbox removed since, by the id or name it had.
func changeSet(idOrName string) (*workspace.ChangeSet, error) {
	store, err := workspace.UserStore()
	if err != nil {
		return nil, api.Errorf(api.Internal, "%s", err)
	}
	key := idOrName
	if id, _, err := resolve(idOrName); err == nil {
		key = id
	}
	cs, err := store.Open(key)
	switch {
	case errors.Is(err, workspace.ErrNoChangeSet):
		return nil, api.Errorf(api.NotFound, "sandbox %q has no change set: it was created without the overlay workspace, or its changes were applied or discarded (jail changes lists them)", idOrName)
	case err != nil:
		return nil, changesError(err)
	case !cs.Manifest.Sandbox:
		return nil, api.Errorf(api.NotFound, "change set %s is a run's, not a sandbox's: jail diff, apply and discard take it", cs.ID)
	}
	return cs, nil
}

// changesError maps a change set's error to the API's.
func changesError(err error) error {
	code := api.Internal
	switch {
	case errors.Is(err, workspace.ErrNoChangeSet):
		code = api.NotFound
	case errors.Is(err, workspace.ErrNoChange):
		code = api.InvalidArgument
	case errors.Is(err, workspace.ErrInUse), errors.Is(err, workspace.ErrDamaged):
		code = api.FailedPrecondition
	}
	return api.Errorf(code, "%s", err)
}

// paths turns the request's paths (relative to the tree, or absolute in it) into the tree's.
func paths(cs *workspace.ChangeSet, in []string) ([]string, error) {
	var out []string
	for _, p := range in {
		rel, err := cs.Rel(p, cs.Manifest.Tree)
		if err != nil {
			return nil, api.Errorf(api.InvalidArgument, "%s", err)
		}
		out = append(out, rel)
	}
	return out, nil
}

// Changes lists what sandbox idOrName's commands changed in its working directory.
func (c *Client) Changes(idOrName string) (*api.ChangeSet, error) {
	cs, err := changeSet(idOrName)
	if err != nil {
		return nil, err
	}
	changes, err := cs.Changes()
	if err != nil {
		return nil, changesError(err)
	}
	out := &api.ChangeSet{ID: cs.ID, Tree: cs.Manifest.Tree, Live: cs.Running(), Changes: apiChanges(changes), Conflicts: apiConflicts(cs.Conflicts(changes))}
	return out, nil
}

// Diff writes the changes at or beneath paths (all without) as a patch in git's format.
func (c *Client) Diff(idOrName string, in []string, w io.Writer) error {
	cs, err := changeSet(idOrName)
	if err != nil {
		return err
	}
	sel, err := paths(cs, in)
	if err != nil {
		return err
	}
	changes, err := cs.Select(sel)
	if err != nil {
		return changesError(err)
	}
	if err := workspace.Diff(w, changes); err != nil {
		return changesError(err)
	}
	return nil
}

// Apply writes the sandbox's changes into its tree, or, when any is refused or conflicts, none:
// the answer then has Error set and lists them.
func (c *Client) Apply(idOrName string, req api.ApplyRequest) (*api.ApplyResponse, error) {
	cs, err := changeSet(idOrName)
	if err != nil {
		return nil, err
	}
	opt := workspace.ApplyOptions{Overwrite: req.Overwrite}
	if opt.Paths, err = paths(cs, req.Paths); err != nil {
		return nil, err
	}
	for _, name := range req.Allow {
		class, ok := workspace.ClassNamed(name)
		if !ok {
			return nil, api.Errorf(api.InvalidArgument, "allow %q: not a class apply refuses (git, protected, autorun, links, special)", name)
		}
		opt.Allow |= class
	}
	res, err := cs.Apply(opt)
	if err != nil {
		return nil, changesError(fmt.Errorf("apply %s: %w", cs.ID, err))
	}
	out := &api.ApplyResponse{Written: apiChanges(res.Written), Conflicts: apiConflicts(res.Conflicts), Removed: res.Removed}
	for _, r := range res.Refused {
		out.Refused = append(out.Refused, api.Refusal{Path: r.Path, Reason: r.Reason, Allow: r.Class.Name()})
	}
	if len(res.Refused) > 0 || len(res.Conflicts) > 0 {
		out.Error = api.Errorf(api.FailedPrecondition, "apply %s: nothing written: %d refused, %d in conflict: allow their classes, overwrite, or name the paths to apply",
			cs.ID, len(res.Refused), len(res.Conflicts))
	}
	if out.Written == nil {
		out.Written = []api.Change{}
	}
	return out, nil
}

// Discard removes the change set of a sandbox that is gone: what its commands wrote is lost. A
// live sandbox's is refused (its overlay writes there): remove the sandbox first.
func (c *Client) Discard(idOrName string) error {
	cs, err := changeSet(idOrName)
	if err != nil {
		return err
	}
	if err := cs.Discard(); err != nil {
		return changesError(err)
	}
	return nil
}

// settle finishes the change set of sandbox id, which has just ended (workspace.Settle), if it
// has one: it returns how many changes wait there.
func settle(id string) int {
	store, err := workspace.UserStore()
	if err != nil {
		return 0
	}
	cs, err := store.Open(id)
	if err != nil || !cs.Manifest.Sandbox {
		return 0
	}
	n, _ := cs.Settle()
	return n
}

func apiChanges(changes []workspace.Change) []api.Change {
	out := []api.Change{}
	for _, c := range changes {
		out = append(out, api.Change{Status: workspace.Status(c), Path: c.Path, From: c.From})
	}
	return out
}

func apiConflicts(conflicts []workspace.Conflict) []api.Conflict {
	out := []api.Conflict{}
	for _, c := range conflicts {
		out = append(out, api.Conflict{Path: c.Path, Reason: c.Reason})
	}
	return out
}
