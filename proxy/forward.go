package proxy

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Forward serves a listener inside a persistent sandbox (127.0.0.1:PORT in its network
// namespace) by handing every accepted TCP connection to the proxy's unix socket bound at
// unixPath: the socket itself is passed (SCM_RIGHTS, with a one-byte marker), so the host-side
// proxy reads and writes the sandbox's connection directly — no relay goroutines here, no extra
// copy of the data, and splice(2) on the host between the two TCP sockets. It returns nil when
// l is closed, or the accept error that stopped it. (A run's proxy accepts on the sandbox's
// listening sockets itself: ListenAndPass.)
func Forward(l net.Listener, unixPath string) error {
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
		_ = passTo(c, unixPath)
		_ = c.Close()
	}
}

// passTo sends c's socket over a fresh connection to unixPath.
func passTo(c net.Conn, unixPath string) error {
	u, err := net.DialTimeout("unix", unixPath, 10*time.Second)
	if err != nil {
		return fmt.Errorf("forward: dial %s: %w", unixPath, err)
	}
	defer u.Close()
	return passConn(c, u.(*net.UnixConn))
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
