package landlock

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock/lltest"
	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// requireABI skips a test that needs Landlock ABI want only where the running kernel is too old
// to have it (testutil.Require); a kernel new enough that still lacks it (Landlock not enabled
// at boot) fails.
func requireABI(t *testing.T, want int) {
	t.Helper()
	got := ABI()
	if got >= want {
		return
	}
	linux := features[0].linux
	for _, f := range features {
		if f.abi <= want {
			linux = f.linux
		}
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	release := unix.ByteSliceToString(u.Release[:])
	if !olderThan(release, linux) {
		t.Fatalf("Linux %s should have Landlock ABI %d but reports %d (is landlock in the lsm= boot list?)", release, want, got)
	}
	testutil.Require(t, false, "Landlock ABI %d (Linux %s is older than %s)", want, release, linux)
}

// olderThan compares the leading "major.minor" of a kernel release with want ("6.7").
func olderThan(release, want string) bool {
	var a, b, c, d int
	parse := func(s string, x, y *int) {
		s = strings.SplitN(s, "-", 2)[0]
		parts := strings.SplitN(s, ".", 3)
		for i, p := range parts[:min(2, len(parts))] {
			n := 0
			for _, ch := range p {
				if ch < '0' || ch > '9' {
					break
				}
				n = n*10 + int(ch-'0')
			}
			if i == 0 {
				*x = n
			} else {
				*y = n
			}
		}
	}
	parse(release, &a, &b)
	parse(want, &c, &d)
	return a < c || (a == c && b < d)
}

// restricted locks the goroutine to its thread for good and applies c to it.
func restricted(t *testing.T, c Config) Report {
	t.Helper()
	runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
	rep, err := Restrict(c)
	if err != nil {
		t.Fatalf("Restrict: %v", err)
	}
	return rep
}

// sysRead are the host directories a forked shell needs to run (os/exec also opens /dev/null
// read-write, so tests grant it as a write).
var sysRead = []string{"/usr", "/bin", "/lib", "/lib64", "/etc"}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func mkfile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func wantEACCES(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, syscall.EACCES) {
		t.Errorf("%s: got %v, want EACCES (Landlock refusal)", what, err)
	}
}

func TestRestrictFilesystem(t *testing.T) {
	requireABI(t, 1)
	lltest.RunInSubprocess(t, func() {
		base := lltest.TempDir(t)
		ro, rw, out := filepath.Join(base, "ro"), filepath.Join(base, "rw"), filepath.Join(base, "out")
		for _, d := range []string{ro, rw, out} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			mkfile(t, filepath.Join(d, "f"))
		}
		rofile := filepath.Join(base, "single")
		mkfile(t, rofile)
		listed := filepath.Join(base, "listed")
		if err := os.Mkdir(listed, 0o755); err != nil {
			t.Fatal(err)
		}
		mkfile(t, filepath.Join(listed, "f"))

		rep := restricted(t, Config{Mode: ModeBestEffort, Read: append(existing(sysRead), ro, rofile),
			Write: []string{rw, "/dev/null"}, List: []string{listed}})
		if rep.ABI < 1 {
			t.Fatalf("report ABI %d", rep.ABI)
		}

		if _, err := os.ReadFile(filepath.Join(ro, "f")); err != nil {
			t.Errorf("read inside read grant: %v", err)
		}
		if _, err := os.ReadFile(rofile); err != nil {
			t.Errorf("read a file granted alone: %v", err)
		}
		wantEACCES(t, "write inside read grant", os.WriteFile(filepath.Join(ro, "f"), nil, 0o644))
		wantEACCES(t, "create inside read grant", os.WriteFile(filepath.Join(ro, "new"), nil, 0o644))
		wantEACCES(t, "write a file granted read", os.WriteFile(rofile, nil, 0o644))
		if err := os.WriteFile(filepath.Join(rw, "new"), []byte("x"), 0o644); err != nil {
			t.Errorf("create inside write grant: %v", err)
		}
		if err := os.Rename(filepath.Join(rw, "new"), filepath.Join(rw, "moved")); err != nil {
			t.Errorf("rename inside write grant: %v", err)
		}
		if err := os.Truncate(filepath.Join(rw, "f"), 0); err != nil {
			t.Errorf("truncate inside write grant: %v", err)
		}
		if _, err := os.ReadDir(listed); err != nil {
			t.Errorf("list a List directory: %v", err)
		}
		_, err := os.ReadFile(filepath.Join(listed, "f"))
		wantEACCES(t, "read a file in a List directory", err)
		wantEACCES(t, "create in a List directory", os.WriteFile(filepath.Join(listed, "new"), nil, 0o644))
		_, err = os.ReadFile(filepath.Join(out, "f"))
		wantEACCES(t, "read outside the grants", err)
		wantEACCES(t, "write outside the grants", os.WriteFile(filepath.Join(out, "f"), nil, 0o644))
		wantEACCES(t, "move out of the write grant", os.Rename(filepath.Join(rw, "f"), filepath.Join(out, "g")))
		_, err = os.ReadFile("/proc/self/../1/environ")
		if err == nil {
			t.Errorf("read of /proc/1/environ allowed")
		}

		// A process forked from the restricted thread inherits the domain.
		sh := exec.Command("/bin/sh", "-c", `cat "$1" >/dev/null || exit 3; echo x >"$2" && exit 0; exit 4`, "sh",
			filepath.Join(ro, "f"), filepath.Join(out, "f"))
		err = sh.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 4 {
			t.Errorf("forked shell writing outside the grants: got %v, want exit 4 (refused)", err)
		}
	})
}

