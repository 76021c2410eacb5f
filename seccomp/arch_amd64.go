package seccomp

import "golang.org/x/sys/unix"

// nativeAuditArch is AUDIT_ARCH_X86_64, the arch word of a native syscall in seccomp_data.
const nativeAuditArch = 0xc000003e

// x32SyscallBit marks x32 syscalls, which arrive with the x86_64 arch word.
const x32SyscallBit = 0x40000000

// newerSyscalls are native syscalls younger than the installed libseccomp's table (2.5.4 stops
// at futex_requeue, 456). libseccomp takes rules for them by number; x/sys has the numbers.
var newerSyscalls = map[string]int{
	"statmount":         unix.SYS_STATMOUNT,
	"listmount":         unix.SYS_LISTMOUNT,
	"lsm_get_self_attr": unix.SYS_LSM_GET_SELF_ATTR,
	"lsm_set_self_attr": unix.SYS_LSM_SET_SELF_ATTR,
	"lsm_list_modules":  unix.SYS_LSM_LIST_MODULES,
	"mseal":             unix.SYS_MSEAL,
	"setxattrat":        unix.SYS_SETXATTRAT,
	"getxattrat":        unix.SYS_GETXATTRAT,
	"listxattrat":       unix.SYS_LISTXATTRAT,
	"removexattrat":     unix.SYS_REMOVEXATTRAT,
	"open_tree_attr":    unix.SYS_OPEN_TREE_ATTR,
	"file_getattr":      unix.SYS_FILE_GETATTR,
	"file_setattr":      unix.SYS_FILE_SETATTR,
	"listns":            unix.SYS_LISTNS,
	"rseq_slice_yield":  unix.SYS_RSEQ_SLICE_YIELD,
}
