// Package http1 is the server side of HTTP/1.1 that jail's binary speaks: requests read, answers
// written (a JSON value, an empty one, or a body streamed in chunks, each flushed as it is
// written), one connection's requests served in turn. The local API (jail/server) and
// `jail hook check`'s fake model (hooks/fakemodel) use it.
//
// It is written here rather than taken from net/http: jail's binary starts twice on every run,
// and net/http's package set-up (and crypto/tls's, which it pulls in) cost each start about
// 0.15 ms. Its clients are local: of the same user over a unix socket, or agent CLIs on
// loopback. Requests have Content-Length or chunked bodies; answers too.
package http1

import (
	"bufio"
	"errors"
	"io"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// MaxHead bounds a request's line and headers.
const MaxHead = 64 << 10

// Request is one HTTP request.
type Request struct {
	Method string
	Path   []string // the path's segments, unescaped, without the empty first
	Query  url.Values
	Header textproto.MIMEHeader
	Body   io.Reader
	Close  bool // the client asked to close after this one (or spoke HTTP/1.0)

	br *bufio.Reader // the connection, for Watch
}

// ErrBadRequest is ReadRequest's error for what is not a request it reads.
var ErrBadRequest = errors.New("malformed request")

// ReadRequest reads the request line and headers from br (at most MaxHead bytes) and sets up the
// body.
func ReadRequest(br *bufio.Reader) (*Request, error) {
	var lines []string
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		n += len(line)
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) || n > MaxHead {
				return nil, ErrBadRequest
			}
			if len(lines) == 0 && len(line) == 0 {
				return nil, err // the connection ended between requests
			}
			return nil, ErrBadRequest
		}
		if n > MaxHead {
			return nil, ErrBadRequest
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
		return nil, ErrBadRequest
	}
	r := &Request{Method: method, Header: textproto.MIMEHeader{}, Close: proto == "HTTP/1.0", br: br}
	rawPath, rawQuery, _ := strings.Cut(target, "?")
	var err error
	if r.Query, err = url.ParseQuery(rawQuery); err != nil {
		return nil, ErrBadRequest
	}
	for _, seg := range strings.Split(strings.Trim(rawPath, "/"), "/") {
		s, err := url.PathUnescape(seg)
		if err != nil {
			return nil, ErrBadRequest
		}
		r.Path = append(r.Path, s)
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, ErrBadRequest
		}
		r.Header.Add(textproto.CanonicalMIMEHeaderKey(k), strings.TrimSpace(v))
	}
	if strings.EqualFold(r.Header.Get("Connection"), "close") {
		r.Close = true
	}
	return r, r.setBody(br)
}

// URLPath is the request's path as its segments join: "/" and the segments, unescaped.
func (r *Request) URLPath() string { return "/" + strings.Join(r.Path, "/") }

// setBody makes r.Body read what the headers say the body is: chunked, Content-Length bytes, or
// nothing. Both framings at once are refused (RFC 9112 6.1: a smuggling shape).
func (r *Request) setBody(br *bufio.Reader) error {
	te, cl := r.Header.Values("Transfer-Encoding"), r.Header.Values("Content-Length")
	switch {
	case len(te) > 0 && len(cl) > 0, len(te) > 1, len(cl) > 1:
		return ErrBadRequest
	case len(te) == 1:
		if !strings.EqualFold(te[0], "chunked") {
			return ErrBadRequest
		}
		r.Body = &chunkedReader{br: br}
	case len(cl) == 1:
		n, err := strconv.ParseInt(cl[0], 10, 64)
		if err != nil || n < 0 {
			return ErrBadRequest
		}
		r.Body = io.LimitReader(br, n)
	default:
		r.Body = strings.NewReader("")
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
			return 0, ErrBadRequest
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
