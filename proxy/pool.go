package proxy

import (
	"errors"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Upstream connections of forwarded requests are kept for the next request to the same target,
// as HTTP/1.1 keep-alive intends: a new TCP connection (and name lookup) per request cost more
// than the request itself. A pooled connection was dialed to an address checked for that
// target; it serves only requests decided for the same name and port, each decided anew.
const (
	poolPerTarget = 32               // idle connections kept per target
	poolMax       = 128              // idle connections kept in all
	poolIdle      = 30 * time.Second // an idle connection is closed after this long
	// poolFresh is how long after its last answer a connection is taken as open without a
	// look (a system call per request): upstreams that close idle connections wait seconds,
	// and a request without a body that finds one closed anyway is sent again.
	poolFresh = time.Second
)

// upstreamConn is an upstream connection of forwarded requests, with what was read from it.
type upstreamConn struct {
	*stream
	t      target
	reused bool      // it served a request before this one
	since  time.Time // when it went back to the pool
}

func (u *upstreamConn) close() {
	_ = u.conn.Close()
	u.release()
}

// pool holds idle upstream connections, the most recently used last. One timer, armed while
// any is kept, closes those idle for poolIdle (a timer per connection put back would be armed
// and stopped once per request, each time a possible wake-up of the poller).
type pool struct {
	mu     sync.Mutex
	idle   map[target][]*upstreamConn
	n      int
	sweep  *time.Timer // armed while n > 0
	closed bool
}

// get takes an idle connection to t that is still open, or nil.
func (p *pool) get(t target) *upstreamConn {
	for {
		p.mu.Lock()
		l := p.idle[t]
		if len(l) == 0 {
			p.mu.Unlock()
			return nil
		}
		u := l[len(l)-1]
		p.remove(t, len(l)-1)
		p.mu.Unlock()
		if idle := time.Since(u.since); idle < poolFresh || idle < poolIdle && open(u) {
			u.reused = true
			return u
		}
		u.close() // idle too long, or closed by the upstream
	}
}

// put keeps u for the next request to its target, or closes it when the pool is full.
func (p *pool) put(u *upstreamConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(u.buffered()) > 0 || len(p.idle[u.t]) >= poolPerTarget || p.n >= poolMax {
		u.close()
		return
	}
	if p.idle == nil {
		p.idle = map[target][]*upstreamConn{}
	}
	p.idle[u.t] = append(p.idle[u.t], u)
	p.n++
	u.since = time.Now()
	if p.sweep == nil {
		p.sweep = time.AfterFunc(poolIdle, p.expire)
	} else if p.n == 1 {
		p.sweep.Reset(poolIdle)
	}
}

// expire closes the connections idle for poolIdle, and looks again when the next one will be.
func (p *pool) expire() {
	p.mu.Lock()
	var old []*upstreamConn
	next := poolIdle
	for t, l := range p.idle {
		for i := len(l) - 1; i >= 0; i-- { // the oldest first in l: remove from the end back
			if idle := time.Since(l[i].since); idle >= poolIdle {
				old = append(old, l[i])
				p.remove(t, i)
			} else {
				next = min(next, poolIdle-idle)
			}
		}
	}
	if p.n > 0 && !p.closed {
		p.sweep.Reset(next)
	}
	p.mu.Unlock()
	for _, u := range old {
		u.close()
	}
}

// remove takes the i-th idle connection to t out of the pool. p.mu is held.
func (p *pool) remove(t target, i int) {
	l := append(p.idle[t][:i], p.idle[t][i+1:]...)
	if len(l) == 0 {
		delete(p.idle, t)
	} else {
		p.idle[t] = l
	}
	p.n--
}

// close closes every idle connection; put closes what comes back later.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	var all []*upstreamConn
	for _, l := range p.idle {
		all = append(all, l...)
	}
	p.idle, p.n = nil, 0
	if p.sweep != nil {
		p.sweep.Stop()
	}
	p.mu.Unlock()
	for _, u := range all {
		u.close()
	}
}

// open reports whether an idle connection is still usable: not closed by the upstream and
// with nothing unasked for to read (a peek that would block).
func open(u *upstreamConn) bool {
	sc, ok := u.conn.Conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var peekErr error
	var b [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, peekErr = unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return true
	})
	return err == nil && errors.Is(peekErr, unix.EAGAIN)
}
