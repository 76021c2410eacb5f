package setup

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// bringUpLoopback brings lo up in the sandbox's own network namespace (it starts down), so the
// command can still talk to itself on 127.0.0.1 and ::1.
func bringUpLoopback() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("get lo flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring lo up: %w", err)
	}
	return nil
}

// setHostname gives the sandbox's own UTS namespace the plan's hostname.
func (s *setup) setHostname() error {
	spec := s.spec
	if !spec.Namespaces.UTS || spec.Hostname == "" {
		return nil
	}
	if err := unix.Sethostname([]byte(spec.Hostname)); err != nil {
		return fmt.Errorf("sethostname %s: %w", spec.Hostname, err)
	}
	return nil
}
