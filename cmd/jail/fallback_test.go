package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jail-sandbox/jail/internal/testutil"
)

// These tests run jail where the kernel refuses user namespaces, for real: inside an outer user
// namespace whose user.max_user_namespaces is 0 (the sysctl is per user namespace, so this needs
// no privilege). jail then runs as uid 0 of that namespace, holding its capabilities, and must
// drop them itself. They check that `--fallback landlock` is never silent, refuses when the plan
// relies on protections it cannot give, and that what must fail does fail.

// noUserNSPrefix is the outer sandbox: it makes user namespaces unavailable, then runs argv.
var noUserNSPrefix = []string{"unshare", "--user", "--map-root-user", "sh", "-c",
	`echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh"}

// noCapsPrefix is the outer sandbox with every capability gone before jail starts, as for an
// ordinary user (or a stripped root) outside any user namespace: jail cannot drop what it does
// not hold, and must not need to.
var noCapsPrefix = []string{"unshare", "--user", "--map-root-user", "sh", "-c",
	`echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"`, "sh"}

// requireNoUserNSSandbox skips (or fails: testutil.Require) where the outer sandbox cannot be
// built: no unshare(1), or no user namespaces at all.
func requireNoUserNSSandbox(t *testing.T) {
	t.Helper()
	args := append(append([]string{}, noUserNSPrefix[1:]...), "sh", "-c", "unshare --user true 2>/dev/null && exit 3; exit 0")
	err := exec.Command(noUserNSPrefix[0], args...).Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		t.Fatal("the outer sandbox did not stop user namespaces")
	}
	testutil.Require(t, err == nil, "an outer user namespace with max_user_namespaces=0 (%v)", err)
}

// runJailNoUserNS runs jail with args in dir inside the outer sandbox.
func runJailNoUserNS(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runJailOuter(t, noUserNSPrefix, dir, args...)
}

// runJailOuter runs jail with args in dir under the outer sandbox prefix.
func runJailOuter(t *testing.T, prefix []string, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runJailWith(t, runOpts{dir: dir, wrap: prefix}, args...)
}

// fallbackRun runs script under sh with --fallback landlock --allow-weaker (plus extra flags)
// and returns its stdout; jail itself failing fails the test.
func fallbackRun(t *testing.T, dir, script string, extra ...string) (string, int) {
	t.Helper()
	args := append([]string{"--fallback", "landlock", "--allow-weaker"}, extra...)
	out, errOut, code := runJailNoUserNS(t, dir, append(args, "--", "sh", "-c", script)...)
	if code == exitFailure {
		t.Fatalf("%q: jail failed (125): %s", script, errOut)
	}
	if !strings.Contains(errOut, "falling back to Landlock") {
		t.Errorf("the fallback was silent: stderr %q", errOut)
	}
	return out, code
}

