package proxy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// testProxy is a Host serving a listener on 127.0.0.1 passed over its Pair, the shape a run's
// sandbox sees, and the same Server on a unix socket spoken to directly (a persistent sandbox's
// Forward passes connections over one). Names resolve only through hosts (the resolver hook),
// always to loopback.
type testProxy struct {
	srv  *Server
	sock string
	addr string // 127.0.0.1:PORT, the passed listener
	log  *syncBuffer
	stop func() // closes the server and waits for it; idempotent
}

// lookupMap is a resolver hook answering from name → "ip[,ip...]".
func lookupMap(hosts map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	m := map[string][]netip.Addr{}
	for name, ips := range hosts {
		for _, ip := range strings.Split(ips, ",") {
			m[name] = append(m[name], netip.MustParseAddr(ip))
		}
	}
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := m[host]; ok {
			return a, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startProxy starts a proxy for the policy; hosts maps test names to addresses.
func startProxy(t testing.TB, pol Policy, hosts map[string]string, tweak func(*Options)) *testProxy {
	t.Helper()
	tp := &testProxy{log: &syncBuffer{}}
	opts := Options{Log: tp.log, LookupIP: lookupMap(hosts)}
	if tweak != nil {
		tweak(&opts)
	}
	h, err := StartHost(pol, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "jailproxy")
	if err != nil {
		t.Fatal(err)
	}
	srv := h.srv
	tp.srv, tp.sock = srv, filepath.Join(dir, "proxy.sock")
	ul, err := net.Listen("unix", tp.sock)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp.addr = tl.Addr().String()
	// tl passed over the Pair as init passes the ports, and closed here as init closes them.
	if err := passListeners(h.Sandbox, []net.Listener{tl}); err != nil {
		t.Fatal(err)
	}
	tl.Close()
	h.CloseSandbox()
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(ul); err != ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	})
	var once sync.Once
	tp.stop = func() {
		once.Do(func() {
			h.Close()
			wg.Wait()
			_ = os.RemoveAll(dir)
		})
	}
	t.Cleanup(tp.stop)
	return tp
}

// upstream starts a loopback HTTP test server and returns it with its port.
func upstream(t testing.TB, h http.Handler) (*httptest.Server, string) {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s, portOf(t, s.Listener.Addr())
}

func portOf(t testing.TB, a net.Addr) string {
	t.Helper()
	_, p, err := net.SplitHostPort(a.String())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hello answers every request with "hello from HOST".
var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "hello from %s", r.Host)
})

// run runs a command with the proxy environment and returns stdout, stderr and the error.
func run(t *testing.T, env []string, name string, args ...string) (string, string, error) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// curlEnv is an environment without any inherited proxy settings.
func cleanEnv() []string {
	var env []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"} {
		env = append(env, k+"=", strings.ToLower(k)+"=")
	}
	return env
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// dialTunnel opens a CONNECT tunnel to hostport through the Forward port; the returned reader
// holds anything read past the 200 answer.
func dialTunnel(t testing.TB, tp *testProxy, hostport string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("CONNECT %s: %v", hostport, err)
	}
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("CONNECT %s: %s %s", hostport, resp.Status, body)
	}
	return c, br
}

// client is an HTTP client that sends everything through the proxy, without keep-alive.
func (tp *testProxy) client() *http.Client {
	u, _ := url.Parse("http://" + tp.addr)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}}
}

// get fetches url through the proxy and returns status and body.
func (tp *testProxy) get(t testing.TB, u string) (int, string) {
	t.Helper()
	resp, err := tp.client().Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// tcpServer runs handle for every connection on a loopback listener; closed at cleanup.
func tcpServer(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return portOf(t, l.Addr())
}
