package http1

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestReadRequest(t *testing.T) {
	in := "POST /v1/sandboxes/jb_0123456789ab/fs/file?path=%2Ftmp%2Fa+b&mode=0644 HTTP/1.1\r\n" +
		"Host: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n" +
		"GET /v1/version HTTP/1.1\r\nConnection: close\r\n\r\n"
	br := bufio.NewReader(strings.NewReader(in))
	r, err := ReadRequest(br)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil || string(body) != "hello world" || r.Method != "POST" || r.Query.Get("path") != "/tmp/a b" ||
		strings.Join(r.Path, "|") != "v1|sandboxes|jb_0123456789ab|fs|file" || r.Close {
		t.Errorf("first request: %+v, body %q, %v", r, body, err)
	}
	r, err = ReadRequest(br)
	if err != nil || r.Method != "GET" || !r.Close {
		t.Errorf("second, pipelined request: %+v, %v", r, err)
	}
	if _, err := ReadRequest(br); err != io.EOF {
		t.Errorf("after the last request: %v, want EOF", err)
	}
}

// TestReadRequestRefuses: framings a request could be smuggled by, and heads that are not HTTP.
func TestReadRequestRefuses(t *testing.T) {
	for _, in := range []string{
		"GET /v1/version HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET /v1/version HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		"GET /v1/version HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
		"GET /v1/version HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"GET /v1/version HTTP/1.1\r\nBad Header: x\r\n\r\n",
		"GET v1/version HTTP/1.1\r\n\r\n",
		"GET /v1/version SPDY/3\r\n\r\n",
		"GET /v1/version HTTP/1.1\r\nX: " + strings.Repeat("a", MaxHead) + "\r\n\r\n",
	} {
		if _, err := ReadRequest(bufio.NewReaderSize(strings.NewReader(in), 4096)); err == nil {
			t.Errorf("%.60q: read without error", in)
		}
	}
}