func TestNoUserNSWithoutFallbackFails(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, _ := project(t)
	_, errOut, code := runJailNoUserNS(t, proj, "--", "sh", "-c", "touch ran")
	if code != exitFailure {
		t.Fatalf("exit %d, want 125; stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, "max_user_namespaces") {
		t.Errorf("the error does not name the cause (user.max_user_namespaces=0): %q", errOut)
	}
	if _, err := os.Stat(filepath.Join(proj, "ran")); err == nil {
		t.Fatal("the command ran")
	}
}

func TestFallbackAgentRefusesListingLosses(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, _ := project(t)
	_, errOut, code := runJailNoUserNS(t, proj, "--fallback", "landlock", "--", "sh", "-c", "touch ran")
	if code != exitFailure {
		t.Fatalf("agent under --fallback landlock without --allow-weaker: exit %d, want 125; stderr %q", code, errOut)
	}
	for _, want := range []string{
		"falling back to Landlock",
		"max_user_namespaces=0",
		"cannot keep: pid isolation",
		"cannot keep: read-only " + proj + "/.git:",
		"cannot keep: protect " + proj + "/.envrc:",
		"refused:",
		"--allow-weaker",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(proj, "ran")); err == nil {
		t.Fatal("the command ran although the fallback refused")
	}
}

func TestFallbackFilesystem(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, outside := project(t)
	ro := t.TempDir()
	testutil.WriteFile(t, filepath.Join(ro, "visible"), "ok\n")
	testutil.WriteFile(t, filepath.Join(ro, "secret/key"), "s3cret\n")
	testutil.WriteFile(t, filepath.Join(ro, "deep/er/token"), "t0ken\n")
	testutil.WriteFile(t, filepath.Join(ro, "deep/er/fine"), "fine\n")
	victim := filepath.Join(outside, "victim")
	flags := []string{"--ro", ro, "--hide", filepath.Join(ro, "secret"), "--hide", filepath.Join(ro, "deep/er/token")}

	out, code := fallbackRun(t, proj, "echo new > out.txt && cat "+ro+"/visible "+ro+"/deep/er/fine", flags...)
	if code != 0 || out != "ok\nfine\n" {
		t.Fatalf("granted reads and writes: exit %d, stdout %q", code, out)
	}
	if got := readFile(t, filepath.Join(proj, "out.txt")); got != "new\n" {
		t.Fatalf("write in the working directory: out.txt = %q", got)
	}
	for _, attack := range []string{
		"echo pwned > " + victim,                    // not granted
		"cat " + victim,                             // not granted
		"echo pwned > " + ro + "/visible",           // read-only grant
		"truncate -s 0 " + ro + "/visible",          // Landlock alone refuses truncate there
		"cat " + ro + "/secret/key",                 // hidden dir beneath a read grant
		"cat " + ro + "/deep/er/token",              // hidden file, two levels down
		"echo pwned > " + ro + "/secret/key",        //
		"echo pwned > /etc/jail-fallback-pwned",     // system directories
		"echo pwned > /tmp/jail-fallback-pwned",     // /tmp is the sandbox's own tmpfs: not the host's
		"mv " + proj + "/main.py " + outside + "/x", // move out of the write grant
	} {
		if _, code := fallbackRun(t, proj, attack, flags...); code == 0 {
			t.Errorf("%q succeeded under the fallback", attack)
		}
	}
	if got := readFile(t, victim); got != "original\n" {
		t.Fatalf("victim changed on the host: %q", got)
	}
	for _, p := range []string{"/etc/jail-fallback-pwned", "/tmp/jail-fallback-pwned", filepath.Join(outside, "x")} {
		if _, err := os.Stat(p); err == nil {
			os.Remove(p)
			t.Errorf("%s was created on the host", p)
		}
	}
	// The private TMPDIR stands in for the /tmp tmpfs.
	if out, code := fallbackRun(t, proj, `echo t > "$TMPDIR/x" && cat "$TMPDIR/x" && echo "$TMPDIR"`); code != 0 || !strings.HasPrefix(out, "t\n") {
		t.Errorf("private TMPDIR: exit %d, stdout %q", code, out)
	}
}

func TestFallbackNetworkNone(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, _ := project(t)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan bool, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
		accepted <- err == nil
	}()
	port := l.Addr().(*net.TCPAddr).Port
	for _, attack := range []string{fmt.Sprintf("/dev/tcp/127.0.0.1/%d", port), "/dev/udp/127.0.0.1/53"} {
		out, code := fallbackRun(t, proj, connectScript(attack))
		if code == 0 || !refusal(out) {
			t.Errorf("%s with network none: exit %d, %q; want a refusal (EPERM/EACCES)", attack, code, out)
		}
	}
	l.Close()
	if <-accepted {
		t.Error("the host listener accepted a connection from the sandbox")
	}
}

// connectScript opens a bash /dev/tcp or /dev/udp path, its error on stdout.
func connectScript(dev string) string {
	return "bash -c 'exec 3<>" + dev + "' 2>&1"
}

// refusal reports whether a command's message is the kernel refusing it (not, say, a typo).
func refusal(msg string) bool {
	return strings.Contains(msg, "Operation not permitted") || strings.Contains(msg, "Permission denied")
}

