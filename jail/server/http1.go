package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/jail-sandbox/jail/api"
)

// The API's HTTP/1.1, written here rather than taken from net/http: jail's binary starts twice on
// every run, and net/http's package set-up (and crypto/tls's, which it pulls in) cost each start
// about 0.15 ms. Clients are local and of the same user, one connection per keeper handler or
// many to jail serve; requests have Content-Length or chunked bodies, responses too.

// maxHead bounds a request's line and headers.
const maxHead = 64 << 10

// request is one HTTP request.
type request struct {
	method string
	path   []string // the path's segments, unescaped, without the empty first
	query  url.Values
	header textproto.MIMEHeader
	body   io.Reader
	close  bool // the client asked to close after this one (or spoke HTTP/1.0)
}

var errBadRequest = errors.New("malformed request")

// readRequest reads the request line and headers from br (at most maxHead bytes) and sets up the
// body.
func readRequest(br *bufio.Reader) (*request, error) {
	var lines []string
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		n += len(line)
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) || n > maxHead {
				return nil, errBadRequest
			}
			if len(lines) == 0 && len(line) == 0 {
				return nil, err // the connection ended between requests
			}
			return nil, errBadRequest
		}
		if n > maxHead {
			return nil, errBadRequest
		}
		s := strings.TrimRight(string(line), "\r\n")
		if s == "" {
			if len(lines) == 0 {
				continue // a stray empty line before a request, as RFC 9112 allows
			}
			break
		}
		lines = append(lines, s)
	}
	method, rest, ok1 := strings.Cut(lines[0], " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !strings.HasPrefix(proto, "HTTP/1.") || !strings.HasPrefix(target, "/") {
		return nil, errBadRequest
	}
	r := &request{method: method, header: textproto.MIMEHeader{}, close: proto == "HTTP/1.0"}
	rawPath, rawQuery, _ := strings.Cut(target, "?")
	var err error
	if r.query, err = url.ParseQuery(rawQuery); err != nil {
		return nil, errBadRequest
	}
	for _, seg := range strings.Split(strings.Trim(rawPath, "/"), "/") {
		s, err := url.PathUnescape(seg)
		if err != nil {
			return nil, errBadRequest
		}
		r.path = append(r.path, s)
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, errBadRequest
		}
		r.header.Add(textproto.CanonicalMIMEHeaderKey(k), strings.TrimSpace(v))
	}
	if strings.EqualFold(r.header.Get("Connection"), "close") {
		r.close = true
	}
	return r, r.setBody(br)
}

// setBody makes r.body read what the headers say the body is: chunked, Content-Length bytes, or
// nothing. Both framings at once are refused (RFC 9112 6.1: a smuggling shape).
func (r *request) setBody(br *bufio.Reader) error {
	te, cl := r.header.Values("Transfer-Encoding"), r.header.Values("Content-Length")
	switch {
	case len(te) > 0 && len(cl) > 0, len(te) > 1, len(cl) > 1:
		return errBadRequest
	case len(te) == 1:
		if !strings.EqualFold(te[0], "chunked") {
			return errBadRequest
		}
		r.body = &chunkedReader{br: br}
	case len(cl) == 1:
		n, err := strconv.ParseInt(cl[0], 10, 64)
		if err != nil || n < 0 {
			return errBadRequest
		}
		r.body = io.LimitReader(br, n)
	default:
		r.body = strings.NewReader("")
	}
	return nil
}

// chunkedReader reads a chunked body.
type chunkedReader struct {
	br   *bufio.Reader
	left int64 // of the current chunk
	done bool
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		size, _, _ := strings.Cut(strings.TrimRight(string(line), "\r\n"), ";")
		n, err := strconv.ParseInt(strings.TrimSpace(size), 16, 64)
		if err != nil || n < 0 {
			return 0, errBadRequest
		}
		if n == 0 { // the last chunk, then trailers up to an empty line
			for {
				l, err := c.br.ReadSlice('\n')
				if err != nil {
					return 0, io.ErrUnexpectedEOF
				}
				if strings.TrimRight(string(l), "\r\n") == "" {
					break
				}
			}
			c.done = true
			return 0, io.EOF
		}
		c.left = n
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.br.Read(p)
	c.left -= int64(n)
	if c.left == 0 && err == nil {
		if _, err = c.br.Discard(2); err != nil { // the chunk's CRLF
			return n, io.ErrUnexpectedEOF
		}
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// response writes one answer: a JSON value, an error, nothing, or a body of unknown length
// (chunked), which streams may flush as they go.
type response struct {
	conn    net.Conn
	bw      *bufio.Writer
	mu      sync.Mutex // streams write from more than one goroutine
	started bool       // the head is written
	chunked bool
	close   bool // close the connection after this response
	failed  bool // a write failed: the client is gone
}

var statusText = map[int]string{
	200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
	409: "Conflict", 500: "Internal Server Error", 501: "Not Implemented", 504: "Gateway Timeout",
}

// head writes the status line and headers; length < 0 means a chunked body.
func (w *response) head(status int, contentType string, length int64) {
	w.started = true
	fmt.Fprintf(w.bw, "HTTP/1.1 %d %s\r\n", status, statusText[status])
	if contentType != "" {
		fmt.Fprintf(w.bw, "Content-Type: %s\r\n", contentType)
	}
	switch {
	case status == 204:
	case length < 0:
		w.chunked = true
		w.bw.WriteString("Transfer-Encoding: chunked\r\n")
	default:
		fmt.Fprintf(w.bw, "Content-Length: %d\r\n", length)
	}
	if w.close {
		w.bw.WriteString("Connection: close\r\n")
	}
	w.bw.WriteString("\r\n")
}

// json answers with v as JSON.
func (w *response) json(status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.error(api.Errorf(api.Internal, "encode the answer: %s", err))
		return
	}
	b = append(b, '\n')
	w.head(status, "application/json", int64(len(b)))
	w.bw.Write(b)
}

// error answers with err as the API's error object and its status.
func (w *response) error(err error) {
	e := api.AsError(err)
	w.json(api.Status(e.Code), api.ErrorBody{Error: e})
}

// noContent answers 204.
func (w *response) noContent() { w.head(204, "", 0) }

// Write writes a chunked body, starting it (200, with contentType set by stream) on first use.
func (w *response) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	fmt.Fprintf(w.bw, "%x\r\n", len(p))
	w.bw.Write(p)
	w.bw.WriteString("\r\n")
	return len(p), w.flushLocked()
}

func (w *response) flushLocked() error {
	err := w.bw.Flush()
	if err != nil {
		w.failed = true
	}
	return err
}

// lazyBody is a body of unknown length that starts the response (200, contentType) with its
// first byte: until then an error can still be answered as one.
type lazyBody struct {
	w           *response
	contentType string
}

func (b *lazyBody) Write(p []byte) (int, error) {
	if !b.w.started {
		b.w.head(200, b.contentType, -1)
	}
	return b.w.Write(p)
}

// event writes one line of an NDJSON stream.
func (w *response) event(e api.Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// finish ends the response: the last chunk of a chunked body, then the flush.
func (w *response) finish() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.chunked && !w.failed {
		w.bw.WriteString("0\r\n\r\n")
	}
	w.flushLocked()
}
