package proxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The HTTP side of the proxy is a small HTTP/1.1 front end of its own rather than net/http:
// jail's binary starts twice per run (host, then init) and net/http's package initialisation
// (with crypto/tls, mime, ...) would cost every run of every command, proxy or not. It reads
// one request head per connection; CONNECT opens a tunnel, anything else is forwarded in
// origin-form with `Connection: close`, its body and the response relayed as bytes, unparsed.
// Everything the client sends after the head goes to the one target decided for that head.

// maxHeaderBytes bounds a request head (request line and header fields).
const maxHeaderBytes = 64 << 10

// lingerTime is how long a finished connection is drained after its answer, so that unread
// client bytes do not turn the close into a reset that could destroy the answer in flight.
const lingerTime = 500 * time.Millisecond

// serveHTTP reads one request head from c and answers it; c is closed when it returns.
func (s *Server) serveHTTP(c *conn) {
	lr := &io.LimitedReader{R: c, N: maxHeaderBytes}
	br := bufio.NewReaderSize(lr, 8<<10)
	tr := textproto.NewReader(br)
	line, err := tr.ReadLine()
	if err != nil { // silent, slow or vanished client; or an endless line
		if lr.N <= 0 {
			s.answer(c, 431, nil, "jail: request header too large\n")
			return
		}
		_ = c.Close()
		return
	}
	method, rest, ok1 := strings.Cut(line, " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || !isToken(method) || !printable(target) || target == "" || (proto != "HTTP/1.1" && proto != "HTTP/1.0") {
		s.answer(c, 400, nil, fmt.Sprintf("jail: malformed request line %q\n", line))
		return
	}
	hdr, err := tr.ReadMIMEHeader()
	if err != nil {
		switch {
		case lr.N <= 0:
			s.answer(c, 431, nil, "jail: request header too large\n")
		case isTimeout(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed):
			_ = c.Close()
		default:
			s.answer(c, 400, nil, "jail: malformed request header: "+err.Error()+"\n")
		}
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	var pending []byte // bytes the client sent right behind the head (a body, early data)
	if n := br.Buffered(); n > 0 {
		pending, _ = br.Peek(n)
		pending = append([]byte(nil), pending...)
	}
	if method == "CONNECT" {
		s.serveConnect(c, target, pending)
		return
	}
	s.serveForward(c, method, target, proto, hdr, pending)
}

func (s *Server) serveConnect(c *conn, authority string, pending []byte) {
	t, _, ok := s.decideAuthority(c, authority, 0)
	if !ok {
		return
	}
	up, err := s.connect(s.ctx, t)
	if err != nil {
		s.writeDialError(c, err)
		return
	}
	_ = c.SetDeadline(time.Now().Add(s.opts.IdleTimeout))
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = c.Close()
		_ = up.Close()
		return
	}
	relay(c, pending, up, s.opts.IdleTimeout)
}

// decideAuthority decides on a "host:port" (port optional when defPort is set) and returns
// the address to dial; when the answer is no it has already been given (400 for a malformed
// target, 403 for a denial) and c closed.
func (s *Server) decideAuthority(c *conn, authority string, defPort uint16) (target, string, bool) {
	host, port, err := splitAuthority(authority, defPort)
	if err != nil {
		s.answer(c, 400, nil, fmt.Sprintf("jail: bad proxy target %q: %s\n", authority, err))
		return target{}, "", false
	}
	t, d := s.decide(host, port)
	if d != nil {
		s.writeDenial(c, d)
		return t, "", false
	}
	return t, net.JoinHostPort(host, strconv.Itoa(int(port))), true
}

// hopByHop are the request fields that concern only the client's connection to the proxy (or
// would tell the upstream about the sandbox); they are not forwarded.
var hopByHop = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Upgrade": true,
	"Forwarded": true, "X-Forwarded-For": true, "X-Forwarded-Host": true, "X-Forwarded-Proto": true,
}

