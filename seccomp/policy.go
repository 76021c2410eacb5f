package seccomp

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Policy is the profile's [syscalls] table, as the launcher hands it over.
type Policy struct {
	// Default is "allow" (a deny-list: the built-in set plus Deny, minus Allow) or "deny" (an
	// allow-list built from Allow). Empty means "allow". "off" means no filter at all (for
	// measuring and debugging): Compile refuses it, the launcher must skip the filter itself.
	Default string
	// Deny names syscalls added to the denied set.
	Deny []string
	// Allow names syscalls removed from the default denied set (deny-list mode), or the only
	// syscalls allowed (allow-list mode).
	Allow []string
	// Errno is the error denied calls fail with, by name ("EPERM", the default).
	Errno string
	// Log turns denied calls into SECCOMP_RET_LOG: the kernel logs them and lets them run.
	// It is an audit mode for finding what a tool needs, not an enforcing filter.
	Log bool
	// BlockMPTCP denies socket(…, IPPROTO_MPTCP), which Landlock's TCP rules do not cover.
	BlockMPTCP bool
}

// Policy modes (Policy.Default) and the default errno.
const (
	ModeAllow    = "allow"
	ModeDeny     = "deny"
	ModeOff      = "off"
	defaultErrno = "EPERM"
)

// mode returns the policy's Default with the empty value resolved.
func (p Policy) mode() (string, error) {
	switch p.Default {
	case "", ModeAllow:
		return ModeAllow, nil
	case ModeDeny:
		return ModeDeny, nil
	case ModeOff:
		return "", errors.New("syscalls default \"off\": there is no filter to compile (the launcher skips seccomp)")
	}
	return "", fmt.Errorf("syscalls default %q: want %q, %q or %q", p.Default, ModeAllow, ModeDeny, ModeOff)
}

// errno returns the policy's Errno as a number.
func (p Policy) errno() (syscall.Errno, error) {
	name := p.Errno
	if name == "" {
		name = defaultErrno
	}
	if e, ok := ErrnoByName(name); ok {
		return e, nil
	}
	return 0, fmt.Errorf("syscalls errno %q: not an errno name (e.g. EPERM, EACCES, ENOSYS)", name)
}

// ErrnoByName returns the errno called name ("EPERM"), for validating profiles.
func ErrnoByName(name string) (syscall.Errno, bool) {
	for e := syscall.Errno(1); e < 4096; e++ {
		if unix.ErrnoName(e) == name {
			return e, true
		}
	}
	return 0, false
}
