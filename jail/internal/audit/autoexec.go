package audit

import (
	"strings"
	"sync"
)

// autoExec are the paths, relative to a writable grant, that tools run on the host without being
// asked to, each with what runs it. Code the agent writes is code the user will run; these are
// the places where that happens unseen, on a routine action. The list names the common ones; it
// cannot be complete (docs/profiles.md says what the agent profile trusts).
var autoExec = []struct {
	glob, why string
}{
	{"**/site-packages/*.pth", "Python runs its import lines at every start"},
	{"**/site-packages/sitecustomize.py", "Python imports it at every start"},
	{"**/usercustomize.py", "Python imports it at every start"},
	{"**/bin/activate*", "a Python virtualenv's activation script, sourced by the shell"},
	{"**/.envrc", "direnv runs it on entering the directory"},
	{"**/.env", "direnv's dotenv and many tools load it"},
	{".husky/**", "husky's git hooks"},
	{".githooks/**", "git hooks, where core.hooksPath points"},
	{".pre-commit-config.yaml", "pre-commit runs the hooks it names on git commit"},
	{".cargo/config.toml", "cargo's config: rustc-wrapper, runners, aliases"},
	{".cargo/config", "cargo's config: rustc-wrapper, runners, aliases"},
	{"**/.npmrc", "npm's config: script-shell, node-options"},
	{"**/.yarnrc", "yarn's config"},
	{"**/.yarnrc.yml", "yarn's config: yarnPath runs the file it names"},
	{".pnpmfile.cjs", "pnpm runs it on install"},
	{".git/info/exclude", "git hides the files it names from git status"},
	{".git/info/attributes", "git attributes: filters and diff drivers"},
}

// autoExecGlobs are autoExec's globs, split, with a quick test of the last segment: made when
// first needed, not in every jail process's start-up.
var autoExecGlobs = sync.OnceValue(func() []autoGlob {
	gs := make([]autoGlob, len(autoExec))
	for i, a := range autoExec {
		segs := splitGlob(a.glob)
		gs[i] = autoGlob{segs: segs, last: quickFor(segs[len(segs)-1])}
		if segs[len(segs)-1] == "**" { // "dir/**": what is inside dir
			gs[i].last = quickName{}
			gs[i].first = segs[0]
		}
	}
	return gs
})

type autoGlob struct {
	segs  []string
	last  quickName // the last segment's quick test; general: none
	first string    // for "dir/**", dir: the first segment rel must have
}

// runsAutomatically says what runs rel (relative to a writable grant) unasked, "" for nothing.
func runsAutomatically(rel string) string {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	var segs []string
	for i, g := range autoExecGlobs() {
		if g.last.kind != general && !g.last.match(name) || g.first != "" && !strings.HasPrefix(rel, g.first+"/") {
			continue
		}
		if segs == nil {
			segs = strings.Split(rel, "/")
		}
		if matchGlob(g.segs, segs) {
			return autoExec[i].why
		}
	}
	return ""
}
