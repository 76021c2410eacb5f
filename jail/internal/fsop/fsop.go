// Package fsop is the file API of a persistent sandbox, run inside it: jail's binary, which the
// spawner executes as Arg0 with every restriction of a command, so that an operation reaches
// only what a command could, and a path — or a symlink the sandbox planted — resolves in the
// sandbox's root, never the host's. The client (jail/client) starts it with pipes: a request's
// body on stdin, the answer on stdout (the bytes, a tar stream, or JSON), and a failure as one
// JSON api.Error on stderr with exit status 1.
package fsop

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/api"
	"github.com/jail-sandbox/jail/jail/internal/archive"
)

// Arg0 is the helper's argv[0].
const Arg0 = "jail-fs"

// The operations, their arguments after the name, and what they answer.
const (
	Read       = "read"        // PATH OFFSET LENGTH (-1: to the end) → the bytes
	Write      = "write"       // PATH MODE ← the bytes → api.WriteFileResponse
	Stat       = "stat"        // PATH → api.FileEntry
	List       = "list"        // PATH DEPTH → api.FileList
	Mkdir      = "mkdir"       // PATH PARENTS MODE → api.FileEntry
	Move       = "move"        // FROM TO → api.FileEntry
	Remove     = "remove"      // PATH RECURSIVE MISSING_OK → nothing
	ArchiveOut = "archive-out" // PATH → a tar stream
	ArchiveIn  = "archive-in"  // DIR AS ← a tar stream → api.ArchiveResult
)

// MaxDepth bounds List's depth.
const MaxDepth = 16

// Main runs one operation, args[0] its name, and returns the exit status.
func Main(args []string) int {
	if len(args) == 0 {
		return report(api.Errorf(api.InvalidArgument, "no file operation given"))
	}
	var answer any
	var err error
	switch op, a := args[0], args[1:]; {
	case op == Read && len(a) == 3:
		err = read(a[0], num(a[1]), num(a[2]))
	case op == Write && len(a) == 2:
		answer, err = write(a[0], a[1])
	case op == Stat && len(a) == 1:
		answer, err = entry(a[0])
	case op == List && len(a) == 2:
		answer, err = list(a[0], int(num(a[1])))
	case op == Mkdir && len(a) == 3:
		answer, err = mkdir(a[0], a[1] == "1", a[2])
	case op == Move && len(a) == 2:
		answer, err = move(a[0], a[1])
	case op == Remove && len(a) == 3:
		err = remove(a[0], a[1] == "1", a[2] == "1")
	case op == ArchiveOut && len(a) == 1:
		err = archive.Write(os.Stdout, abs(a[0]))
	case op == ArchiveIn && len(a) == 2:
		answer, err = archiveIn(a[0], a[1])
	default:
		err = api.Errorf(api.InvalidArgument, "file operation %q with %d arguments", op, len(a))
	}
	if err != nil {
		return report(err)
	}
	if answer != nil {
		json.NewEncoder(os.Stdout).Encode(answer)
	}
	return 0
}

func num(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// abs makes p absolute from the working directory (the sandbox's cwd, or the request's).
func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// report writes err to stderr as an api.Error, its code from its errno, and returns 1.
func report(err error) int {
	e, ok := err.(*api.Error)
	if !ok {
		e = &api.Error{Code: code(err), Message: "jail: " + err.Error()}
	}
	json.NewEncoder(os.Stderr).Encode(e)
	return 1
}

// code is an error's API code, by its errno.
func code(err error) string {
	if errors.Is(err, archive.ErrRefused) {
		return api.InvalidArgument
	}
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return api.Internal
	}
	switch errno {
	case syscall.ENOENT, syscall.ENOTDIR:
		return api.NotFound
	case syscall.EACCES, syscall.EPERM, syscall.EROFS:
		return api.PermissionDenied
	case syscall.EEXIST:
		return api.AlreadyExists
	case syscall.EISDIR, syscall.ENOTEMPTY, syscall.EINVAL, syscall.ELOOP, syscall.ENAMETOOLONG, syscall.EXDEV:
		return api.InvalidArgument
	}
	return api.Internal
}

