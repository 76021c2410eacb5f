package explain

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plan"
	"github.com/jail-sandbox/jail/seccomp"
)

// --explain, in init: a seccomp user-notification filter, installed on the thread that starts
// the command, hands init every write-intent and connect call of the command (and of all it
// starts). Init reads the call's path or address, judges from the Spec whether the sandbox will
// refuse it, sends each distinct refusal to the host, and lets the call go on unchanged. It
// only watches: the kernel still decides every call, and nothing the listener does can grant one.

// MaxDenials bounds the distinct denials sent to the host; past it init says only that more came.
const MaxDenials = 64

// maxPath is the longest path read from the command's memory (PATH_MAX); longer ones are cut, and
// a denial's path is shortened to keep each message far below PIPE_BUF.
const (
	maxPath       = unix.PathMax
	maxDenialPath = 1024
)

// Start installs the watching filter on the calling, locked thread and serves it from another
// goroutine (so another thread), which judges each call against spec. It must run before
// the main seccomp filter, which may refuse seccomp(2) itself. Each distinct denial goes to tell,
// and once MaxDenials are told, nil says more came.
func Start(spec *plan.Spec, tell func(*Denial)) error {
	l, err := seccomp.InstallNotify()
	if err != nil {
		return err
	}
	ex := &explainer{spec: spec, l: l, seen: map[string]bool{}, send: tell}
	go ex.serve()
	return nil
}

// explainer serves the listener for the whole run.
type explainer struct {
	spec *plan.Spec
	l    *seccomp.Listener
	seen map[string]bool
	send func(*Denial) // to the host: Start's tell
	more bool          // MaxDenials reached, and the host told
}

// serve answers every watched call until no process uses the filter any more. It never stops
// early: a call left unanswered would hang the command, and once the listener is closed the
// watched calls fail with ENOSYS.
func (ex *explainer) serve() {
	for {
		n, err := ex.l.Receive()
		if err != nil { // io.EOF: the command and all it started are gone
			ex.l.Close()
			return
		}
		ex.observe(n)
		ex.l.Continue(n.ID)
	}
}

// observe judges one call. A failure to read or judge it (the caller died, a bug) leaves it
// unexplained, never unanswered.
func (ex *explainer) observe(n *seccomp.Notification) {
	defer func() { recover() }()
	c := &watched{ex: ex, n: n}
	a := n.Args
	switch n.Name {
	case "open":
		c.open(atFdcwd, a[0], a[1])
	case "openat":
		c.open(a[0], a[1], a[2])
	case "openat2":
		if how, ok := c.read(a[2], 8); ok {
			c.open(a[0], a[1], binary.NativeEndian.Uint64(how))
		}
	case "creat":
		c.open(atFdcwd, a[0], unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC)
	case "mkdir":
		c.write(atFdcwd, a[0], creates)
	case "mkdirat":
		c.write(a[0], a[1], creates)
	case "rmdir", "unlink":
		c.write(atFdcwd, a[0], removes)
	case "unlinkat":
		c.write(a[0], a[1], removes)
	case "rename":
		c.rename(atFdcwd, a[0], atFdcwd, a[1])
	case "renameat", "renameat2":
		c.rename(a[0], a[1], a[2], a[3])
	case "link", "symlink":
		c.write(atFdcwd, a[1], creates)
	case "linkat":
		c.write(a[2], a[3], creates)
	case "symlinkat":
		c.write(a[1], a[2], creates)
	case "truncate", "chmod":
		c.write(atFdcwd, a[0], changes|follows)
	case "fchmodat":
		c.write(a[0], a[1], changes|follows)
	case "fchmodat2":
		how := changes
		if a[3]&unix.AT_SYMLINK_NOFOLLOW == 0 {
			how |= follows
		}
		c.write(a[0], a[1], how)
	case "connect":
		c.connect(a[0], a[1], a[2])
	}
}

// atFdcwd is AT_FDCWD as a syscall argument.
const atFdcwd = 1<<64 - 100

