package workspace

import (
	"os"
	"strings"
)

// gitView finds the git directories a change set's paths lie in, as the tree and the change
// set together have them. A directory is a git directory when it is named .git (in any case:
// git refuses such names in a tree on filesystems that fold case) or holds what git looks for
// (HEAD, objects/, refs/): a repository the command made under any name is one too.
type gitView struct {
	cs    *ChangeSet
	isGit map[string]bool // by directory
}

func newGitView(cs *ChangeSet) *gitView {
	return &gitView{cs: cs, isGit: map[string]bool{}}
}

// dirOf returns the git directory p lies in, or that p itself is (a .git file included), and
// whether the tree has it as a repository of its own; "" when p is in none.
func (g *gitView) dirOf(p string) (dir string, treeRepo bool) {
	parts := strings.Split(p, "/")
	for i := range parts {
		dir := strings.Join(parts[:i+1], "/")
		if strings.EqualFold(parts[i], ".git") || i < len(parts)-1 && g.repository(dir) {
			return dir, g.treeRepository(dir)
		}
	}
	return "", false
}

// repository reports whether dir holds HEAD, objects and refs in the tree or the change set.
func (g *gitView) repository(dir string) bool {
	if v, ok := g.isGit[dir]; ok {
		return v
	}
	has := func(name string) bool {
		for _, root := range []string{g.cs.Upper(), g.cs.Manifest.Tree} {
			if e, err := lstatEntry(hostPath(root, dir+"/"+name)); err == nil && !whiteout(e) {
				return true
			}
		}
		return false
	}
	v := has("HEAD") && has("objects") && has("refs")
	g.isGit[dir] = v
	return v
}

// treeRepository reports whether the tree itself has dir as a git directory (not a file, not
// one the command made).
func (g *gitView) treeRepository(dir string) bool {
	for _, name := range []string{"", "/HEAD", "/objects", "/refs"} {
		if _, err := os.Lstat(hostPath(g.cs.Manifest.Tree, dir+name)); err != nil {
			return false
		}
	}
	info, err := os.Lstat(hostPath(g.cs.Manifest.Tree, dir))
	return err == nil && info.IsDir()
}
