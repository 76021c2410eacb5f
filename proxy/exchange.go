package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/textproto"
	"strings"
	"syscall"
	"time"
)

// hopByHop are the request fields that concern only the client's connection to the proxy (or
// would tell the upstream about the sandbox); they are not forwarded.
var hopByHop = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Upgrade": true,
	"Forwarded": true, "X-Forwarded-For": true, "X-Forwarded-Host": true, "X-Forwarded-Proto": true,
}

// hopByHopResponse are the response fields that concern only the upstream's connection to the
// proxy.
var hopByHopResponse = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Te": true, "Upgrade": true,
}

// forward serves a plain (non-CONNECT) request whose head was read from cs: absolute-form, or
// origin-form with the Host header naming the target. It reports whether cs may carry another
// request; when not, c has been ended.
func (s *Server) forward(c *conn, cs *stream, req *head) bool {
	method, reqTarget, proto := req.line[0], req.line[1], req.line[2]
	scheme, authority, path := "http", req.get("Host"), reqTarget
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
		return false
	}
	t, ok := s.decideAuthority(c, authority, 80)
	if !ok {
		return false
	}
	body, err := requestFraming(req)
	if err != nil {
		s.answer(c, 400, nil, "jail: "+err.Error()+"\n")
		return false
	}
	upgrade := req.hasToken("Connection", "upgrade") && req.has("Upgrade")
	keep := proto == "HTTP/1.1" && !upgrade && !req.hasToken("Connection", "close") && !req.hasToken("Proxy-Connection", "close")
	x := &exchange{s: s, c: c, cs: cs, method: method, body: body, keep: keep,
		out: upstreamHead(req, path, authority, upgrade)}
	// A body that is all here already goes with the head: one write, and a request that can
	// be sent again on a fresh connection if a kept one turns out closed.
	if b := cs.buffered(); body.kind == noBody || body.kind == byLength && int64(len(b)) >= body.n {
		x.whole = true
		if body.kind == byLength {
			x.out = append(x.out, b[:body.n]...)
			cs.r += int(body.n)
		}
	}
	for attempt := 0; ; attempt++ {
		u, err := s.upstreamFor(t)
		switch {
		case errors.Is(err, errBudget):
			s.bufferRefusal(c)
			return false
		case err != nil:
			s.writeDialError(c, err)
			return false
		}
		if retry := x.run(u); !retry || attempt > 0 {
			return x.kept
		}
	}
}

