package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAllowedNameResolvingToLoopbackIsRefused(t *testing.T) {
	_, port := upstream(t, hello)
	hosts := map[string]string{"internal.test": "127.0.0.1", "mapped.test": "::ffff:127.0.0.1"}
	allow := []string{"internal.test:" + port, "mapped.test:" + port}
	strict := startProxy(t, Policy{Allow: allow}, hosts, nil)

	code, body := strict.get(t, "http://internal.test:"+port+"/")
	if code != 403 || !strings.Contains(body, "127.0.0.1 is not a public address (loopback)") || !strings.Contains(body, "--allow-private") || !strings.Contains(body, "allow_private = true") {
		t.Errorf("internal.test without allow_private: %d %q", code, body)
	}
	if code, body := strict.get(t, "http://mapped.test:"+port+"/"); code != 403 || !strings.Contains(body, "127.0.0.1 is not a public address (loopback)") {
		t.Errorf("mapped.test: %d %q", code, body)
	}
	if code, body := strict.get(t, "http://127.0.0.1:"+port+"/"); code != 403 || !strings.Contains(body, "allowed literally") {
		t.Errorf("127.0.0.1 not allowed literally: %d %q", code, body)
	}
	c, err := net.Dial("tcp", strict.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("CONNECT internal.test:" + port + " HTTP/1.1\r\nHost: x\r\n\r\n"))
	buf := make([]byte, 12)
	if _, err := c.Read(buf); err != nil || string(buf) != "HTTP/1.1 403" {
		t.Errorf("CONNECT internal.test: %q %v", buf, err)
	}

	loose := startProxy(t, Policy{Allow: allow, AllowPrivate: true}, hosts, nil)
	if code, body := loose.get(t, "http://internal.test:"+port+"/"); code != 200 {
		t.Errorf("internal.test with allow_private: %d %q", code, body)
	}

	// An allow entry that is itself a private IP literal opens that address (and only it),
	// also for names resolving to it.
	literal := startProxy(t, Policy{Allow: append(allow, "127.0.0.1:"+port)}, hosts, nil)
	for _, u := range []string{"http://127.0.0.1:" + port + "/", "http://internal.test:" + port + "/"} {
		if code, body := literal.get(t, u); code != 200 {
			t.Errorf("%s with 127.0.0.1 allowed literally: %d %q", u, code, body)
		}
	}
	if code, body := literal.get(t, "http://127.0.0.2:"+port+"/"); code != 403 {
		t.Errorf("127.0.0.2: %d %q", code, body)
	}
}

func TestIPv6Literals(t *testing.T) {
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	up := httptest.NewUnstartedServer(hello)
	up.Listener = l
	up.Start()
	defer up.Close()
	port := portOf(t, l.Addr())
	tp := startProxy(t, Policy{Allow: []string{"[::1]:" + port}}, nil, nil)
	if code, body := tp.get(t, "http://[::1]:"+port+"/"); code != 200 || body != "hello from [::1]:"+port {
		t.Errorf("[::1] allowed literally: %d %q", code, body)
	}
	// SOCKS5 with an IPv6 address (ATYP 4), as curl's socks5:// sends it.
	out, errOut, err := run(t, cleanEnv(), "curl", "-sS", "-x", "socks5://"+tp.addr, "http://[::1]:"+port+"/")
	if err != nil || out != "hello from [::1]:"+port {
		t.Errorf("socks5 to [::1]: %v %q %q", err, out, errOut)
	}
	other := startProxy(t, Policy{Allow: []string{"[::1]:1"}}, nil, nil)
	if code, body := other.get(t, "http://[::1]:"+port+"/"); code != 403 || !strings.Contains(body, "--allow-host [::1]:"+port) {
		t.Errorf("[::1] on another port: %d %q", code, body)
	}
}

// TestRebindingConnectsToTheCheckedAddress: the name answers a public address once and
// loopback the next time. Each answer is checked and only a checked address is dialed.
func TestRebindingConnectsToTheCheckedAddress(t *testing.T) {
	_, port := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close") // no pooled upstream: every request resolves anew
		hello(w, r)
	}))
	public := netip.MustParseAddr("93.184.215.14") // never contacted: the dial hook maps it to loopback
	var mu sync.Mutex
	var lookups int
	var dialed []netip.AddrPort
	tp := startProxy(t, Policy{Allow: []string{"rebind.test:" + port}}, nil, func(o *Options) {
		o.LookupIP = func(context.Context, string) ([]netip.Addr, error) {
			mu.Lock()
			defer mu.Unlock()
			lookups++
			if lookups%2 == 1 {
				return []netip.Addr{public}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		o.Dial = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, a)
			mu.Unlock()
			if a.Addr() != public {
				return nil, errors.New("test: dial of an unchecked address")
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), a.Port()).String())
		}
	})
	var ok, refused int
	for range 6 {
		switch code, _ := tp.get(t, "http://rebind.test:"+port+"/"); code {
		case 200:
			ok++
		case 403:
			refused++
		default:
			t.Errorf("status %d", code)
		}
	}
	if ok != 3 || refused != 3 {
		t.Errorf("ok %d refused %d, want 3 and 3", ok, refused)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range dialed {
		if a.Addr() != public {
			t.Errorf("dialed %s", a)
		}
	}
}

