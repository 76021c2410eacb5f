package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// partial opens a connection through the Forward port and sends the start of a request head
// that never ends.
func partial(t *testing.T, tp *testProxy, size int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", tp.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := "GET http://x.test/ HTTP/1.1\r\nX-Pad: " + strings.Repeat("p", size)
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

func openConns(s *Server) int64 { return s.open.Load() }

// TestConnectionLimit: connections beyond max_connections are refused in their own protocol,
// naming the key, and the refusal is logged once and counted; once some close, new ones pass.
func TestConnectionLimit(t *testing.T) {
	_, port := upstream(t, hello)
	tp := startProxy(t, Policy{Allow: []string{"ok.test:" + port}, AllowPrivate: true}, map[string]string{"ok.test": "127.0.0.1"},
		func(o *Options) { o.MaxConnections = 4 })
	var held []net.Conn
	for range 4 {
		held = append(held, partial(t, tp, 10))
	}
	waitFor(t, "4 connections admitted", func() bool { return openConns(tp.srv) == 4 })

	resp, err := tp.client().Get("http://ok.test:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || !strings.Contains(string(body), "raise [network] max_connections (now 4)") {
		t.Errorf("HTTP over the limit: %s %q", resp.Status, body)
	}
	if _, _, err := socks5h(tp.addr, "ok.test", port); err == nil || !strings.Contains(err.Error(), "[5 0 5 2 ") {
		t.Errorf("SOCKS5 over the limit: %v", err)
	}
	if log := tp.log.String(); strings.Count(log, "max_connections") != 1 || !strings.Contains(log, "jail: network: refused a connection: 4 connections through the proxy are open already") {
		t.Errorf("log %q", log)
	}
	if d := tp.srv.Denials(); len(d) != 1 || d[0].Kind != Connections || d[0].Count != 2 {
		t.Errorf("denials %+v", d)
	}
	for _, c := range held {
		c.Close()
	}
	waitFor(t, "the held connections ended", func() bool { return openConns(tp.srv) == 0 })
	if code, _ := tp.get(t, "http://ok.test:"+port+"/"); code != 200 {
		t.Errorf("after the held connections closed: %d", code)
	}
	if u := tp.srv.Usage(); u.PeakConnections != 4 || u.MaxConnections != 4 {
		t.Errorf("usage %+v", u)
	}
}

// TestBufferLimit: heads held at once may not pass max_buffer; the request that would is
// answered 503 naming the key, and the bytes held come back when connections end.
func TestBufferLimit(t *testing.T) {
	tp := startProxy(t, Policy{}, nil, func(o *Options) { o.MaxBuffer = 100 << 10 })
	var held []net.Conn
	for range 3 { // each grows its buffer to 32 KiB: 96 KiB in all
		held = append(held, partial(t, tp, 20<<10))
	}
	waitFor(t, "96 KiB held", func() bool { return tp.srv.budget.used.Load() == 96<<10 })
	c := partial(t, tp, 20<<10)
	got, _ := io.ReadAll(c)
	if !bytes.HasPrefix(got, []byte("HTTP/1.1 503 ")) || !bytes.Contains(got, []byte("raise [network] max_buffer (now 102400 bytes)")) {
		t.Errorf("over the buffer limit: %q", got)
	}
	for _, c := range held {
		c.Close()
	}
	waitFor(t, "every byte given back", func() bool { return tp.srv.budget.used.Load() == 0 })
	if d := tp.srv.Denials(); len(d) != 1 || d[0].Kind != Buffer {
		t.Errorf("denials %+v", d)
	}
}

// TestPartialHeadTimesOut: a head that stops coming is dropped after the handshake timeout, and
// its connection no longer counts.
func TestPartialHeadTimesOut(t *testing.T) {
	tp := startProxy(t, Policy{}, nil, func(o *Options) { o.HandshakeTimeout = 100 * time.Millisecond })
	c := partial(t, tp, 1000)
	if n, _ := io.Copy(io.Discard, c); n != 0 {
		t.Errorf("got %d bytes", n)
	}
	waitFor(t, "nothing open", func() bool { return openConns(tp.srv) == 0 && tp.srv.budget.used.Load() == 0 })
}

// TestEveryDenialNamesItsChange: for each kind of refusal, the 403 body (or 503), the stderr
// line, the exit summary and the report entry name the same one change, and no other.
func TestEveryDenialNamesItsChange(t *testing.T) {
	_, port := upstream(t, hello)
	hosts := map[string]string{"private.test": "10.1.2.3", "zero.test": "0.0.0.0", "denied.test": "93.184.215.14"}
	pol := Policy{Allow: []string{"private.test:" + port, "zero.test:" + port, "denied.test:" + port}, Deny: []string{"denied.test"}}
	cases := []struct {
		url, kind, change string
		not               []string
	}{
		{"http://absent.test:" + port + "/", "not-allowed", `[network] allow = ["absent.test:` + port + `"], or run jail with --allow-host absent.test:` + port, []string{"allow_private"}},
		{"http://private.test:" + port + "/", "private", "[network] allow_private = true in the profile, or run jail with --allow-private", []string{"--allow-host"}},
		{"http://zero.test:" + port + "/", "reserved", `allow_private does not open such an address; to allow it, add it to the profile: [network] allow = ["0.0.0.0:` + port + `"], or run jail with --allow-host 0.0.0.0:` + port, []string{"run jail with --allow-private"}},
		{"http://denied.test:" + port + "/", "deny-entry", `remove "denied.test" from [network] deny`, []string{"--allow-host", "allow_private"}},
	}
	for _, c := range cases {
		tp := startProxy(t, pol, hosts, nil)
		code, body := tp.get(t, c.url)
		d := tp.srv.Denials()
		sum := Summary(d)
		if code != 403 || len(d) != 1 || string(d[0].Kind) != c.kind {
			t.Fatalf("%s: %d %q %+v", c.url, code, body, d)
		}
		for what, text := range map[string]string{"403 body": body, "stderr line": tp.log.String(), "summary": sum, "report": d[0].Hint} {
			if !strings.Contains(text, c.change) {
				t.Errorf("%s: %s %q lacks %q", c.kind, what, text, c.change)
			}
			for _, n := range c.not {
				if strings.Contains(text, n) {
					t.Errorf("%s: %s %q names %q", c.kind, what, text, n)
				}
			}
		}
	}
}

// TestHostileNamesQuoted: a name with terminal escapes, sent by SOCKS5 (the one way to send
// any bytes as a name), reaches stderr and the summary quoted: no control byte gets through.
func TestHostileNamesQuoted(t *testing.T) {
	tp := startProxy(t, Policy{Allow: []string{"*.test"}}, nil, nil)
	evil := "\x1b]0;pwned\x07\x1b[2J\rjail: finished cleanly\n\u009b31m.test"
	if _, _, err := socks5h(tp.addr, evil, "443"); err == nil {
		t.Fatal("SOCKS5 to a malformed name succeeded")
	}
	// CONNECT targets and Host fields refuse control bytes below 0x80, not C1 controls.
	c := dialRaw(t, tp)
	if resp, _ := c.do(t, "CONNECT", "CONNECT \u009b2Jx.test:443 HTTP/1.1\r\n\r\n"); resp.StatusCode != 403 {
		t.Errorf("CONNECT to a malformed name: %s", resp.Status)
	}
	d := tp.srv.Denials()
	for _, out := range []string{tp.log.String(), Summary(d)} {
		if i := strings.IndexFunc(out, func(r rune) bool { return r < ' ' && r != '\n' || r == 0x7f || r >= 0x80 && r < 0xa0 }); i >= 0 {
			t.Errorf("control character in %q", out)
		}
		if !strings.Contains(out, `\x1b]0;pwned\a\x1b[2J\rjail: finished cleanly\n\u009b31m.test`) {
			t.Errorf("the name is not shown quoted: %q", out)
		}
	}
	if len(d) != 2 || d[0].Kind != Invalid || !strings.Contains(d[0].Hint, "no setting allows") || !strings.Contains(Summary(d), `"\u009b2Jx.test"`) {
		t.Errorf("denials %q", fmt.Sprint(d))
	}
}
