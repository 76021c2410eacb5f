package profiles

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// physical returns path with its parent directories' symlinks resolved and its final name kept:
// where a mount for path sits, so a symlink planted at the final name cannot redirect it.
// Parents that do not exist are kept as written.
func physical(path string) (string, error) {
	if path == "/" {
		return "/", nil
	}
	dir, base := filepath.Split(path)
	dir = filepath.Clean(dir)
	resolved, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		resolved, err = physical(dir)
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
