package workspace

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"golang.org/x/sys/unix"
)

// Diff writes changes as one patch in git's format: text as unified hunks, created, deleted,
// renamed and mode-changed files with git's headers, binary files as "Binary files … differ",
// symlinks as git stores them (mode 120000, the target as content). `git apply --stat` reads it,
// and `git apply` applies its text. What git's format cannot say (directories created or
// deleted, a mode other than 644 or 755, setuid bits, special files) is listed first, on lines
// starting with "# ", which git apply skips as it skips a mail's text before the patch.
func Diff(w io.Writer, changes []Change) error {
	bw := bufio.NewWriter(w)
	for _, c := range changes {
		for _, n := range notes(c) {
			fmt.Fprintf(bw, "# %s\n", n)
		}
	}
	for _, c := range changes {
		if err := writeChange(bw, c); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// notes says in words what git's format cannot about c.
func notes(c Change) []string {
	var out []string
	name := quote(c.Path)
	switch old, new := c.Old, c.New; {
	case new != nil && new.Mode.IsDir() && (old == nil || !old.Mode.IsDir()):
		out = append(out, fmt.Sprintf("new directory %s/ (mode %s)", name, octal(new.Mode)))
	case old != nil && old.Mode.IsDir() && new == nil:
		out = append(out, fmt.Sprintf("deleted directory %s/", name))
	case old != nil && new != nil && old.Mode.IsDir() && new.Mode.IsDir():
		out = append(out, fmt.Sprintf("mode of directory %s/: %s -> %s", name, octal(old.Mode), octal(new.Mode)))
	case new != nil && special(new):
		out = append(out, fmt.Sprintf("new %s %s", kindName(new), name))
	case old != nil && special(old) && new == nil:
		out = append(out, fmt.Sprintf("deleted %s %s", kindName(old), name))
	case new != nil && inGit(new) && old != nil && inGit(old) && gitMode(old) == gitMode(new) && modeBits(old.Mode) != modeBits(new.Mode):
		out = append(out, fmt.Sprintf("mode of %s: %s -> %s", name, octal(old.Mode), octal(new.Mode)))
	case new != nil && new.Mode.IsRegular() && (old == nil || !old.Mode.IsRegular()) && modeBits(new.Mode) != 0o644 && modeBits(new.Mode) != 0o755:
		out = append(out, fmt.Sprintf("mode of new file %s: %s", name, octal(new.Mode)))
	}
	return out
}

// writeChange writes the git patch for c, if git's format can say it.
func writeChange(w *bufio.Writer, c Change) error {
	old, new := c.Old, c.New
	if old != nil && !inGit(old) {
		old = nil
	}
	if new != nil && !inGit(new) {
		new = nil
	}
	switch {
	case old == nil && new == nil:
		return nil
	case old != nil && new != nil && old.Mode.Type() != new.Mode.Type():
		// git shows a file that became a symlink (or back) as a deletion and a creation.
		if err := writePatch(w, c.oldPath(), c.Path, old, nil, false); err != nil {
			return err
		}
		return writePatch(w, c.Path, c.Path, nil, new, false)
	}
	return writePatch(w, c.oldPath(), c.Path, old, new, c.From != "")
}

// oldPath is where the tree's side of c lies: From for a rename.
func (c Change) oldPath() string {
	if c.From != "" {
		return c.From
	}
	return c.Path
}

// writePatch writes one file's patch: headers, then hunks or the binary line.
func writePatch(w *bufio.Writer, oldPath, newPath string, old, new *Entry, rename bool) error {
	oldID, oldData, err := gitBlob(old)
	if err != nil {
		return err
	}
	newID, newData, err := gitBlob(new)
	if err != nil {
		return err
	}
	modeChange := old != nil && new != nil && gitMode(old) != gitMode(new)
	if oldID == newID && !rename && !modeChange {
		return nil // nothing git's format holds changed (a mode in the notes, say)
	}
	a, b := quote("a/"+oldPath), quote("b/"+newPath)
	fmt.Fprintf(w, "diff --git %s %s\n", a, b)
	switch {
	case old == nil:
		fmt.Fprintf(w, "new file mode %06o\n", gitMode(new))
	case new == nil:
		fmt.Fprintf(w, "deleted file mode %06o\n", gitMode(old))
	case modeChange:
		fmt.Fprintf(w, "old mode %06o\nnew mode %06o\n", gitMode(old), gitMode(new))
	}
	if rename {
		fmt.Fprintf(w, "similarity index 100%%\nrename from %s\nrename to %s\n", quote(oldPath), quote(newPath))
	}
	if oldID == newID {
		return nil // a rename or a mode change alone
	}
	fmt.Fprintf(w, "index %s..%s", oldID[:7], newID[:7])
	if old != nil && new != nil && gitMode(old) == gitMode(new) {
		fmt.Fprintf(w, " %06o", gitMode(old))
	}
	w.WriteString("\n")
	if old == nil {
		a = "/dev/null"
	}
	if new == nil {
		b = "/dev/null"
	}
	switch {
	case oldData == nil && newData == nil && (old == nil || old.Size == 0) && (new == nil || new.Size == 0):
		return nil // an empty file created or deleted: git writes no ---/+++ lines
	case isBinary(oldData) || isBinary(newData) || big(old) || big(new):
		fmt.Fprintf(w, "Binary files %s and %s differ\n", a, b)
		return nil
	}
	fmt.Fprintf(w, "--- %s%s\n+++ %s%s\n", a, tabIfSpace(oldPath), b, tabIfSpace(newPath))
	writeHunks(w, string(oldData), string(newData))
	return nil
}

// bigFile is the size from which a file is diffed as binary, unread: its hunks would be no
// review, and reading it whole would hold it in memory.
const bigFile = 64 << 20

// big reports whether e is a file of bigFile bytes or more.
func big(e *Entry) bool {
	return e != nil && e.Mode.IsRegular() && e.Size >= bigFile
}

// gitBlob returns git's object name of what git stores for e (a file's bytes, a symlink's
// target; all zeros for an absent side), and that content unless e is big.
func gitBlob(e *Entry) (string, []byte, error) {
	if e == nil {
		return strings.Repeat("0", 40), nil, nil
	}
	var data []byte
	var src io.Reader
	size := e.Size
	switch {
	case e.Mode.Type() == fs.ModeSymlink:
		data = []byte(e.Link)
	case big(e):
		f, err := openContent(e)
		if err != nil {
			return "", nil, err
		}
		defer f.Close()
		src = io.LimitReader(f, size)
	default:
		var err error
		if data, err = readContent(e); err != nil {
			return "", nil, err
		}
	}
	if src == nil {
		src, size = bytes.NewReader(data), int64(len(data))
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", size)
	if _, err := io.Copy(h, src); err != nil {
		return "", nil, err
	}
	return hex.EncodeToString(h.Sum(nil)), data, nil
}

// inGit reports whether git's format can hold e: a regular file or a symlink.
func inGit(e *Entry) bool {
	return e.Mode.IsRegular() || e.Mode.Type() == fs.ModeSymlink
}

// gitMode is the mode git records for e.
func gitMode(e *Entry) uint32 {
	switch {
	case e.Mode.Type() == fs.ModeSymlink:
		return 0o120000
	case e.Mode&0o111 != 0:
		return 0o100755
	}
	return 0o100644
}

// binary is git's test: a NUL byte in the first 8000 bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// special reports whether e is a device, fifo or socket.
func special(e *Entry) bool {
	return e.Mode.Type()&(fs.ModeDevice|fs.ModeNamedPipe|fs.ModeSocket) != 0
}

// kindName names a special file's kind.
func kindName(e *Entry) string {
	switch t := e.Mode.Type(); {
	case t&fs.ModeCharDevice != 0:
		return fmt.Sprintf("character device (%d:%d)", unix.Major(e.Rdev), unix.Minor(e.Rdev))
	case t&fs.ModeDevice != 0:
		return fmt.Sprintf("block device (%d:%d)", unix.Major(e.Rdev), unix.Minor(e.Rdev))
	case t&fs.ModeNamedPipe != 0:
		return "fifo"
	}
	return "socket"
}

// octal writes a mode's permission and special bits as chmod takes them: 0644, 4755.
func octal(m fs.FileMode) string {
	v := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return fmt.Sprintf("%04o", v)
}

// quote quotes a path as git does (core.quotePath): in double quotes with C escapes when it
// holds a control character, a quote, a backslash or a byte above 0x7f.
func quote(p string) string {
	needs := false
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			needs = true
			break
		}
	}
	if !needs {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tabIfSpace is the tab git ends a ---/+++ line with when the name holds a space.
func tabIfSpace(name string) string {
	if strings.Contains(name, " ") {
		return "\t"
	}
	return ""
}
