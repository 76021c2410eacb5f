package workspace

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Commits made inside the overlay are brought into the tree's repository the way `git fetch`
// brings a remote's: as objects and refs, never config or hooks. jail does it itself, without
// running git on anything the sandbox wrote: it reads each changed ref of the repository's upper
// layer, walks the commits, trees and tags it names down to what the real repository already
// has, verifies every object it copies (inflated, it must hash to its name), writes each one
// anew (compressed by jail, under its name, never over an existing one) and records the ref as
// refs/jail/ID/NAME (refs/heads/main → refs/jail/ID/heads/main), which no git command runs
// anything for. The user reviews and merges it as any fetched branch.
//
// Objects in packs the sandbox made (git gc, git repack inside) are not read: a ref that needs
// one is not imported, and says so.

// Ref is a ref apply wrote into the tree's repository for commits made inside.
type Ref struct {
	Name   string // refs/jail/ID/…
	Target string // the object it names
}

// maxParsed bounds a commit, tree or tag that is read whole to be walked.
const maxParsed = 64 << 20

// importCommits imports the commits of every tree repository whose records the changes hold.
// A ref that cannot be imported is reported in notes; the change set keeps it.
func (cs *ChangeSet) importCommits(changes []Change) (refs []Ref, notes []string, err error) {
	var repos []string
	for _, c := range changes {
		if c.Record && !slices.Contains(repos, c.repo) {
			repos = append(repos, c.repo)
		}
	}
	for _, dir := range repos {
		imp, err := cs.importer(dir)
		if err != nil {
			return refs, notes, err
		}
		r, n, err := imp.run()
		imp.w.close()
		refs, notes = append(refs, r...), append(notes, n...)
		if err != nil {
			return refs, notes, err
		}
	}
	return refs, notes, nil
}

// importer brings one repository's commits in.
type importer struct {
	id      string
	dir     string // the repository, relative to the tree
	real    string // its host path
	upper   string // the upper layer's copy of it
	newHash func() hash.Hash
	hexLen  int
	packs   []*packIndex
	w       *treeWriter // writes beneath the real repository
	have    map[string]bool
}

func (cs *ChangeSet) importer(dir string) (*importer, error) {
	t, err := openTree(cs.Manifest.Tree, "")
	if err != nil {
		return nil, err
	}
	fd, err := t.openDir(dir, false)
	t.close()
	if err != nil {
		return nil, fmt.Errorf("open repository %s: %w", quote(dir), err)
	}
	imp := &importer{id: cs.ID, dir: dir, real: hostPath(cs.Manifest.Tree, dir), upper: hostPath(cs.Upper(), dir),
		newHash: sha1.New, hexLen: 40, w: &treeWriter{root: fd, modes: map[string]fs.FileMode{}}, have: map[string]bool{}}
	if sha256Repository(imp.real) {
		imp.newHash, imp.hexLen = sha256.New, 64
	}
	imp.packs = openPackIndexes(filepath.Join(imp.real, "objects", "pack"), imp.hexLen/2)
	return imp, nil
}

// run imports every ref the sandbox created or moved.
func (imp *importer) run() (refs []Ref, notes []string, err error) {
	defer closePacks(imp.packs)
	changed, err := imp.changedRefs()
	if err != nil {
		return nil, nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(changed)) {
		target := changed[name]
		local := "refs/jail/" + imp.id + "/" + strings.TrimPrefix(name, "refs/")
		if !validRefName(local) {
			notes = append(notes, fmt.Sprintf("%s not imported: not a name jail writes", quote(name)))
			continue
		}
		if err := imp.copyClosure(target); err != nil {
			notes = append(notes, fmt.Sprintf("%s not imported: %s", quote(name), err))
			continue
		}
		if err := imp.w.writeBytes(local, []byte(target+"\n"), 0o644, true); err != nil {
			return refs, notes, fmt.Errorf("write %s: %w", local, err)
		}
		refs = append(refs, Ref{Name: local, Target: target})
	}
	return refs, notes, nil
}

// changedRefs returns the refs (and a detached HEAD, as "HEAD") whose value in the upper layer
// is new or differs from the real repository's.
func (imp *importer) changedRefs() (map[string]string, error) {
	upperRefs, err := readRefs(imp.upper, imp.hexLen)
	if err != nil {
		return nil, err
	}
	realRefs, err := readRefs(imp.real, imp.hexLen)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for name, v := range upperRefs {
		if realRefs[name] != v && !strings.HasPrefix(name, "refs/jail/") {
			out[name] = v
		}
	}
	return out, nil
}

// readRefs reads a repository's loose refs, packed refs and detached HEAD; symbolic refs and
// anything that is not an object name are skipped.
func readRefs(repo string, hexLen int) (map[string]string, error) {
	refs := map[string]string{}
	if data, err := os.ReadFile(filepath.Join(repo, "packed-refs")); err == nil {
		for line := range strings.Lines(string(data)) {
			v, name, ok := strings.Cut(strings.TrimSpace(line), " ")
			if ok && isHex(v, hexLen) && strings.HasPrefix(name, "refs/") {
				refs[name] = v
			}
		}
	}
	err := filepath.WalkDir(filepath.Join(repo, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(repo, p)
		if v := strings.TrimSpace(string(data)); isHex(v, hexLen) {
			refs[filepath.ToSlash(rel)] = v
		}
		return nil
	})
	if data, err := os.ReadFile(filepath.Join(repo, "HEAD")); err == nil {
		if v := strings.TrimSpace(string(data)); isHex(v, hexLen) {
			refs["HEAD"] = v
		}
	}
	return refs, err
}

