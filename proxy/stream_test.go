package proxy

import (
	"net"
	"strings"
	"testing"
)

// TestReadHeadByteByByte: a head that arrives a byte at a time, its end split between reads, is
// found once whole and no sooner, with the bytes behind it left buffered.
func TestReadHeadByteByByte(t *testing.T) {
	for _, in := range []string{
		"GET / HTTP/1.1\r\nA: b\r\n\r\nrest",
		"\r\nGET / HTTP/1.1\nA: b\n\nrest",
		"HTTP/1.1 200 OK\r\n\r\nrest",
	} {
		src, feed := net.Pipe()
		go func() {
			for i := range len(in) {
				if _, err := feed.Write([]byte{in[i]}); err != nil {
					return
				}
			}
		}()
		s, _ := newStream(src, &budget{max: 1 << 20}, nil)
		h, err := s.readHead()
		want := strings.TrimLeft(in[:len(in)-len("rest")], "\r\n") // empty lines before a head are skipped
		if err != nil || string(h) != want {
			t.Errorf("%q: head %q %v", in, h, err)
		}
		for len(s.buffered()) < len("rest") {
			if err := s.fill(maxHeaderBytes); err != nil {
				t.Fatal(err)
			}
		}
		if string(s.buffered()) != "rest" {
			t.Errorf("%q: left %q", in, s.buffered())
		}
		feed.Close()
		src.Close()
	}
}
