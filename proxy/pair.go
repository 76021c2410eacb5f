package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Pair makes the channel between one sandbox and its proxy: a connected pair of unix seqpacket
// sockets. init gets the sandbox's end with its plan, listens on the proxy ports in the
// sandbox's network namespace and passes the listening sockets over it, once (passListeners);
// the host then accepts on them itself (StartHost). Nothing of the channel is on disk, so
// nothing can outlive jail there, and the command reaches the proxy only through those ports.
// init's setup need not stay for the run to serve them: a socket keeps its network namespace,
// whichever process holds it.
func Pair() (host, sandbox *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("egress proxy: socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "egress proxy"), os.NewFile(uintptr(fds[1]), "egress proxy (sandbox)"), nil
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

// maxPassed bounds the listeners one message may pass: the two proxy ports, with room.
const maxPassed = 4

// passListeners sends the listening sockets ls over to, init's end of a Pair, in one message.
func passListeners(to *os.File, ls []net.Listener) error {
	var fds []int
	for _, l := range ls {
		f, err := l.(*net.TCPListener).File() // a dup, closed once sent
		if err != nil {
			return fmt.Errorf("egress proxy port: %w", err)
		}
		defer f.Close()
		fds = append(fds, int(f.Fd()))
	}
	if err := unix.Sendmsg(int(to.Fd()), []byte{fdMarker}, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("egress proxy: pass the ports' sockets to the host: %w", err)
	}
	return nil
}

// receiveListeners reads the one message init sends over the host's end of a Pair: the
// listening sockets of the proxy ports. Each must be a listening TCP socket; anything else
// closes them all. io.EOF: init's end was closed first (the sandbox never got that far).
func receiveListeners(c *net.UnixConn) ([]net.Listener, error) {
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(maxPassed*4))
	n, oobn, flags, _, err := c.ReadMsgUnix(b[:], oob)
	if err != nil {
		return nil, err
	}
	if n == 0 && oobn == 0 {
		return nil, io.EOF
	}
	fds, err := parseRights(oob[:oobn])
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "egress proxy port")
		defer files[i].Close() // FileListener works on a dup
	}
	if err == nil && (flags&(unix.MSG_CTRUNC|unix.MSG_TRUNC) != 0 || b[0] != fdMarker || len(fds) == 0) {
		err = errors.New("not the proxy ports' sockets")
	}
	var ls []net.Listener
	for i := 0; err == nil && i < len(files); i++ {
		var l net.Listener
		if l, err = listener(files[i]); err == nil {
			ls = append(ls, l)
		}
	}
	if err != nil {
		for _, l := range ls {
			l.Close()
		}
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	return ls, nil
}

// listener takes f as a listener if it is a listening TCP socket.
func listener(f *os.File) (net.Listener, error) {
	fd := int(f.Fd())
	listening, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err != nil || listening != 1 {
		return nil, errors.New("a passed descriptor is not a listening socket")
	}
	dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil || (dom != unix.AF_INET && dom != unix.AF_INET6) {
		return nil, errors.New("a passed descriptor is not a TCP socket")
	}
	return net.FileListener(f)
}
