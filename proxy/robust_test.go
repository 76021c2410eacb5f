package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// echo copies everything back until EOF.
func echo(c net.Conn) { _, _ = io.Copy(c, c) }

func TestConcurrent500(t *testing.T) {
	port := tcpServer(t, echo)
	tp := startProxy(t, Policy{Allow: []string{"echo.test:" + port}, AllowPrivate: true}, map[string]string{"echo.test": "127.0.0.1"}, nil)
	const n = 500
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	release := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		go func() {
			defer done.Done()
			var c net.Conn
			var r io.Reader
			var err error
			if i%2 == 0 {
				c, r, err = tunnel(tp.addr, "echo.test:"+port)
			} else {
				c, r, err = socks5h(tp.addr, "echo.test", port)
			}
			ready.Done()
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			<-release // every connection is open at once
			msg := fmt.Sprintf("message %d\n", i)
			if _, err := io.WriteString(c, msg); err != nil {
				errs <- err
				return
			}
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(r, got); err != nil || string(got) != msg {
				errs <- fmt.Errorf("conn %d: %q %v", i, got, err)
			}
		}()
	}
	ready.Wait()
	tp.srv.mu.Lock()
	open := len(tp.srv.conns)
	tp.srv.mu.Unlock()
	close(release)
	done.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if open != n {
		t.Errorf("%d client connections tracked at the peak, want %d", open, n)
	}
	waitFor(t, "every connection closed", func() bool {
		tp.srv.mu.Lock()
		defer tp.srv.mu.Unlock()
		return len(tp.srv.conns) == 0
	})
}

// tunnel opens a CONNECT tunnel without the testing helpers (for goroutines).
func tunnel(proxyAddr, hostport string) (net.Conn, io.Reader, error) {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err == nil && resp.StatusCode != 200 {
		err = errors.New(resp.Status)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, br, nil
}

// socks5h opens a SOCKS5 CONNECT by name.
func socks5h(proxyAddr, host, port string) (net.Conn, io.Reader, error) {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		return nil, nil, err
	}
	p := atoi(port)
	req := append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len(host))}, host...)
	req = append(req, byte(p>>8), byte(p))
	if _, err := c.Write(req); err != nil {
		c.Close()
		return nil, nil, err
	}
	resp := make([]byte, 2+10)
	if _, err := io.ReadFull(c, resp); err != nil || resp[3] != 0 {
		c.Close()
		return nil, nil, fmt.Errorf("socks: %v %v", resp, err)
	}
	return c, c, nil
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for range 2000 { // a safety net against a hang, not a timing assertion
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("never: %s", what)
}

// streamer writes an endless body and reports when a write fails (the client went away).
func streamer(gone chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				close(gone)
				return
			}
			w.(http.Flusher).Flush()
		}
	}
}

func TestClientDisconnectMidStream(t *testing.T) {
	for _, mode := range []string{"forward", "connect"} {
		t.Run(mode, func(t *testing.T) {
			gone := make(chan struct{})
			_, port := upstream(t, streamer(gone))
			tp := startProxy(t, Policy{Allow: []string{"stream.test:" + port}, AllowPrivate: true}, map[string]string{"stream.test": "127.0.0.1"}, nil)
			var c net.Conn
			var r io.Reader
			if mode == "connect" {
				c, r = dialTunnel(t, tp, "stream.test:"+port)
				fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: stream.test\r\n\r\n")
			} else {
				var err error
				if c, err = net.Dial("tcp", tp.addr); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(c, "GET http://stream.test:%s/ HTTP/1.1\r\nHost: stream.test\r\n\r\n", port)
				r = c
			}
			if _, err := io.CopyN(io.Discard, r, 1<<20); err != nil {
				t.Fatal(err)
			}
			c.Close()
			<-gone // the upstream saw the disconnect (its write failed)
			waitFor(t, "proxy dropped the connection", func() bool {
				tp.srv.mu.Lock()
				defer tp.srv.mu.Unlock()
				return len(tp.srv.conns) == 0
			})
		})
	}
}

func TestStalledUpstream(t *testing.T) {
	stallPort := tcpServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) }) // reads, never answers
	halfway := make(chan struct{})
	_, slowPort := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write([]byte("partial"))
		w.(http.Flusher).Flush()
		select { // stall mid-body until the test ends
		case <-halfway:
		case <-r.Context().Done():
		}
	}))
	defer close(halfway)
	tp := startProxy(t, Policy{Allow: []string{"stall.test:" + stallPort, "slow.test:" + slowPort}, AllowPrivate: true},
		map[string]string{"stall.test": "127.0.0.1", "slow.test": "127.0.0.1"}, func(o *Options) {
			o.IdleTimeout = 200 * time.Millisecond
			o.HandshakeTimeout = 200 * time.Millisecond
		})

	if code, body := tp.get(t, "http://stall.test:"+stallPort+"/"); code != http.StatusGatewayTimeout || !strings.Contains(body, "jail: upstream timed out") {
		t.Errorf("stalled forward: %d %q", code, body)
	}
	resp, err := tp.client().Get("http://slow.test:" + slowPort + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "partial" || err == nil {
		t.Errorf("stall mid-body: %q %v (want the partial body and an error)", b, err)
	}

	c, r := dialTunnel(t, tp, "stall.test:"+stallPort)
	defer c.Close()
	fmt.Fprintf(c, "hello?")
	if n, err := io.Copy(io.Discard, r); n != 0 || err != nil {
		t.Errorf("stalled tunnel: read %d bytes, %v (want a clean close)", n, err)
	}

	// A client that connects and says nothing is dropped after the handshake timeout.
	idle, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if n, _ := io.Copy(io.Discard, idle); n != 0 {
		t.Errorf("silent client got %d bytes", n)
	}
}

