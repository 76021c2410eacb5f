package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
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
