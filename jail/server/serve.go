package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Listen serves the API on the unix socket at path until the listener fails: jail serve. Each
// connection is served only when PeerAllowed says its peer may.
func (s *Server) Listen(path string) error {
	if err := removeStale(path); err != nil {
		return err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return err
	}
	defer l.Close()
	os.Chmod(path, 0o600)
	for {
		c, err := l.AcceptUnix()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if PeerAllowed(c) != nil {
			c.Close()
			continue
		}
		go s.ServeConn(c)
	}
}

// removeStale removes a socket left at path by a server that is gone, and refuses to take over
// one that answers.
func removeStale(path string) error {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("%s: a server is already listening there", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// PeerAllowed says whether c's peer may use the API: a process of this uid, in this user
// namespace — which refuses every process inside any sandbox, each of which has a user
// namespace of its own — as the keepers check in C (spawn/keeper.c's peer_ok). The peer's pidfd
// makes sure its pid was not reused meanwhile.
func PeerAllowed(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	pidfd := -1
	raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		if pidfd, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, soPeerPidfd); pidfd == 0 {
			pidfd = -1
		}
	})
	if err != nil {
		return err
	}
	if pidfd >= 0 {
		defer unix.Close(pidfd)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("peer uid %d is not %d", cred.Uid, os.Getuid())
	}
	var mine, theirs unix.Stat_t
	if err := unix.Stat("/proc/self/ns/user", &mine); err != nil {
		return err
	}
	if err := unix.Stat(filepath.Join("/proc", strconv.Itoa(int(cred.Pid)), "ns", "user"), &theirs); err != nil {
		return err
	}
	if mine.Dev != theirs.Dev || mine.Ino != theirs.Ino {
		return fmt.Errorf("peer %d is in another user namespace (a sandbox's?)", cred.Pid)
	}
	if pidfd >= 0 && unix.PidfdSendSignal(pidfd, 0, nil, 0) != nil {
		return fmt.Errorf("peer %d is gone", cred.Pid)
	}
	return nil
}

// soPeerPidfd is SO_PEERPIDFD (Linux 6.5).
const soPeerPidfd = 77

// ServeHandler serves the one connection a sandbox's keeper handed to jail's binary on stdin
// (spawn.APIArg0; the keeper checked its peer), and returns the exit status.
func (s *Server) ServeHandler() int {
	c, err := net.FileConn(os.Stdin)
	if err != nil {
		return 125
	}
	os.Stdin.Close()
	s.ServeConn(c)
	return 0
}