// TestHalfClose: the client shuts its sending side; the upstream sees EOF, answers, and the
// answer still arrives — through Forward's TCP port and through the unix socket directly.
func TestHalfClose(t *testing.T) {
	port := tcpServer(t, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		fmt.Fprintf(c, "got %d bytes", n)
	})
	tp := startProxy(t, Policy{Allow: []string{"half.test:" + port}, AllowPrivate: true}, map[string]string{"half.test": "127.0.0.1"}, nil)
	payload := bytes.Repeat([]byte("y"), 300<<10)
	check := func(name string, c net.Conn, r io.Reader) {
		defer c.Close()
		if _, err := c.Write(payload); err != nil {
			t.Fatal(err)
		}
		if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != fmt.Sprintf("got %d bytes", len(payload)) {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	c, br := dialTunnel(t, tp, "half.test:"+port)
	check("CONNECT via Forward", c, br)
	c, r, err := socks5h(tp.addr, "half.test", port)
	if err != nil {
		t.Fatal(err)
	}
	check("SOCKS5 via Forward", c, r)

	uc, err := net.Dial("unix", tp.sock)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(uc, "CONNECT half.test:%s HTTP/1.1\r\nHost: half.test\r\n\r\n", port)
	br = bufio.NewReader(uc)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT on the unix socket: %v", err)
	}
	check("CONNECT on the unix socket", uc, br)
}

// TestPassedDescriptorsAreChecked: anything in the sandbox can reach the unix socket, so a
// passed descriptor that is not one connected TCP socket is closed and the connection dropped.
func TestPassedDescriptorsAreChecked(t *testing.T) {
	tp := startProxy(t, Policy{}, nil, nil)
	pr, pw, cases := badRights(t)
	for name, fds := range cases {
		uc, err := net.Dial("unix", tp.sock)
		if err != nil {
			t.Fatal(err)
		}
		var oob []byte
		if fds != nil {
			oob = syscall.UnixRights(fds...)
		}
		if _, _, err := uc.(*net.UnixConn).WriteMsgUnix([]byte{fdMarker}, oob, nil); err != nil {
			t.Fatal(err)
		}
		if n, _ := io.Copy(io.Discard, uc); n != 0 {
			t.Errorf("%s: got %d bytes back", name, n)
		}
		uc.Close()
	}
	pipeSeesEOF(t, pr, pw)
}

// TestPairMessagesAreChecked: the host takes from the sandbox's end of the Pair only listening
// TCP sockets. A message with anything else (badRights' but a listener alone, or a connected
// socket) is refused whole: every descriptor it passed is closed, and nothing is served.
func TestPairMessagesAreChecked(t *testing.T) {
	pr, pw, cases := badRights(t)
	delete(cases, "listening") // what init passes
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	cc, err := net.Dial("tcp", tl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	cf, _ := cc.(*net.TCPConn).File()
	defer cf.Close()
	cases["connected"] = []int{int(cf.Fd())}
	for name, fds := range cases {
		h, err := StartHost(Policy{}, Options{Log: &syncBuffer{}})
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Sendmsg(int(h.Sandbox.Fd()), []byte{fdMarker}, unix.UnixRights(fds...), nil, 0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		<-h.served // refused: nothing to serve
		h.Close()
	}
	pipeSeesEOF(t, pr, pw)
}

// TestNoLeakAfterClose: tunnels, forwards, SOCKS sessions, denials and stalls in flight when
// the server closes; afterwards the goroutine and descriptor counts return to where they were.
func TestNoLeakAfterClose(t *testing.T) {
	echoPort := tcpServer(t, echo)
	stallPort := tcpServer(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })
	_, webPort := upstream(t, hello)
	// Counted with the upstreams running: they stay up, so only what the proxy (and the test's
	// clients, all closed) left behind can keep a goroutine or descriptor alive.
	goroutines, fds := runtime.NumGoroutine(), countFDs(t)
	func() {
		tp := startProxy(t, Policy{Allow: []string{"echo.test:" + echoPort, "stall.test:" + stallPort, "web.test:" + webPort}, AllowPrivate: true},
			map[string]string{"echo.test": "127.0.0.1", "stall.test": "127.0.0.1", "web.test": "127.0.0.1"}, nil)
		var open []net.Conn
		for range 10 {
			c, _ := dialTunnel(t, tp, "echo.test:"+echoPort)
			s, _, err := socks5h(tp.addr, "stall.test", stallPort)
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, c, s)
		}
		if code, _ := tp.get(t, "http://web.test:"+webPort+"/"); code != 200 {
			t.Errorf("forward: %d", code)
		}
		if code, _ := tp.get(t, "http://denied.test/"); code != 403 {
			t.Errorf("denied: %d", code)
		}
		// A forwarded request stuck on a stalled upstream while the server closes.
		cl := tp.client()
		stuck := make(chan error, 1)
		go func() {
			resp, err := cl.Get("http://stall.test:" + stallPort + "/")
			if err == nil {
				resp.Body.Close()
			}
			stuck <- err
		}()
		idle, err := net.Dial("tcp", tp.addr) // a client still in its handshake
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, idle)
		waitFor(t, "all connections in flight", func() bool {
			tp.srv.mu.Lock()
			defer tp.srv.mu.Unlock()
			return len(tp.srv.conns) >= 22
		})
		tp.stop()
		<-stuck
		for _, c := range open {
			if n, _ := io.Copy(io.Discard, c); n != 0 {
				t.Errorf("data after Close")
			}
			c.Close()
		}
		cl.CloseIdleConnections()
	}()
	waitFor(t, fmt.Sprintf("goroutines back to %d", goroutines), func() bool { return runtime.NumGoroutine() <= goroutines })
	waitFor(t, fmt.Sprintf("descriptors back to %d", fds), func() bool {
		runtime.GC() // the runtime's splice pipes sit in a sync.Pool until a collection frees them
		return countFDs(t) <= fds
	})
}