func TestFallbackTCPPorts(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, _ := project(t)
	allowed, denied := tcpServer(t), tcpServer(t)
	profile := filepath.Join(t.TempDir(), "ports.toml")
	testutil.WriteFile(t, profile, fmt.Sprintf("extends = [\"agent\"]\n[network]\nmode = \"host\"\ntcp_connect = [%d]\n", allowed))
	if out, code := fallbackRun(t, proj, connectScript(fmt.Sprintf("/dev/tcp/127.0.0.1/%d", allowed)), "-p", profile); code != 0 {
		t.Errorf("connect to the granted port %d failed: %q", allowed, out)
	}
	out, code := fallbackRun(t, proj, connectScript(fmt.Sprintf("/dev/tcp/127.0.0.1/%d", denied)), "-p", profile)
	if code == 0 || !refusal(out) {
		t.Errorf("connect to port %d outside tcp_connect: exit %d, %q; want a refusal", denied, code, out)
	}
}

func TestFallbackSignalsHostProcess(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, _ := project(t)
	host := exec.Command("sleep", "60")
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer host.Process.Kill()
	if _, code := fallbackRun(t, proj, fmt.Sprintf("kill -TERM %d", host.Process.Pid)); code == 0 {
		t.Error("kill of a host process succeeded")
	}
	if err := host.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the host process is gone: %v", err)
	}
	// Inside its own domain the command still signals its children.
	if _, code := fallbackRun(t, proj, "sleep 60 & kill -TERM $!"); code != 0 {
		t.Errorf("kill of the command's own child failed: exit %d", code)
	}
	// Nor can it signal jail, its parent, whose leader thread stays outside the command's domain
	// (restrict.GoRestricting): which thread Go restricts varies from run to run, so several runs.
	for range 10 {
		if out, _ := fallbackRun(t, proj, "kill -STOP $PPID && echo stopped; kill -CONT $PPID"); out != "" {
			t.Fatalf("the command stopped jail: %q", out)
		}
	}
}

func TestFallbackStatusAndSession(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, _ := project(t)
	if _, code := fallbackRun(t, proj, "exit 7"); code != 7 {
		t.Errorf("exit status: got %d, want 7", code)
	}
	// A new session (no controlling terminal to push input into), and no capability left.
	out, _ := fallbackRun(t, proj, `ps -o sid= -p $$; echo $$; grep -E '^Cap(Prm|Eff|Bnd|Amb):' /proc/self/status; grep NoNewPrivs /proc/self/status`)
	f := strings.Fields(out)
	if len(f) < 2 || f[0] != f[1] {
		t.Errorf("the command is not a session leader: %q", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Cap") && !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("capability left: %q", line)
		}
	}
	if !strings.Contains(out, "NoNewPrivs:\t1") {
		t.Errorf("no_new_privs not set: %q", out)
	}
}

func TestFallbackWithoutCapabilities(t *testing.T) {
	requireNoUserNSSandbox(t)
	_, err := exec.LookPath("setpriv")
	testutil.Require(t, err == nil, "setpriv(1)")
	proj, outside := project(t)
	victim := filepath.Join(outside, "victim")
	script := "echo new > out.txt && grep -c '^Cap...:.0000000000000000$' /proc/self/status && echo pwned > " + victim
	out, errOut, code := runJailOuter(t, noCapsPrefix, proj, "--fallback", "landlock", "--allow-weaker", "--", "sh", "-c", script)
	if code == 0 || code == exitFailure {
		t.Fatalf("exit %d, want the write outside refused; stdout %q stderr %q", code, out, errOut)
	}
	if out != "5\n" {
		t.Errorf("capability sets not all empty: %q", out)
	}
	if got := readFile(t, filepath.Join(proj, "out.txt")); got != "new\n" {
		t.Errorf("write in the working directory: %q", got)
	}
	if got := readFile(t, victim); got != "original\n" {
		t.Errorf("victim changed: %q", got)
	}
}

// noSetpcapPrefix is the outer sandbox with CAP_SETPCAP alone out of jail's reach, as a container
// that adds capabilities but not that one (Podman --cap-add SYS_ADMIN --user 1000) leaves it: jail
// holds capabilities it must drop, but may not shrink its bounding set.
var noSetpcapPrefix = []string{"unshare", "--user", "--map-root-user", "sh", "-c",
	`echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --bounding-set=-setpcap -- "$@"`, "sh"}

