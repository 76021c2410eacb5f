package profiles

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// The one place where paths meet the host's symlinks. Every grant, hide, protect, the working
// directory and the home are resolved here to their physical paths before anything compares
// them, so a path named through a symlink (a working directory reached as /tmp/link, a grant
// of a link to ~) is planned, masked and protected exactly like its physical path.

// maxLinks bounds the symlinks one resolution follows, as the kernel's path walk does (40).
const maxLinks = 40

// resolver follows symlinks on the host for one Resolve and remembers each answer: a profile's
// paths share a few parents (the working directory, ~, /etc), so every prefix is looked at once.
// Resolve changes nothing on disk, so an answer holds for the whole call.
type resolver struct {
	walked map[string]walked
	texts  map[string]string // each symlink met, by its physical path: its text
	follow int               // symlinks followed by the walk in progress
}

// walked is where a clean absolute path leads on the host.
type walked struct {
	physical string   // every symlink followed; a missing tail kept as written
	exists   bool     // physical exists
	dir      bool     // physical is a directory
	links    []string // the symlinks met on the way, as physical paths of the links themselves
	err      error    // a failure other than a missing component
}

func newResolver() *resolver {
	return &resolver{walked: map[string]walked{}, texts: map[string]string{}}
}

// walk resolves a clean absolute path, following every symlink, the last component's too.
func (r *resolver) walk(path string) walked {
	if path == "/" {
		return walked{physical: "/", exists: true, dir: true}
	}
	if w, ok := r.walked[path]; ok {
		return w
	}
	r.walked[path] = walked{err: syscall.ELOOP} // met again before it is answered: a cycle
	dir, name := filepath.Split(path)
	w := r.step(r.walk(filepath.Clean(dir)), name)
	r.walked[path] = w
	return w
}

// step resolves name inside the resolved directory parent.
func (r *resolver) step(parent walked, name string) walked {
	next := filepath.Join(parent.physical, name)
	w := walked{physical: next, links: parent.links, err: parent.err}
	if !parent.exists || parent.err != nil {
		return w
	}
	info, err := os.Lstat(next)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return w
	case err != nil:
		w.err = err
		return w
	case info.Mode()&fs.ModeSymlink == 0:
		w.exists, w.dir = true, info.IsDir()
		return w
	}
	if r.follow++; r.follow > maxLinks {
		w.err = syscall.ELOOP
		return w
	}
	defer func() { r.follow-- }()
	text, err := os.Readlink(next)
	if err != nil {
		w.err = err
		return w
	}
	r.texts[next] = text
	if !filepath.IsAbs(text) {
		text = filepath.Join(parent.physical, text)
	}
	dest := r.walk(filepath.Clean(text))
	links := append(slices.Clone(parent.links), next)
	for _, l := range dest.links {
		if !slices.Contains(links, l) {
			links = append(links, l)
		}
	}
	dest.links = links
	return dest
}

// physical returns path with every symlink followed, the last component's too: where the file
// or directory it names is. Missing components are kept as written.
func (r *resolver) physical(path string) (string, error) {
	w := r.walk(path)
	return w.physical, w.err
}

// readlink returns the text of the symlink at path, whose parent directories hold no symlink, and
// whether there is one.
func (r *resolver) readlink(path string) (string, bool) {
	r.walk(path)
	text, ok := r.texts[path]
	return text, ok
}

// isDir reports whether path, every symlink followed, is a directory.
func (r *resolver) isDir(path string) bool {
	w := r.walk(path)
	return w.exists && w.dir && w.err == nil
}

// place returns path with its parent directories' symlinks followed and its final name kept:
// where a mask for the name itself sits, so that a symlink at the final name cannot redirect it.
func (r *resolver) place(path string) (string, error) {
	if path == "/" {
		return "/", nil
	}
	dir, name := filepath.Split(path)
	w := r.walk(filepath.Clean(dir))
	return filepath.Join(w.physical, name), w.err
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
	quiet    bool   // a protection jail adds itself: no warning where nothing is writable
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
