// Package session is the Go side of the messages of a persistent sandbox (spawn/session.h):
// between jail's host-side programs and the sandbox's keeper, and between them and its spawner,
// one message per SOCK_SEQPACKET packet, descriptors beside it. It has no cgo, so that jail's
// client can speak it from any program; package spawn checks at build time that Msg is C's
// struct jail_msg.
package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Msg is every message's header (struct jail_msg); Len bytes of payload follow it.
type Msg struct {
	Type       uint32
	Flags      uint32
	PID        int32
	Value      int32
	Argc, Envc uint32
	Cols, Rows uint16
	Len        uint32
	NS1, NS2   int64
}

// HeaderSize is the size of Msg on the wire.
const HeaderSize = 48

// MaxMsg is the most payload a packet carries; MaxFds the most descriptors.
const (
	MaxMsg = 200 * 1024
	MaxFds = 4
)

// Message types (session.h's JAIL_MSG_*).
const (
	MsgExec    = 'E'
	MsgList    = 'L'
	MsgSignal  = 'S'
	MsgStdin   = 'I'
	MsgCloseIn = 'C'
	MsgResize  = 'R'
	MsgWait    = 'W'
	MsgRelease = 'D'
	MsgStop    = 'Q'
	MsgTimers  = 'T'
	MsgSpawn   = 'N'
	MsgDir     = 'P'
	MsgGo      = 'G'
	MsgHold    = 'H'
	MsgKeep    = 'K'
	MsgSession = 'O'
	MsgInit    = 'i'
	MsgStarted = 's'
	MsgFailed  = 'f'
	MsgExited  = 'x'
	MsgProc    = 'p'
	MsgEnd     = 'e'
	MsgOK      = 'k'
	MsgError   = 'r'
	MsgFd      = 'd'
)

// Exec flags (JAIL_EXEC_*).
const (
	ExecWait        = 1 << 0
	ExecKillOnClose = 1 << 1
	ExecHelper      = 1 << 2
	ExecRecord      = 1 << 3
	ExecTTY         = 1 << 4
	ExecTTYMaster   = 1 << 5
	ExecStdinFd     = 1 << 6
	ExecStdinPipe   = 1 << 7
	ExecOutFd       = 1 << 8
	ExecCapture     = 1 << 9
	ExecMerge       = 1 << 10
)

// Process record flags (JAIL_PROC_*).
const (
	ProcRunning  = 1 << 0
	ProcTimedOut = 1 << 1
	ProcTTY      = 1 << 2
	ProcStdin    = 1 << 3
	ProcRecord   = 1 << 4
)

// Steps a start fails at (JAIL_FAILED_*).
const (
	FailedExec = 1 + iota
	FailedChdir
	FailedTTY
	FailedSetup
)

// SignalGroup sends a signal to the process's group.
const SignalGroup = 1

// Conn is a connection to a keeper or a spawner.
type Conn struct {
	c   *net.UnixConn
	buf []byte
}

// Dial connects to the SOCK_SEQPACKET socket at path.
func Dial(path string) (*Conn, error) {
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		return nil, err
	}
	return &Conn{c: c}, nil
}

// FromFile takes f, a SOCK_SEQPACKET socket, as a Conn; f is closed.
func FromFile(f *os.File) (*Conn, error) {
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("%s is not a unix socket", f.Name())
	}
	return &Conn{c: uc}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// SetDeadline bounds every Send and Recv from now on (zero: none).
func (c *Conn) SetDeadline(t time.Time) error { return c.c.SetDeadline(t) }

// Send sends m with payload and the descriptors fds.
func (c *Conn) Send(m Msg, payload []byte, fds ...int) error {
	if len(payload) > MaxMsg {
		return syscall.E2BIG
	}
	m.Len = uint32(len(payload))
	b := make([]byte, 0, HeaderSize+len(payload))
	b, _ = binary.Append(b, binary.NativeEndian, &m)
	b = append(b, payload...)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err := c.c.WriteMsgUnix(b, oob, nil)
	return err
}

// ErrClosed says the other end closed the connection.
var ErrClosed = errors.New("connection closed")

// Recv receives a message: its header, payload and descriptors (which the caller owns).
func (c *Conn) Recv() (Msg, []byte, []*os.File, error) {
	if c.buf == nil {
		c.buf = make([]byte, HeaderSize+16*1024)
	}
	oob := make([]byte, unix.CmsgSpace(MaxFds*4))
	n, oobn, flags, _, err := c.c.ReadMsgUnix(c.buf, oob)
	var m Msg
	if err != nil {
		return m, nil, nil, err
	}
	files, ferr := parseRights(oob[:oobn])
	switch {
	case n == 0:
		return m, nil, files, ErrClosed
	case ferr != nil:
		err = ferr
	case n < HeaderSize || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
		err = fmt.Errorf("short or truncated message (%d bytes)", n)
	}
	if err == nil {
		_, err = binary.Decode(c.buf[:HeaderSize], binary.NativeEndian, &m)
	}
	if err == nil && int(m.Len) != n-HeaderSize {
		err = fmt.Errorf("message of %d bytes says %d", n, m.Len)
	}
	if err != nil {
		closeFiles(files)
		return m, nil, nil, err
	}
	return m, append([]byte(nil), c.buf[HeaderSize:n]...), files, nil
}

// parseRights turns SCM_RIGHTS control messages into files.
func parseRights(oob []byte) ([]*os.File, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			unix.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), "received"))
		}
	}
	return files, nil
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// Call sends a request and returns the answer, which must be of type want or MsgError (then an
// error: its errno).
func (c *Conn) Call(m Msg, payload []byte, want uint32, fds ...int) (Msg, []byte, []*os.File, error) {
	if err := c.Send(m, payload, fds...); err != nil {
		return Msg{}, nil, nil, err
	}
	r, p, files, err := c.Recv()
	if err != nil {
		return r, nil, nil, err
	}
	if r.Type == MsgError {
		closeFiles(files)
		return r, nil, nil, syscall.Errno(r.Value)
	}
	if r.Type != want {
		closeFiles(files)
		return r, nil, nil, fmt.Errorf("unexpected answer %q to %q", rune(r.Type), rune(m.Type))
	}
	return r, p, files, nil
}

// Strings encodes strings as a payload: each NUL-terminated.
func Strings(parts ...[]string) []byte {
	var b []byte
	for _, p := range parts {
		for _, s := range p {
			b = append(append(b, s...), 0)
		}
	}
	return b
}

// SplitStrings decodes n NUL-terminated strings from b, and returns what follows them.
func SplitStrings(b []byte, n int) ([]string, []byte, error) {
	out := make([]string, 0, n)
	for range n {
		i := 0
		for i < len(b) && b[i] != 0 {
			i++
		}
		if i == len(b) {
			return nil, nil, errors.New("strings cut short")
		}
		out = append(out, string(b[:i]))
		b = b[i+1:]
	}
	return out, b, nil
}
