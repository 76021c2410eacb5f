package seccomp

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Installing a filter is irreversible, so the install tests run in a re-executed copy of the
// test binary (go-landlock's lltest pattern): the parent test starts the child test named by
// childEnv, which restricts its own locked thread and reports through its exit status.
const childEnv = "JAIL_SECCOMP_TEST_CHILD"

// inChild runs body in a re-executed test process and fails t if body fails there. In the child
// itself it runs body on a locked OS thread.
func inChild(t *testing.T, body func(t *testing.T)) {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		runtime.LockOSThread()
		body(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child test failed: %s\n%s", err, out)
	}
}

// rawErrno makes a raw syscall with the given arguments on the current thread.
func rawErrno(nr uintptr, args ...uintptr) syscall.Errno {
	var a [6]uintptr
	copy(a[:], args)
	_, _, errno := unix.RawSyscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	return errno
}

// installOrFatal compiles p and installs it on the current (locked) thread.
func installOrFatal(t *testing.T, p Policy) {
	t.Helper()
	f, err := Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := Install(f.BPF()); err != nil {
		t.Fatal(err)
	}
}

// wantErrno fails t unless the raw syscall fails with want (0: succeeds).
func wantErrno(t *testing.T, what string, want syscall.Errno, nr uintptr, args ...uintptr) {
	t.Helper()
	if got := rawErrno(nr, args...); got != want {
		t.Errorf("%s: errno %d (%v), want %d (%v)", what, got, got, want, want)
	}
}

func TestInstallDefault(t *testing.T) {
	inChild(t, func(t *testing.T) {
		installOrFatal(t, Policy{})
		const high = 0xffffffff00000000
		wantErrno(t, "bpf", unix.EPERM, unix.SYS_BPF, 0, 0, 0)
		wantErrno(t, "clone3", unix.ENOSYS, unix.SYS_CLONE3, 0, 0)
		wantErrno(t, "unshare(CLONE_NEWUSER)", unix.EPERM, unix.SYS_UNSHARE, unix.CLONE_NEWUSER)
		wantErrno(t, "socket(AF_NETLINK, NETLINK_AUDIT)", unix.EPERM, unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT)
		wantErrno(t, "socket(high|AF_NETLINK)", unix.EPERM, unix.SYS_SOCKET, high|unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_AUDIT)
		wantErrno(t, "socket(AF_VSOCK)", unix.EPERM, unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		wantErrno(t, "ioctl(TIOCSTI)", unix.EPERM, unix.SYS_IOCTL, 0, unix.TIOCSTI, 0)
		wantErrno(t, "personality(ADDR_NO_RANDOMIZE)", unix.EPERM, unix.SYS_PERSONALITY, 0x0040000)
		wantErrno(t, "getpid", 0, unix.SYS_GETPID)
		wantErrno(t, "personality(query)", 0, unix.SYS_PERSONALITY, perQuery)
		fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
		if err != nil {
			t.Errorf("socket(AF_NETLINK, NETLINK_ROUTE): %s", err)
		} else {
			unix.Close(fd)
		}
	})
}

// The filter is per thread: another thread of the process is not filtered, and a command
// started from the filtered thread is.
func TestInstallPerThread(t *testing.T) {
	inChild(t, func(t *testing.T) {
		installOrFatal(t, Policy{Deny: []string{"getppid"}})
		wantErrno(t, "getppid on the filtered thread", unix.EPERM, unix.SYS_GETPPID)
		other := make(chan syscall.Errno)
		go func() {
			runtime.LockOSThread() // a locked goroutine never shares the filtered thread
			other <- rawErrno(unix.SYS_GETPPID)
		}()
		if errno := <-other; errno != 0 {
			t.Errorf("getppid on another thread: %v, want success", errno)
		}
		out, err := exec.Command("/bin/sh", "-c", "unshare -U true; echo $?; true").CombinedOutput()
		if err != nil {
			t.Fatalf("start a command from the filtered thread: %s\n%s", err, out)
		}
		if string(out) == "0\n" {
			t.Errorf("unshare -U succeeded in a command started from the filtered thread")
		}
	})
}

// The allow-list mode answers ENOSYS above the known table; the kernel accepts the prefixed
// program.
func TestInstallAllowList(t *testing.T) {
	inChild(t, func(t *testing.T) {
		var allow []string
		for _, name := range Names() {
			if name != "getppid" {
				allow = append(allow, name)
			}
		}
		installOrFatal(t, Policy{Default: ModeDeny, Allow: allow})
		wantErrno(t, "getppid (not allowed)", unix.EPERM, unix.SYS_GETPPID)
		wantErrno(t, "getpid (allowed)", 0, unix.SYS_GETPID)
		wantErrno(t, "syscall 1000 (newer than the table)", unix.ENOSYS, 1000)
		wantErrno(t, "unshare(CLONE_NEWNET) (allowed, checked)", unix.EPERM, unix.SYS_UNSHARE, unix.CLONE_NEWNET)
	})
}

func TestInstallRejectsGarbage(t *testing.T) {
	if err := Install([]byte{1, 2, 3}); err == nil {
		t.Fatal("Install accepted a 3-byte program")
	}
}