func read(p string, offset, length int64) error {
	f, err := os.Open(abs(p))
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return &fs.PathError{Op: "read", Path: abs(p), Err: syscall.EISDIR}
	}
	var r io.Reader = io.NewSectionReader(f, offset, 1<<62)
	if length >= 0 {
		r = io.LimitReader(r, length)
	}
	_, err = io.Copy(os.Stdout, r)
	return err
}

// write replaces the file's content in place (its mode, owner and links stay), creating it and
// its missing parents.
func write(p, mode string) (*api.WriteFileResponse, error) {
	p = abs(p)
	m, err := parseMode(mode, 0o644)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, m)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, os.Stdin)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return &api.WriteFileResponse{Path: p, Size: n}, nil
}

func parseMode(s string, dflt os.FileMode) (os.FileMode, error) {
	if s == "" {
		return dflt, nil
	}
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o7777 {
		return 0, api.Errorf(api.InvalidArgument, "mode %q: give octal permissions such as 0644", s)
	}
	return os.FileMode(m) & os.ModePerm, nil
}

// entry describes p itself (a symlink is not followed).
func entry(p string) (*api.FileEntry, error) {
	p = abs(p)
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	return describe(p, fi), nil
}

func describe(p string, fi fs.FileInfo) *api.FileEntry {
	e := &api.FileEntry{Name: fi.Name(), Path: p, Size: fi.Size(), Mode: fmt.Sprintf("%04o", fi.Mode().Perm()), MTime: fi.ModTime().UTC(), Type: "other"}
	switch {
	case fi.Mode().IsRegular():
		e.Type = "file"
	case fi.IsDir():
		e.Type = "dir"
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Type = "symlink"
		e.SymlinkTarget, _ = os.Readlink(p)
	}
	if p == "/" {
		e.Name = "/"
	}
	return e
}

func list(p string, depth int) (*api.FileList, error) {
	p = abs(p)
	if depth < 1 {
		depth = 1
	}
	depth = min(depth, MaxDepth)
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "list", Path: p, Err: syscall.ENOTDIR}
	}
	out := &api.FileList{Entries: []api.FileEntry{}}
	err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if q == p {
			return err
		}
		if err != nil {
			return nil // an unreadable subdirectory: listed, not entered
		}
		if fi, err := d.Info(); err == nil {
			out.Entries = append(out.Entries, *describe(q, fi))
		}
		if d.IsDir() && strings.Count(strings.TrimPrefix(q, p), "/") >= depth {
			return fs.SkipDir
		}
		return nil
	})
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Path < out.Entries[j].Path })
	return out, err
}

func mkdir(p string, parents bool, mode string) (*api.FileEntry, error) {
	p = abs(p)
	m, err := parseMode(mode, 0o755)
	if err != nil {
		return nil, err
	}
	if parents {
		err = os.MkdirAll(p, m)
	} else {
		err = os.Mkdir(p, m)
	}
	if err != nil {
		return nil, err
	}
	return entry(p)
}

func move(from, to string) (*api.FileEntry, error) {
	if err := os.Rename(abs(from), abs(to)); err != nil {
		return nil, err
	}
	return entry(to)
}

func remove(p string, recursive, missingOK bool) error {
	p = abs(p)
	if _, err := os.Lstat(p); err != nil {
		if missingOK && errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if recursive {
		return os.RemoveAll(p)
	}
	return os.Remove(p)
}

// archiveIn extracts the tar stream on stdin into dir, created if missing; with as, the
// archive's top entry is named as.
func archiveIn(dir, as string) (*api.ArchiveResult, error) {
	dir = abs(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	res, err := archive.Extract(os.Stdin, dir, as)
	if err != nil {
		return nil, err
	}
	return &api.ArchiveResult{Files: res.Files, Bytes: res.Bytes}, nil
}
