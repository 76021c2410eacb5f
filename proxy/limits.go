package proxy

import (
	"errors"
	"net"
	"sync/atomic"
	"time"
)

// The proxy runs on the host, so what a sandbox makes it hold is host memory, outside every
// limit the sandbox's own processes have. Two limits bound it, per sandbox: the connections open
// through it at once ([network] max_connections) and the bytes it holds in buffers for them
// ([network] max_buffer: request and response heads, chunk-size lines; bodies and tunnels go
// socket to socket). Request heads must arrive within HandshakeTimeout.
const (
	// DefaultMaxConnections is far above what real clients open at once (browsers keep at most
	// 256, package managers 15–50), and bounds what connections cost the host to a few MB.
	DefaultMaxConnections = 512
	// DefaultMaxBuffer is 16 MiB: ordinary heads take under 4 KiB a connection.
	DefaultMaxBuffer = 16 << 20
)

var errBudget = errors.New("buffer limit reached")

// budget is the bytes a server may hold in buffers.
type budget struct {
	max  int64
	used atomic.Int64
	peak atomic.Int64
}

// take draws n bytes; false when that would pass the limit.
func (b *budget) take(n int) bool {
	for {
		used := b.used.Load()
		if used+int64(n) > b.max {
			return false
		}
		if b.used.CompareAndSwap(used, used+int64(n)) {
			raise(&b.peak, used+int64(n))
			return true
		}
	}
}

func (b *budget) give(n int) { b.used.Add(-int64(n)) }

// raise makes peak at least v.
func raise(peak *atomic.Int64, v int64) {
	for {
		p := peak.Load()
		if v <= p || peak.CompareAndSwap(p, v) {
			return
		}
	}
}

// admit counts a new connection in; false (and not counted) when max_connections are open.
func (s *Server) admit() bool {
	n := s.open.Add(1)
	if n > int64(s.opts.MaxConnections) {
		s.open.Add(-1)
		return false
	}
	raise(&s.peakOpen, n)
	return true
}

// Refusing a connection costs a goroutine for a moment: maxRefusing bound how many are refused
// at once (beyond it they are closed unread), refuseTime how long one may take to say what
// protocol it speaks, and refuseLinger how long its answer waits for the client's close.
const (
	maxRefusing  = 64
	refuseTime   = 2 * time.Second
	refuseLinger = 50 * time.Millisecond
)

// refuse turns away a connection over max_connections: in the protocol it speaks (a 503
// naming the key, or SOCKS5's "not allowed by ruleset"), recorded like a denial.
func (s *Server) refuse(raw net.Conn) {
	d := limitDenial(Connections, int64(s.opts.MaxConnections))
	s.record(d)
	if s.refusing.Add(1) > maxRefusing || !s.goTracked(func() {
		defer s.refusing.Add(-1)
		s.answerRefused(raw, d)
	}) {
		s.refusing.Add(-1)
		_ = raw.Close()
	}
}

func (s *Server) answerRefused(raw net.Conn, d *Denial) {
	c, first, ok := s.hello(raw, refuseTime)
	if !ok {
		return
	}
	defer c.Close()
	c.lingerTime = refuseLinger
	switch first {
	case socks5Version:
		c.prefix = []byte{first}
		if _, _, code, err := readSOCKSRequest(c); err == nil || code != 0 {
			_ = writeSOCKSReply(c, socksNotAllowed)
		}
	case fdMarker, 4:
	default:
		s.answer(c, 503, nil, d.Message())
	}
}

// Usage is what the proxy held at its peak for one sandbox, beside its limits.
type Usage struct {
	PeakConnections int   `json:"peak_connections"`
	MaxConnections  int   `json:"max_connections"`
	PeakBuffer      int64 `json:"peak_buffer_bytes"`
	MaxBuffer       int64 `json:"max_buffer_bytes"`
}

// Usage returns the server's peaks so far.
func (s *Server) Usage() Usage {
	return Usage{
		PeakConnections: int(s.peakOpen.Load()), MaxConnections: s.opts.MaxConnections,
		PeakBuffer: s.budget.peak.Load(), MaxBuffer: s.budget.max,
	}
}

// bufferRefusal records and answers a request whose head found no room in the budget.
func (s *Server) bufferRefusal(c *conn) {
	d := limitDenial(Buffer, s.budget.max)
	s.record(d)
	s.answer(c, 503, nil, d.Message())
}