// writeHow says what a call needs of its path: what the kernel checks before the sandbox's
// rules, so a call that fails anyway (EEXIST, ENOENT) is not called a denial.
type writeHow int

const (
	creates  writeHow = 1 << iota // a new name: an existing one fails with EEXIST
	removes                       // removes or renames the name: a missing one fails with ENOENT
	changes                       // changes an existing file: a missing one fails with ENOENT
	replaces                      // rename's new name: created or replaced
	follows                       // a final symlink is followed
)

// watched is one call being judged.
type watched struct {
	ex *explainer
	n  *seccomp.Notification
}

func (c *watched) open(dirfd, pathArg, flags uint64) {
	how := changes
	if flags&unix.O_NOFOLLOW == 0 {
		how |= follows
	}
	t, ok := c.resolve(dirfd, pathArg, how)
	switch {
	case !ok:
		return
	case t.exists && flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL:
		return // EEXIST
	case t.exists && flags&unix.O_ACCMODE == unix.O_RDONLY && flags&unix.O_TRUNC == 0:
		return // O_CREAT of an existing file only reads it
	case !t.exists && flags&unix.O_CREAT == 0:
		return // ENOENT
	}
	c.judge(t)
}

func (c *watched) write(dirfd, pathArg uint64, how writeHow) {
	t, ok := c.resolve(dirfd, pathArg, how)
	switch {
	case !ok, how&creates != 0 && t.exists, how&(removes|changes) != 0 && !t.exists:
		return
	}
	t.removes = how&(removes|replaces) != 0
	c.judge(t)
}

// rename judges both names, when the old one exists (else the call fails with ENOENT).
func (c *watched) rename(olddirfd, oldArg, newdirfd, newArg uint64) {
	old, ok := c.resolve(olddirfd, oldArg, removes)
	if !ok || !old.exists {
		return
	}
	t, ok := c.resolve(newdirfd, newArg, replaces)
	if !ok {
		return
	}
	old.removes, t.removes = true, true
	c.judge(old)
	c.judge(t)
}

// judge sends the host a denial of a write to t when the plan refuses it.
func (c *watched) judge(t writeTarget) {
	rule, under := writeVerdict(c.ex.spec, t)
	if rule == "" {
		return
	}
	c.ex.tell(Denial{Kind: "write", Path: t.path, Syscall: c.n.Name, Rule: rule, Under: under, Exists: t.exists})
}

// connect judges a connect to an IPv4 or IPv6 address; other families are not judged.
func (c *watched) connect(fd, addrArg, addrLen uint64) {
	if addrLen < 2 || addrLen > 128 {
		return
	}
	b, ok := c.read(addrArg, int(addrLen))
	if !ok {
		return
	}
	var addr netip.Addr
	var port uint16
	switch family := binary.NativeEndian.Uint16(b); {
	case family == unix.AF_INET && len(b) >= 8:
		addr, port = netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:4])
	case family == unix.AF_INET6 && len(b) >= 24:
		addr, port = netip.AddrFrom16([16]byte(b[8:24])).Unmap(), binary.BigEndian.Uint16(b[2:4])
	default:
		return
	}
	if rule := connectVerdict(c.ex.spec, addr, port, func() bool { return c.isTCP(int(fd)) }); rule != "" {
		c.ex.tell(Denial{Kind: "connect", Address: netip.AddrPortFrom(addr, port).String(), Syscall: c.n.Name, Rule: rule})
	}
}

// isTCP reports whether the caller's descriptor fd is a TCP socket, looking at a duplicate of it.
func (c *watched) isTCP(fd int) bool {
	pidfd, err := unix.PidfdOpen(c.n.PID, unix.PIDFD_THREAD)
	if err != nil {
		return false
	}
	defer unix.Close(pidfd)
	sock, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil || !c.ex.l.Valid(c.n.ID) {
		if err == nil {
			unix.Close(sock)
		}
		return false
	}
	defer unix.Close(sock)
	typ, err1 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	proto, err2 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	return err1 == nil && err2 == nil && typ == unix.SOCK_STREAM && proto == unix.IPPROTO_TCP
}

