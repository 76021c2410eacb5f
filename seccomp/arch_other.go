//go:build !amd64

package seccomp

// Only x86_64 is described here; elsewhere the allow-list mode (which needs the native arch
// word) is refused and the syscall table is libseccomp's alone.
const (
	nativeAuditArch = 0
	x32SyscallBit   = 0
)

var newerSyscalls = map[string]int{}
