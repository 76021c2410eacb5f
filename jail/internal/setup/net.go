package setup

import (
	"fmt"
	"os"

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
	err := unix.Sethostname([]byte(spec.Hostname))
	if err == unix.EPERM {
		// init holds CAP_SYS_ADMIN over its own UTS namespace: only a seccomp filter jail runs
		// under refuses it (Podman's default profile does, without CAP_SYS_ADMIN in the
		// container). The namespace still keeps the command from renaming the host.
		name, _ := os.Hostname()
		s.notice(false, "the sandbox keeps the hostname %q, not %q: a seccomp filter jail runs under (the container's) refuses sethostname", name, spec.Hostname)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sethostname %s: %w", spec.Hostname, err)
	}
	return nil
}

// notice prints one "jail: notice:" line on stderr, the command's: always when it says a
// protection is weaker than the plan asks (weaker), otherwise unless the run is quiet.
func (s *setup) notice(weaker bool, format string, args ...any) {
	if weaker || !s.cfg.Quiet {
		fmt.Fprintf(os.Stderr, "jail: notice: "+format+"\n", args...)
	}
}
