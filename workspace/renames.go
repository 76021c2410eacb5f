package workspace

import (
	"crypto/sha256"
	"io"
)

// pairRenames turns a deleted regular file and a created one with the same content into one
// rename, as git does for an exact rename (its "similarity index 100%"). overlayfs records no
// renames in a user namespace (redirect_dir is off there): `mv` of a file the tree had is a copy
// and a whiteout in the upper layer, and this is how it reads as a rename again. Empty files are
// never paired: any two would match.
func pairRenames(changes []Change) []Change {
	deleted := map[int64][]int{} // by size: indexes of deletions
	for i, c := range changes {
		if c.New == nil && c.Old.Mode.IsRegular() && c.Old.Size > 0 {
			deleted[c.Old.Size] = append(deleted[c.Old.Size], i)
		}
	}
	if len(deleted) == 0 {
		return changes
	}
	hashes := map[int]string{} // change index → content hash, computed once
	hash := func(i int, e *Entry) string {
		if h, ok := hashes[i]; ok {
			return h
		}
		h := contentHash(e)
		hashes[i] = h
		return h
	}
	paired := map[int]bool{}
	var out []Change
	for i, c := range changes {
		if c.Old != nil || c.New == nil || !c.New.Mode.IsRegular() || c.New.Size == 0 {
			continue
		}
		for _, d := range deleted[c.New.Size] {
			if paired[d] {
				continue
			}
			if h := hash(i, c.New); h != "" && h == hash(d, changes[d].Old) {
				paired[d], paired[i] = true, true
				out = append(out, Change{Path: c.Path, From: changes[d].Path, Old: changes[d].Old, New: c.New})
				break
			}
		}
	}
	for i, c := range changes {
		if !paired[i] {
			out = append(out, c)
		}
	}
	return out
}

// contentHash is the SHA-256 of a regular file's content, "" when it cannot be read.
func contentHash(e *Entry) string {
	f, err := openContent(e)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return string(h.Sum(nil))
}
