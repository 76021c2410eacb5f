package seccomp

import (
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// pathLength counts the instructions the program executes for c: what a call costs when the
// kernel's action cache cannot skip the filter (kernels before 5.11, argument-checked calls).
// It knows the instructions libseccomp emits.
func pathLength(t *testing.T, prog []bpf.Instruction, c call) (n int, verdict uint32) {
	t.Helper()
	packet := c.packet()
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		n++
		switch in := prog[pc].(type) {
		case bpf.LoadAbsolute:
			a = uint32(packet[in.Off])<<24 | uint32(packet[in.Off+1])<<16 | uint32(packet[in.Off+2])<<8 | uint32(packet[in.Off+3])
		case bpf.ALUOpConstant:
			if in.Op != bpf.ALUOpAnd {
				t.Fatalf("instruction %d: unexpected ALU op %v", pc, in)
			}
			a &= in.Val
		case bpf.JumpIf:
			pc += int(in.SkipFalse)
			if jumpTaken(in.Cond, a, in.Val) {
				pc += int(in.SkipTrue) - int(in.SkipFalse)
			}
		case bpf.Jump:
			pc += int(in.Skip)
		case bpf.RetConstant:
			return n, in.Val
		default:
			t.Fatalf("instruction %d: %v not modelled", pc, in)
		}
	}
	t.Fatal("program ran off its end")
	return 0, 0
}

func jumpTaken(cond bpf.JumpTest, a, v uint32) bool {
	switch cond {
	case bpf.JumpEqual:
		return a == v
	case bpf.JumpNotEqual:
		return a != v
	case bpf.JumpGreaterThan:
		return a > v
	case bpf.JumpLessThan:
		return a < v
	case bpf.JumpGreaterOrEqual:
		return a >= v
	case bpf.JumpLessOrEqual:
		return a <= v
	case bpf.JumpBitsSet:
		return a&v != 0
	case bpf.JumpBitsNotSet:
		return a&v == 0
	}
	return false
}

// The binary tree keeps every syscall a few comparisons away; a linear program (libseccomp's
// default) would walk past every rule before allowing a call no rule names.
func TestHotSyscallsCheap(t *testing.T) {
	f, err := Compile(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := bpf.Disassemble(rawInstructions(f.BPF()))
	const limit = 16
	for _, nr := range []uintptr{
		unix.SYS_READ, unix.SYS_WRITE, unix.SYS_OPENAT, unix.SYS_CLOSE, unix.SYS_FSTAT,
		unix.SYS_NEWFSTATAT, unix.SYS_STATX, unix.SYS_GETDENTS64, unix.SYS_LSEEK, unix.SYS_MMAP,
		unix.SYS_MUNMAP, unix.SYS_MPROTECT, unix.SYS_FUTEX, unix.SYS_BRK, unix.SYS_GETPID,
		unix.SYS_RT_SIGPROCMASK, unix.SYS_RT_SIGACTION, unix.SYS_EPOLL_WAIT, unix.SYS_PREAD64,
		unix.SYS_EXECVE, unix.SYS_WAIT4, unix.SYS_CLOCK_GETTIME, unix.SYS_SCHED_YIELD,
	} {
		n, verdict := pathLength(t, raw, native64(nr))
		if verdict != retAllow || n > limit {
			t.Errorf("syscall %d: verdict %#x after %d instructions, want ALLOW within %d", nr, verdict, n, limit)
		}
	}
	if n := len(f.BPF()) / sockFilterSize; n > 512 {
		t.Errorf("default program is %d instructions, want <= 512", n)
	}
}
