package proxy

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingUpstream is a loopback HTTP server that counts the connections it accepted.
func countingUpstream(t *testing.T, h http.Handler) (port string, conns *atomic.Int32) {
	t.Helper()
	conns = &atomic.Int32{}
	s := httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return portOf(t, s.Listener.Addr()), conns
}

// rawClient is one client connection to the proxy, speaking HTTP by hand.
type rawClient struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, tp *testProxy) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{c, bufio.NewReader(c)}
}

// do sends one raw request and reads its answer.
func (c *rawClient) do(t *testing.T, method, req string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	return c.read(t, method)
}

func (c *rawClient) read(t *testing.T, method string) (*http.Response, string) {
	t.Helper()
	resp, err := http.ReadResponse(c.r, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, string(b)
}

// TestKeepAlive: requests on one sandbox connection reuse one upstream connection, and each is
// decided on its own: a denied host on a kept connection is refused, the next connection works.
func TestKeepAlive(t *testing.T) {
	port, conns := countingUpstream(t, hello)
	tp := startProxy(t, Policy{Allow: []string{"ka.test:" + port}, AllowPrivate: true},
		map[string]string{"ka.test": "127.0.0.1", "other.test": "127.0.0.1"}, nil)
	c := dialRaw(t, tp)
	for i := range 20 {
		resp, body := c.do(t, "GET", fmt.Sprintf("GET http://ka.test:%s/%d HTTP/1.1\r\nHost: ka.test:%s\r\n\r\n", port, i, port))
		if resp.StatusCode != 200 || body != "hello from ka.test:"+port || resp.Close {
			t.Fatalf("request %d: %s %q close=%v", i, resp.Status, body, resp.Close)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 requests on one kept connection took %d upstream connections", n)
	}
	resp, body := c.do(t, "GET", "GET http://other.test:"+port+"/ HTTP/1.1\r\nHost: other.test\r\n\r\n")
	if resp.StatusCode != 403 || !strings.Contains(body, "--allow-host other.test:"+port) || !resp.Close {
		t.Errorf("denied host on a kept connection: %s %q", resp.Status, body)
	}
	// The kept upstream connection serves the next sandbox connection (once it is back in the
	// pool: it goes back after the answer went out).
	waitKept(t, tp, 1)
	if code, _ := tp.get(t, "http://ka.test:"+port+"/"); code != 200 || conns.Load() != 1 {
		t.Errorf("new client connection: %d, %d upstream connections", code, conns.Load())
	}
	// Connection: close from the client ends its connection, not the upstream's.
	waitKept(t, tp, 1)
	resp, _ = dialRaw(t, tp).do(t, "GET", "GET http://ka.test:"+port+"/ HTTP/1.1\r\nHost: ka.test\r\nConnection: close\r\n\r\n")
	if !resp.Close || conns.Load() != 1 {
		t.Errorf("Connection: close: close=%v, %d upstream connections", resp.Close, conns.Load())
	}
}

// waitKept waits until the proxy keeps n idle upstream connections.
func waitKept(t *testing.T, tp *testProxy, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d kept upstream connections", n), func() bool {
		tp.srv.pool.mu.Lock()
		defer tp.srv.pool.mu.Unlock()
		return tp.srv.pool.n == n
	})
}

// TestPoolKeyedByName: two names for the same upstream address never share a kept connection,
// so a connection made for one allowed name cannot carry requests for another.
func TestPoolKeyedByName(t *testing.T) {
	port, conns := countingUpstream(t, hello)
	tp := startProxy(t, Policy{Allow: []string{"a.test:" + port, "b.test:" + port}, AllowPrivate: true},
		map[string]string{"a.test": "127.0.0.1", "b.test": "127.0.0.1"}, nil)
	c := dialRaw(t, tp)
	for i := range 6 {
		name := []string{"a.test", "b.test"}[i%2]
		if resp, body := c.do(t, "GET", "GET http://"+name+":"+port+"/ HTTP/1.1\r\nHost: x\r\n\r\n"); body != "hello from "+name+":"+port {
			t.Fatalf("%s: %s %q", name, resp.Status, body)
		}
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("%d upstream connections for two names, want 2", n)
	}
}

