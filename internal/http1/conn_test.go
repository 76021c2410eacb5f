package http1

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// serve serves h on a loopback port until the test ends, and returns its base URL.
func serve(t *testing.T, h Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go ServeConn(c, 0, h)
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestServeConnKeepAlive: net/http's client, a reference for the clients jail's servers meet,
// reads JSON answers and sends its next request on the same connection.
func TestServeConnKeepAlive(t *testing.T) {
	url := serve(t, func(w *Response, r *Request, err error) {
		if err != nil {
			t.Errorf("request: %v", err)
			return
		}
		body, _ := io.ReadAll(r.Body)
		w.JSON(200, map[string]string{"path": r.URLPath(), "body": string(body)})
	})
	reused := 0
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		if i.Reused {
			reused++
		}
	}}
	for i, path := range []string{"/a/b", "/c"} {
		req, _ := http.NewRequest("POST", url+path+"?x=1", strings.NewReader("hello"))
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := `{"body":"hello","path":"` + path + `"}` + "\n"; err != nil || resp.StatusCode != 200 ||
			string(body) != want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d: %d %q %v; want 200 %q", i, resp.StatusCode, body, err, want)
		}
	}
	if reused != 1 {
		t.Errorf("the second request came on a new connection")
	}
}

// TestStreamFlushesEachWrite: each Write of a chunked body reaches the client before the next is
// written (the handler waits for the client to have read the first), and the body ends cleanly.
func TestStreamFlushesEachWrite(t *testing.T) {
	read := make(chan struct{})
	url := serve(t, func(w *Response, r *Request, err error) {
		w.Head(200, "text/event-stream", -1)
		w.Write([]byte("data: 1\n\n"))
		select {
		case <-read:
		case <-time.After(time.Minute):
			t.Error("the client never saw the first event")
		}
		w.Write([]byte("data: 2\n\n"))
	})
	resp, err := http.Get(url + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("transfer encoding %q, want chunked", resp.TransferEncoding)
	}
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil || first != "data: 1\n" {
		t.Fatalf("first event: %q, %v", first, err)
	}
	close(read)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\ndata: 2\n\n" {
		t.Errorf("the rest: %q, %v", rest, err)
	}
}

// TestServeConnMalformed: a request that cannot be read is the handler's to answer, with err
// set, and the connection closes after it.
func TestServeConnMalformed(t *testing.T) {
	client, server := net.Pipe()
	go ServeConn(server, 0, func(w *Response, r *Request, err error) {
		if err == nil || r != nil {
			t.Errorf("handler called with %v, %v; want ErrBadRequest and no request", r, err)
		}
		w.JSON(400, map[string]string{"error": err.Error()})
	})
	go client.Write([]byte("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"))
	out, err := io.ReadAll(client)
	want := "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 30\r\nConnection: close\r\n\r\n" +
		`{"error":"malformed request"}` + "\n"
	if err != nil || string(out) != want {
		t.Errorf("answer %q, %v; want %q", out, err, want)
	}
}
