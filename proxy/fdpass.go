package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fdMarker is the one byte sent along with passed sockets: by Forward with each connection, by
// passListeners with a run's listening sockets. Neither HTTP nor SOCKS starts with it.
const fdMarker = 0

// readFirst reads the first byte of a client connection. On a unix connection it uses
// recvmsg, so that a socket passed by Forward (SCM_RIGHTS) arrives instead of being dropped by
// the kernel: passed is then that socket, checked to be a connected TCP stream. Anything else
// passed along (other fd types, several fds, a truncated message) is closed and refused.
func readFirst(c net.Conn) (first byte, passed net.Conn, err error) {
	var b [1]byte
	uc, ok := c.(*net.UnixConn)
	if !ok {
		_, err = io.ReadFull(c, b[:])
		return b[0], nil, err
	}
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := uc.ReadMsgUnix(b[:], oob)
	if err != nil {
		return 0, nil, err
	}
	if n == 0 {
		return 0, nil, io.EOF
	}
	if oobn == 0 {
		return b[0], nil, nil
	}
	fds, err := parseRights(oob[:oobn])
	if err != nil || flags&unix.MSG_CTRUNC != 0 || b[0] != fdMarker || len(fds) != 1 {
		closeAll(fds)
		return 0, nil, errors.New("unexpected ancillary data")
	}
	passed, err = tcpFromFD(fds[0])
	return fdMarker, passed, err
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	var bad error
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err != nil {
			bad = err
			continue
		}
		fds = append(fds, got...)
	}
	return fds, bad
}

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}

// tcpFromFD accepts a passed descriptor only if it is a connected TCP socket; the sender is
// untrusted (any process in the sandbox can reach the unix socket).
func tcpFromFD(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "passed-socket")
	defer f.Close() // net.FileConn works on a dup
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_STREAM {
		return nil, errors.New("passed descriptor is not a stream socket")
	}
	dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil || (dom != unix.AF_INET && dom != unix.AF_INET6) {
		return nil, errors.New("passed descriptor is not a TCP socket")
	}
	if _, err := unix.Getpeername(fd); err != nil {
		return nil, fmt.Errorf("passed socket is not connected: %w", err)
	}
	nc, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("passed socket: %w", err)
	}
	return nc, nil
}

// isTemporary reports accept errors that pass (descriptor or buffer exhaustion, aborted
// handshakes) and deserve a pause instead of ending Serve.
func isTemporary(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, syscall.ECONNABORTED)
}
