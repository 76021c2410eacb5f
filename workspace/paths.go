package workspace

import (
	"path"
	"path/filepath"
	"strings"
)

// Paths in a change set are relative to its tree, slash-separated and clean: "src/main.go".

// relTo returns p relative to dir ("" for dir itself) when p is dir or beneath it.
func relTo(dir, p string) (string, bool) {
	if p == dir {
		return "", true
	}
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	rel, ok := strings.CutPrefix(p, prefix)
	return rel, ok
}

// validRel reports whether p is a clean relative path that stays inside the tree.
func validRel(p string) bool {
	return p != "" && p != "." && !path.IsAbs(p) && path.Clean(p) == p &&
		p != ".." && !strings.HasPrefix(p, "../")
}

// beneath reports whether p is dir or lies beneath it (both relative; "" is the tree's root).
func beneath(p, dir string) bool {
	return dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

// join joins a relative directory and a name ("" is the tree's root).
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// hostPath is the host path of rel beneath root.
func hostPath(root, rel string) string {
	return filepath.Join(root, filepath.FromSlash(rel))
}
