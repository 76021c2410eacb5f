package workspace

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Class is a kind of change that apply refuses unless told to take it; a set of them is a bit
// mask.
type Class uint

const (
	// ClassGit: a git directory's content (hooks, config, info, commondir, modules …), a `.git`
	// created anywhere, a directory made into a repository. Git executes configuration it finds
	// there; the tree's own repository's commits are imported as refs instead (gitstate.go).
	ClassGit Class = 1 << iota
	// ClassProtected: a path the profile protected inside the workspace.
	ClassProtected
	// ClassAutorun: a file that a host tool runs or loads without being asked: shell start-up
	// files, .envrc and .env, hook directories, editor and agent settings, tool configuration
	// that names commands, Python's .pth files and virtualenv scripts.
	ClassAutorun
	// ClassLink: a symlink whose target leads out of the tree.
	ClassLink
	// ClassSpecial: a device, fifo or socket, or a setuid or setgid bit.
	ClassSpecial
)

// classes in the order apply reports them, with the flag that takes each.
var classes = []struct {
	class Class
	flag  string
}{
	{ClassGit, "--allow-git"},
	{ClassProtected, "--allow-protected"},
	{ClassAutorun, "--allow-autorun"},
	{ClassLink, "--allow-links"},
	{ClassSpecial, "--allow-special"},
}

// Flag is the apply option that takes changes of class c.
func (c Class) Flag() string {
	for _, k := range classes {
		if k.class == c {
			return k.flag
		}
	}
	return ""
}

// Name is the class as the API's apply names it: its flag without "--allow-" ("" for none).
func (c Class) Name() string { return strings.TrimPrefix(c.Flag(), "--allow-") }

// ClassNamed returns the class whose flag is --allow-NAME.
func ClassNamed(name string) (Class, bool) {
	for _, k := range classes {
		if k.flag == "--allow-"+name {
			return k.class, true
		}
	}
	return 0, false
}

// Refusal is a change apply will not write, and why.
type Refusal struct {
	Path   string
	Class  Class
	Reason string
	// Group is the directory the reason is about (a git directory, a protected path), when
	// there is one: the refusals of one group are told in one line.
	Group string
}

func (r Refusal) String() string {
	return fmt.Sprintf("refused %s: %s (%s takes it)", quote(r.Path), r.Reason, r.Class.Flag())
}

// RefusalLines tells refusals one line each, except that those of one group and reason (the
// many files of a repository the command made, say) share a line naming the group.
func RefusalLines(refusals []Refusal) []string {
	type key struct {
		group, reason string
		class         Class
	}
	count := map[key]int{}
	for _, r := range refusals {
		if r.Group != "" {
			count[key{r.Group, r.Reason, r.Class}]++
		}
	}
	var lines []string
	told := map[key]bool{}
	for _, r := range refusals {
		k := key{r.Group, r.Reason, r.Class}
		switch {
		case count[k] < 2:
			lines = append(lines, r.String())
		case !told[k]:
			told[k] = true
			lines = append(lines, fmt.Sprintf("refused %s/ (%d paths): %s (%s takes them)", quote(r.Group), count[k], r.Reason, r.Class.Flag()))
		}
	}
	return lines
}

// autorunDirs are directories whose content a host tool runs or loads on its own: hook
// managers, editors' and agent harnesses' project settings (tasks, MCP servers, hooks), jail's
// own profiles, direnv's state, and — for a tree that is a home directory — ssh's and the
// desktop's configuration.
var autorunDirs = []string{
	".husky", ".githooks", ".vscode", ".idea", ".devcontainer", ".claude", ".codex", ".gemini",
	".cursor", ".jail", ".direnv", ".ssh", ".config",
}

// autorunFiles are files a shell, direnv, an editor, a debugger or a package manager reads and
// acts on by itself.
var autorunFiles = []string{
	".envrc", ".env", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc",
	".tcshrc", ".login", ".logout", ".gitconfig", ".npmrc", ".yarnrc", ".yarnrc.yml",
	".pnpmfile.cjs", ".pre-commit-config.yaml", ".mcp.json", "mise.toml", ".mise.toml",
	".exrc", ".vimrc", ".nvimrc", ".nvim.lua", ".gdbinit", ".lldbinit",
	"sitecustomize.py", "usercustomize.py",
}

// autorun says why the host runs or loads path by itself, or "".
func autorun(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		last := i == len(parts)-1
		switch {
		case !last && slices.Contains(autorunDirs, part):
			return fmt.Sprintf("%s/ holds settings a host tool acts on", part)
		case last && (slices.Contains(autorunFiles, part) || strings.HasPrefix(part, ".env.")):
			return fmt.Sprintf("%s is read and acted on by host tools (shells, direnv, editors, package managers)", part)
		case last && strings.HasSuffix(part, ".pth"):
			return "Python runs the import lines of .pth files at every start"
		case !last && part == ".cargo" && i == len(parts)-2 && (parts[i+1] == "config" || parts[i+1] == "config.toml"):
			return "cargo runs the commands its config names (rustc-wrapper, runners)"
		case !last && part == "bin" && i == len(parts)-2 && strings.HasPrefix(parts[i+1], "activate"):
			return "a virtualenv's activate script runs in the shell that sources it"
		}
	}
	return ""
}

// symlinkEscapes says why a symlink at p with target leads out of the tree, or "". Relative
// targets are followed in the tree as it will be (isLink answers for the change set's and the
// tree's entries): a ".." that backs out of a symlinked directory goes where that link leads,
// not where the text suggests, and such a target is refused too.
func symlinkEscapes(p, target, tree string, isLink func(rel string) bool) string {
	if path.IsAbs(target) {
		if rel, ok := relTo(tree, path.Clean(target)); ok && (rel == "" || validRel(rel)) {
			return ""
		}
		return fmt.Sprintf("it points to %s, outside the tree", quote(target))
	}
	var stack []string
	for _, part := range strings.Split(path.Dir(p), "/") {
		if part != "." {
			stack = append(stack, part)
		}
	}
	for _, part := range strings.Split(target, "/") {
		switch part {
		case "", ".":
		case "..":
			if len(stack) == 0 {
				return fmt.Sprintf("it points to %s, outside the tree", quote(target))
			}
			if isLink(strings.Join(stack, "/")) {
				return fmt.Sprintf("its target %s backs out of a symlinked directory", quote(target))
			}
			stack = stack[:len(stack)-1]
		default:
			stack = append(stack, part)
		}
	}
	return ""
}

// specialReason says why e is a special file or mode apply refuses, or "".
func specialReason(e *Entry) string {
	switch {
	case special(e):
		return "a " + kindName(e)
	case e.Mode&fs.ModeSetuid != 0:
		return "a setuid bit"
	case e.Mode&fs.ModeSetgid != 0:
		return "a setgid bit"
	}
	return ""
}

// Classes lists every class, in the order apply reports them.
func Classes() []Class {
	out := make([]Class, len(classes))
	for i, k := range classes {
		out[i] = k.class
	}
	return out
}