// TestBodiesAndFraming: bodies of every framing go through intact both ways on one kept
// connection; answers without a body leave the connection usable.
func TestBodiesAndFraming(t *testing.T) {
	port, conns := countingUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo": // the request body back, chunked (no Content-Length, flushed), with a trailer
			w.Header().Set("Trailer", "X-Sum")
			h := sha256.New()
			b, _ := io.ReadAll(io.TeeReader(r.Body, h))
			for len(b) > 0 {
				n := min(len(b), 7000)
				_, _ = w.Write(b[:n])
				w.(http.Flusher).Flush()
				b = b[n:]
			}
			w.Header().Set("X-Sum", fmt.Sprintf("%x", h.Sum(nil)))
		case "/nothing":
			w.WriteHeader(http.StatusNoContent)
		case "/same":
			w.WriteHeader(http.StatusNotModified)
		default:
			fmt.Fprint(w, "plain")
		}
	}))
	tp := startProxy(t, Policy{Allow: []string{"f.test:" + port}, AllowPrivate: true}, map[string]string{"f.test": "127.0.0.1"}, nil)
	c := dialRaw(t, tp)
	url := "http://f.test:" + port
	big := strings.Repeat("0123456789abcdef", 40000) // 640 KB, more than any buffer
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(big)))

	// Content-Length body, chunked answer with a trailer.
	resp, body := c.do(t, "POST", fmt.Sprintf("POST %s/echo HTTP/1.1\r\nHost: f.test\r\nContent-Length: %d\r\n\r\n%s", url, len(big), big))
	if body != big || resp.Trailer.Get("X-Sum") != sum {
		t.Errorf("Content-Length body: %d bytes back, trailer %q", len(body), resp.Trailer.Get("X-Sum"))
	}
	// Chunked body, odd chunk sizes, extensions and a trailer of its own.
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST %s/echo HTTP/1.1\r\nHost: f.test\r\nTransfer-Encoding: chunked\r\n\r\n", url)
	for rest := big; len(rest) > 0; {
		n := min(len(rest), 12345)
		fmt.Fprintf(&req, "%x;ext=1\r\n%s\r\n", n, rest[:n])
		rest = rest[n:]
	}
	req.WriteString("0\r\nX-Client: 1\r\n\r\n")
	resp, body = c.do(t, "POST", req.String())
	if body != big || resp.Trailer.Get("X-Sum") != sum {
		t.Errorf("chunked body: %d bytes back, trailer %q", len(body), resp.Trailer.Get("X-Sum"))
	}
	for _, r := range []struct{ method, path, body string }{
		{"HEAD", "/", ""}, {"GET", "/nothing", ""}, {"GET", "/same", ""}, {"GET", "/", "plain"},
	} {
		resp, body := c.do(t, r.method, fmt.Sprintf("%s %s%s HTTP/1.1\r\nHost: f.test\r\n\r\n", r.method, url, r.path))
		if body != r.body || resp.Close {
			t.Errorf("%s %s: %s %q close=%v", r.method, r.path, resp.Status, body, resp.Close)
		}
	}
	// Pipelined: two requests in one write, two answers in order.
	if _, err := io.WriteString(c, "GET "+url+"/ HTTP/1.1\r\nHost: f.test\r\n\r\nHEAD "+url+"/ HTTP/1.1\r\nHost: f.test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, body := c.read(t, "GET"); body != "plain" {
		t.Errorf("first pipelined answer %q", body)
	}
	if resp, body := c.read(t, "HEAD"); resp.StatusCode != 200 || body != "" {
		t.Errorf("second pipelined answer %s %q", resp.Status, body)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d upstream connections, want 1", n)
	}
}

// TestCurlUploadExpectContinue: curl sends a large body after a 100 Continue, through the
// proxy; then a second request reuses the connection.
func TestCurlUploadExpectContinue(t *testing.T) {
	var got atomic.Int64
	port, _ := countingUpstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
		fmt.Fprintf(w, "%d", n)
	}))
	tp := startProxy(t, Policy{Allow: []string{"up.test:" + port}, AllowPrivate: true}, map[string]string{"up.test": "127.0.0.1"}, nil)
	file := filepath.Join(t.TempDir(), "upload")
	if err := os.WriteFile(file, bytes.Repeat([]byte("u"), 3<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, cleanEnv(), "curl", "-sS", "-v", "-x", "http://"+tp.addr, "--data-binary", "@"+file,
		"http://up.test:"+port+"/", "--next", "-x", "http://"+tp.addr, "http://up.test:"+port+"/again")
	if err != nil || out != fmt.Sprintf("%d0", 3<<20) || !strings.Contains(errOut, "HTTP/1.1 100 Continue") || !strings.Contains(errOut, "Re-using existing connection") {
		t.Errorf("curl: %v %q %q", err, out, errOut)
	}
}

