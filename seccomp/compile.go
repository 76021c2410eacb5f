package seccomp

import (
	"fmt"
	"io"
	"os"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// Filter is a compiled seccomp program, ready to be installed or exported.
type Filter struct {
	bpf []byte
}

// BPF returns the raw program: an array of struct sock_filter in native byte order, as
// seccomp(2), `bwrap --seccomp FD` and Install take it.
func (f *Filter) BPF() []byte { return f.bpf }

// Compile turns the policy into a BPF program. It runs in the host parent (libseccomp is not
// needed in the sandbox) and does not install anything. The built-in policies' programs come
// precompiled by libseccomp (precompiled.go); every other policy is compiled now.
func Compile(p Policy) (*Filter, error) {
	pl, err := newPlan(p)
	if err != nil {
		return nil, err
	}
	if bpf := lookupPrecompiled(pl); bpf != nil {
		return &Filter{bpf: bpf}, nil
	}
	bpf, err := compilePlan(pl)
	if err != nil {
		return nil, err
	}
	return &Filter{bpf: bpf}, nil
}

// compilePlan compiles the plan with libseccomp.
func compilePlan(pl *plan) ([]byte, error) {
	prog, err := build(pl)
	if err != nil {
		return nil, err
	}
	defer prog.Release()
	bpf, err := exportBPF(prog)
	if err != nil {
		return nil, err
	}
	if pl.mode == ModeDeny {
		prefix, err := enosysPrefix()
		if err != nil {
			return nil, err
		}
		bpf = append(prefix, bpf...)
	}
	return bpf, nil
}

// Export compiles the policy and writes the raw program to w (`jail seccomp export`).
func Export(w io.Writer, p Policy) error {
	f, err := Compile(p)
	if err != nil {
		return err
	}
	if _, err := w.Write(f.BPF()); err != nil {
		return fmt.Errorf("write seccomp program: %w", err)
	}
	return nil
}

// exportBPF asks libseccomp for the program. libseccomp 2.5 can only write it to a file
// descriptor, so it goes through a memfd.
func exportBPF(prog *libseccomp.ScmpFilter) ([]byte, error) {
	fd, err := unix.MemfdCreate("jail-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	file := os.NewFile(uintptr(fd), "jail-seccomp")
	defer file.Close()
	if err := prog.ExportBPF(file); err != nil {
		return nil, fmt.Errorf("export seccomp program: %w", err)
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("read seccomp program: %w", err)
	}
	bpf, err := io.ReadAll(file)
	if err != nil {
		return nil, fmt.Errorf("read seccomp program: %w", err)
	}
	return bpf, nil
}
