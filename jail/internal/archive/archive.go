// Package archive writes and extracts the tar streams of a persistent sandbox's file API: inside
// the sandbox (the helper behind PUT …/fs/archive) and on the host (jail cp out of a sandbox),
// where the archive comes from the sandbox and must be taken as hostile. Extraction never
// follows a symlink — neither one in the archive nor one already in the destination — and never
// leaves the destination directory: every path is opened with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS) from the destination's descriptor. Device nodes and FIFOs are refused;
// setuid, setgid and sticky bits are dropped.
package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// ErrRefused is what an entry that Extract will not write wraps: one leading out of the
// destination, or a device node.
var ErrRefused = errors.New("refused")

// Write writes a tar stream of src to w: a directory's whole tree under its own name, or the
// one file. Symlinks are archived as symlinks, never followed; sockets and devices are skipped.
func Write(w io.Writer, src string) error {
	tw := tar.NewWriter(w)
	base := filepath.Base(src)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		name := path.Join(base, filepath.ToSlash(rel))
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return writeEntry(tw, p, name, fi)
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, p, name string, fi fs.FileInfo) error {
	link := ""
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		var err error
		if link, err = os.Readlink(p); err != nil {
			return err
		}
	case !fi.Mode().IsRegular() && !fi.IsDir():
		return nil
	}
	hdr, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return err
	}
	hdr.Name = name
	if fi.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uname, hdr.Gname = "", ""
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.CopyN(tw, f, hdr.Size)
	return err
}

// Result counts what Extract wrote.
type Result struct {
	Files int
	Bytes int64
}

// Extract extracts the tar stream r into the directory dir, which must exist. With as set, the
// first component of every name becomes as (how `jail cp` names a copy).
func Extract(r io.Reader, dir string, as string) (Result, error) {
	var res Result
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return res, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(root)
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, fmt.Errorf("read archive: %w", err)
		}
		name, err := entryName(hdr.Name, as)
		if err != nil {
			return res, err
		}
		n, err := extract(root, name, as, hdr, tr)
		if err != nil {
			return res, &fs.PathError{Op: "extract", Path: name, Err: err}
		}
		res.Files++
		res.Bytes += n
	}
}

// entryName is an entry's path relative to the destination, or an error for one that would
// leave it.
func entryName(name, as string) (string, error) {
	if strings.ContainsRune(name, 0) || path.IsAbs(name) {
		return "", fmt.Errorf("archive entry %q: absolute, or holds a NUL byte: %w", name, ErrRefused)
	}
	clean := path.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("archive entry %q: leads out of the destination: %w", name, ErrRefused)
	}
	if as != "" && clean != "." {
		_, rest, _ := strings.Cut(clean, "/")
		clean = path.Join(as, rest)
	}
	if clean == "." {
		return "", nil
	}
	return clean, nil
}

const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens rel beneath root, following no symlink.
func openBeneath(root int, rel string, flags uint64, mode uint64) (int, error) {
	if rel == "" {
		rel = "."
	}
	return unix.Openat2(root, rel, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: beneath})
}

// mkdirBeneath makes the directory rel beneath root and every missing parent, and opens it.
func mkdirBeneath(root int, rel string) (int, error) {
	fd, err := unix.Dup(root)
	if err != nil || rel == "" {
		return fd, err
	}
	for _, c := range strings.Split(rel, "/") {
		next, err := openBeneath(fd, c, unix.O_PATH|unix.O_DIRECTORY, 0)
		if errors.Is(err, unix.ENOENT) {
			if err = unix.Mkdirat(fd, c, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openBeneath(fd, c, unix.O_PATH|unix.O_DIRECTORY, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// extract writes one entry at name beneath root and returns the bytes it wrote; as renames a hard
// link's target as it renamed the entries.
func extract(root int, name, as string, hdr *tar.Header, r io.Reader) (int64, error) {
	mode := uint32(hdr.Mode) & 0o777
	if hdr.Typeflag == tar.TypeDir {
		fd, err := mkdirBeneath(root, name)
		if err != nil {
			return 0, err
		}
		defer unix.Close(fd)
		dir, err := openBeneath(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return 0, err
		}
		defer unix.Close(dir)
		return 0, unix.Fchmod(dir, mode|0o700) // the owner keeps its way in, to extract beneath
	}
	if name == "" {
		return 0, fmt.Errorf("a file cannot replace the destination: %w", ErrRefused)
	}
	parent, err := mkdirBeneath(root, path.Dir(name))
	if err != nil {
		return 0, err
	}
	defer unix.Close(parent)
	base := path.Base(name)
	if err := unix.Unlinkat(parent, base, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return 0, err // a directory there stays
	}
	switch hdr.Typeflag {
	case tar.TypeSymlink:
		return 0, unix.Symlinkat(hdr.Linkname, parent, base)
	case tar.TypeReg, tar.TypeLink:
		var src io.Reader = r
		if hdr.Typeflag == tar.TypeLink { // a copy of the earlier entry, never a link to anything
			target, err := entryName(hdr.Linkname, as)
			if err != nil {
				return 0, err
			}
			fd, err := openBeneath(root, target, unix.O_RDONLY, 0)
			if err != nil {
				return 0, fmt.Errorf("hard link to %s: %w", hdr.Linkname, err)
			}
			f := os.NewFile(uintptr(fd), target)
			defer f.Close()
			src = f
		}
		fd, err := openBeneath(parent, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, uint64(mode))
		if err != nil {
			return 0, err
		}
		f := os.NewFile(uintptr(fd), name)
		defer f.Close()
		n, err := io.Copy(f, src)
		if err == nil && !hdr.ModTime.IsZero() {
			unix.Futimes(fd, []unix.Timeval{unix.NsecToTimeval(time.Now().UnixNano()), unix.NsecToTimeval(hdr.ModTime.UnixNano())})
		}
		return n, err
	}
	return 0, fmt.Errorf("entry of type %q: only directories, files and symlinks are extracted: %w", hdr.Typeflag, ErrRefused)
}