func TestFallbackWithoutSetpcap(t *testing.T) {
	requireNoUserNSSandbox(t)
	_, err := exec.LookPath("setpriv")
	testutil.Require(t, err == nil, "setpriv(1)")
	proj, _ := project(t)
	out, errOut, code := runJailOuter(t, noSetpcapPrefix, proj, "--fallback", "landlock", "--allow-weaker", "--",
		"sh", "-c", "grep -c '^Cap\\(Inh\\|Prm\\|Eff\\|Amb\\):.0000000000000000$' /proc/self/status; grep NoNewPrivs /proc/self/status")
	if code != 0 {
		t.Fatalf("exit %d, want the fallback to run; stderr %q", code, errOut)
	}
	if out != "4\nNoNewPrivs:\t1\n" {
		t.Errorf("capabilities held, or no_new_privs unset: %q", out)
	}
	if !strings.Contains(errOut, "jail: fallback: the capability bounding set stays") {
		t.Errorf("the bounding set kept is not reported: %q", errOut)
	}
}

// TestFallbackQuietIsOneLine: with -q the fallback's banner and its list are one line, which
// still names every protection lost, and the profile's warnings one more at most.
func TestFallbackQuietIsOneLine(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, _ := project(t)
	_, errOut, code := runJailNoUserNS(t, proj, "-q", "--fallback", "landlock", "--allow-weaker", "--", "true")
	if code != 0 {
		t.Fatalf("exit %d; stderr %q", code, errOut)
	}
	var banner []string
	warnings := 0
	for line := range strings.SplitSeq(strings.TrimSuffix(errOut, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "jail: warning: "):
			warnings++
		default:
			banner = append(banner, line)
		}
	}
	if len(banner) != 1 || warnings > 1 {
		t.Fatalf("-q: %d warning lines and %d others, want at most 1 and 1:\n%s", warnings, len(banner), errOut)
	}
	for _, want := range []string{"max_user_namespaces=0", "falling back to Landlock", "protect (", "pid isolation", "without -q"} {
		if !strings.Contains(banner[0], want) {
			t.Errorf("the one line lacks %q: %q", want, banner[0])
		}
	}
}

// TestFallbackUnderSeccompFilter runs jail inside jail: the outer sandbox's seccomp filter
// refuses new user namespaces, as a container runtime's default profile does.
func TestFallbackUnderSeccompFilter(t *testing.T) {
	proj, outside := project(t)
	victim := filepath.Join(outside, "victim")
	script := "echo new > out.txt && echo pwned > " + victim
	out, errOut, code := runJailIn(t, proj, "", "--ro", jailBin, "--", jailBin, "--fallback", "landlock", "--allow-weaker", "--", "sh", "-c", script)
	if !strings.Contains(errOut, "seccomp filter") || !strings.Contains(errOut, "falling back to Landlock") {
		t.Errorf("the inner jail does not name the seccomp filter as the cause: %q", errOut)
	}
	if code == 0 || code == exitFailure {
		t.Fatalf("exit %d, want the write outside refused; stdout %q stderr %q", code, out, errOut)
	}
	if got := readFile(t, filepath.Join(proj, "out.txt")); got != "new\n" {
		t.Errorf("write in the working directory: %q", got)
	}
}

// TestFallbackInheritedDescriptorsClosed hands jail a descriptor open for writing on a file
// outside every grant: without an init to close it, the fallback must not pass it on.
func TestFallbackInheritedDescriptorsClosed(t *testing.T) {
	requireNoUserNSSandbox(t)
	checkInheritedDescriptorClosed(t, noUserNSPrefix, "--fallback", "landlock", "--allow-weaker")
}

func TestFallbackTimeout(t *testing.T) {
	requireNoUserNSSandbox(t)
	proj, _ := project(t)
	_, errOut, code := runJailNoUserNS(t, proj, "--fallback", "landlock", "--allow-weaker", "--timeout", "1s", "--", "sh", "-c", "sleep 30")
	if code != 124 {
		t.Errorf("exit %d, want 124; stderr %q", code, errOut)
	}
}

func TestDoctorNamesUserNSCause(t *testing.T) {
	requireNoUserNSSandbox(t)
	out, _, code := runJailNoUserNS(t, t.TempDir(), "doctor")
	if code != 1 {
		t.Errorf("jail doctor where user namespaces are refused: exit %d, want 1", code)
	}
	for _, want := range []string{"FAIL  user namespaces", "user.max_user_namespaces=0", "sysctl -w user.max_user_namespaces", "--fallback landlock"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}
