//go:build amd64

package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// atFdcwd is AT_FDCWD as a syscall argument.
const atFdcwd = 1<<64 - 100

// TestNotifyProgram runs the watching program in the BPF interpreter: write-intent opens and
// every path-writing call and connect go to the listener, reads and everything else do not.
func TestNotifyProgram(t *testing.T) {
	prog, err := notifyProgram()
	if err != nil {
		t.Fatal(err)
	}
	v := vm(t, prog)
	notify, allow := uint32(unix.SECCOMP_RET_USER_NOTIF), uint32(unix.SECCOMP_RET_ALLOW)
	cases := []struct {
		name string
		c    call
		want uint32
	}{
		{"openat read", native64(unix.SYS_OPENAT, atFdcwd, 0, unix.O_RDONLY|unix.O_CLOEXEC), allow},
		{"openat write", native64(unix.SYS_OPENAT, atFdcwd, 0, unix.O_WRONLY), notify},
		{"openat rdwr", native64(unix.SYS_OPENAT, atFdcwd, 0, unix.O_RDWR), notify},
		{"openat creat", native64(unix.SYS_OPENAT, atFdcwd, 0, unix.O_CREAT), notify},
		{"openat trunc", native64(unix.SYS_OPENAT, atFdcwd, 0, unix.O_TRUNC), notify},
		{"openat flags in the high word only", native64(unix.SYS_OPENAT, atFdcwd, 0, 1<<32), allow},
		{"open read", native64(unix.SYS_OPEN, 0, unix.O_RDONLY), allow},
		{"open write", native64(unix.SYS_OPEN, 0, unix.O_WRONLY|unix.O_APPEND), notify},
		{"openat2", native64(unix.SYS_OPENAT2), notify},
		{"mkdir", native64(unix.SYS_MKDIR), notify},
		{"renameat2", native64(unix.SYS_RENAMEAT2), notify},
		{"fchmodat2", native64(unix.SYS_FCHMODAT2), notify},
		{"connect", native64(unix.SYS_CONNECT), notify},
		{"read", native64(unix.SYS_READ), allow},
		{"write", native64(unix.SYS_WRITE), allow},
		{"execve", native64(unix.SYS_EXECVE), allow},
		{"x32 open", call{arch: nativeAuditArch, nr: x32SyscallBit | unix.SYS_OPEN, args: [6]uint64{0, unix.O_WRONLY}}, allow},
		{"i386", call{arch: auditArchI386, nr: 5, args: [6]uint64{0, unix.O_WRONLY}}, allow},
	}
	for _, tc := range cases {
		if got := run(t, v, tc.c); got != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
}