// serveForward forwards a plain (non-CONNECT) request: absolute-form, or origin-form with the
// Host header naming the target.
func (s *Server) serveForward(c *conn, method, reqTarget, proto string, hdr textproto.MIMEHeader, pending []byte) {
	scheme, authority, path := "http", hdr.Get("Host"), reqTarget
	if i := strings.Index(reqTarget, "://"); i > 0 && !strings.HasPrefix(reqTarget, "/") {
		scheme = strings.ToLower(reqTarget[:i])
		rest := reqTarget[i+3:]
		j := strings.IndexAny(rest, "/?#")
		if j < 0 {
			j = len(rest)
		}
		authority, path = rest[:j], rest[j:]
		if k := strings.LastIndexByte(authority, '@'); k >= 0 { // userinfo is not the host
			authority = authority[k+1:]
		}
		if k := strings.IndexByte(path, '#'); k >= 0 {
			path = path[:k]
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
	}
	if scheme != "http" {
		s.answer(c, 400, nil, fmt.Sprintf("jail: unsupported scheme %q in proxy request (https goes through CONNECT)\n", scheme))
		return
	}
	t, addr, ok := s.decideAuthority(c, authority, 80)
	if !ok {
		return
	}

	// The head sent upstream: origin-form, hop-by-hop fields dropped, one exchange only
	// (an upgrade, e.g. a WebSocket, is passed on: the relay carries it both ways).
	drop := map[string]bool{}
	upgrade := false
	for _, f := range []string{"Connection", "Proxy-Connection"} {
		for _, v := range hdr.Values(f) {
			for tok := range strings.SplitSeq(v, ",") {
				tok = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(tok))
				switch tok {
				case "Content-Length", "Transfer-Encoding", "Host": // framing stays as sent
				case "Upgrade":
					upgrade = f == "Connection" && hdr.Get("Upgrade") != ""
				default:
					drop[tok] = true
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString(method + " " + path + " " + proto + "\r\nHost: " + authority + "\r\n")
	keys := make([]string, 0, len(hdr))
	for k := range hdr {
		if k != "Host" && !hopByHop[k] && !drop[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range hdr[k] {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	if upgrade {
		b.WriteString("Upgrade: " + hdr.Get("Upgrade") + "\r\nConnection: Upgrade\r\n\r\n")
	} else {
		b.WriteString("Connection: close\r\n\r\n")
	}
	head := append([]byte(b.String()), pending...)

	ctx := context.WithValue(s.ctx, targetKey{}, t)
	up, err := s.dialForward(ctx, "tcp", addr)
	if err != nil {
		s.writeDialError(c, err)
		return
	}
	s.exchange(c, head, up)
}

// exchange sends head (and what follows from the client) to up and relays the answer back
// unparsed, until the upstream ends it; then c is closed. An upstream that stays silent for
// the idle timeout gets the client a 504, one that closes without a byte a 502.
func (s *Server) exchange(c *conn, head []byte, up net.Conn) {
	idle := s.opts.IdleTimeout
	if ic, ok := up.(*idleConn); ok {
		up = ic.Conn // deadlines are set here; the raw socket lets the copies splice
	}
	rc := unwrap(c)
	var once sync.Once
	abort := func() {
		once.Do(func() {
			_ = c.Close()
			_ = up.Close()
		})
	}
	defer abort()
	stop := context.AfterFunc(s.ctx, abort) // Close ends a silent exchange at once
	defer stop()

	_ = up.SetWriteDeadline(time.Now().Add(idle))
	if _, err := up.Write(head); err != nil {
		_ = up.Close()
		s.writeDialError(c, fmt.Errorf("send request: %w", err))
		return
	}
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	b := &bodySender{dst: up, src: rc, idle: idle, last: &last, abort: abort}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		defer func() {
			if r := recover(); r != nil {
				abort()
				_ = s.internalError(r)
			}
		}()
		b.run()
	}()
	defer func() { abort(); <-sent }()
	finish := func() {
		b.stop()
		_ = up.Close()
		<-sent
		linger(c)
	}

	// Wait for the first bytes of the answer while the request body streams up.
	buf := make([]byte, 16<<10)
	var n int
	var err error
	for {
		_ = up.SetReadDeadline(time.Now().Add(idle))
		n, err = up.Read(buf)
		if n > 0 || err == nil {
			if n > 0 {
				break
			}
			continue
		}
		if isTimeout(err) && time.Since(time.Unix(0, last.Load())) < idle {
			continue
		}
		b.stop()
		_ = up.Close()
		<-sent
		if isTimeout(err) {
			s.answer(c, 504, nil, fmt.Sprintf("jail: upstream timed out: no answer within %s\n", idle))
		} else {
			if errors.Is(err, io.EOF) {
				err = errors.New("the connection was closed without an answer")
			}
			s.answer(c, 502, nil, "jail: upstream unreachable: "+err.Error()+"\n")
		}
		return
	}
	last.Store(time.Now().UnixNano())
	_ = rc.SetWriteDeadline(time.Now().Add(idle))
	if _, err := rc.Write(buf[:n]); err != nil {
		return
	}
	pipe(rc, up, idle, &last, abort) // the rest of the answer, until the upstream closes
	finish()
}

// bodySender copies what the client sends after the head to the upstream. Its timeouts never
// end the exchange (the answer's side judges idleness, counting this side's traffic); once
// stopped it ends at the next read.
type bodySender struct {
	dst, src net.Conn
	idle     time.Duration
	last     *atomic.Int64
	abort    func()

	mu      sync.Mutex
	stopped bool
}

func (b *bodySender) run() {
	for {
		b.mu.Lock()
		stopped := b.stopped
		if !stopped {
			now := time.Now()
			_ = b.src.SetReadDeadline(now.Add(b.idle))
			_ = b.dst.SetWriteDeadline(now.Add(b.idle))
		}
		b.mu.Unlock()
		lr := &io.LimitedReader{R: b.src, N: relayChunk}
		n, err := io.Copy(b.dst, lr)
		if n > 0 {
			b.last.Store(time.Now().UnixNano())
		}
		switch {
		case err == nil && lr.N > 0: // the client is done sending: pass the EOF on
			if cw, ok := b.dst.(interface{ CloseWrite() error }); ok && !stopped {
				_ = cw.CloseWrite()
			}
			return
		case err == nil:
			continue
		case isTimeout(err) && !b.isStopped():
			continue
		default:
			if !b.isStopped() {
				b.abort()
			}
			return
		}
	}
}

// stop makes run return soon: its current read is cut short.
func (b *bodySender) stop() {
	b.mu.Lock()
	b.stopped = true
	_ = b.src.SetReadDeadline(time.Now())
	b.mu.Unlock()
}

func (b *bodySender) isStopped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped
}

// linger ends a connection whose answer has been written: the client gets EOF at once, and
// what it still sends is read and dropped for a moment before the close, so the close does not
// become a reset that could destroy the answer on its way.
func linger(c *conn) {
	rc := unwrap(c)
	if cw, ok := rc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		_ = rc.SetReadDeadline(time.Now().Add(lingerTime))
		_, _ = io.CopyN(io.Discard, rc, 1<<20)
	}
	_ = c.Close()
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
	502: "Bad Gateway", 504: "Gateway Timeout",
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

// targetKey carries the decided target of a forwarded request to its dial.
type targetKey struct{}

// dialForward is the forwarder's only way out: it connects to the target decided for this
// very request, and refuses (fails closed) when there is none or it differs.
func (s *Server) dialForward(ctx context.Context, _, addr string) (net.Conn, error) {
	t, ok := ctx.Value(targetKey{}).(target)
	if !ok {
		return nil, errors.New("jail: forward dial without a policy decision")
	}
	host, port, err := splitAuthority(addr, 0)
	if err != nil {
		return nil, fmt.Errorf("jail: forward dial %s: %w", addr, err)
	}
	if name, ip, err := normalizeHost(host); err != nil || name != t.name || ip != t.ip || port != t.port {
		return nil, fmt.Errorf("jail: forward dial %s does not match the decided target %s", addr, hostPort(t.host(), t.port))
	}
	up, err := s.connect(ctx, t)
	if err != nil {
		return nil, err
	}
	return &idleConn{Conn: up, idle: s.opts.IdleTimeout}, nil
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
