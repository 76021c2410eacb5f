package proxy

import (
	"bytes"
	"net"
	"strings"
	"testing"
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
