package seccomp

// defaultDeny is the deny-list mode's built-in set: syscalls that exist mostly to attack the
// kernel or to leave the sandbox, and that an agent's tools do not need. Calls checked by
// argument (socket, clone, unshare, ioctl, personality) are in argChecks instead.
var defaultDeny = []string{
	// kernel attack surface
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"mount", "umount2", "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
	"mount_setattr", "pivot_root", "chroot",
	"swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd", "syslog",
	"iopl", "ioperm", "modify_ldt", "uselib", "lookup_dcookie", "nfsservctl",
	"open_by_handle_at", "name_to_handle_at", "setns",
	// leaving the sandbox through another process
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	// mount API newer than libseccomp 2.5.4 (the rest of the family is above)
	"open_tree_attr",
}

// enosysCalls answer ENOSYS rather than the policy's errno, because libc has a fallback that
// the filter can check: clone3 passes its flags in memory, which seccomp cannot read, so glibc
// falling back to clone (whose flags are a register) keeps the CLONE_NEW* check effective.
var enosysCalls = []string{"clone3"}
