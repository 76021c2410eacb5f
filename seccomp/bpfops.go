package seccomp

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// The classic BPF instructions the hand-assembled programs use (the ENOSYS prefix, the
// watching filter); libseccomp writes the rest.
const (
	ldAbsW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jgeK   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jgtK   = unix.BPF_JMP | unix.BPF_JGT | unix.BPF_K
	jsetK  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	retK   = unix.BPF_RET | unix.BPF_K
)

// encode lays insts out as the kernel takes them: struct sock_filter, native byte order.
func encode(insts []unix.SockFilter) []byte {
	out := make([]byte, 0, len(insts)*sockFilterSize)
	for _, in := range insts {
		out = binary.NativeEndian.AppendUint16(out, in.Code)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out
}
