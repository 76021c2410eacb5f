package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Options tune a Server. The zero value is ready for use.
type Options struct {
	// Log receives one line per refused destination (the first time it is refused);
	// nil means os.Stderr.
	Log io.Writer
	// Quiet suppresses those lines; denials are still counted for Denials.
	Quiet bool
	// LookupIP resolves a host name on the host; nil means the system resolver. Tests map
	// names to loopback test servers with it.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to one checked address; nil means a plain TCP dial.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// DialTimeout bounds name resolution and each connection attempt; 0 means 15s.
	DialTimeout time.Duration
	// IdleTimeout ends a connection on which nothing moved either way for that long, and a
	// forwarded request whose upstream stays silent; 0 means 5m.
	IdleTimeout time.Duration
	// HandshakeTimeout bounds how long a client may take to send its first request head or
	// its SOCKS handshake; 0 means 10s.
	HandshakeTimeout time.Duration
	// KeepAliveTimeout bounds how long a client's connection may wait for its next request
	// after an answer, and the head of that request; 0 means 60s.
	KeepAliveTimeout time.Duration
	// MaxConnections bounds the connections open through the proxy at once; more are refused
	// (an HTTP 503 or a SOCKS5 refusal naming [network] max_connections). 0 means
	// DefaultMaxConnections.
	MaxConnections int
	// MaxBuffer bounds the bytes the proxy holds in buffers for all its connections; a request
	// that needs more is refused the same way. 0 means DefaultMaxBuffer.
	MaxBuffer int64
	// Idle, when set, is called each time the last open connection ends: the proxy holds no
	// buffer for the sandbox then, and its caller may give memory back.
	Idle func()
}

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.LookupIP == nil {
		o.LookupIP = defaultLookup
	}
	if o.Dial == nil {
		o.Dial = defaultDial
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 15 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 5 * time.Minute
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.KeepAliveTimeout <= 0 {
		o.KeepAliveTimeout = 60 * time.Second
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = DefaultMaxBuffer
	}
	return o
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("proxy: server closed")

// Server is one egress proxy: HTTP and SOCKS5 on the same listeners, one policy.
type Server struct {
	pol  *policy
	opts Options

	ctx    context.Context // cancelled by Close: aborts lookups, dials, forwarded requests
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	wg        sync.WaitGroup // every goroutine and handler the server runs
	denials   []Denial
	denialIdx map[string]int
	resolved  resolved
	logMu     sync.Mutex

	open     atomic.Int64 // connections admitted and not yet ended (limits.go)
	peakOpen atomic.Int64
	refusing atomic.Int64 // connections being turned away
	budget   *budget
	pool     pool // kept upstream connections of forwarded requests
}

// NewServer checks the policy and prepares a server; nothing listens until Serve.
func NewServer(p Policy, opts Options) (*Server, error) {
	pol, err := compilePolicy(p)
	if err != nil {
		return nil, fmt.Errorf("network policy: %w", err)
	}
	s := &Server{
		pol:       pol,
		opts:      opts.withDefaults(),
		listeners: map[net.Listener]struct{}{},
		conns:     map[*conn]struct{}{},
		denialIdx: map[string]int{},
	}
	s.budget = &budget{max: s.opts.MaxBuffer}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Serve accepts connections on l until Close (then it returns ErrServerClosed) or until l
// fails. Each connection is sniffed: a first byte of 5 is SOCKS5, anything else HTTP. On a
// unix listener a connection may instead pass a TCP socket (see Forward). Serve may run on
// several listeners at once.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.mu.Unlock()
	var backoff time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				time.Sleep(backoff) // out of fds: let connections finish rather than spin
				continue
			}
			return fmt.Errorf("proxy accept: %w", err)
		}
		backoff = 0
		if !s.admit() {
			s.refuse(c)
			continue
		}
		if !s.goTracked(func() {
			defer s.closed1()
			s.serveConn(c)
		}) {
			s.open.Add(-1)
			_ = c.Close()
		}
	}
}

