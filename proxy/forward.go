package proxy

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Forward serves a listener inside the sandbox (127.0.0.1:PORT in its network namespace) by
// handing every accepted TCP connection to the proxy's unix socket at unixPath: the socket
// itself is passed (SCM_RIGHTS, with a one-byte marker), so the host-side proxy reads and
// writes the sandbox's connection directly — no relay goroutines here, no extra copy of the
// data, and splice(2) on the host between the two TCP sockets. Forward returns nil when l is
// closed, or the accept error that stopped it.
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
		_ = passConn(c, unixPath)
		_ = c.Close()
	}
}

// passConn sends c's socket to the proxy over a fresh unix connection.
func passConn(c net.Conn, unixPath string) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return fmt.Errorf("forward: %T has no socket to pass", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	u, err := net.DialTimeout("unix", unixPath, 10*time.Second)
	if err != nil {
		return fmt.Errorf("forward: dial %s: %w", unixPath, err)
	}
	defer u.Close()
	var sendErr error
	err = raw.Control(func(fd uintptr) {
		_, _, sendErr = u.(*net.UnixConn).WriteMsgUnix([]byte{fdMarker}, syscall.UnixRights(int(fd)), nil)
	})
	if err == nil {
		err = sendErr
	}
	if err != nil {
		return fmt.Errorf("forward: pass socket to %s: %w", unixPath, err)
	}
	return nil
}
