// Command probe attempts, from inside a sandbox, each thing the seccomp filter must refuse, and
// prints one line per attempt: "NAME ok", "NAME ERRNO" (the errno's name) or, for attempts run
// in a child process, "NAME killed:SIGNAL". cmd/jail/seccomp_test.go builds and runs it.
//
//	probe ATTEMPT...   run the named attempts (probe list prints the names)
package main

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"

	"golang.org/x/sys/unix"
)

// attempts maps each attempt's name to a function returning its errno (0 when it worked).
var attempts = map[string]func() syscall.Errno{
	"unshare-user":   func() syscall.Errno { return raw(unix.SYS_UNSHARE, unix.CLONE_NEWUSER) },
	"unshare-net":    func() syscall.Errno { return raw(unix.SYS_UNSHARE, unix.CLONE_NEWNET) },
	"clone-newuser":  cloneNewUser,
	"clone3":         func() syscall.Errno { return raw(unix.SYS_CLONE3, 0, 0) },
	"setns":          func() syscall.Errno { return raw(unix.SYS_SETNS, 0, unix.CLONE_NEWNET) },
	"io_uring_setup": ioUringSetup,
	"bpf":            bpfMapCreate,
	"keyctl": func() syscall.Errno {
		return raw(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, negInt(unix.KEY_SPEC_SESSION_KEYRING), 0)
	},
	"add_key":         addKey,
	"perf_event_open": perfEventOpen,
	"userfaultfd":     func() syscall.Errno { return raw(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly) },
	"tiocsti":         func() syscall.Errno { return onPty(unix.TIOCSTI) },
	"tioclinux":       func() syscall.Errno { return onPty(unix.TIOCLINUX) },
	"tiocsti-stdin":   tiocstiStdin,
	"netlink-route":   func() syscall.Errno { return socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE) },
	"netlink-diag":    func() syscall.Errno { return socket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG) },
	"netlink-highbits": func() syscall.Errno {
		return socket(0xffffffff00000000|unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_SOCK_DIAG)
	},
	"packet":            func() syscall.Errno { return socket(unix.AF_PACKET, unix.SOCK_DGRAM, 0) },
	"vsock":             func() syscall.Errno { return socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0) },
	"socketpair-tipc":   socketpairTIPC,
	"raw-inet":          func() syscall.Errno { return socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP) },
	"tcp":               func() syscall.Errno { return socket(unix.AF_INET, unix.SOCK_STREAM, 0) },
	"unix":              func() syscall.Errno { return socket(unix.AF_UNIX, unix.SOCK_STREAM, 0) },
	"ptrace-child":      ptraceChild,
	"process_vm_readv":  processVMReadv,
	"personality-aslr":  func() syscall.Errno { return raw(unix.SYS_PERSONALITY, addrNoRandomize) },
	"personality-query": func() syscall.Errno { return raw(unix.SYS_PERSONALITY, 0xffffffff) },
	"i386":              func() syscall.Errno { return inChild("i386-child") },
	"x32":               func() syscall.Errno { return inChild("x32-child") },
}

func main() {
	if len(os.Args) == 2 {
		switch os.Args[1] {
		case "sleep":
			select {}
		case "i386-child":
			int80(20) // getpid through the i386 entry point
			os.Exit(0)
		case "x32-child":
			raw(0x40000000 | unix.SYS_GETPID)
			os.Exit(0)
		case "list":
			var names []string
			for name := range attempts {
				names = append(names, name)
			}
			sort.Strings(names)
			for _, name := range names {
				fmt.Println(name)
			}
			return
		}
	}
	for _, name := range os.Args[1:] {
		attempt, ok := attempts[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "probe: unknown attempt %q\n", name)
			os.Exit(2)
		}
		fmt.Println(name, describe(attempt()))
	}
}

// describe names an attempt's result.
func describe(errno syscall.Errno) string {
	switch {
	case errno == 0:
		return "ok"
	case errno >= killedBase:
		return "killed:" + unix.SignalName(syscall.Signal(errno-killedBase))
	}
	return unix.ErrnoName(errno)
}

// killedBase marks "the child was killed by signal N" as errno killedBase+N.
const killedBase = 10000

// raw makes a syscall on this thread and returns its errno; a successful call's fd is closed.
func raw(nr uintptr, args ...uintptr) syscall.Errno {
	var a [6]uintptr
	copy(a[:], args)
	r, _, errno := unix.RawSyscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if errno == 0 && returnsFD(nr) {
		unix.Close(int(r))
	}
	return errno
}

func returnsFD(nr uintptr) bool {
	switch nr {
	case unix.SYS_SOCKET, unix.SYS_USERFAULTFD, unix.SYS_IO_URING_SETUP, unix.SYS_PERF_EVENT_OPEN, unix.SYS_BPF:
		return true
	}
	return false
}

// negInt passes a negative int argument the way libc does (sign-extended).
func negInt(v int) uintptr { return uintptr(v) }

func socket(family, typ, proto uint64) syscall.Errno {
	return raw(unix.SYS_SOCKET, uintptr(family), uintptr(typ|unix.SOCK_CLOEXEC), uintptr(proto))
}

