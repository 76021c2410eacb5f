package gitimport

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// objectPattern matches the object files taken: loose objects and pack files with their
// indexes. Everything else under objects/ (info/alternates, commit-graph, multi-pack-index,
// bitmaps) stays behind: git rebuilds what it needs, and alternates would point elsewhere.
var objectPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9a-f]{2}/([0-9a-f]{38}|[0-9a-f]{62})|pack/pack-([0-9a-f]{40}|[0-9a-f]{64})\.(pack|idx))$`)
})

// quarantine moves the object files the command wrote (upper's objects/) into dir, laid out
// as an objects directory. Only regular files move; both lie in the run's directory, on one
// filesystem.
func quarantine(upper, dir string) error {
	src := filepath.Join(upper, "objects")
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == src && os.IsNotExist(err) {
				return nil // no object written
			}
			return err
		}
		rel, _ := filepath.Rel(src, path)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() || !objectPattern().MatchString(rel) {
			return nil
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		return os.Rename(path, dst)
	})
}
