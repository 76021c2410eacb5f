package seccomp

import (
	"encoding/binary"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// auditArchI386 is AUDIT_ARCH_I386 (linux/audit.h): a syscall made through int 0x80.
const auditArchI386 = 0x40000003

// call is one syscall as the filter sees it (struct seccomp_data).
type call struct {
	arch uint32
	nr   uint32
	args [6]uint64
}

// native64 is a call on x86_64.
func native64(nr uintptr, args ...uint64) call {
	c := call{arch: nativeAuditArch, nr: uint32(nr)}
	copy(c.args[:], args)
	return c
}

// packet lays out seccomp_data for x/net/bpf's VM, which loads 32-bit words big-endian: each
// word is stored big-endian at the offset the kernel would store it little-endian.
func (c call) packet() []byte {
	p := make([]byte, 64)
	binary.BigEndian.PutUint32(p[0:], c.nr)
	binary.BigEndian.PutUint32(p[4:], c.arch)
	for i, a := range c.args {
		binary.BigEndian.PutUint32(p[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(p[20+8*i:], uint32(a>>32))
	}
	return p
}

// rawInstructions splits a compiled program into its sock_filter instructions.
func rawInstructions(prog []byte) []bpf.RawInstruction {
	raw := make([]bpf.RawInstruction, len(prog)/sockFilterSize)
	for i := range raw {
		ins := prog[i*sockFilterSize:]
		raw[i] = bpf.RawInstruction{
			Op: binary.NativeEndian.Uint16(ins[0:]),
			Jt: ins[2],
			Jf: ins[3],
			K:  binary.NativeEndian.Uint32(ins[4:]),
		}
	}
	return raw
}

// vm loads a compiled program into the interpreter.
func vm(t *testing.T, prog []byte) *bpf.VM {
	t.Helper()
	insts, ok := bpf.Disassemble(rawInstructions(prog))
	if !ok {
		t.Fatal("program has instructions the interpreter does not know")
	}
	v, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatalf("interpreter rejected the program: %s", err)
	}
	return v
}

// Expected filter results (SECCOMP_RET_*).
const (
	retAllow       = unix.SECCOMP_RET_ALLOW
	retKillProcess = unix.SECCOMP_RET_KILL_PROCESS
	retLog         = unix.SECCOMP_RET_LOG
)

func retErrno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }

// run returns the program's verdict for c.
func run(t *testing.T, v *bpf.VM, c call) uint32 {
	t.Helper()
	ret, err := v.Run(c.packet())
	if err != nil {
		t.Fatalf("run %+v: %s", c, err)
	}
	return uint32(ret)
}

type verdictCase struct {
	name string
	call call
	want uint32
}

// checkVerdicts compiles p and checks every case's verdict.
func checkVerdicts(t *testing.T, p Policy, cases []verdictCase) {
	t.Helper()
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	v := vm(t, f.BPF())
	for _, tc := range cases {
		if got := run(t, v, tc.call); got != tc.want {
			t.Errorf("%s: verdict %#x, want %#x", tc.name, got, tc.want)
		}
	}
}
