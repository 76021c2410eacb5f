package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Network mode "proxy" through the real binary: a host-side test server on 127.0.0.1 is
// reachable from inside only through jail's proxy, only when allowed, and (being loopback)
// only with --allow-private. Nothing here leaves the machine.
func TestProxyMode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the host")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	target := "localhost:" + port
	// NO_PROXY names localhost (the sandbox's own); --noproxy "" sends it to the proxy anyway.
	fetch := `curl -sS --noproxy "" http://` + target + `/`

	out, errOut, code := runJail(t, "--allow-host", target, "--allow-private", "--", "sh", "-c", fetch)
	if code != 0 || out != "hello from the host" {
		t.Errorf("allowed through the proxy: %d %q %q", code, out, errOut)
	}
	out, errOut, code = runJail(t, "--allow-host", target, "--allow-private", "--", "sh", "-c",
		`curl -sS --noproxy "" -x "$ALL_PROXY" http://`+target+`/`)
	if code != 0 || out != "hello from the host" {
		t.Errorf("allowed through SOCKS5: %d %q %q", code, out, errOut)
	}

	out, errOut, code = runJail(t, "--allow-host", target, "--", "sh", "-c", fetch)
	if !strings.Contains(out, "127.0.0.1 is not a public address (loopback)") || !strings.Contains(out, "--allow-private") ||
		!strings.Contains(errOut, "jail: network: denied "+target) || !strings.Contains(errOut, "1 connection(s) denied") {
		t.Errorf("loopback without --allow-private: %d %q %q", code, out, errOut)
	}

	out, errOut, _ = runJail(t, "--allow-host", "example.com", "--", "sh", "-c", `curl -sS http://other.test/`)
	if !strings.Contains(out, `[network] allow = ["other.test"]`) || !strings.Contains(out, "--allow-host other.test") ||
		strings.Count(errOut, "denied other.test:80") != 1 {
		t.Errorf("denied host: %q %q", out, errOut)
	}
	_, errOut, _ = runJail(t, "-q", "--allow-host", "example.com", "--", "sh", "-c", `curl -sS http://other.test/ >/dev/null`)
	if strings.Contains(errOut, "jail:") {
		t.Errorf("-q still printed: %q", errOut)
	}

	// A direct connection from inside reaches neither the host's loopback nor anything else.
	_, errOut, code = runJail(t, "--allow-host", target, "--allow-private", "--", "curl", "-sS", "--noproxy", "*", "--max-time", "5", "http://"+srv.Listener.Addr().String()+"/")
	if code != 7 {
		t.Errorf("direct connection: exit %d %q", code, errOut)
	}
}

// TestProxyServesAfterShedding: a host that stays for a run gives memory back 100 ms into it and
// 100 ms after the proxy's last connection ended (jail/shed.go, spawn/shed.c): requests made
// after each still go through, and so does the report the host writes at the end.
func TestProxyServesAfterShedding(t *testing.T) {
	port := helloServer(t)
	target := "localhost:" + port
	fetch := `curl -sS --noproxy "" http://` + target + `/; echo`
	report := filepath.Join(t.TempDir(), "report.json")
	out, errOut, code := runJail(t, "--allow-host", target, "--allow-private", "--report", report, "--",
		"sh", "-c", "sleep 0.3; "+fetch+"; sleep 0.3; "+fetch)
	if code != 0 || strings.Count(out, "hello") != 2 {
		t.Errorf("exit %d, out %q, stderr %q", code, out, errOut)
	}
	var rep struct {
		Usage struct{ Of string }
	}
	if b, err := os.ReadFile(report); err != nil || json.Unmarshal(b, &rep) != nil || rep.Usage.Of != "command" {
		t.Errorf("report %s %v", b, err)
	}
}

// TestProxyDenialsNameTheirChange: for each kind of refusal, what the command gets (the 403
// body; for SOCKS5 a bare refusal), jail's line when it refuses, its closing summary and the
// report all name the one change that would allow it, and never another's. An allowed name
// that resolves to loopback is the case new users hit: its summary must not send them to
// --allow-host for a host already allowed.
func TestProxyDenialsNameTheirChange(t *testing.T) {
	port := helloServer(t)
	dir := t.TempDir()
	denying := filepath.Join(dir, "deny.toml")
	if err := os.WriteFile(denying, []byte("extends = [\"agent\"]\n[network]\nmode = \"proxy\"\nallow = [\"localhost:"+port+"\"]\ndeny = [\"localhost\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	get := `curl -sS --noproxy "" http://localhost:` + port + `/; curl -sS --noproxy "" -x "$ALL_PROXY" http://localhost:` + port + `/ 2>&1; true`
	cases := []struct {
		name   string
		args   []string
		kind   string
		change string
		not    []string
	}{
		{"private", []string{"--allow-host", "localhost:" + port}, "private",
			"set [network] allow_private = true in the profile, or run jail with --allow-private", []string{"--allow-host", "allow = ["}},
		{"not allowed", []string{"--allow-host", "example.com"}, "not-allowed",
			`add it to the profile: [network] allow = ["localhost:` + port + `"], or run jail with --allow-host localhost:` + port, []string{"allow_private", "deny"}},
		{"deny entry", []string{"-p", denying}, "deny-entry",
			`deny wins over allow: remove "localhost" from [network] deny to allow it`, []string{"--allow-host", "allow_private"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runJailReport(t, append(c.args, "--", "sh", "-c", get)...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			n := r.report.Network
			if len(lines) != 2 || n == nil || len(n.Denied) != 1 || string(n.Denied[0].Kind) != c.kind || n.Denied[0].Count != 2 ||
				!strings.Contains(r.stdout, "(2)") { // curl's report of SOCKS5's "not allowed"
				t.Fatalf("stdout %q, stderr %q, report %+v", r.stdout, r.stderr, n)
			}
			for what, text := range map[string]string{"403 body": r.stdout, "denial line": lines[0], "summary": lines[1], "report": n.Denied[0].Hint} {
				if !strings.Contains(text, c.change) {
					t.Errorf("%s %q lacks %q", what, text, c.change)
				}
				for _, other := range c.not {
					if strings.Contains(text, other) {
						t.Errorf("%s %q names %q", what, text, other)
					}
				}
			}
		})
	}
}
