package proxy

import (
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Pair makes the channel between one sandbox and its proxy: a connected pair of unix seqpacket
// sockets carrying one message per connection, the connection's own socket (Forward). The host
// serves its end (Serve(Passed(host))); init gets the other with its plan, and nothing else
// ever holds it. Nothing of the channel is on disk, so nothing can outlive jail there, and the
// command reaches the proxy only through the ports init serves.
func Pair() (host, sandbox *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("egress proxy: socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "egress proxy"), os.NewFile(uintptr(fds[1]), "egress proxy (sandbox)"), nil
}

// Passed is the host's end of a Pair as a listener: each Accept returns the next connection init
// passed. A message that is not one connected TCP socket (tcpFromFD) is dropped, its
// descriptors closed; once init's end is closed, Accept returns io.EOF.
func Passed(host *os.File) (net.Listener, error) {
	c, err := unixConn(host)
	if err != nil {
		return nil, err
	}
	return passed{c}, nil
}

// unixConn takes f, an end of a Pair, into Go's poller.
func unixConn(f *os.File) (*net.UnixConn, error) {
	c, err := net.FileConn(f)
	f.Close() // FileConn works on a dup
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("egress proxy: %T is not a unix socket", c)
	}
	return uc, nil
}

type passed struct{ c *net.UnixConn }

func (p passed) Accept() (net.Conn, error) {
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := p.c.ReadMsgUnix(b[:], oob)
		switch {
		case err != nil:
			return nil, err
		case n == 0 && oobn == 0:
			return nil, io.EOF // init's end is closed
		}
		fds, err := parseRights(oob[:oobn])
		if err != nil || flags&(unix.MSG_CTRUNC|unix.MSG_TRUNC) != 0 || b[0] != fdMarker || len(fds) != 1 {
			closeAll(fds)
			continue
		}
		if c, err := tcpFromFD(fds[0]); err == nil {
			return c, nil
		}
	}
}

func (p passed) Close() error   { return p.c.Close() }
func (p passed) Addr() net.Addr { return p.c.LocalAddr() }
