package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pySocket is Python shared by the scripts below: recvn reads exactly n bytes (or what comes
// before the close), socks asks the proxy's SOCKS5 port for name:443 and returns the reply code.
const pySocket = `
import socket, sys
def recvn(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            break
        b += c
    return b
def socks(name):
    s = socket.create_connection(("127.0.0.1", 1080))
    s.sendall(bytes([5, 1, 0, 5, 1, 0, 3, len(name)]) + name + bytes([1, 187]))
    r = recvn(s, 12)
    return r[3] if len(r) > 3 else -1
`

// TestProxyQuotesWhatTheSandboxNames: names a sandboxed client sends to the proxy (a SOCKS5
// domain, a CONNECT target) with terminal escapes — a window title, a screen clear, a forged
// line of jail's — reach jail's stderr quoted, with no control byte. The script prints the
// same names raw on its own stdout, which shows they were sent as they are.
func TestProxyQuotesWhatTheSandboxNames(t *testing.T) {
	script := pySocket + `
evil = [b"\x1b]0;pwned\x07\x1b[2J\rjail: the command finished cleanly\n.test", "\u009b31mred.test".encode()]
for name in evil:
    sys.stdout.buffer.write(name + b" -> %d\n" % socks(name))
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall("CONNECT \u009b2J.test:443 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
sys.stdout.buffer.write(s.recv(100).split(b"\r\n")[0] + b"\n")
`
	out, errOut, code := runJail(t, "--allow-host", "*.test", "--", "python3", "-c", script)
	if code != 0 || !strings.Contains(out, "\x1b]0;pwned\x07") || strings.Count(out, " -> 2\n") != 2 || !strings.Contains(out, "HTTP/1.1 403") {
		t.Fatalf("the script did not send the names raw or was not refused: %d %q %q", code, out, errOut)
	}
	for i := 0; i < len(errOut); i++ {
		if c := errOut[i]; c < ' ' && c != '\n' || c == 0x7f || c == 0xc2 && i+1 < len(errOut) && errOut[i+1] >= 0x80 && errOut[i+1] < 0xa0 {
			t.Fatalf("control byte %#x at %d in jail's stderr %q", c, i, errOut)
		}
	}
	for _, want := range []string{
		`jail: network: denied "\x1b]0;pwned\a\x1b[2J\rjail: the command finished cleanly\n.test:443"`,
		`jail: network: denied "\u009b31mred.test:443"`,
		`jail: network: denied "\u009b2J.test:443"`,
		`jail: network: 3 connection(s) denied, to "\x1b]0;pwned\a\x1b[2J\rjail: the command finished cleanly\n.test", "\u009b31mred.test", "\u009b2J.test" (not a valid host); no setting allows a malformed host`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %s:\n%s", want, errOut)
		}
	}
}

// holdScript opens n connections to the proxy's HTTP port, each sending most of a 60 KB header
// and never the end, prints "ready", waits for a line on stdin, then prints what came back:
// how many got nothing, and how many a 503 naming each limit.
const holdScript = pySocket + `
import resource
n = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held = []
for i in range(n):
    try:
        s = socket.create_connection(("127.0.0.1", 3128))
        s.settimeout(5)
        s.sendall(b"GET http://x.test/ HTTP/1.1\r\nX-Pad: " + b"p" * 60000)
        held.append(s)
    except OSError:
        pass
print("ready", flush=True)
sys.stdin.readline()
seen = {}
for s in held:
    s.setblocking(False)
    try:
        b = s.recv(4096)
    except OSError:
        b = b""
    key = "nothing" if not b else b.split(b"\r\n")[0].decode() + "".join(" " + k for k in ("max_connections", "max_buffer") if k.encode() in b)
    seen[key] = seen.get(key, 0) + 1
print(sorted(seen.items()))
`

// holdRun runs holdScript with n connections under jail with args, and returns the peak RSS of
// jail's host process (where the proxy runs) while they are held, what the script printed,
// and jail's stderr.
func holdRun(t *testing.T, n int, args ...string) (peakKB int, out, errOut string) {
	t.Helper()
	argv := append(append([]string{"--allow-host", "x.test"}, args...), "--", "python3", "-c", holdScript, strconv.Itoa(n))
	cmd := exec.Command(jailBin, argv...)
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("script: %q %v; stderr %s", line, err, errb.String())
	}
	// The proxy reads what the script sent at its own pace: wait until its peak stops growing.
	for last := -1; peakKB != last; time.Sleep(300 * time.Millisecond) {
		last, peakKB = peakKB, hostPeakRSS(t, cmd.Process.Pid)
	}
	_, _ = io.WriteString(stdin, "\n")
	rest, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("jail: %v; stderr %s", err, errb.String())
	}
	return peakKB, string(rest), errb.String()
}

