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

func TestInstallDefault(t *testing.T) {
	inChild(t, func(t *testing.T) {
		f, err := Compile(Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if err := Install(f.BPF()); err != nil {
			t.Fatal(err)
		}
		if errno := rawErrno(unix.SYS_BPF, 0, 0, 0); errno != unix.EPERM {
			t.Errorf("bpf: errno %v, want EPERM", errno)
		}
		if errno := rawErrno(unix.SYS_CLONE3, 0, 0); errno != unix.ENOSYS {
			t.Errorf("clone3: errno %v, want ENOSYS", errno)
		}
		if errno := rawErrno(unix.SYS_GETPID); errno != 0 {
			t.Errorf("getpid: errno %v, want success", errno)
		}
	})
}

func TestInstallRejectsGarbage(t *testing.T) {
	if err := Install([]byte{1, 2, 3}); err == nil {
		t.Fatal("Install accepted a 3-byte program")
	}
}