// upstreamHead is the request head sent upstream: origin-form, hop-by-hop fields and those
// the client's Connection field names dropped (an upgrade, e.g. a WebSocket, is passed on:
// the relay carries it both ways).
func upstreamHead(req *head, path, authority string, upgrade bool) []byte {
	drop := map[string]bool{}
	for _, f := range []string{"Connection", "Proxy-Connection"} {
		for _, tok := range req.tokens(f) {
			switch tok = textproto.CanonicalMIMEHeaderKey(tok); tok {
			case "Content-Length", "Transfer-Encoding", "Host": // framing stays as sent
			default:
				drop[tok] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString(req.line[0] + " " + path + " " + req.line[2] + "\r\nHost: " + authority + "\r\n")
	for _, f := range req.fields {
		if f.name != "Host" && !hopByHop[f.name] && !drop[f.name] {
			b.WriteString(f.name + ": " + f.value + "\r\n")
		}
	}
	switch {
	case upgrade:
		b.WriteString("Upgrade: " + req.get("Upgrade") + "\r\nConnection: Upgrade\r\n")
	case req.line[2] == "HTTP/1.0":
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

// clientHead is a response head as passed on to the sandbox: hop-by-hop fields dropped, and
// Connection: close when the proxy ends the connection after this answer.
func clientHead(resp *head, keep bool) []byte {
	drop := map[string]bool{}
	for _, tok := range resp.tokens("Connection") {
		drop[textproto.CanonicalMIMEHeaderKey(tok)] = true
	}
	upgrade := resp.line[1] == "101"
	chunked := resp.has("Transfer-Encoding")
	var b strings.Builder
	b.WriteString(resp.line[0] + " " + resp.line[1] + " " + resp.line[2] + "\r\n")
	for _, f := range resp.fields {
		switch {
		case upgrade && f.name == "Upgrade":
		case hopByHopResponse[f.name], drop[f.name] && f.name != "Content-Length" && f.name != "Transfer-Encoding":
			continue
		case chunked && f.name == "Content-Length": // RFC 9112 6.3: the coding wins
			continue
		}
		b.WriteString(f.name + ": " + f.value + "\r\n")
	}
	switch {
	case upgrade:
		b.WriteString("Connection: Upgrade\r\n")
	case !keep:
		b.WriteString("Connection: close\r\n")
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

// upstreamFor is a kept connection to t, or a new one.
func (s *Server) upstreamFor(t target) (*upstreamConn, error) {
	if u := s.pool.get(t); u != nil {
		return u, nil
	}
	conn, err := s.connect(s.ctx, t)
	if err != nil {
		return nil, err
	}
	st, ok := newStream(conn, s.budget, nil)
	if !ok {
		_ = conn.Close()
		return nil, errBudget
	}
	return &upstreamConn{stream: st, t: t}, nil
}

// bodyGrace is how long an answer that arrives before the request's body is through waits for
// it: the upstream may have answered on reading its last bytes while the copy that sent them
// was still returning. Past it the answer says Connection: close.
const bodyGrace = 20 * time.Millisecond

// exchange is one forwarded request and its answer.
type exchange struct {
	s      *Server
	c      *conn
	cs     *stream // the sandbox's side
	method string
	body   framing
	keep   bool   // the client asked to keep the connection
	out    []byte // the head sent upstream, with the body when whole
	whole  bool   // out holds the whole request

	kept bool // the sandbox's connection carries on
}

// run sends the request on u and relays the answer. retry says that u, a kept connection, was
// closed by the upstream before it answered a request that can be sent again: x is as before.
func (x *exchange) run(u *upstreamConn) (retry bool) {
	s, c, rc := x.s, x.c, x.cs.conn
	act := newActivity(s.opts.IdleTimeout)
	failed := true // until the answer is through: neither connection is kept
	defer func() {
		if failed {
			if !retry {
				_ = c.Close()
			}
			u.close()
		}
	}()
	stop := context.AfterFunc(s.ctx, func() { _ = c.Close(); _ = u.conn.Close() }) // Close ends a silent exchange
	defer stop()

	if err := act.write(u.conn, x.out); err != nil {
		if u.reused && x.whole {
			return true
		}
		s.writeDialError(c, fmt.Errorf("send request: %w", err))
		return false
	}
	// The rest of the body, while it comes from the sandbox.
	finished := x.whole
	var sent chan error
	var bodyErr error
	if !finished {
		sent = make(chan error, 1)
		go func() {
			defer func() {
				if r := recover(); r != nil {
					_ = c.Close()
					_ = u.conn.Close()
					sent <- s.internalError(r)
				}
			}()
			if x.body.kind == chunked {
				sent <- x.cs.copyChunked(u.conn, act)
			} else {
				sent <- x.cs.copyN(u.conn, x.body.n, act)
			}
		}()
	}
	// bodySent reports whether the whole body went up, waiting up to grace for a copy still
	// going; with stop, such a copy is ended (and waited for).
	bodySent := func(grace time.Duration, stop bool) bool {
		if !finished && grace > 0 {
			t := time.NewTimer(grace)
			select {
			case bodyErr = <-sent:
				finished = true
			case <-t.C:
			}
			t.Stop()
		}
		if !finished && stop {
			act.stop(x.cs.conn)
			bodyErr, finished = <-sent, true
		}
		if !finished {
			select {
			case bodyErr = <-sent:
				finished = true
			default:
			}
		}
		return finished && bodyErr == nil
	}
	defer bodySent(0, true)

	// The answer's head: interim 1xx answers are passed on as they come.
	var resp *head
	for resp == nil {
		b, err := u.readHead(act)
		if err != nil {
			bodySent(0, true)
			switch {
			case u.reused && x.whole && len(u.buffered()) == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)):
				return true
			case errors.Is(err, errBudget):
				s.bufferRefusal(c)
			case isTimeout(err):
				s.answer(c, 504, nil, fmt.Sprintf("jail: upstream timed out: no answer within %s\n", s.opts.IdleTimeout))
			default:
				if errors.Is(err, io.EOF) {
					err = errors.New("the connection was closed without an answer")
				}
				s.answer(c, 502, nil, "jail: upstream unreachable: "+err.Error()+"\n")
			}
			return false
		}
		h, err := parseHead(b, false)
		if err != nil {
			bodySent(0, true)
			s.answer(c, 502, nil, "jail: upstream sent a malformed answer: "+err.Error()+"\n")
			return false
		}
		switch code := h.line[1]; {
		case code == "101": // switching protocols: from here on bytes both ways
			if !bodySent(bodyGrace, false) || act.write(rc, append(clientHead(h, true), u.buffered()...)) != nil {
				return false
			}
			failed = false
			relay(c, x.cs.buffered(), u.conn.Conn, s.opts.IdleTimeout)
			u.release()
			return false
		case code[0] == '1':
			if act.write(rc, clientHead(h, true)) != nil {
				return false
			}
		default:
			resp = h
		}
	}

	rf, err := responseFraming(resp, x.method)
	if err != nil {
		bodySent(0, true)
		s.answer(c, 502, nil, "jail: upstream sent a malformed answer: "+err.Error()+"\n")
		return false
	}
	sentAll := bodySent(bodyGrace, false)
	keepClient := x.keep && rf.kind != untilEOF && sentAll
	keepUp := resp.line[0] == "HTTP/1.1" && !resp.hasToken("Connection", "close") && rf.kind != untilEOF
	out := clientHead(resp, keepClient)
	switch rf.kind { // the head and what is here of the body, in one write
	case byLength:
		k := int(min(int64(len(u.buffered())), rf.n))
		out = append(out, u.buffered()[:k]...)
		u.r += k
		rf.n -= int64(k)
	case untilEOF:
		out = append(out, u.buffered()...)
		u.r = u.w
	}
	if act.write(rc, out) != nil {
		return false
	}
	switch rf.kind {
	case byLength:
		err = u.copyN(rc, rf.n, act)
	case chunked:
		err = u.copyChunked(rc, act)
	case untilEOF:
		err = act.pipe(rc, u.conn)
	}
	if err != nil {
		return false
	}
	sentAll = bodySent(0, true)
	failed = false
	if keepUp && sentAll {
		s.pool.put(u)
	} else {
		u.close()
	}
	if !keepClient {
		linger(c)
		return false
	}
	x.kept = true
	return false
}

// readHead reads the upstream's next answer head, waiting while the request body still moves.
func (u *upstreamConn) readHead(act *activity) ([]byte, error) {
	for {
		if _, err := act.deadlines(u.conn, u.conn); err != nil {
			return nil, err
		}
		b, err := u.stream.readHead()
		if err == nil || !isTimeout(err) || !act.live() {
			return b, err
		}
	}
}
