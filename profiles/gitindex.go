package profiles

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// The gitlinks of a repository's index: the paths where the host's git looks for a nested
// repository (a submodule) and runs git in it, with that repository's own configuration. A
// sandbox that could replace such a path's .git would choose that configuration (core.fsmonitor,
// hooks), so each one is protected. The index is read here, on the host, as data: running git
// to list it would itself run the repository's configuration.

// maxIndexSize bounds the index jail reads (a repository of a million files has one of about
// 100 MB).
const maxIndexSize = 512 << 20

// gitlinkMode is a gitlink's mode in the index (S_IFGITLINK, 0160000).
const gitlinkMode = 0o160000

// gitlinks returns the paths (relative to the work tree) of the gitlinks in gitDir's index, and
// in its shared index when the index is split. A missing index has none.
func gitlinks(gitDir string) ([]string, error) {
	links, shared, err := readIndex(filepath.Join(gitDir, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil || shared == "" {
		return links, err
	}
	more, _, err := readIndex(filepath.Join(gitDir, "sharedindex."+shared))
	return append(links, more...), err
}

// readIndex parses an index file of up to maxIndexSize. The file is mapped, not read: a read
// copies it into fresh memory, a page fault for each of its pages (0.3 ms of CPU a run for
// the 570 KB index of a 4,600-file repository), where a mapping shares the page cache's.
func readIndex(file string) (links []string, shared string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, "", err
	case !info.Mode().IsRegular() || info.Size() > maxIndexSize:
		return nil, "", fmt.Errorf("%s is not a regular file of at most %d bytes", file, maxIndexSize)
	case info.Size() == 0:
		return parseIndex(nil)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(info.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, "", &os.PathError{Op: "mmap", Path: file, Err: err}
	}
	defer unix.Munmap(data)
	// git replaces an index by renaming a new one over it, but a file truncated under the mapping
	// would fault: an error, not a crash.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			links, shared, err = nil, "", fmt.Errorf("%s changed while it was read", file)
		}
	}()
	return parseIndex(data)
}

// parseIndex returns the gitlink paths of an index file (versions 2 to 4; SHA-1 or SHA-256
// object names, whichever parses) and the hex name of its shared index when it is split.
func parseIndex(data []byte) (links []string, shared string, err error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, "", errors.New("index: no DIRC signature")
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, "", fmt.Errorf("index: unknown version %d", version)
	}
	for _, hashSize := range []int{20, 32} {
		if links, shared, ok := parseEntries(data, version, hashSize); ok {
			return links, shared, nil
		}
	}
	return nil, "", errors.New("index: entries do not parse")
}

// parseEntries walks the entries with object names of hashSize bytes; ok is false when that
// size does not fit the file.
func parseEntries(data []byte, version uint32, hashSize int) (links []string, shared string, ok bool) {
	count := binary.BigEndian.Uint32(data[8:12])
	pos, prev := 12, []byte(nil)
	for range count {
		head := 40 + hashSize + 2 // stat data, object name, flags
		if pos+head > len(data) {
			return nil, "", false
		}
		mode := binary.BigEndian.Uint32(data[pos+24:])
		flags := binary.BigEndian.Uint16(data[pos+40+hashSize:])
		if flags&0x4000 != 0 { // extended flags follow (version 3 and later)
			if version < 3 {
				return nil, "", false
			}
			head += 2
		}
		nameLen := int(flags & 0xfff)
		var name []byte
		if version == 4 {
			strip, n := varint(data[min(pos+head, len(data)):])
			if n == 0 || strip > len(prev) {
				return nil, "", false
			}
			end := bytes.IndexByte(data[pos+head+n:], 0)
			if end < 0 {
				return nil, "", false
			}
			name = append(prev[:len(prev)-strip:len(prev)-strip], data[pos+head+n:pos+head+n+end]...)
			pos += head + n + end + 1
		} else {
			end := bytes.IndexByte(data[min(pos+head, len(data)):], 0)
			if end < 0 {
				return nil, "", false
			}
			name = data[pos+head : pos+head+end]
			pos += (head + end + 8) &^ 7 // NUL-padded to a multiple of eight
		}
		if nameLen < 0xfff && nameLen != len(name) || pos > len(data) {
			return nil, "", false
		}
		if mode&0o170000 == gitlinkMode {
			links = append(links, string(name))
		}
		prev = name
	}
	// Extensions, then the trailing checksum.
	for len(data)-pos > hashSize {
		if pos+8 > len(data) {
			return nil, "", false
		}
		sig, size := string(data[pos:pos+4]), int(binary.BigEndian.Uint32(data[pos+4:]))
		if size < 0 || pos+8+size > len(data)-hashSize {
			return nil, "", false
		}
		if sig == "link" && size >= hashSize {
			shared = hex.EncodeToString(data[pos+8 : pos+8+hashSize])
		}
		pos += 8 + size
	}
	return links, shared, len(data)-pos == hashSize
}

// varint decodes git's offset varint (index version 4) and returns it and its length, 0 when
// it does not end.
func varint(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	val, n := int(b[0]&0x7f), 1
	for b[n-1]&0x80 != 0 {
		if n >= len(b) || n > 8 {
			return 0, 0
		}
		val = (val+1)<<7 | int(b[n]&0x7f)
		n++
	}
	return val, n
}
