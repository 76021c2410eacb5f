package seccomp

import (
	"sort"
	"sync"

	libseccomp "github.com/seccomp/libseccomp-golang"

	"github.com/jail-sandbox/jail/internal/suggest"
)

// maxSyscall bounds the scan of the native syscall table (x86_64 numbers end in the 400s; x32
// numbers, at 0x40000000 and up, are not native and never scanned).
const maxSyscall = 1024

// native returns the syscall table of the machine jail runs on: name → number, as libseccomp
// knows it plus newerSyscalls. Names libseccomp only knows as pseudo-syscalls (socketcall on
// x86_64, negative numbers) are not in it: a rule for them could never match.
var native = sync.OnceValue(func() map[string]int {
	table := make(map[string]int)
	for name, nr := range newerSyscalls {
		table[name] = nr
	}
	arch, err := libseccomp.GetNativeArch()
	if err != nil {
		return table
	}
	for nr := range maxSyscall {
		name, err := libseccomp.ScmpSyscall(nr).GetNameByArch(arch)
		if err == nil && name != "" {
			table[name] = nr
		}
	}
	return table
})

// maxKnown is the highest known native syscall number.
var maxKnown = sync.OnceValue(func() int {
	highest := 0
	for _, nr := range native() {
		highest = max(highest, nr)
	}
	return highest
})

// Known reports whether name is a syscall of the native architecture.
func Known(name string) bool {
	_, ok := native()[name]
	return ok
}

// Names returns every known syscall name, sorted.
func Names() []string {
	names := make([]string, 0, len(native()))
	for name := range native() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Suggest returns the known syscall name closest to name, for a "did you mean" hint, or "" when
// nothing is close enough to be a plausible typo.
func Suggest(name string) string {
	return suggest.Closest(name, Names(), len(name)/2+1)
}
