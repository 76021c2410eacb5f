package profiles

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// symlinks follows symlinks on the host for one Resolve and remembers each answer: a profile's
// paths share a few parents (the working directory, ~, /etc), and filepath.EvalSymlinks lstats
// every component of each (over 150 calls for the agent profile, a third of resolving it).
// Resolve changes nothing on disk, so an answer holds for the whole call.
type symlinks map[string]evaluated

// evaluated is one answer of filepath.EvalSymlinks.
type evaluated struct {
	path string
	err  error
}

// eval is filepath.EvalSymlinks, answered once per path.
func (s symlinks) eval(path string) (string, error) {
	if r, ok := s[path]; ok {
		return r.path, r.err
	}
	resolved, err := filepath.EvalSymlinks(path)
	s[path] = evaluated{resolved, err}
	return resolved, err
}

// physical returns path with its parent directories' symlinks resolved and its final name kept:
// where a mount for path sits, so a symlink planted at the final name cannot redirect it.
// Parents that do not exist are kept as written.
func (s symlinks) physical(path string) (string, error) {
	if path == "/" {
		return "/", nil
	}
	dir, base := filepath.Split(path)
	dir = filepath.Clean(dir)
	resolved, err := s.eval(dir)
	if errors.Is(err, fs.ErrNotExist) {
		resolved, err = s.physical(dir)
	}
	if err != nil {
		return "", err
	}
	return filepath.Join(resolved, base), nil
}

// within reports whether path is dir or lies beneath it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// depth counts a clean absolute path's components ("/" is 0).
func depth(path string) int {
	if path == "/" {
		return 0
	}
	return strings.Count(path, "/")
}

// entry is one path value of a filesystem key, split into the path and its markers.
type entry struct {
	key, raw string // the key and the value as written (after Expand), for error locations
	path     string // clean, absolute
	optional bool   // trailing ?
	dir      bool   // trailing / (meaningful for protect)
}

// parseEntry splits a path value; a relative path is an error.
func (p *Profile) parseEntry(key, raw string) (entry, error) {
	e := entry{key: key, raw: raw}
	path, optional := strings.CutSuffix(raw, "?")
	e.optional = optional
	e.dir = strings.HasSuffix(path, "/") && path != "/"
	if !filepath.IsAbs(path) {
		return e, p.errorAt(key, raw, "%s: not an absolute path (start it with /, ~, $CWD or $HOME)", raw)
	}
	e.path = filepath.Clean(path)
	return e, nil
}
