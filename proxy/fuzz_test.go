package proxy

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// FuzzDecide: any host and port give an answer without panicking, and an allowed answer always
// names one of the allowed hosts exactly or a strict subdomain of the wildcard.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{"example.com", "a.example.com", "badexample.com", "EXAMPLE.COM.", "[::1]", "127.0.0.1", "a..b", "*.example.com", "xn--bcher-kva.example", "::ffff:10.0.0.1", "10.0.0.1%eth0"} {
		f.Add(s, uint16(443))
	}
	pol, err := compilePolicy(Policy{Allow: []string{"example.com", "*.example.com", "10.0.0.1"}, Deny: []string{"deny.example.com"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string, port uint16) {
		tg, d := pol.decide(host, port)
		if d != nil {
			return
		}
		if port != 80 && port != 443 {
			t.Fatalf("%q:%d allowed on a non-default port", host, port)
		}
		name := tg.name
		switch {
		case tg.ip.IsValid():
			if tg.ip.String() != "10.0.0.1" {
				t.Fatalf("%q allowed as %s", host, tg.ip)
			}
		case name == "example.com", strings.HasSuffix(name, ".example.com") && name != "deny.example.com":
		default:
			t.Fatalf("%q allowed as %q", host, name)
		}
	})
}

// FuzzPattern: parsing never panics, and what parses validates.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com:8443", "[::1]:443", "::1", "10.0.0.1:22", "[x]", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := parsePattern(s); err == nil && ValidatePattern(s) != nil {
			t.Fatal("inconsistent")
		}
	})
}

// FuzzSOCKSRequest: any bytes from a client end in a request or an error, never a panic or a
// hang (the reader is fed the input and then EOF).
func FuzzSOCKSRequest(f *testing.F) {
	f.Add([]byte{5, 1, 0, 5, 1, 0, 3, 4, 'a', '.', 'b', 'c', 1, 187})
	f.Add([]byte{5, 1, 0, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 0})
	f.Fuzz(func(t *testing.T, in []byte) {
		client, server := net.Pipe()
		go func() {
			_, _ = client.Write(in)
			_ = client.Close()
		}()
		go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(client) }() // drain replies
		c := &conn{Conn: server}
		_, _, _, _ = readSOCKSRequest(c)
		_ = server.Close()
	})
}

// FuzzHead: any bytes parse into a head or an error, never a panic; what the proxy rebuilds
// from a parsed head is one line per field, with no CR or LF a sender slipped in, and the
// framing read from it is one of the known kinds or refused.
func FuzzHead(f *testing.F) {
	f.Add([]byte("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\n"), true)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close, X-A\r\n\r\n"), false)
	f.Add([]byte("POST / HTTP/1.0\nX: a\n folded\n\n"), true)
	f.Fuzz(func(t *testing.T, b []byte, request bool) {
		h, err := parseHead(b, request)
		if err != nil {
			return
		}
		var out []byte
		if request {
			if _, err := requestFraming(h); err != nil {
				return
			}
			out = upstreamHead(h, "/", "a.test", false)
		} else {
			if _, err := responseFraming(h, "GET"); err != nil {
				return
			}
			out = clientHead(h, false)
		}
		lines := bytes.Split(bytes.TrimSuffix(out, []byte("\r\n\r\n")), []byte("\r\n"))
		for _, l := range lines {
			if bytes.ContainsAny(l, "\r\n") || len(l) == 0 {
				t.Fatalf("rebuilt head %q has a bad line %q", out, l)
			}
		}
	})
}

// FuzzChunked: any bytes as a chunked body end in an error or in exactly the bytes of one
// well-formed body passed on, never a panic or more than was sent.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"))
	f.Add([]byte("3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\nnext"))
	f.Add([]byte("fffffffffffffff\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		src, feed := net.Pipe()
		dst, sink := net.Pipe()
		go func() {
			_, _ = feed.Write(in)
			_ = feed.Close()
		}()
		got := make(chan []byte)
		go func() {
			b, _ := io.ReadAll(sink)
			got <- b
		}()
		s, _ := newStream(src, &budget{max: 1 << 20}, nil)
		err := s.copyChunked(&side{Conn: dst}, newActivity(time.Second))
		_ = dst.Close()
		out := <-got
		_ = src.Close()
		if !bytes.HasPrefix(in, out) {
			t.Fatalf("passed on %q, not a prefix of %q", out, in)
		}
		if err == nil && s.budget.used.Load() != int64(len(s.buf)) {
			t.Fatalf("budget %d for a %d-byte buffer", s.budget.used.Load(), len(s.buf))
		}
	})
}