// TestRestrictTruncate: a Read path listed in Truncate may also be truncated (and still not
// written); a plain Read path may not.
func TestRestrictTruncate(t *testing.T) {
	requireABI(t, 3)
	lltest.RunInSubprocess(t, func() {
		base := lltest.TempDir(t)
		ro, rt := filepath.Join(base, "ro"), filepath.Join(base, "rt")
		for _, d := range []string{ro, rt} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			mkfile(t, filepath.Join(d, "f"))
		}
		restricted(t, Config{Mode: ModeRequired, Read: []string{ro, rt}, Truncate: []string{rt}})
		wantEACCES(t, "truncate inside a read grant", os.Truncate(filepath.Join(ro, "f"), 0))
		if err := os.Truncate(filepath.Join(rt, "f"), 0); err != nil {
			t.Errorf("truncate inside a Truncate grant: %v", err)
		}
		wantEACCES(t, "write inside a Truncate grant", os.WriteFile(filepath.Join(rt, "f"), nil, 0o644))
		if _, err := os.ReadFile(filepath.Join(rt, "f")); err != nil {
			t.Errorf("read inside a Truncate grant: %v", err)
		}
	})
}

func TestRestrictTCP(t *testing.T) {
	requireABI(t, 4)
	lltest.RunInSubprocess(t, func() {
		allowed, denied := listen(t), listen(t)
		restricted(t, Config{Mode: ModeRequired, RestrictTCP: true, TCPConnect: []uint16{allowed}})
		if err := connectTCP(allowed); err != nil {
			t.Errorf("connect to granted port %d: %v", allowed, err)
		}
		wantEACCES(t, "connect to port outside the grant", connectTCP(denied))
		wantEACCES(t, "bind without a bind grant", bindTCP(0))
	})
}

func TestRestrictTCPDenyAll(t *testing.T) {
	requireABI(t, 4)
	lltest.RunInSubprocess(t, func() {
		port := listen(t)
		restricted(t, Config{Mode: ModeRequired, RestrictTCP: true})
		wantEACCES(t, "connect with no TCP grant", connectTCP(port))
	})
}

func TestRestrictScope(t *testing.T) {
	requireABI(t, 6)
	lltest.RunInSubprocess(t, func() {
		name := "@jail-landlock-test-" + filepath.Base(lltest.TempDir(t))
		l, err := net.Listen("unix", name)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		outside := exec.Command("/bin/sleep", "60")
		if err := outside.Start(); err != nil {
			t.Fatal(err)
		}
		defer outside.Process.Kill()

		restricted(t, Config{Mode: ModeRequired, Read: existing(sysRead), Write: []string{"/dev/null"}, Scope: true})
		if err := unix.Kill(outside.Process.Pid, unix.SIGTERM); !errors.Is(err, unix.EPERM) {
			t.Errorf("signal to a process outside the domain: got %v, want EPERM", err)
		}
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: name})
		if !errors.Is(err, unix.EPERM) {
			t.Errorf("connect to an abstract socket outside the domain: got %v, want EPERM", err)
		}
		// Inside the domain signals still work: a child of the restricted thread.
		inside := exec.Command("/bin/sleep", "60")
		if err := inside.Start(); err != nil {
			t.Fatal(err)
		}
		if err := unix.Kill(inside.Process.Pid, unix.SIGTERM); err != nil {
			t.Errorf("signal to a process inside the domain: %v", err)
		}
		inside.Wait()
	})
}

func TestRestrictOff(t *testing.T) {
	lltest.RunInSubprocess(t, func() {
		restricted(t, Config{Mode: ModeOff})
		if _, err := os.ReadFile("/etc/hostname"); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("mode off restricted a read: %v", err)
		}
	})
}

func TestRequiredNamesMissingFeature(t *testing.T) {
	_, err := restrict(Config{Mode: ModeRequired, RestrictTCP: true, Scope: true}, 3)
	if err == nil {
		t.Fatal("required mode on ABI 3 with TCP rules: no error")
	}
	for _, want := range []string{"ABI 3", "tcp (ABI 4, Linux 6.7)", "ioctl_dev", "scope (ABI 6"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

func TestMissing(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		abi  int
		want string
	}{
		{Config{}, 7, ""},
		{Config{RestrictTCP: true, Scope: true}, 6, ""},
		{Config{Scope: true}, 5, "scope (ABI 6, Linux 6.12)"},
		{Config{}, 4, "ioctl_dev (ABI 5, Linux 6.10)"},
		{Config{RestrictTCP: true}, 3, "tcp (ABI 4, Linux 6.7),ioctl_dev (ABI 5, Linux 6.10)"},
		{Config{}, 0, "filesystem (ABI 1, Linux 5.13),refer (ABI 2, Linux 5.19),truncate (ABI 3, Linux 6.2),ioctl_dev (ABI 5, Linux 6.10)"},
	} {
		if got := strings.Join(missing(tc.c, tc.abi), ","); got != tc.want {
			t.Errorf("missing(%+v, %d) = %q, want %q", tc.c, tc.abi, got, tc.want)
		}
	}
}

func TestUnknownMode(t *testing.T) {
	if _, err := restrict(Config{Mode: "strict"}, 7); err == nil {
		t.Fatal("unknown mode accepted")
	}
}

// listen opens a TCP listener on 127.0.0.1 (before restriction) and returns its port.
func listen(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

// connectTCP and bindTCP use plain TCP sockets on the calling thread: Go's net package may
// choose MPTCP, which Landlock does not cover.
func connectTCP(port uint16) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Connect(fd, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}})
}

func bindTCP(port uint16) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Bind(fd, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}})
}