// cloneNewUser is fork with CLONE_NEWUSER; a child that gets created exits at once.
func cloneNewUser() syscall.Errno {
	pid, _, errno := unix.RawSyscall6(unix.SYS_CLONE, unix.CLONE_NEWUSER|uintptr(unix.SIGCHLD), 0, 0, 0, 0, 0)
	if errno != 0 {
		return errno
	}
	if pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT_GROUP, 0, 0, 0)
	}
	var ws unix.WaitStatus
	unix.Wait4(int(pid), &ws, 0, nil)
	return 0
}

// Buffers handed to raw syscalls as addresses live in package variables: they never move.
var (
	ioUringParams [120]byte     // struct io_uring_params
	bpfAttr       = [32]uint32{ // union bpf_attr, BPF_MAP_CREATE: an array of one 4-byte value
		unix.BPF_MAP_TYPE_ARRAY, 4, 4, 1,
	}
	ptyByte byte
)

func ioUringSetup() syscall.Errno {
	return raw(unix.SYS_IO_URING_SETUP, 1, addr(&ioUringParams))
}

func bpfMapCreate() syscall.Errno {
	return raw(unix.SYS_BPF, unix.BPF_MAP_CREATE, addr(&bpfAttr), 128)
}

func addKey() syscall.Errno {
	_, err := unix.AddKey("user", "jail-probe", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
	return errnoOf(err)
}

func perfEventOpen() syscall.Errno {
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK, Bits: unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
	attr.Size = uint32(sizeofPerfEventAttr)
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err == nil {
		unix.Close(fd)
	}
	return errnoOf(err)
}

// onPty makes a pseudo-terminal and tries ioctl cmd on its terminal side: TIOCSTI pushes a
// byte of input, TIOCLINUX (subcode 0) asks the console.
func onPty(cmd uintptr) syscall.Errno {
	ptmx, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(ptmx)
	if err := unix.IoctlSetPointerInt(ptmx, unix.TIOCSPTLCK, 0); err != nil {
		return errnoOf(err)
	}
	n, err := unix.IoctlGetInt(ptmx, unix.TIOCGPTN)
	if err != nil {
		return errnoOf(err)
	}
	tty, err := unix.Open(fmt.Sprintf("/dev/pts/%d", n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	defer unix.Close(tty)
	ptyByte = 'x'
	if cmd == unix.TIOCLINUX {
		ptyByte = 0
	}
	return raw(unix.SYS_IOCTL, uintptr(tty), cmd, addr(&ptyByte))
}

// tiocstiStdin pushes a byte into the terminal on standard input: the terminal of the user who
// started jail, unless jail gave the command one of its own.
func tiocstiStdin() syscall.Errno {
	ptyByte = '\n'
	return raw(unix.SYS_IOCTL, 0, unix.TIOCSTI, addr(&ptyByte))
}

// atChild runs attempt against a child process of this program (the attack on another
// process in the sandbox), then kills the child.
func atChild(attempt func(pid int) syscall.Errno) syscall.Errno {
	cmd := exec.Command("/proc/self/exe", "sleep")
	if err := cmd.Start(); err != nil {
		return errnoOf(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	return attempt(cmd.Process.Pid)
}

func ptraceChild() syscall.Errno {
	return atChild(func(pid int) syscall.Errno {
		return raw(unix.SYS_PTRACE, unix.PTRACE_ATTACH, uintptr(pid))
	})
}

func processVMReadv() syscall.Errno {
	return atChild(func(pid int) syscall.Errno {
		buf := make([]byte, 8)
		local := []unix.Iovec{{Base: &buf[0], Len: 8}}
		remote := []unix.RemoteIovec{{Base: 0x10000, Len: 8}}
		_, err := unix.ProcessVMReadv(pid, local, remote, 0)
		return errnoOf(err)
	})
}

// inChild runs this program with arg and reports how the child ended: killed by a signal
// (killedBase+signal), or its exit status as an errno-like number (0 when it ran to the end).
func inChild(arg string) syscall.Errno {
	err := exec.Command("/proc/self/exe", arg).Run()
	if err == nil {
		return 0
	}
	if exit, ok := err.(*exec.ExitError); ok {
		if ws := exit.Sys().(syscall.WaitStatus); ws.Signaled() {
			return killedBase + syscall.Errno(ws.Signal())
		}
		return syscall.Errno(exit.ExitCode())
	}
	return errnoOf(err)
}

// errnoOf extracts the errno from err (EIO when it carries none).
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if errno, ok := err.(syscall.Errno); ok {
		return errno
	}
	if pe, ok := err.(*os.PathError); ok {
		return errnoOf(pe.Err)
	}
	if se, ok := err.(*os.SyscallError); ok {
		return errnoOf(se.Err)
	}
	return syscall.EIO
}

// socketpairTIPC reaches an exotic family through socketpair instead of socket.
func socketpairTIPC() syscall.Errno {
	fds, err := unix.Socketpair(unix.AF_TIPC, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
	}
	return errnoOf(err)
}
