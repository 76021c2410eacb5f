package seccomp

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A user-notification filter hands chosen syscalls of the filtered process to a listener in
// another process, which answers each one. jail's --explain uses it only to watch: every call is
// answered SECCOMP_USER_NOTIF_FLAG_CONTINUE, so the kernel goes on with it exactly as without the
// watcher, and every other layer (mounts, Landlock, the main filter, whose ERRNO outranks
// USER_NOTIF) still decides. Nothing is granted through a listener.

// writeIntentFlags are the open(2) flags that ask to write: an open without any of them is not
// watched (the filter checks them, so plain reads never wait for the listener).
const writeIntentFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// notifyProgram returns the watching program: native write-intent and connect calls → USER_NOTIF,
// everything else → ALLOW. It depends on nothing but the architecture, so it is assembled here,
// not compiled by libseccomp.
func notifyProgram() ([]byte, error) {
	if nativeAuditArch == 0 || len(watchedCalls) == 0 {
		return nil, errors.New("watching syscalls (--explain): only supported on x86_64")
	}
	// A jump names its target's label ("" is the next instruction); an entry with only a
	// label defines it. Labels become the relative offsets cBPF wants once every index is known.
	type inst struct {
		label  string
		code   uint16
		k      uint32
		jt, jf string
	}
	prog := []inst{
		{code: ldAbsW, k: 4},                          // A = arch
		{code: jeqK, k: nativeAuditArch, jf: "allow"}, // foreign arch: not watched
		{code: ldAbsW, k: 0},                          // A = nr
		{code: jgeK, k: x32SyscallBit, jt: "allow"},   // x32: not watched
	}
	var flagChecks []inst
	for _, c := range watchedCalls {
		if c.flagsArg < 0 {
			prog = append(prog, inst{code: jeqK, k: uint32(c.nr), jt: "notify"})
			continue
		}
		prog = append(prog, inst{code: jeqK, k: uint32(c.nr), jt: "flags " + c.name})
		flagChecks = append(flagChecks, inst{label: "flags " + c.name},
			inst{code: ldAbsW, k: uint32(16 + 8*c.flagsArg)}, // A = low word of the flags
			inst{code: jsetK, k: writeIntentFlags, jt: "notify", jf: "allow"})
	}
	prog = append(prog, inst{code: retK, k: unix.SECCOMP_RET_ALLOW})
	prog = append(prog, flagChecks...)
	prog = append(prog,
		inst{label: "notify"}, inst{code: retK, k: unix.SECCOMP_RET_USER_NOTIF},
		inst{label: "allow"}, inst{code: retK, k: unix.SECCOMP_RET_ALLOW})

	at := map[string]int{}
	var code []inst
	for _, in := range prog {
		if in.label != "" {
			at[in.label] = len(code)
			continue
		}
		code = append(code, in)
	}
	insts := make([]unix.SockFilter, 0, len(code))
	for i, in := range code {
		jt, err := offset(at, i, in.jt)
		if err != nil {
			return nil, err
		}
		jf, err := offset(at, i, in.jf)
		if err != nil {
			return nil, err
		}
		insts = append(insts, unix.SockFilter{Code: in.code, Jt: jt, Jf: jf, K: in.k})
	}
	return encode(insts), nil
}

// offset is the relative jump from instruction i to label ("" is the next instruction).
func offset(at map[string]int, i int, label string) (uint8, error) {
	if label == "" {
		return 0, nil
	}
	t, ok := at[label]
	if !ok || t <= i || t-i-1 > 0xff {
		return 0, fmt.Errorf("notify program: bad jump to %q", label) // a bug in the assembler above
	}
	return uint8(t - i - 1), nil
}

// Listener is the receiving end of an installed watching filter.
type Listener struct {
	fd int
}

// InstallNotify installs the watching program on the calling OS thread (the caller holds
// runtime.LockOSThread and starts the command from this thread, as for Install) and returns
// its listener. The listener's descriptor is close-on-exec: the command never holds it.
// Serve it from another thread before the calling thread makes a watched call.
func InstallNotify() (*Listener, error) {
	bpf, err := notifyProgram()
	if err != nil {
		return nil, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("prctl PR_SET_NO_NEW_PRIVS: %w", err)
	}
	prog := unix.SockFprog{
		Len:    uint16(len(bpf) / sockFilterSize),
		Filter: (*unix.SockFilter)(unsafe.Pointer(&bpf[0])),
	}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(bpf)
	if errno != 0 {
		return nil, fmt.Errorf("seccomp SECCOMP_SET_MODE_FILTER (user notification): %w", errno)
	}
	// The command waits on every watched call until init answers: ask the kernel (6.6 and
	// later; older ones refuse, and watching works the same, slower) to wake init on the
	// caller's CPU and switch straight to it, instead of through the scheduler both ways.
	unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	return &Listener{fd: int(fd)}, nil
}

// Notification is one watched call, held until it is answered.
type Notification struct {
	ID   uint64
	PID  int // the calling thread, in the listener's pid namespace
	Name string
	Args [6]uint64
}

// seccompNotif is struct seccomp_notif (with struct seccomp_data inside).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// Receive waits for the next watched call. It returns io.EOF once no process uses the filter
// any more, and no other error: the listener must not stop before that, since a watched call
// then fails with ENOSYS. A call withdrawn before it was received (its caller got a signal, or
// died) is skipped.
func (l *Listener) Receive() (*Notification, error) {
	for {
		pfd := []unix.PollFd{{Fd: int32(l.fd), Events: unix.POLLIN}}
		_, err := unix.Poll(pfd, -1)
		switch {
		case err == nil && pfd[0].Revents&unix.POLLIN != 0:
		case err == nil && pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0:
			return nil, io.EOF
		case err == unix.EINTR:
			continue
		default:
			time.Sleep(time.Millisecond) // not seen in practice; wait a moment rather than spin
			continue
		}
		var n seccompNotif // the kernel wants it zeroed
		switch err := ioctlPtr(l.fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err {
		case nil:
			return &Notification{ID: n.id, PID: int(n.pid), Name: watchedName(n.nr), Args: n.args}, nil
		case unix.ENOENT, unix.EINTR:
			// withdrawn, or interrupted: the next one
		default:
			time.Sleep(time.Millisecond) // not seen in practice (a bug here); rather than spin
		}
	}
}

// Valid reports whether the call id still waits for its answer: its caller is alive and its
// memory and pid still the ones the notification named. Check it after reading from them.
func (l *Listener) Valid(id uint64) bool {
	return ioctlPtr(l.fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == nil
}

// Continue lets the call id proceed as if it had not been watched. An error (the caller is
// gone, or was interrupted) needs nothing done.
func (l *Listener) Continue(id uint64) {
	resp := seccompNotifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	ioctlPtr(l.fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// Close closes the listener. Calls still waiting then fail with ENOSYS: close it only once
// Receive has returned io.EOF.
func (l *Listener) Close() error { return unix.Close(l.fd) }

func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// watchedCall is a syscall the watching program hands to the listener; flagsArg, when not -1,
// is the open flags argument: only a write-intent open is watched.
type watchedCall struct {
	name     string
	nr       int
	flagsArg int
}

// watchedName names a watched syscall number.
func watchedName(nr int32) string {
	for _, c := range watchedCalls {
		if c.nr == int(nr) {
			return c.name
		}
	}
	return fmt.Sprintf("syscall %d", nr)
}
