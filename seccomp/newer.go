package seccomp

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// enosysPrefix returns instructions to put in front of libseccomp's program in the allow-list
// mode: a native syscall numbered above every syscall this package knows answers ENOSYS, the
// way an older kernel would, so libc and runtimes take their fallbacks. libseccomp cannot say
// "every number above N"; the prefix can, and since its last jump lands on the first
// libseccomp instruction (and cBPF jumps are relative), the program after it is unchanged.
// Foreign arches and x32 numbers fall through to libseccomp's own handling (kill).
func enosysPrefix() ([]byte, error) {
	if nativeAuditArch == 0 {
		return nil, errors.New("seccomp allow-list mode: only supported on x86_64")
	}
	insts := []unix.SockFilter{
		{Code: ldAbsW, K: 4},                              // A = arch
		{Code: jeqK, Jt: 0, Jf: 4, K: nativeAuditArch},    // foreign arch → libseccomp
		{Code: ldAbsW, K: 0},                              // A = nr
		{Code: jgeK, Jt: 2, Jf: 0, K: x32SyscallBit},      // x32 → libseccomp
		{Code: jgtK, Jt: 0, Jf: 1, K: uint32(maxKnown())}, // known range → libseccomp
		{Code: retK, K: unix.SECCOMP_RET_ERRNO | uint32(syscall.ENOSYS)},
	}
	return encode(insts), nil
}
