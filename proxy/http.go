package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"time"
)

// ServeHTTP answers one proxied request: CONNECT opens a tunnel, anything else is forwarded.
// Both decide on the host the proxy will connect to: the CONNECT authority, or the request's
// absolute URL (for origin-form requests, the Host header).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		http.Error(w, "jail: the proxy is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	if r.Method == http.MethodConnect {
		s.serveConnect(w, r)
		return
	}
	s.serveForward(w, r)
}

func (s *Server) serveConnect(w http.ResponseWriter, r *http.Request) {
	t, ok := s.decideAuthority(w, r.Host, 0)
	if !ok {
		return
	}
	up, err := s.connect(r.Context(), t)
	if err != nil {
		writeDialError(w, err)
		return
	}
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	var pending []byte // bytes the client sent right behind the CONNECT header
	if n := brw.Reader.Buffered(); n > 0 {
		pending, _ = brw.Reader.Peek(n)
		pending = append([]byte(nil), pending...)
	}
	_ = client.SetDeadline(time.Now().Add(s.opts.IdleTimeout))
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = client.Close()
		_ = up.Close()
		return
	}
	relay(client, pending, up, s.opts.IdleTimeout)
}

// decideAuthority decides on a "host:port" (port optional when defPort is set); when the
// answer is no it has already been written (400 for a malformed target, 403 for a denial).
func (s *Server) decideAuthority(w http.ResponseWriter, authority string, defPort uint16) (target, bool) {
	host, port, err := splitAuthority(authority, defPort)
	if err != nil {
		http.Error(w, fmt.Sprintf("jail: bad proxy target %q: %s", authority, err), http.StatusBadRequest)
		return target{}, false
	}
	t, d := s.decide(host, port)
	if d != nil {
		writeDenial(w, d)
		return t, false
	}
	return t, true
}

// targetKey carries the decided target of a forwarded request to the transport's dialer.
type targetKey struct{}

func (s *Server) serveForward(w http.ResponseWriter, r *http.Request) {
	u := *r.URL
	if !u.IsAbs() { // origin-form: the Host header names the target
		u.Scheme, u.Host = "http", r.Host
	}
	var defPort uint16
	switch u.Scheme {
	case "http":
		defPort = 80
	case "https":
		defPort = 443
	default:
		http.Error(w, fmt.Sprintf("jail: unsupported scheme %q in proxy request", u.Scheme), http.StatusBadRequest)
		return
	}
	t, ok := s.decideAuthority(w, u.Host, defPort)
	if !ok {
		return
	}
	out := r.WithContext(context.WithValue(r.Context(), targetKey{}, t))
	out.URL = &u
	out.Host = u.Host
	s.forward.ServeHTTP(w, out)
}

// dialForward is the transport's only way out: it connects to the target the handler decided
// for this very request, and refuses (fails closed) when there is none or it differs.
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

func (s *Server) newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil, // never chain to the host's own proxy settings
		DialContext:           s.dialForward,
		ForceAttemptHTTP2:     false,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   s.opts.DialTimeout,
		ResponseHeaderTimeout: s.opts.IdleTimeout,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true, // pass bodies through untouched
		ReadBufferSize:        64 << 10,
		WriteBufferSize:       64 << 10,
	}
}

func (s *Server) newForwarder() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		// The request already carries its absolute target; Rewrite mode strips hop-by-hop
		// and X-Forwarded headers and adds none, so nothing about the sandbox leaks upstream.
		Rewrite:       func(*httputil.ProxyRequest) {},
		Transport:     s.transport,
		FlushInterval: -1,
		BufferPool:    bufferPool{},
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeDialError(w, err)
		},
	}
}

// bufferPool gives the forwarder large copy buffers (fewer syscalls on big downloads).
type bufferPool struct{}

var buffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

func (bufferPool) Get() []byte  { return *(buffers.Get().(*[]byte)) }
func (bufferPool) Put(b []byte) { buffers.Put(&b) }

func writeDenial(w http.ResponseWriter, d *Denial) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Jail-Denied", hostPort(d.Host, d.Port))
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, d.Message())
}

// writeDialError answers a request whose upstream could not be reached: a policy refusal
// (after resolution) is a 403 like any other denial; a timeout 504; anything else 502.
func writeDialError(w http.ResponseWriter, err error) {
	var d *Denial
	switch {
	case errors.As(err, &d):
		writeDenial(w, d)
	case isTimeout(err):
		http.Error(w, "jail: upstream timed out: "+err.Error(), http.StatusGatewayTimeout)
	default:
		http.Error(w, "jail: upstream unreachable: "+err.Error(), http.StatusBadGateway)
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
