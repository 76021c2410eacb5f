package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
	"github.com/jail-sandbox/jail/landlock"
)

// Landlock under the namespaced sandbox: it mirrors the grants, holds on its own where the mount
// view grants too much, and covers TCP ports on the host's network.

// requireLandlock skips (or fails: testutil.Require) when the kernel lacks Landlock ABI abi.
func requireLandlock(t *testing.T, abi int) {
	t.Helper()
	testutil.Require(t, landlock.ABI() >= abi, "Landlock ABI %d", abi)
}

// TestLandlockStandsAlone gives the mount view more than Landlock: the profile's [landlock]
// read/write lists replace the mirrored grants (a test-only use), so the working directory is a
// writable bind for the mounts but outside every Landlock rule (not even /tmp, which holds it
// when TMPDIR is /tmp). The kernel must still refuse.
func TestLandlockStandsAlone(t *testing.T) {
	requireLandlock(t, 1)
	proj, _ := project(t)
	profile := filepath.Join(t.TempDir(), "overgrant.toml")
	testutil.WriteFile(t, profile, `extends = ["agent"]
[landlock]
mode = "required"
read = ["/usr", "/etc", "/proc"]
write = ["/dev"]
`)
	out, errOut, code := runJailIn(t, proj, "", "-p", profile, "--", "sh", "-c", "cat /etc/passwd >/dev/null && echo ok")
	if strings.Contains(errOut, "landlock.read: unknown key") {
		t.Fatalf("profiles lacks the [landlock] read/write keys this test needs: %s", errOut)
	}
	if code != 0 || out != "ok\n" {
		t.Fatalf("inside the Landlock grants: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, attack := range []string{"echo pwned > " + proj + "/main.py", "echo pwned > " + proj + "/new", "cat " + proj + "/main.py"} {
		errOut := refused(t, proj, attack, "-p", profile)
		if !strings.Contains(errOut, "Permission denied") {
			t.Errorf("%q: want Landlock's EACCES (the mounts allow it), got %q", attack, errOut)
		}
	}
	if got := readFile(t, filepath.Join(proj, "main.py")); got != "print('hi')\n" {
		t.Fatalf("main.py changed on the host: %q", got)
	}
	if _, err := os.Stat(filepath.Join(proj, "new")); err == nil {
		t.Fatal("a file was created on the host")
	}
}

// TestLandlockInheritedDescriptorsClosed hands jail a descriptor open for writing on a file
// outside every grant: Landlock checks at open, so the sandbox must not inherit it at all.
func TestLandlockInheritedDescriptorsClosed(t *testing.T) {
	checkInheritedDescriptorClosed(t, nil)
}

// checkInheritedDescriptorClosed hands jail (run under outer, with jailArgs) a descriptor open
// for writing on a file outside every grant, and asserts the command can neither see nor use it.
func checkInheritedDescriptorClosed(t *testing.T, outer []string, jailArgs ...string) {
	t.Helper()
	proj, outside := project(t)
	victim := filepath.Join(outside, "victim")
	withFd3 := append(append([]string{}, outer...), "sh", "-c", `exec 3>>"$0"; exec "$@"`, victim)
	args := append(append([]string{}, jailArgs...), "--", "sh", "-c", "ls /proc/self/fd; echo pwned >&3")
	out, errOut, code := runJailOuter(t, withFd3, proj, args...)
	if code == 0 || code == exitFailure {
		t.Fatalf("write to an inherited descriptor: exit %d, stderr %q", code, errOut)
	}
	if fds := strings.Fields(out); len(fds) != 4 { // 0 1 2 and ls's own directory descriptor
		t.Errorf("descriptors inside: %q, want only 0 1 2 (and ls's own)", out)
	}
	if got := readFile(t, victim); got != "original\n" {
		t.Fatalf("victim changed through an inherited descriptor: %q", got)
	}
}

// TestLandlockTCPPorts shares the host's network with tcp_connect set: Landlock allows the
// listed port and refuses the others.
func TestLandlockTCPPorts(t *testing.T) {
	requireLandlock(t, 4)
	proj, _ := project(t)
	ports := []int{tcpServer(t), tcpServer(t)}
	profile := filepath.Join(t.TempDir(), "ports.toml")
	testutil.WriteFile(t, profile, fmt.Sprintf("extends = [\"agent\"]\n[network]\nmode = \"host\"\ntcp_connect = [%d]\n", ports[0]))
	if out, errOut, code := runJailIn(t, proj, "", "-p", profile, "--", "sh", "-c", connectScript(fmt.Sprintf("/dev/tcp/127.0.0.1/%d", ports[0]))); code != 0 {
		t.Errorf("connect to the granted port: exit %d, %q %q", code, out, errOut)
	}
	out, _, code := runJailIn(t, proj, "", "-p", profile, "--", "sh", "-c", connectScript(fmt.Sprintf("/dev/tcp/127.0.0.1/%d", ports[1])))
	if code == 0 || !refusal(out) {
		t.Errorf("connect to a port outside tcp_connect: exit %d, %q; want Landlock's refusal", code, out)
	}
}

// TestLandlockScopesAbstractSockets shares the host's network, where only Landlock's scoping
// keeps the command from the host's abstract unix sockets (X11, D-Bus): connecting must fail.
func TestLandlockScopesAbstractSockets(t *testing.T) {
	requireLandlock(t, 6)
	_, err := os.Stat("/usr/bin/python3")
	testutil.Require(t, err == nil, "/usr/bin/python3 (the test's socket client)")
	proj, _ := project(t)
	name := fmt.Sprintf("jail-test-%d", os.Getpid())
	l, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	script := fmt.Sprintf(`import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect("\0%s")
    print("connected")
except OSError as e:
    print(e.strerror)
`, name)
	out, errOut, code := runJailIn(t, proj, "", "--net", "host", "--", "/usr/bin/python3", "-c", script)
	if code != 0 || strings.TrimSpace(out) != "Operation not permitted" {
		t.Errorf("connect to a host abstract socket: exit %d, stdout %q, stderr %q; want EPERM", code, out, errOut)
	}
}

// tcpServer listens on a free 127.0.0.1 port for the test's duration, accepting and closing
// every connection, and returns the port.
func tcpServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// TestLandlockRequiredMode: on a kernel with every feature jail uses, required mode runs; on an
// older one it fails with 125 naming what is missing.
func TestLandlockRequiredMode(t *testing.T) {
	proj, _ := project(t)
	profile := filepath.Join(t.TempDir(), "required.toml")
	testutil.WriteFile(t, profile, "extends = [\"agent\"]\n[landlock]\nmode = \"required\"\n")
	_, errOut, code := runJailIn(t, proj, "", "-p", profile, "--", "true")
	missing := landlock.Missing(landlock.Config{Scope: true})
	switch {
	case len(missing) == 0 && code != 0:
		t.Errorf("required mode on Landlock ABI %d: exit %d, %q", landlock.ABI(), code, errOut)
	case len(missing) > 0 && (code != exitFailure || !strings.Contains(errOut, missing[0])):
		t.Errorf("required mode lacking %q: exit %d, %q; want 125 naming it", missing, code, errOut)
	}
}
