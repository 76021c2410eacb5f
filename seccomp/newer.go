package seccomp

import (
	"encoding/binary"
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
	const (
		ldAbsW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jgeK   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jgtK   = unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K
		retK   = unix.BPF_RET | unix.BPF_K
	)
	insts := []unix.SockFilter{
		{Code: ldAbsW, K: 4},                              // A = arch
		{Code: jeqK, Jt: 0, Jf: 4, K: nativeAuditArch},    // foreign arch → libseccomp
		{Code: ldAbsW, K: 0},                              // A = nr
		{Code: jgeK, Jt: 2, Jf: 0, K: x32SyscallBit},      // x32 → libseccomp
		{Code: jgtK, Jt: 0, Jf: 1, K: uint32(maxKnown())}, // known range → libseccomp
		{Code: retK, K: unix.SECCOMP_RET_ERRNO | uint32(syscall.ENOSYS)},
	}
	out := make([]byte, 0, len(insts)*sockFilterSize)
	for _, in := range insts {
		out = binary.NativeEndian.AppendUint16(out, in.Code)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out, nil
}
