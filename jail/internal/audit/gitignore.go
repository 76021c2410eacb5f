package audit

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// ignore is what git ignores in one work tree, from the same files git reads, parsed here: jail
// never runs the host's git on a tree the sandbox wrote (a repository's configuration can make
// git execute code). It follows gitignore(5): patterns from core.excludesFile, then
// $GIT_DIR/info/exclude, then each directory's .gitignore from the top down, the last match
// winning; a pattern with a slash before its end is anchored to its file's directory, one
// without matches a name at any depth; a trailing slash matches directories only; `**` spans
// directories; `!` re-includes, except beneath an ignored directory. Tracked files are not told
// apart (jail does not read the index): a tracked file a pattern matches is counted as ignored,
// which lists a file too many, never one too few.
type ignore struct {
	files []string             // core.excludesFile and info/exclude, read or not
	top   string               // the work tree's top directory
	base  []pattern            // core.excludesFile, then info/exclude
	local map[string][]pattern // each directory's .gitignore, by path relative to top ("" for top)
}

// pattern is one line of an ignore file, as glob segments of a path relative to top, and, for
// the commonest shapes (a bare name, "*.ext"), a name to compare instead: git's own fast paths.
type pattern struct {
	glob    []string
	negate  bool
	dirOnly bool
	quick   quickName
}

// newIgnore reads the ignore files of the work tree at top whose git directory is gitDir, and the
// user's global excludes (home: $HOME; config: $XDG_CONFIG_HOME or ~/.config).
func newIgnore(top, gitDir, home, config string) *ignore {
	ig := &ignore{top: top, local: map[string][]pattern{}}
	excludes := globalExcludes(home, config)
	for _, f := range []string{excludes, filepath.Join(gitDir, "info", "exclude")} {
		if f != "" {
			ig.files = append(ig.files, f)
			ig.base = append(ig.base, readPatterns(f, "")...)
		}
	}
	return ig
}

// globalExcludes is core.excludesFile: from ~/.gitconfig's [core] section when set there, else
// git's default, $XDG_CONFIG_HOME/git/ignore.
func globalExcludes(home, config string) string {
	b, _ := os.ReadFile(filepath.Join(home, ".gitconfig"))
	section := ""
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok && section == "core" && strings.EqualFold(strings.TrimSpace(k), "excludesfile") {
			v = strings.Trim(strings.TrimSpace(v), `"`)
			if rest, ok := strings.CutPrefix(v, "~/"); ok {
				v = filepath.Join(home, rest)
			}
			return v
		}
	}
	return filepath.Join(config, "git", "ignore")
}

// load reads the .gitignore of dir (relative to top) once.
func (ig *ignore) load(dir string) {
	if _, ok := ig.local[dir]; !ok {
		ig.local[dir] = readPatterns(filepath.Join(ig.top, dir, ".gitignore"), dir)
	}
}

// noIgnoreFile notes that dir (relative to top) has no .gitignore, known from its listing.
func (ig *ignore) noIgnoreFile(dir string) {
	if _, ok := ig.local[dir]; !ok {
		ig.local[dir] = nil
	}
}

// ignored says whether rel (relative to top; a directory when isDir) is ignored, its parent
// directories being not ignored.
func (ig *ignore) ignored(rel string, isDir bool) bool {
	match := false
	try := func(ps []pattern) {
		for _, p := range ps {
			if (!p.dirOnly || isDir) && p.matches(rel) {
				match = !p.negate
			}
		}
	}
	try(ig.base)
	dirs := []string{""}
	for d := path.Dir(rel); d != "."; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	ig.load("")
	try(ig.local[""])
	for i := len(dirs) - 1; i >= 1; i-- {
		ig.load(dirs[i])
		try(ig.local[dirs[i]])
	}
	return match
}

