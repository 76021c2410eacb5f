// Package workspacetest holds what the workspace's tests share: a tree's state, to tell whether
// a tree changed. It is imported by tests only (workspace and cmd/jail), like
// net/http/httptest.
package workspacetest

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// State lists every entry beneath dir, one line each: its path, type and mode, content hash or
// symlink target. Two states are equal when the trees are byte-identical, modes and links
// included.
func State(dir string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %s", rel, info.Mode())
		switch {
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			b.WriteString(" -> " + target)
		}
		b.WriteString("\n")
		return nil
	})
	return b.String(), err
}
