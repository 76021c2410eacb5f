package proxy

import (
	"bytes"
	"errors"
	"fmt"
	"net/textproto"
	"strconv"
	"strings"
)

// head is a parsed HTTP/1.x request or response head: its start line's three parts and its
// fields in the order sent. Whatever is forwarded is rebuilt from these parts, so nothing a
// sender slips into a line (a bare CR, a folded line) reaches the other side.
type head struct {
	// A request's method, target and version, or a response's version, status code and reason.
	line   [3]string
	fields []field
}

// field is one header field; name is canonical (textproto.CanonicalMIMEHeaderKey).
type field struct{ name, value string }

// parseHead parses a head as readHead returned it (terminated by an empty line).
func parseHead(b []byte, request bool) (*head, error) {
	h := &head{}
	lines := bytes.Split(bytes.TrimRight(b, "\r\n"), []byte("\n"))
	start := string(bytes.TrimSuffix(lines[0], []byte("\r")))
	if request {
		method, rest, ok1 := strings.Cut(start, " ")
		target, proto, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || !isToken(method) || !printable(target) || target == "" || !isVersion(proto) {
			return nil, fmt.Errorf("malformed request line %q", start)
		}
		h.line = [3]string{method, target, proto}
	} else {
		proto, rest, _ := strings.Cut(start, " ")
		code, reason, _ := strings.Cut(rest, " ")
		if !isVersion(proto) || len(code) != 3 || strings.Trim(code, "0123456789") != "" || !fieldText(reason) {
			return nil, fmt.Errorf("malformed status line %q", start)
		}
		h.line = [3]string{proto, code, reason}
	}
	for _, l := range lines[1:] {
		l = bytes.TrimSuffix(l, []byte("\r"))
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok || !isToken(string(name)) { // a folded line starts with a space: no token
			return nil, fmt.Errorf("malformed header line %q", l)
		}
		v := strings.Trim(string(value), " \t")
		if !fieldText(v) {
			return nil, fmt.Errorf("control character in header %s", name)
		}
		h.fields = append(h.fields, field{textproto.CanonicalMIMEHeaderKey(string(name)), v})
	}
	return h, nil
}

func isVersion(s string) bool { return s == "HTTP/1.1" || s == "HTTP/1.0" }

// fieldText reports whether s holds no control character but tab.
func fieldText(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// get returns the first value of the named field, "" when there is none.
func (h *head) get(name string) string {
	for _, f := range h.fields {
		if f.name == name {
			return f.value
		}
	}
	return ""
}

func (h *head) has(name string) bool {
	for _, f := range h.fields {
		if f.name == name {
			return true
		}
	}
	return false
}

// tokens returns the comma-separated tokens of every named field, lower-cased.
func (h *head) tokens(name string) []string {
	var out []string
	for _, f := range h.fields {
		if f.name != name {
			continue
		}
		for t := range strings.SplitSeq(f.value, ",") {
			if t = strings.ToLower(strings.Trim(t, " \t")); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// hasToken reports whether a named field lists tok (lower case).
func (h *head) hasToken(name, tok string) bool {
	for _, t := range h.tokens(name) {
		if t == tok {
			return true
		}
	}
	return false
}

// framing is how a message body ends.
type framing struct {
	kind bodyKind
	n    int64 // for byLength
}

type bodyKind int

const (
	noBody   bodyKind = iota
	byLength          // Content-Length
	chunked           // Transfer-Encoding: chunked
	untilEOF          // a response without either: it ends when the upstream closes
)

var errFraming = errors.New("conflicting or malformed Content-Length / Transfer-Encoding")

// requestFraming is how a request's body ends (RFC 9112, 6.3). A request with both
// Content-Length and Transfer-Encoding, or with a coding other than chunked last, is refused:
// a proxy and the server behind it reading one body two ways is how requests are smuggled.
func requestFraming(h *head) (framing, error) {
	if te := h.tokens("Transfer-Encoding"); len(te) > 0 {
		if h.has("Content-Length") || te[len(te)-1] != "chunked" {
			return framing{}, errFraming
		}
		return framing{kind: chunked}, nil
	}
	return contentLength(h, noBody)
}

// responseFraming is how the answer to a request with method ends.
func responseFraming(h *head, method string) (framing, error) {
	code := h.line[1]
	if method == "HEAD" || code[0] == '1' || code == "204" || code == "304" {
		return framing{kind: noBody}, nil
	}
	if te := h.tokens("Transfer-Encoding"); len(te) > 0 {
		if te[len(te)-1] == "chunked" {
			return framing{kind: chunked}, nil
		}
		return framing{kind: untilEOF}, nil
	}
	return contentLength(h, untilEOF)
}

// contentLength reads Content-Length (repeated values must agree); without one the body is
// none.
func contentLength(h *head, none bodyKind) (framing, error) {
	f := framing{kind: none}
	for _, fl := range h.fields {
		if fl.name != "Content-Length" {
			continue
		}
		for v := range strings.SplitSeq(fl.value, ",") {
			v = strings.Trim(v, " \t")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || strings.Trim(v, "0123456789") != "" || (f.kind == byLength && n != f.n) {
				return framing{}, errFraming
			}
			f = framing{kind: byLength, n: n}
		}
	}
	return f, nil
}

// parseChunkSize reads a chunk-size line ("1a;ext=1\r\n").
func parseChunkSize(line []byte) (int64, error) {
	line = bytes.TrimRight(line, "\r\n")
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.Trim(line, " \t")
	if len(line) == 0 || len(line) > 15 {
		return 0, errFraming
	}
	n, err := strconv.ParseInt(string(line), 16, 64)
	if err != nil || n < 0 {
		return 0, errFraming
	}
	return n, nil
}
