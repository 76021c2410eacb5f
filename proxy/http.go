package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// The HTTP side of the proxy is a small HTTP/1.1 front end of its own rather than net/http:
// jail's binary starts twice per run (host, then init) and net/http's package initialisation
// (with crypto/tls, mime, ...) would cost every run of every command, proxy or not. It reads
// request heads; CONNECT opens a tunnel, anything else is forwarded in origin-form over a kept
// upstream connection (pool.go), bodies passed on as bytes, framed as RFC 9112 says
// (exchange.go), so that the sandbox's connection can carry the next request.

// maxHeaderBytes bounds a request or response head (start line and header fields).
const maxHeaderBytes = 64 << 10

// lingerTime is how long a finished connection is drained after its answer, so that unread
// client bytes do not turn the close into a reset that could destroy the answer in flight.
const lingerTime = 500 * time.Millisecond

// serveHTTP answers the requests the sandbox sends on c, one after the other, until one ends
// the connection; c is closed when it returns.
func (s *Server) serveHTTP(c *conn) {
	defer c.Close()
	cs, ok := newStream(c.Conn, s.budget, c.prefix)
	c.prefix = nil
	if !ok {
		s.bufferRefusal(c)
		return
	}
	defer cs.release()
	for first := true; ; first = false {
		if !first { // the first head's deadline is the handshake's, set by serveConn
			cs.conn.readBy(time.Now(), s.opts.KeepAliveTimeout)
		}
		b, err := cs.readHead()
		switch {
		case errors.Is(err, errBudget):
			s.bufferRefusal(c)
			return
		case errors.Is(err, errHeadTooLarge):
			s.answer(c, 431, nil, "jail: request header too large\n")
			return
		case err != nil: // silent, slow or vanished client
			return
		}
		req, err := parseHead(b, true)
		if err != nil {
			s.answer(c, 400, nil, "jail: "+err.Error()+"\n")
			return
		}
		if req.line[0] == "CONNECT" {
			pending := append([]byte(nil), cs.buffered()...) // early data: the tunnel's first bytes
			cs.release()
			s.serveConnect(c, req.line[1], pending)
			return
		}
		if !s.forward(c, cs, req) {
			return
		}
	}
}

func (s *Server) serveConnect(c *conn, authority string, pending []byte) {
	t, ok := s.decideAuthority(c, authority, 0)
	if !ok {
		return
	}
	up, err := s.connect(s.ctx, t)
	if err != nil {
		s.writeDialError(c, err)
		return
	}
	if err := newActivity(s.opts.IdleTimeout).write(&side{Conn: c.Conn}, []byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = up.Close()
		return
	}
	relay(c, pending, up, s.opts.IdleTimeout)
}

// decideAuthority decides on a "host:port" (port optional when defPort is set) and returns
// the target to dial; when the answer is no it has already been given (400 for a malformed
// target, 403 for a denial) and c closed.
func (s *Server) decideAuthority(c *conn, authority string, defPort uint16) (target, bool) {
	host, port, err := splitAuthority(authority, defPort)
	if err != nil {
		s.answer(c, 400, nil, fmt.Sprintf("jail: bad proxy target %q: %s\n", authority, err))
		return target{}, false
	}
	t, d := s.decide(host, port)
	if d != nil {
		s.writeDenial(c, d)
		return t, false
	}
	return t, true
}

// answer writes one complete answer of jail's own and ends the connection.
func (s *Server) answer(c *conn, code int, fields []string, body string) {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", code, statusText[code])
	if len(fields) == 0 {
		fields = []string{"Content-Type", "text/plain; charset=utf-8", "X-Content-Type-Options", "nosniff"}
	}
	for i := 0; i+1 < len(fields); i += 2 {
		b.WriteString(fields[i] + ": " + fieldValue(fields[i+1]) + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	_ = c.SetWriteDeadline(time.Now().Add(s.opts.HandshakeTimeout))
	if _, err := io.WriteString(c, b.String()); err != nil {
		_ = c.Close()
		return
	}
	linger(c)
}

var statusText = map[int]string{
	400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large",
	502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
}

// linger ends a connection whose answer has been written: the client gets EOF at once, and
// what it still sends is read and dropped for a moment before the close, so the close does not
// become a reset that could destroy the answer on its way.
func linger(c *conn) {
	rc := unwrap(c)
	if cw, ok := rc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = rc.SetReadDeadline(time.Now().Add(cmp.Or(c.lingerTime, lingerTime)))
		_, _ = io.CopyN(io.Discard, rc, 1<<20)
	}
	_ = c.Close()
}

// fieldValue keeps a header value on its line whatever a client put in the host it named.
func fieldValue(v string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, v)
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}

func (s *Server) writeDenial(c *conn, d *Denial) {
	s.answer(c, 403, []string{"Content-Type", "text/plain; charset=utf-8", "X-Jail-Denied", hostPort(d.Host, d.Port)}, d.Message())
}

// writeDialError answers a request whose upstream could not be reached: a policy refusal
// (after resolution) is a 403 like any other denial; a timeout 504; anything else 502.
func (s *Server) writeDialError(c *conn, err error) {
	var d *Denial
	switch {
	case errors.As(err, &d):
		s.writeDenial(c, d)
	case isTimeout(err):
		s.answer(c, 504, nil, "jail: upstream timed out: "+err.Error()+"\n")
	default:
		s.answer(c, 502, nil, "jail: upstream unreachable: "+err.Error()+"\n")
	}
}

// splitAuthority splits "host:port", "[v6]:port", or (when defPort is not 0) a host without
// port.
func splitAuthority(a string, defPort uint16) (string, uint16, error) {
	host, p, err := net.SplitHostPort(a)
	if err == nil {
		port, err := parsePort(p)
		return host, port, err
	}
	bracketed := strings.HasPrefix(a, "[") && strings.HasSuffix(a, "]")
	if defPort == 0 || a == "" || (!bracketed && strings.Contains(a, ":")) {
		return "", 0, fmt.Errorf("want host:port: %w", err)
	}
	return strings.TrimSuffix(strings.TrimPrefix(a, "["), "]"), defPort, nil
}
