package archive

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// entry is one member of a test archive.
type entry struct {
	name, link, body string
	typ              byte
	mode             int64
}

func tarOf(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		hdr := &tar.Header{Name: e.name, Linkname: e.link, Typeflag: e.typ, Mode: mode, Size: int64(len(e.body))}
		if e.typ != tar.TypeReg {
			hdr.Size = 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(e.body))
	}
	tw.Close()
	return b.Bytes()
}

// TestExtractNeverLeavesTheDestination: archives a sandbox could send that write outside the
// destination through a symlink of their own or one already there, by .. or an absolute name, or
// that make devices.
func TestExtractNeverLeavesTheDestination(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	through := tarOf(t,
		entry{name: "d/", typ: tar.TypeDir, mode: 0o755},
		entry{name: "d/out", link: outside, typ: tar.TypeSymlink},
		entry{name: "d/out/victim", body: "pwned\n", typ: tar.TypeReg},
	)
	// The control: an extractor that joins names to the destination and follows symlinks, as a
	// naive one does, writes the victim.
	naive(t, through, t.TempDir())
	if b, _ := os.ReadFile(victim); string(b) != "pwned\n" {
		t.Fatalf("control: a naive extractor did not write through the link (%q)", b)
	}
	os.Remove(victim)
	for name, archive := range map[string][]byte{
		"through its own symlink": through,
		"dot-dot":                 tarOf(t, entry{name: "../victim", body: "pwned\n", typ: tar.TypeReg}),
		"absolute":                tarOf(t, entry{name: victim, body: "pwned\n", typ: tar.TypeReg}),
		"dot-dot inside":          tarOf(t, entry{name: "a/../../victim", body: "pwned\n", typ: tar.TypeReg}),
		"hard link out":           tarOf(t, entry{name: "h", link: "../victim", typ: tar.TypeLink}),
		"device":                  tarOf(t, entry{name: "null", typ: tar.TypeChar}),
		"fifo":                    tarOf(t, entry{name: "fifo", typ: tar.TypeFifo}),
	} {
		dest := t.TempDir()
		_, err := Extract(bytes.NewReader(archive), dest, "")
		if err == nil {
			t.Errorf("%s: extracted without error", name)
		}
		if _, err := os.Stat(victim); err == nil {
			t.Errorf("%s: the victim outside the destination was written", name)
			os.Remove(victim)
		}
	}
	// A symlink already in the destination, towards outside, is not followed either.
	dest := t.TempDir()
	os.Symlink(outside, filepath.Join(dest, "out"))
	if _, err := Extract(bytes.NewReader(tarOf(t, entry{name: "out/victim", body: "pwned\n", typ: tar.TypeReg})), dest, ""); err == nil {
		t.Error("extracted through a symlink in the destination")
	}
	if _, err := os.Stat(victim); err == nil {
		t.Error("the victim was written through a symlink in the destination")
	}
}

// naive extracts archive into dest as a careless extractor would.
func naive(t *testing.T, archive []byte, dest string) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if err != nil {
			return
		}
		p := filepath.Join(dest, hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			os.Symlink(hdr.Linkname, p)
		case tar.TypeReg:
			b := new(bytes.Buffer)
			b.ReadFrom(tr)
			os.WriteFile(p, b.Bytes(), 0o644)
		}
	}
}

// TestExtractKeepsWhatItMay: directories, files, symlinks (as links), copies for hard links, the
// top entry renamed; setuid bits dropped.
func TestExtractKeepsWhatItMay(t *testing.T) {
	dest := t.TempDir()
	res, err := Extract(bytes.NewReader(tarOf(t,
		entry{name: "top/", typ: tar.TypeDir, mode: 0o755},
		entry{name: "top/f", body: "data\n", typ: tar.TypeReg, mode: 0o4755},
		entry{name: "top/l", link: "/etc/passwd", typ: tar.TypeSymlink},
		entry{name: "top/h", link: "top/f", typ: tar.TypeLink},
	)), dest, "renamed")
	if err != nil || res.Files != 4 {
		t.Fatalf("Extract: %+v, %v", res, err)
	}
	fi, err := os.Stat(filepath.Join(dest, "renamed", "f"))
	if err != nil || fi.Mode()&os.ModeSetuid != 0 || fi.Mode().Perm() != 0o755 {
		t.Errorf("renamed/f: %v, %v; want 0755 without setuid", fi, err)
	}
	if link, _ := os.Readlink(filepath.Join(dest, "renamed", "l")); link != "/etc/passwd" {
		t.Errorf("renamed/l links to %q", link)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "renamed", "h")); string(b) != "data\n" {
		t.Errorf("renamed/h holds %q", b)
	}
	if _, err := Extract(bytes.NewReader(tarOf(t, entry{name: "../x", typ: tar.TypeReg})), dest, ""); !errors.Is(err, ErrRefused) {
		t.Errorf("a refused entry: %v, want ErrRefused", err)
	}
}