// copyClosure copies the object named target, and everything it reaches that the real
// repository lacks, from the upper layer's loose objects.
func (imp *importer) copyClosure(target string) error {
	todo := []string{target}
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if imp.have[name] || imp.inReal(name) {
			continue
		}
		links, data, err := imp.readObject(name)
		if err != nil {
			return err
		}
		if err := imp.w.writeBytes(path.Join("objects", name[:2], name[2:]), data, 0o444, false); err != nil {
			return fmt.Errorf("write object %s: %w", name, err)
		}
		imp.have[name] = true
		todo = append(todo, links...)
	}
	return nil
}

// inReal reports whether the real repository has the object: loose, or in one of its packs.
func (imp *importer) inReal(name string) bool {
	if _, err := os.Lstat(filepath.Join(imp.real, "objects", name[:2], name[2:])); err == nil {
		return true
	}
	raw, _ := hex.DecodeString(name)
	for _, p := range imp.packs {
		if p.has(raw) {
			return true
		}
	}
	return false
}

// readObject reads the upper layer's loose object name, checks that it hashes to its name and
// that its header is true, and returns the objects it names (a commit's tree and parents, a
// tree's entries but for gitlinks, a tag's object) and the object compressed anew.
func (imp *importer) readObject(name string) (links []string, compressed []byte, err error) {
	f, err := openRead(filepath.Join(imp.upper, "objects", name[:2], name[2:]), 0, true)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("object %s is in no loose object (a pack made inside is not read)", name)
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	zr, err := zlib.NewReader(f)
	if err != nil {
		return nil, nil, fmt.Errorf("object %s: %w", name, err)
	}
	br := bufio.NewReader(zr)
	header, err := br.ReadString(0)
	if err != nil {
		return nil, nil, fmt.Errorf("object %s: bad header", name)
	}
	typ, sizeText, _ := strings.Cut(strings.TrimSuffix(header, "\x00"), " ")
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if err != nil || size < 0 || !slices.Contains([]string{"blob", "tree", "commit", "tag"}, typ) {
		return nil, nil, fmt.Errorf("object %s: bad header %q", name, header)
	}
	if typ != "blob" && size > maxParsed {
		return nil, nil, fmt.Errorf("object %s: a %s of %d bytes", name, typ, size)
	}
	h := imp.newHash()
	var out bytes.Buffer
	zw := zlib.NewWriter(&out)
	var body bytes.Buffer
	sink := io.MultiWriter(h, zw)
	io.WriteString(sink, header)
	w := sink
	if typ != "blob" {
		w = io.MultiWriter(sink, &body)
	}
	n, err := io.Copy(w, io.LimitReader(br, size+1))
	if err != nil || n != size {
		return nil, nil, fmt.Errorf("object %s: %d bytes where its header says %d", name, n, size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != name {
		return nil, nil, fmt.Errorf("object %s hashes to %s", name, got)
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	links, err = objectLinks(typ, body.Bytes(), imp.hexLen)
	if err != nil {
		return nil, nil, fmt.Errorf("object %s: %w", name, err)
	}
	return links, out.Bytes(), nil
}

// objectLinks lists the objects a commit, tree or tag names.
func objectLinks(typ string, body []byte, hexLen int) ([]string, error) {
	var links []string
	switch typ {
	case "commit", "tag":
		for line := range strings.Lines(string(body)) {
			line = strings.TrimSuffix(line, "\n")
			if line == "" {
				break // the message follows
			}
			key, v, _ := strings.Cut(line, " ")
			if (key == "tree" || key == "parent" || key == "object") && isHex(v, hexLen) {
				links = append(links, v)
			}
		}
	case "tree":
		for len(body) > 0 {
			sp := bytes.IndexByte(body, ' ')
			nul := bytes.IndexByte(body, 0)
			if sp < 0 || nul < sp || len(body) < nul+1+hexLen/2 {
				return nil, errors.New("malformed tree")
			}
			mode := string(body[:sp])
			id := hex.EncodeToString(body[nul+1 : nul+1+hexLen/2])
			body = body[nul+1+hexLen/2:]
			if mode != "160000" { // a gitlink names a commit of another repository
				links = append(links, id)
			}
		}
	}
	return links, nil
}

// sha256Repository reports whether the real repository's config names the sha256 object
// format (the user's own config: jail reads it, never the upper layer's).
func sha256Repository(repo string) bool {
	data, err := os.ReadFile(filepath.Join(repo, "config"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(strings.ToLower(string(data))) {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == "objectformat" && strings.TrimSpace(v) == "sha256" {
			return true
		}
	}
	return false
}

// isHex reports whether s is n lowercase hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// validRefName is git's check-ref-format, as far as jail writes refs: components that do not
// start with '.' or end with ".lock", no "..", no control characters, spaces or ~^:?*[\.
func validRefName(name string) bool {
	if strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ".") {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || strings.HasSuffix(part, ".lock") {
			return false
		}
	}
	for _, c := range []byte(name) {
		if c < 0x20 || c == 0x7f || strings.IndexByte(" ~^:?*[\\", c) >= 0 {
			return false
		}
	}
	return true
}

// writeBytes writes data at rel (beneath the root, parents made), by a temporary name and a
// rename; with replace false an existing file is kept (objects never change).
func (t *treeWriter) writeBytes(rel string, data []byte, mode uint32, replace bool) error {
	dir, name := path.Split(rel)
	parent, err := t.openDir(strings.TrimSuffix(dir, "/"), true)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	tmp := ".jail-apply-" + randomHex(8)
	fd, err := unix.Openat(parent, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		flags := uint(unix.RENAME_NOREPLACE)
		if replace {
			flags = 0
		}
		if err = unix.Renameat2(parent, tmp, parent, name, flags); errors.Is(err, unix.EEXIST) {
			err = nil // the object is there already
		}
	}
	unix.Unlinkat(parent, tmp, 0) // left only when the rename did not happen
	return err
}