func countFDs(t testing.TB) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestDenialsBounded: endless distinct names cost one entry and one log line each up to the
// bound, then only a count.
func TestDenialsBounded(t *testing.T) {
	tp := startProxy(t, Policy{}, nil, nil)
	for i := range maxDenials + 50 {
		tp.srv.decide(fmt.Sprintf("h%d.test", i), 443)
	}
	tp.srv.decide("h0.test", 443)
	d := tp.srv.Denials()
	if len(d) != maxDenials+1 || d[0].Count != 2 || d[maxDenials].Host != MoreHosts || d[maxDenials].Count != 50 {
		t.Fatalf("%d entries, first %+v, last %+v", len(d), d[0], d[len(d)-1])
	}
	if n := strings.Count(tp.log.String(), "\n"); n != maxDenials+1 {
		t.Errorf("%d log lines", n)
	}
	if s := Summary(d); !strings.HasPrefix(s, fmt.Sprintf("jail: network: %d connection(s) denied, to h0.test, ", maxDenials+51)) ||
		!strings.Contains(s, fmt.Sprintf(", h9.test, %d more (not in the allow list); to allow them, ", maxDenials-10+50)) || strings.Count(s, "\n") != 1 {
		t.Errorf("summary %.200q…%q", s, s[len(s)-80:])
	}
}

// TestEarlyData: bytes a client sends right behind its CONNECT header or SOCKS5 request,
// before the answer, reach the upstream first and in order.
func TestEarlyData(t *testing.T) {
	port := tcpServer(t, echo)
	tp := startProxy(t, Policy{Allow: []string{"echo.test:" + port}, AllowPrivate: true}, map[string]string{"echo.test": "127.0.0.1"}, nil)

	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT echo.test:%s HTTP/1.1\r\nHost: echo.test\r\n\r\nearly bird", port)
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v", err)
	}
	got := make([]byte, len("early bird"))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "early bird" {
		t.Errorf("CONNECT early data: %q %v", got, err)
	}

	s, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := atoi(port)
	req := append([]byte{5, 1, 0, 5, 1, 0, 3, 9}, "echo.test"...)
	req = append(append(req, byte(p>>8), byte(p)), "optimistic"...)
	if _, err := s.Write(req); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 2+10+len("optimistic"))
	if _, err := io.ReadFull(s, reply); err != nil || reply[3] != 0 || string(reply[12:]) != "optimistic" {
		t.Errorf("SOCKS5 early data: %q %v", reply, err)
	}
}

// badRights is what a sandbox may pass instead of one connected TCP socket, by name: the
// descriptors (a pipe's write end, a listening socket) to send with the marker. The pipe's read
// end is pr, its write end pw.
func badRights(t *testing.T) (pr, pw *os.File, cases map[string][]int) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close() })
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	lf, _ := tl.(*net.TCPListener).File()
	t.Cleanup(func() { lf.Close() })
	return pr, pw, map[string][]int{
		"pipe":            {int(pw.Fd())},
		"listening":       {int(lf.Fd())},
		"two descriptors": {int(pw.Fd()), int(lf.Fd())},
		"marker only":     nil,
	}
}

// pipeSeesEOF closes pw and checks that the proxy kept no copy of the pipe's write end: the
// reader sees EOF.
func pipeSeesEOF(t *testing.T, pr, pw *os.File) {
	t.Helper()
	pw.Close()
	if n, err := io.Copy(io.Discard, pr); n != 0 || err != nil {
		t.Errorf("pipe: %d %v", n, err)
	}
}
