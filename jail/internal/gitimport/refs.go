package gitimport

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// maxRefs bounds the refs one run may bring out.
const maxRefs = 1000

// ref is one ref the command changed: its name inside (refs/..., or HEAD for a detached HEAD)
// and the object it names.
type ref struct {
	name, oid string
}

// oidPattern matches a SHA-1 or SHA-256 object name. This package's patterns are compiled on first
// use, not at package init: every jail start (twice a run) paid 0.3 ms of CPU for them.
var oidPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`) })

// refNamePattern is the ref names imported: plain components under refs/, nothing git would
// read specially (no "..", no component starting with "." or ending in ".lock").
var refNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^refs(/[A-Za-z0-9_+=,-][A-Za-z0-9_+=,.-]*)+$`) })

// validRefName reports whether name is a ref name gitimport brings out.
func validRefName(name string) bool {
	return refNamePattern().MatchString(name) && !strings.Contains(name, "..") && !strings.Contains(name, ".lock/") &&
		!strings.HasSuffix(name, ".lock") && !strings.HasSuffix(name, ".")
}

// changedRefs lists the refs whose value in upper (the overlay's upper layer over common)
// differs from common's own: loose refs and packed-refs the command wrote, and the detached HEAD
// of the git directory at headDir (relative to common). Deleted refs are not listed: nothing is
// ever removed on the host. Names that are not plain refs are returned apart, refused.
func changedRefs(upper, common, headDir string) (changed []ref, refused []string) {
	values := map[string]string{}
	for name, oid := range packedRefs(filepath.Join(upper, "packed-refs")) {
		values[name] = oid
	}
	filepath.WalkDir(filepath.Join(upper, "refs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil // a whiteout, a symlink, anything but a file: not a ref
		}
		rel, _ := filepath.Rel(upper, path)
		if oid, ok := readOid(path); ok {
			values[filepath.ToSlash(rel)] = oid
		}
		return nil
	})
	lowerPacked := packedRefs(filepath.Join(common, "packed-refs"))
	for name, oid := range values {
		before, ok := readOid(filepath.Join(common, filepath.FromSlash(name)))
		if !ok {
			before = lowerPacked[name]
		}
		switch {
		case oid == before:
		case !validRefName(name):
			refused = append(refused, name)
		default:
			changed = append(changed, ref{name, oid})
		}
	}
	head := filepath.Join(headDir, "HEAD")
	if oid, ok := readOid(filepath.Join(upper, head)); ok {
		if before, _ := readOid(filepath.Join(common, head)); oid != before {
			changed = append(changed, ref{"HEAD", oid})
		}
	}
	return changed, refused
}

// readOid reads a loose ref file (or HEAD): an object name and a newline. A symbolic ref, or
// anything that is not a small regular file, gives false.
func readOid(path string) (string, bool) {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() || info.Size() > 128 {
		return "", false
	}
	data, err := os.ReadFile(path)
	oid := string(bytes.TrimSpace(data))
	return oid, err == nil && oidPattern().MatchString(oid)
}

// packedRefs parses a packed-refs file ("OID NAME" lines; "#" and "^" lines skipped).
func packedRefs(path string) map[string]string {
	refs := map[string]string{}
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() {
		return refs
	}
	f, err := os.Open(path)
	if err != nil {
		return refs
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		oid, name, ok := strings.Cut(sc.Text(), " ")
		if ok && oidPattern().MatchString(oid) {
			refs[name] = oid
		}
	}
	return refs
}
