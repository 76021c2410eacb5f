// Package seccomp builds and installs the sandbox's system-call filter.
//
// The filter is compiled in the host parent with libseccomp (Compile), travels to the sandbox
// as a raw classic-BPF program (Filter.BPF), and is installed by the sandbox's init on the
// locked OS thread that then starts the command (Install). Nothing in the sandbox calls
// libseccomp: Install is a prctl and a seccomp(2) call. The built-in profiles' programs are
// compiled by libseccomp ahead of time (go generate) and embedded with the plan they were
// compiled from, used only for a plan that is the same byte for byte; a test proves them
// identical to what libseccomp compiles now.
//
// The default policy is a deny-list: syscalls that mostly serve kernel attacks or escapes fail
// with EPERM, clone3 answers ENOSYS (glibc falls back to clone, whose flags the filter can
// read), and a few syscalls are denied for some argument values only (socket families and raw
// sockets, CLONE_NEW* flags, TIOCSTI/TIOCLINUX, personality). Argument checks compare the low
// 32 bits under a mask, so values with stray high bits cannot slip past them. Syscalls of
// another architecture (i386 through int 0x80, x32) kill the process. The program is a binary
// tree over syscall numbers, and syscalls that no rule names are allowed without reading their
// arguments, so the kernel's action cache (Linux >= 5.11) skips the filter for them.
//
// Unknown syscall names are errors with a "did you mean" suggestion (Known, Suggest), for
// profile validation; Describe says in words what a policy does, for `jail profile show`.
package seccomp