// closed1 counts a connection's end, and says so when it was the last one open.
func (s *Server) closed1() {
	if s.open.Add(-1) == 0 && s.opts.Idle != nil {
		s.opts.Idle()
	}
}

// Close stops every listener, ends every connection (tunnels included), waits for all of the
// server's goroutines. Nothing of the server survives it.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	listeners, conns := s.listeners, s.conns
	s.listeners, s.conns = nil, nil
	s.mu.Unlock()

	s.cancel()
	s.pool.close()
	for l := range listeners {
		_ = l.Close()
	}
	for c := range conns {
		_ = c.Close()
	}
	s.wg.Wait()
	return nil
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// goTracked runs f in a goroutine Close waits for; false once the server is closed.
func (s *Server) goTracked(f func()) bool {
	if !s.enter() {
		return false
	}
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// enter registers work Close must wait for (wg.Add only while open, so Wait cannot race it).
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// adopt wraps and tracks a client connection so Close can end it; nil once closed.
func (s *Server) adopt(raw net.Conn) *conn {
	c := &conn{Conn: raw, s: s}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.conns[c] = struct{}{}
	return c
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// serveConn sniffs the first byte and hands the connection to SOCKS5 or HTTP. A bug that
// panics here ends this connection (closed: nothing gets through), not jail and its sandbox.
func (s *Server) serveConn(raw net.Conn) {
	var c *conn
	defer func() {
		if r := recover(); r != nil {
			_ = raw.Close()
			if c != nil {
				_ = c.Close()
			}
			s.internalError(r)
		}
	}()
	c, first, ok := s.hello(raw, s.opts.HandshakeTimeout)
	if !ok {
		return
	}
	c.prefix = []byte{first}
	switch first {
	case socks5Version:
		s.serveSOCKS(c)
	case fdMarker, 4: // a marker without a socket; SOCKS4 (no remote resolution) unsupported
		_ = c.Close()
	default:
		s.serveHTTP(c)
	}
}

// hello adopts a client connection and reads its first byte within timeout; a connection
// Forward passed over the unix socket is taken over, and its own first byte read. Anything
// else ends the connection (false).
func (s *Server) hello(raw net.Conn, timeout time.Duration) (*conn, byte, bool) {
	c := s.adopt(raw)
	if c == nil {
		_ = raw.Close()
		return nil, 0, false
	}
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	first, passed, err := readFirst(c.Conn)
	if err == nil && passed != nil { // Forward handed over a sandbox TCP connection
		_ = c.Close()
		if c = s.adopt(passed); c == nil {
			_ = passed.Close()
			return nil, 0, false
		}
		_ = c.SetReadDeadline(time.Now().Add(timeout))
		if first, _, err = readFirst(c.Conn); err == nil && first == fdMarker {
			err = errors.New("a marker on a passed socket")
		}
	}
	if err != nil {
		_ = c.Close()
		return nil, 0, false
	}
	return c, first, true
}

// internalError logs a recovered panic: a bug, reported even when quiet.
func (s *Server) internalError(r any) error {
	err := fmt.Errorf("jail: network: proxy error, connection closed: %v", r)
	s.logMu.Lock()
	fmt.Fprintln(s.opts.Log, err)
	s.logMu.Unlock()
	return err
}

// conn is a tracked client connection that replays its sniffed first byte.
type conn struct {
	net.Conn
	prefix     []byte
	lingerTime time.Duration // 0: the default
	s          *Server
	once       sync.Once
	err        error
}

func (c *conn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

func (c *conn) Close() error {
	c.once.Do(func() {
		c.s.forget(c)
		c.err = c.Conn.Close()
	})
	return c.err
}

func (c *conn) rawConn() net.Conn {
	if len(c.prefix) > 0 {
		return c
	}
	return c.Conn
}
