package proxy

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Forward serves a listener inside the sandbox (127.0.0.1:PORT in its network namespace) by
// handing every accepted TCP connection to the proxy: the socket itself is passed (SCM_RIGHTS,
// with a one-byte marker), so the host-side proxy reads and writes the sandbox's connection
// directly — no relay goroutines here, no extra copy of the data, and splice(2) on the host
// between the two TCP sockets. A run's init passes it over to, its end of the sandbox's Pair
// (ForwardOver); a persistent sandbox's, over a fresh connection to the proxy's unix socket
// bound at unixPath (Forward). Both return nil when l is closed, or the accept error that
// stopped them.
func Forward(l net.Listener, unixPath string) error {
	return forward(l, func(c net.Conn) error {
		u, err := net.DialTimeout("unix", unixPath, 10*time.Second)
		if err != nil {
			return fmt.Errorf("forward: dial %s: %w", unixPath, err)
		}
		defer u.Close()
		return passConn(c, u.(*net.UnixConn))
	})
}

// ForwardOver is Forward passing every connection over to, in one message each (a seqpacket:
// several ForwardOvers may share it).
func ForwardOver(l net.Listener, to *net.UnixConn) error {
	return forward(l, func(c net.Conn) error { return passConn(c, to) })
}

func forward(l net.Listener, pass func(net.Conn) error) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			if isTemporary(err) {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("forward accept: %w", err)
		}
		// A failed hand-over drops this one connection; the client sees it closed.
		_ = pass(c)
		_ = c.Close()
	}
}

// passConn sends c's socket over to.
func passConn(c net.Conn, to *net.UnixConn) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return fmt.Errorf("forward: %T has no socket to pass", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	var sendErr error
	err = raw.Control(func(fd uintptr) {
		_, _, sendErr = to.WriteMsgUnix([]byte{fdMarker}, syscall.UnixRights(int(fd)), nil)
	})
	if err == nil {
		err = sendErr
	}
	if err != nil {
		return fmt.Errorf("forward: pass a socket to the proxy: %w", err)
	}
	return nil
}