// read copies n bytes at addr from the caller's memory, trusted only if the call still waits
// (so its pid was not reused while reading).
func (c *watched) read(addr uint64, n int) ([]byte, bool) {
	b := make([]byte, n)
	got, err := unix.ProcessVMReadv(c.n.PID, []unix.Iovec{{Base: &b[0], Len: uint64(n)}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
	if err != nil || got != n || !c.ex.l.Valid(c.n.ID) {
		return nil, false
	}
	return b, true
}

// readString reads a NUL-terminated string at addr, a page at most at a time so that a string
// ending just before an unmapped page is still read.
func (c *watched) readString(addr uint64) (string, bool) {
	var s []byte
	for len(s) < maxPath {
		chunk := min(maxPath-len(s), 4096-int((addr+uint64(len(s)))%4096))
		b := make([]byte, chunk)
		got, err := unix.ProcessVMReadv(c.n.PID, []unix.Iovec{{Base: &b[0], Len: uint64(chunk)}},
			[]unix.RemoteIovec{{Base: uintptr(addr) + uintptr(len(s)), Len: chunk}}, 0)
		if err != nil || got <= 0 {
			return "", false
		}
		if i := bytes.IndexByte(b[:got], 0); i >= 0 {
			s = append(s, b[:i]...)
			return string(s), true
		}
		s = append(s, b[:got]...)
	}
	return "", false // longer than PATH_MAX: the kernel refuses it with ENAMETOOLONG
}

// resolve reads the path argument and makes it absolute and physical as the kernel will see it:
// relative to the caller's working directory or dirfd, with the symlinks of its directories
// followed (and its final one when how says so), and looks at what is there now. ok is false
// when the call cannot be judged (unreadable, its caller gone, beneath /proc or /dev).
func (c *watched) resolve(dirfd, pathArg uint64, how writeHow) (t writeTarget, ok bool) {
	p, ok := c.readString(pathArg)
	if !ok || p == "" {
		return t, false
	}
	if !filepath.IsAbs(p) {
		link := "cwd"
		if int32(dirfd) != unix.AT_FDCWD {
			link = "fd/" + strconv.Itoa(int(int32(dirfd)))
		}
		base, err := os.Readlink(fmt.Sprintf("/proc/%d/%s", c.n.PID, link))
		if err != nil || !filepath.IsAbs(base) {
			return t, false // gone, or not a directory in this root (deleted, elsewhere)
		}
		p = filepath.Join(base, p)
	}
	if !c.ex.l.Valid(c.n.ID) {
		return t, false // the pid may have been reused while reading
	}
	p = filepath.Clean(p)
	if unjudged(p) {
		return t, false
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		dir, t.dirMissing = nearestExisting(filepath.Dir(p)), true // judged where it would be
	}
	t.path = filepath.Join(dir, filepath.Base(p))
	fi, err := os.Lstat(t.path)
	t.exists = err == nil
	if t.exists && how&follows != 0 && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(t.path); err == nil {
			t.path = target
		} else {
			t.exists = false // a dangling link: opening it creates its target
		}
	}
	return t, !unjudged(t.path)
}

// nearestExisting is dir with its existing ancestors' symlinks followed and the missing rest
// appended as is.
func nearestExisting(dir string) string {
	rest := ""
	for d := dir; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest)
		}
		if d == "/" {
			return dir
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// tell sends a denial to the host the first time it is seen. It is sent before the call goes on,
// so before the command can exit: the host has it by the time init reports the exit.
func (ex *explainer) tell(d Denial) {
	if ex.seen[d.key()] {
		return
	}
	if len(ex.seen) >= MaxDenials {
		if !ex.more {
			ex.more = true
			ex.send(nil)
		}
		return
	}
	ex.seen[d.key()] = true
	if len(d.Path) > maxDenialPath {
		d.Path = d.Path[:maxDenialPath] + "…"
	}
	ex.send(&d)
}
