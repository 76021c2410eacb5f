// Package workspace keeps the change sets of overlay workspaces. In `--workspace overlay` the
// sandbox's working directory is an overlayfs whose lower layer is the real tree, read-only, and
// whose upper layer is a change set's directory in jail's state store: the command writes there,
// never into the tree. A change set is what that upper layer says against the real tree: files
// created, modified, deleted, renamed, their modes and symlinks. This package lists change sets,
// reads them (Changes), shows them as a git-style diff (Diff), writes them into the tree after
// refusing what would run on the host and stopping on the user's own edits (Apply), and removes
// them (Discard).
//
// It runs on the host, as the user, over files the sandbox wrote: nothing read from a change set
// is trusted. Paths are walked without following a symlink, the tree is written through
// descriptors that refuse symlinks on the way, and a change set whose layout does not fit is
// reported as damaged rather than guessed at.
package workspace
