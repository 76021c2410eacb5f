package jail

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/jail-sandbox/jail/jail/internal/fail"
	"github.com/jail-sandbox/jail/jail/internal/gitimport"
	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/workspace"
)

// gitCommit is the host side of git commit mode (plan.GitImport): the directory holding the
// overlay's upper and work layers, made before the sandbox starts, and the import of what the
// command committed, once the sandbox is gone.
type gitCommit struct {
	git      *plan.Git
	quiet    bool
	finished bool
}

// startGitCommit makes the import directory when the Spec asks for commit mode; nil otherwise.
// The directory must not exist (its name is the run's own), and only this user may enter it.
func startGitCommit(spec *plan.Spec, opts Options) (*gitCommit, error) {
	g := spec.Git
	if g == nil || g.Import == nil {
		return nil, nil
	}
	dir := g.Import.Dir
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fail.New("create git import directory", dir, err)
	}
	for _, sub := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			workspace.RemoveTree(dir)
			return nil, fail.New("create git import directory", dir, err)
		}
	}
	opts.log().Printf("host: git commit mode: %s over %s", dir, g.CommonDir)
	return &gitCommit{git: g, quiet: opts.Quiet}, nil
}

// finish imports what the command committed and removes the directory; on failure the directory
// stays, and the line says where. It runs once every sandboxed process is gone (the caller has
// waited for init, whose pid namespace ends with it).
func (c *gitCommit) finish(stderr io.Writer) {
	if c == nil {
		return
	}
	c.finished = true
	if stderr == nil {
		stderr = os.Stderr
	}
	res, err := gitimport.Import(c.git)
	for _, r := range res.Refused {
		fmt.Fprintf(stderr, "jail: git: not imported: %q: %s\n", r.Name, r.Reason)
	}
	if err != nil {
		fmt.Fprintf(stderr, "jail: git: import of the commits made inside failed: %v; what the command wrote to the git directory is kept in %s\n",
			err, c.git.Import.Dir+"/upper")
		return
	}
	for _, r := range res.Imported {
		if !c.quiet {
			fmt.Fprintf(stderr, "jail: git: imported %s as %s (%.12s); to take it, with the work tree as the command left it: git stash -u && git merge %s && git stash pop\n",
				r.Name, r.As, r.Oid, r.As)
		}
	}
	workspace.RemoveTree(c.git.Import.Dir)
}

// close removes the directory of a run that ended before its command did (jail's own error);
// after finish it does nothing.
func (c *gitCommit) close() {
	if c != nil && !c.finished {
		workspace.RemoveTree(c.git.Import.Dir)
	}
}