func TestMixedAnswersUseOnlyPublicAddresses(t *testing.T) {
	var dialed []netip.AddrPort
	var mu sync.Mutex
	_, port := upstream(t, hello)
	tp := startProxy(t, Policy{Allow: []string{"mixed.test:" + port}}, map[string]string{"mixed.test": "127.0.0.1,10.0.0.1,93.184.215.14"}, func(o *Options) {
		o.Dial = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			mu.Lock()
			dialed = append(dialed, a)
			mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, "tcp", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), a.Port()).String())
		}
	})
	if code, _ := tp.get(t, "http://mixed.test:"+port+"/"); code != 200 {
		t.Errorf("status %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialed) != 1 || dialed[0].Addr().String() != "93.184.215.14" {
		t.Errorf("dialed %v", dialed)
	}
}

func TestDecisionErrorsFailClosed(t *testing.T) {
	var dials int
	tp := startProxy(t, Policy{Allow: []string{"broken.test"}}, nil, func(o *Options) {
		o.LookupIP = func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("resolver exploded") }
		o.Dial = func(context.Context, netip.AddrPort) (net.Conn, error) {
			dials++
			return nil, errors.New("unreachable")
		}
	})
	if code, body := tp.get(t, "http://broken.test/"); code != http.StatusBadGateway || !strings.Contains(body, "resolver exploded") {
		t.Errorf("lookup error: %d %q", code, body)
	}
	if dials != 0 {
		t.Errorf("%d dials after failed decisions", dials)
	}
}

// TestSystemResolver: the host's resolver (here /etc/hosts) hands A records back in mapped
// form; they are judged, and dialed, as the IPv4 address they are.
func TestSystemResolver(t *testing.T) {
	_, port := upstream(t, hello)
	useSystem := func(o *Options) { o.LookupIP = nil }
	strict := startProxy(t, Policy{Allow: []string{"localhost:" + port}}, nil, useSystem)
	if code, body := strict.get(t, "http://localhost:"+port+"/"); code != 403 || !strings.Contains(body, "(loopback)") {
		t.Errorf("localhost without allow_private: %d %q", code, body)
	}
	loose := startProxy(t, Policy{Allow: []string{"localhost:" + port}, AllowPrivate: true}, nil, useSystem)
	if code, body := loose.get(t, "http://localhost:"+port+"/"); code != 200 || body != "hello from localhost:"+port {
		t.Errorf("localhost with allow_private: %d %q", code, body)
	}
}

// TestPanicFailsClosed: a bug in a decision ends that one connection, never lets it through,
// and the proxy goes on serving.
func TestPanicFailsClosed(t *testing.T) {
	_, port := upstream(t, hello)
	tp := startProxy(t, Policy{Allow: []string{"boom.test:" + port, "ok.test:" + port}, AllowPrivate: true}, nil, func(o *Options) {
		o.LookupIP = func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == "boom.test" {
				panic("resolver bug")
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
	})
	if _, _, err := socks5h(tp.addr, "boom.test", port); err == nil {
		t.Error("SOCKS5 through a panicking decision succeeded")
	}
	if !strings.Contains(tp.log.String(), "proxy error, connection closed: resolver bug") {
		t.Errorf("log %q", tp.log.String())
	}
	if code, body := tp.get(t, "http://boom.test:"+port+"/"); code != http.StatusBadGateway || !strings.Contains(body, "proxy error") {
		t.Errorf("HTTP through a panicking decision: %d %q", code, body)
	}
	if code, body := tp.get(t, "http://ok.test:"+port+"/"); code != 200 {
		t.Errorf("after the panics: %d %q", code, body)
	}
}

// TestBlackholedAddressDoesNotStarveTheNext: the first address never answers; the second is
// still tried within the dial timeout.
func TestBlackholedAddressDoesNotStarveTheNext(t *testing.T) {
	_, port := upstream(t, hello)
	black := netip.MustParseAddr("2001:4860::1") // never contacted: the dial hook just waits
	tp := startProxy(t, Policy{Allow: []string{"two.test:" + port}}, map[string]string{"two.test": "2001:4860::1,93.184.215.14"}, func(o *Options) {
		o.DialTimeout = 5 * time.Second
		o.Dial = func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			if a.Addr() == black {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), a.Port()).String())
		}
	})
	if code, body := tp.get(t, "http://two.test:"+port+"/"); code != 200 {
		t.Errorf("%d %q", code, body)
	}
}
