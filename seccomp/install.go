package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockFilterSize is sizeof(struct sock_filter).
const sockFilterSize = 8

// Install loads the program on the calling OS thread only (no SECCOMP_FILTER_FLAG_TSYNC).
//
// The caller must hold runtime.LockOSThread and start the command from this same thread: the
// launcher restricts one locked thread and forks the command from it, so the command inherits
// the filter while init's other threads (which never run the command) stay unfiltered. TSYNC
// would also filter those threads, which buys nothing and makes init's own work (reaping,
// signal forwarding) subject to the command's policy.
//
// Install sets no_new_privs on the thread first (the kernel requires it for an unprivileged
// filter; the launcher sets it too, setting it twice is harmless).
func Install(bpf []byte) error {
	if len(bpf) == 0 || len(bpf)%sockFilterSize != 0 || len(bpf)/sockFilterSize > 0xffff {
		return fmt.Errorf("install seccomp program: %d bytes is not a BPF program", len(bpf))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_NO_NEW_PRIVS: %w", err)
	}
	prog := unix.SockFprog{
		Len:    uint16(len(bpf) / sockFilterSize),
		Filter: (*unix.SockFilter)(unsafe.Pointer(&bpf[0])),
	}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(bpf)
	if errno != 0 {
		err := error(errno)
		if errors.Is(errno, unix.EINVAL) {
			err = fmt.Errorf("%w (the kernel rejected the program)", errno)
		}
		return fmt.Errorf("seccomp SECCOMP_SET_MODE_FILTER: %w", err)
	}
	return nil
}