// hostPeakRSS is VmHWM of jail's host process: the child of the waiter (the process the
// caller started) that is not the sandbox's init.
func hostPeakRSS(t *testing.T, waiter int) int {
	t.Helper()
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", waiter))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, pid := range strings.Fields(string(b)) {
			status, err := os.ReadFile("/proc/" + pid + "/status")
			if err != nil || strings.Contains(string(status), "jail-init") {
				continue
			}
			for _, l := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
					kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
					return kb
				}
			}
		}
	}
	t.Fatal("jail's host process not found")
	return 0
}

// TestProxyHostMemoryBounded: 2000 connections from inside the sandbox, each holding 60 KB of
// a header that never ends, cost the host process what the proxy's limits allow, not 60 KB
// each; with the limits raised out of the way, the same attack takes the host's memory up.
func TestProxyHostMemoryBounded(t *testing.T) {
	const bound = 80 << 10 // KB; measured about 40 MB with the defaults, 215 MB without limits
	peak, out, errOut := holdRun(t, 2000)
	t.Logf("host peak RSS with the default limits: %d KB; %s", peak, out)
	if peak > bound {
		t.Errorf("host peak RSS %d KB with the default limits, want at most %d", peak, bound)
	}
	if !strings.Contains(out, "503 Service Unavailable max_connections") ||
		!strings.Contains(errOut, "raise [network] max_connections (now 512) in the profile") ||
		!strings.Contains(errOut, "raise [network] max_buffer (now 16777216 bytes) in the profile") {
		t.Errorf("refusals: %s\n%s", out, errOut)
	}

	dir := t.TempDir()
	unlimited := filepath.Join(dir, "unlimited.toml")
	if err := os.WriteFile(unlimited, []byte("extends = [\"agent\"]\n[network]\nmode = \"proxy\"\nmax_connections = 100000\nmax_buffer = 100000000000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	peak, out, _ = holdRun(t, 2000, "-p", unlimited)
	t.Logf("host peak RSS without limits: %d KB; %s", peak, out)
	if peak <= bound {
		t.Errorf("without limits the attack held only %d KB: the test cannot tell", peak)
	}
}

// TestProxyRefusesOverLimitConnections: with max_connections = 8 and eight connections held,
// each further one is refused in its own protocol — HTTP with a 503 naming the key, SOCKS5
// with "not allowed" — and jail's stderr and report say which key to raise.
func TestProxyRefusesOverLimitConnections(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "eight.toml")
	if err := os.WriteFile(profile, []byte("extends = [\"agent\"]\n[network]\nmode = \"proxy\"\nallow = [\"x.test\"]\nmax_connections = 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := pySocket + `
import time
held = []
for i in range(8):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"GET http://x.test/ HTTP/1.1\r\n")
    held.append(s)
time.sleep(0.5)
for i in range(3):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"GET http://x.test/ HTTP/1.1\r\nHost: x.test\r\n\r\n")
    b = recvn(s, 4096)
    print(b.split(b"\r\n")[0].decode(), b"max_connections (now 8)" in b)
print("socks", socks(b"x.test"))
`
	r := runJailReport(t, "-p", profile, "--", "python3", "-c", script)
	want := strings.Repeat("HTTP/1.1 503 Service Unavailable True\n", 3) + "socks 2\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d, stdout %q, want %q; stderr %q", r.code, r.stdout, want, r.stderr)
	}
	if strings.Count(r.stderr, "jail: network: refused a connection: 8 connections through the proxy are open already (to allow more at once, raise [network] max_connections (now 8) in the profile)") != 1 ||
		!strings.Contains(r.stderr, "jail: network: 4 connection(s) denied (too many connections at once); to allow more at once, raise [network] max_connections (now 8) in the profile") {
		t.Errorf("stderr %q", r.stderr)
	}
	n := r.report.Network
	if n == nil || len(n.Denied) != 1 || n.Denied[0].Kind != "connections" || n.Denied[0].Count != 4 || n.MaxConnections != 8 || n.PeakConnections != 8 {
		t.Errorf("report network %+v", n)
	}
}

// TestProxyReportsResolvedNames: --report lists the names the proxy looked up on the host,
// once each, and not the names it refused by the allow list (those are never looked up).
func TestProxyReportsResolvedNames(t *testing.T) {
	srv := helloServer(t)
	r := runJailReport(t, "--allow-host", "localhost:"+srv, "--allow-private", "--", "sh", "-c",
		`for u in localhost:`+srv+` localhost:`+srv+` other.test; do curl -sS --noproxy "" http://$u/ >/dev/null; done; true`)
	n := r.report.Network
	if n == nil || len(n.Resolved) != 1 || n.Resolved[0] != "localhost" || len(n.Denied) != 1 || n.Denied[0].Host != "other.test" {
		t.Errorf("report network %+v; stderr %q", n, r.stderr)
	}
}

// helloServer is a loopback HTTP server on the host; it returns its port.
func helloServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the host")
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}