// readPatterns parses the ignore file f, whose patterns are relative to dir (relative to top).
func readPatterns(f, dir string) []pattern {
	b, err := os.ReadFile(f)
	if err != nil {
		return nil
	}
	var ps []pattern
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if p, ok := parsePattern(sc.Text(), dir); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// parsePattern parses one line; ok is false for a blank line or a comment.
func parsePattern(line, dir string) (pattern, bool) {
	line = trimTrailingSpace(line)
	if line == "" || line[0] == '#' {
		return pattern{}, false
	}
	var p pattern
	switch {
	case line[0] == '!':
		p.negate, line = true, line[1:]
	case strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return pattern{}, false
	}
	var glob []string
	if dir != "" {
		glob = strings.Split(dir, "/")
	}
	if !strings.Contains(line, "/") { // a name at any depth
		glob = append(glob, "**")
		p.quick = quickFor(line)
	}
	p.glob = append(glob, splitGlob(strings.TrimPrefix(line, "/"))...)
	return p, true
}

// matches says whether the pattern matches rel, a path relative to top.
func (p *pattern) matches(rel string) bool {
	if p.quick.kind != general {
		name := rel[strings.LastIndexByte(rel, '/')+1:]
		dir := p.glob[:len(p.glob)-2] // the .gitignore's directory, then "**"
		return p.quick.match(name) && (len(dir) == 0 || strings.HasPrefix(rel, strings.Join(dir, "/")+"/"))
	}
	return matchGlob(p.glob, strings.Split(rel, "/"))
}

// quickName is a one-segment glob that needs no path.Match: a bare name, or "*" and a suffix.
type quickName struct {
	kind int
	text string
}

const (
	general = iota
	exact
	suffix
	prefix
)

// globMeta are the bytes that make a glob more than a name.
const globMeta = "*?[\\"

// quickFor is the quick form of glob, general when it has none.
func quickFor(glob string) quickName {
	switch {
	case !strings.ContainsAny(glob, globMeta):
		return quickName{exact, glob}
	case glob[0] == '*' && !strings.ContainsAny(glob[1:], globMeta):
		return quickName{suffix, glob[1:]}
	case glob[len(glob)-1] == '*' && !strings.ContainsAny(glob[:len(glob)-1], globMeta):
		return quickName{prefix, glob[:len(glob)-1]}
	}
	return quickName{}
}

func (q quickName) match(name string) bool {
	switch q.kind {
	case exact:
		return name == q.text
	case suffix:
		return strings.HasSuffix(name, q.text)
	}
	return strings.HasPrefix(name, q.text)
}

// trimTrailingSpace drops trailing spaces unless backslash-escaped.
func trimTrailingSpace(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	return s
}

// splitGlob splits a gitignore glob into path.Match segments: `[!...]` becomes `[^...]`, and a
// `**` segment stands for any number of them.
func splitGlob(g string) []string {
	segs := strings.Split(g, "/")
	for i, seg := range segs {
		segs[i] = strings.ReplaceAll(seg, "[!", "[^")
	}
	return segs
}

// matchGlob says whether the segments of a path match glob's: path.Match for each, `**` for any
// number of them (one or more when it ends the glob: "dir/**" is what is inside dir).
func matchGlob(glob, name []string) bool {
	for len(glob) > 0 {
		if glob[0] == "**" {
			if len(glob) == 1 {
				return len(name) > 0
			}
			for i := 0; i <= len(name); i++ {
				if matchGlob(glob[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(glob[0], name[0]); !ok {
			return false
		}
		glob, name = glob[1:], name[1:]
	}
	return len(name) == 0
}

// ignoredPath says whether rel (relative to top; a directory when isDir) is ignored: itself, or
// beneath an ignored directory (whose contents cannot be re-included). where is the shallowest
// ignored one of them ("" when not ignored).
func (ig *ignore) ignoredPath(rel string, isDir bool) (where string) {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if dir := strings.Join(parts[:i], "/"); ig.ignored(dir, true) {
			return dir
		}
	}
	if ig.ignored(rel, isDir) {
		return rel
	}
	return ""
}
