package workspace

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
)

// packIndex answers whether a pack of the real repository holds an object, from the pack's
// index (version 2: a fan-out table of 256 counts, then the sorted object names).
type packIndex struct {
	f       *os.File
	fanout  [256]uint32
	nameLen int
}

// openPackIndexes opens the version-2 indexes in dir; others are skipped (their objects then
// count as missing, and a ref needing one is not imported).
func openPackIndexes(dir string, nameLen int) []*packIndex {
	names, _ := filepath.Glob(filepath.Join(dir, "pack-*.idx"))
	var out []*packIndex
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		head := make([]byte, 8+256*4)
		if _, err := f.ReadAt(head, 0); err != nil || !bytes.Equal(head[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
			f.Close()
			continue
		}
		p := &packIndex{f: f, nameLen: nameLen}
		for i := range p.fanout {
			p.fanout[i] = binary.BigEndian.Uint32(head[8+4*i:])
		}
		out = append(out, p)
	}
	return out
}

// has looks raw up by binary search among the names that share its first byte.
func (p *packIndex) has(raw []byte) bool {
	lo := uint32(0)
	if raw[0] > 0 {
		lo = p.fanout[raw[0]-1]
	}
	hi := p.fanout[raw[0]]
	buf := make([]byte, p.nameLen)
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := p.f.ReadAt(buf, int64(8+256*4)+int64(mid)*int64(p.nameLen)); err != nil {
			return false
		}
		switch c := bytes.Compare(buf, raw); {
		case c == 0:
			return true
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return false
}

func closePacks(packs []*packIndex) {
	for _, p := range packs {
		p.f.Close()
	}
}