// TestSmugglingShapesRefused: a request whose body could be read two ways, or with a folded
// header line, is refused before anything reaches an upstream.
func TestSmugglingShapesRefused(t *testing.T) {
	port, conns := countingUpstream(t, hello)
	tp := startProxy(t, Policy{Allow: []string{"s.test:" + port}, AllowPrivate: true}, map[string]string{"s.test": "127.0.0.1"}, nil)
	for _, fields := range []string{
		"Content-Length: 5\r\nTransfer-Encoding: chunked",
		"Transfer-Encoding: chunked, gzip",
		"Content-Length: 5, 6",
		"Content-Length: -1",
		"Content-Length: 0x5",
		"X-A: 1\r\n folded: 2",
		"X-A: a\rb",
	} {
		resp, body := dialRaw(t, tp).do(t, "GET", "GET http://s.test:"+port+"/ HTTP/1.1\r\nHost: s.test\r\n"+fields+"\r\n\r\n")
		if resp.StatusCode != 400 {
			t.Errorf("%q: %s %q", fields, resp.Status, body)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%d upstream connections", n)
	}
}

// rawUpstream serves each connection with handle, given a reader on it.
func rawUpstream(t *testing.T, handle func(c net.Conn, r *bufio.Reader)) string {
	return tcpServer(t, func(c net.Conn) { handle(c, bufio.NewReader(c)) })
}

// TestStaleKeptConnection: the upstream closes a kept connection without answering the next
// request on it (its idle timeout raced the request); the request is sent again on a new one.
func TestStaleKeptConnection(t *testing.T) {
	var accepted atomic.Int32
	port := rawUpstream(t, func(c net.Conn, r *bufio.Reader) {
		accepted.Add(1)
		if _, err := http.ReadRequest(r); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		_, _ = http.ReadRequest(r) // and closes without an answer
	})
	tp := startProxy(t, Policy{Allow: []string{"stale.test:" + port}, AllowPrivate: true}, map[string]string{"stale.test": "127.0.0.1"}, nil)
	c := dialRaw(t, tp)
	for i := range 3 {
		if resp, body := c.do(t, "GET", "GET http://stale.test:"+port+"/ HTTP/1.1\r\nHost: s\r\n\r\n"); resp.StatusCode != 200 || body != "ok" {
			t.Fatalf("request %d: %s %q", i, resp.Status, body)
		}
	}
	if n := accepted.Load(); n != 3 {
		t.Errorf("%d upstream connections, want 3", n)
	}
}

// TestAnswerUntilClose: an answer framed by the upstream's close reaches the client whole, and
// the client's connection ends with it.
func TestAnswerUntilClose(t *testing.T) {
	port := rawUpstream(t, func(c net.Conn, r *bufio.Reader) {
		if _, err := http.ReadRequest(r); err == nil {
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\nall of it")
		}
	})
	tp := startProxy(t, Policy{Allow: []string{"eof.test:" + port}, AllowPrivate: true}, map[string]string{"eof.test": "127.0.0.1"}, nil)
	resp, body := dialRaw(t, tp).do(t, "GET", "GET http://eof.test:"+port+"/ HTTP/1.1\r\nHost: e\r\n\r\n")
	if body != "all of it" || !resp.Close {
		t.Errorf("%s %q close=%v", resp.Status, body, resp.Close)
	}
}

// TestUpgrade: an upgrade (a WebSocket's, say) through a plain forwarded request becomes a
// two-way byte stream after the 101.
func TestUpgrade(t *testing.T) {
	port := rawUpstream(t, func(c net.Conn, r *bufio.Reader) {
		req, err := http.ReadRequest(r)
		if err != nil || req.Header.Get("Upgrade") != "echo" || req.Header.Get("Connection") != "Upgrade" {
			_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		_, _ = io.Copy(c, r)
	})
	tp := startProxy(t, Policy{Allow: []string{"ws.test:" + port}, AllowPrivate: true}, map[string]string{"ws.test": "127.0.0.1"}, nil)
	c := dialRaw(t, tp)
	fmt.Fprintf(c, "GET http://ws.test:%s/ HTTP/1.1\r\nHost: ws.test\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nearly ", port)
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	fmt.Fprint(c, "and late")
	got := make([]byte, len("early and late"))
	if _, err := io.ReadFull(c.r, got); err != nil || string(got) != "early and late" {
		t.Errorf("after the upgrade: %q %v", got, err)
	}
}

// TestEarlyAnswer: the upstream answers before the body is through (a 413, say); the answer
// reaches the client and the connection ends, the rest of the body unread.
func TestEarlyAnswer(t *testing.T) {
	port := rawUpstream(t, func(c net.Conn, r *bufio.Reader) {
		if _, err := http.ReadRequest(r); err == nil {
			_, _ = io.WriteString(c, "HTTP/1.1 413 Content Too Large\r\nContent-Length: 3\r\n\r\nbig")
			_, _ = io.Copy(io.Discard, r)
		}
	})
	tp := startProxy(t, Policy{Allow: []string{"early.test:" + port}, AllowPrivate: true}, map[string]string{"early.test": "127.0.0.1"}, nil)
	c := dialRaw(t, tp)
	fmt.Fprintf(c, "POST http://early.test:%s/ HTTP/1.1\r\nHost: e\r\nContent-Length: 100000000\r\n\r\nsome", port)
	resp, body := c.read(t, "POST")
	if resp.StatusCode != 413 || body != "big" || !resp.Close {
		t.Errorf("%s %q close=%v", resp.Status, body, resp.Close)
	}
	waitFor(t, "the connection ended", func() bool {
		tp.srv.mu.Lock()
		defer tp.srv.mu.Unlock()
		return len(tp.srv.conns) == 0
	})
}

// TestManyKeptConnections: concurrent clients each with a kept connection share kept upstream
// connections: no more are made than requests run at once, and all are kept at the end.
func TestManyKeptConnections(t *testing.T) {
	port, conns := countingUpstream(t, hello)
	tp := startProxy(t, Policy{Allow: []string{"m.test:" + port}, AllowPrivate: true}, map[string]string{"m.test": "127.0.0.1"}, nil)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", tp.addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			r := bufio.NewReader(c)
			for range 10 {
				fmt.Fprintf(c, "GET http://m.test:%s/ HTTP/1.1\r\nHost: m\r\n\r\n", port)
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	if n := conns.Load(); n > 20 {
		t.Errorf("%d upstream connections for 20 clients", n)
	}
	waitKept(t, tp, int(conns.Load()))
}

// TestPoolExpires: idle connections are closed once idle for poolIdle, the others kept, and
// the sweep goes on while any is kept.
func TestPoolExpires(t *testing.T) {
	var p pool
	b := &budget{max: 1 << 20}
	conns := make([]net.Conn, 3)
	for i := range conns {
		a, other := net.Pipe()
		t.Cleanup(func() { a.Close(); other.Close() })
		conns[i] = other
		st, _ := newStream(a, b, nil)
		p.put(&upstreamConn{stream: st, t: target{name: fmt.Sprintf("t%d.test", i%2), port: 80}})
	}
	p.mu.Lock()
	for _, l := range p.idle {
		for _, u := range l {
			if u.t.name == "t0.test" {
				u.since = u.since.Add(-poolIdle) // t0's two have been idle long enough
			}
		}
	}
	p.mu.Unlock()
	p.expire()
	p.mu.Lock()
	n, kept := p.n, len(p.idle[target{name: "t1.test", port: 80}])
	p.mu.Unlock()
	if n != 1 || kept != 1 || b.used.Load() != streamBuf {
		t.Errorf("%d kept (%d for t1), %d bytes held", n, kept, b.used.Load())
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond)) // a kept one stays silent
		_, err := c.Read(make([]byte, 1))
		if closed := err == io.EOF; closed != (i%2 == 0) {
			t.Errorf("connection %d: %v", i, err)
		}
	}
	p.close()
}
