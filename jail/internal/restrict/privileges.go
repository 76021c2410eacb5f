package restrict

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// DropCapabilities empties every capability set of this thread: bounding and ambient first, then
// effective, permitted and inheritable. With the bounding set empty, not even root regains a
// capability by executing a file. Shrinking the bounding set needs CAP_SETPCAP: a thread without
// it (the fallback's, where a container granted some capabilities but not that one) keeps the
// bounding set as it is, says so with boundingKept, and drops the rest; no_new_privs, set next,
// then keeps execve from granting any capability the thread does not hold, which is none. A
// capability already out of the bounding set (init's setup empties it before Go's runtime
// starts: spawn/pid1.c) costs a read, not a drop: each drop makes new credentials.
func DropCapabilities() (boundingKept bool, err error) {
	setpcap := Holds(unix.CAP_SETPCAP)
	for c := 0; ; c++ {
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
		if err != nil {
			break // past the last capability this kernel knows
		}
		if in == 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if err == unix.EPERM && !setpcap {
				boundingKept = true
				break
			}
			return false, &os.SyscallError{Syscall: "prctl PR_CAPBSET_DROP", Err: err}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return boundingKept, &os.SyscallError{Syscall: "prctl PR_CAP_AMBIENT_CLEAR_ALL", Err: err}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData
	if err := unix.Capset(&hdr, &none[0]); err != nil {
		return boundingKept, &os.SyscallError{Syscall: "capset", Err: err}
	}
	return boundingKept, nil
}

// Holds reports whether this thread's effective set has capability c.
func Holds(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return true // let the drop say what is wrong
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// SetNoNewPrivs keeps execve from granting privileges (setuid bits, file capabilities).
func SetNoNewPrivs() error {
	return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
}

// HoldsCapabilities reports whether this thread has any capability, in any set but the bounding
// one. Without a user namespace an ordinary user (or a root stripped of capabilities) holds none
// and may not shrink its bounding set, which no_new_privs makes moot: execve then grants no
// capability the thread did not already have, not even to uid 0.
func HoldsCapabilities() bool {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return true
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		for _, set := range []string{"CapInh:", "CapPrm:", "CapEff:", "CapAmb:"} {
			if v, ok := strings.CutPrefix(line, set); ok && strings.Trim(strings.TrimSpace(v), "0") != "" {
				return true
			}
		}
	}
	return false
}

// SetNonDumpable keeps the command (same uid, no capabilities) from ptracing init or reading its
// memory and environment through /proc/1.
func SetNonDumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// CloseInheritedFds makes every descriptor above stderr close-on-exec: init keeps its report
// pipe, the command gets only 0, 1 and 2.
func CloseInheritedFds() error {
	return unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
}
