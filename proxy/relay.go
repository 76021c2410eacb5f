package proxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// relayChunk is how much one copy step moves before the deadlines are pushed forward.
const relayChunk = 1 << 20

// relay copies both ways between a client and an upstream until both sides are done, then
// closes both. pending are bytes the client sent early (already read from it) that go first.
// An EOF on one side half-closes the other (CloseWrite), so request/response protocols that
// shut down their sending side still get their answer. A side that errs, or a connection with
// no traffic either way for idle, ends both. Between raw TCP sockets the copy is splice(2).
func relay(client net.Conn, pending []byte, upstream net.Conn, idle time.Duration) {
	rc, ru := unwrap(client), unwrap(upstream)
	var once sync.Once
	abort := func() {
		once.Do(func() {
			_ = client.Close()
			_ = upstream.Close()
		})
	}
	defer abort()
	act := newActivity(idle)
	if len(pending) > 0 {
		if err := act.write(ru, pending); err != nil {
			return
		}
	}
	oneWay := func(dst, src net.Conn) {
		if act.pipe(dst, src) != nil {
			abort()
			return
		}
		halfClose(dst, abort)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		oneWay(rc, ru)
	}()
	oneWay(ru, rc)
	<-done
}

// activity is when bytes last moved between a client and an upstream, either way. A copy whose
// source stays quiet for idle stalls only when the other way was as quiet: a long download
// with a quiet request side lives. A destination that takes nothing for twice idle stalls
// whatever else moves.
type activity struct {
	idle time.Duration
	last atomic.Int64 // UnixNano

	mu      sync.Mutex // orders stop against the deadlines a copy sets
	stopped bool
}

var errStopped = errors.New("copy stopped")

func newActivity(idle time.Duration) *activity {
	a := &activity{idle: idle}
	a.touch()
	return a
}

func (a *activity) touch() { a.last.Store(time.Now().UnixNano()) }

// live reports whether anything moved within idle.
func (a *activity) live() bool { return time.Since(time.Unix(0, a.last.Load())) < a.idle }

// stop ends the copies under a: their reads from src return now, and no copy starts again.
func (a *activity) stop(src net.Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopped = true
	_ = src.SetReadDeadline(time.Now())
}

// deadlines gives a copy step from src to dst fresh deadlines, unless a was stopped.
func (a *activity) deadlines(dst, src net.Conn) (time.Time, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.stopped {
		return time.Time{}, errStopped
	}
	now := time.Now()
	if src != nil {
		_ = src.SetReadDeadline(now.Add(a.idle))
	}
	_ = dst.SetWriteDeadline(now.Add(2 * a.idle))
	return now, nil
}

// write writes b to dst.
func (a *activity) write(dst net.Conn, b []byte) error {
	if _, err := a.deadlines(dst, nil); err != nil {
		return err
	}
	_, err := dst.Write(b)
	a.touch()
	return err
}

// step copies at most max bytes from src to dst (splice(2) between sockets), under fresh
// deadlines; eof reports src's end. A quiet source is no error while the other way moves.
func (a *activity) step(dst, src net.Conn, max int64) (n int64, eof bool, err error) {
	start, err := a.deadlines(dst, src)
	if err != nil {
		return 0, false, err
	}
	lr := &io.LimitedReader{R: src, N: max}
	n, err = io.Copy(dst, lr)
	if n > 0 {
		a.touch()
	}
	switch {
	case err == nil:
		return n, lr.N > 0, nil
	// Only the read deadline can have passed this soon, and a read that timed out moved
	// nothing into splice's pipe, so nothing is lost by going on.
	case isTimeout(err) && time.Since(start) < 2*a.idle && a.live():
		return n, false, nil
	}
	return n, false, err
}

// pipe copies src to dst until src's EOF (nil) or an error or stall.
func (a *activity) pipe(dst, src net.Conn) error {
	for {
		if _, eof, err := a.step(dst, src, relayChunk); eof || err != nil {
			return err
		}
	}
}

// halfClose signals EOF to dst while keeping its other direction open; without CloseWrite
// the only way to pass the EOF on is to end the whole connection.
func halfClose(dst net.Conn, abort func()) {
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	abort()
}

// unwrap returns the innermost connection of jail's wrappers, so that io.Copy sees the raw
// *net.TCPConn / *net.UnixConn and can splice. The wrappers are still the ones closed.
func unwrap(c net.Conn) net.Conn {
	for {
		w, ok := c.(interface{ rawConn() net.Conn })
		if !ok {
			return c
		}
		inner := w.rawConn()
		if inner == c {
			return c
		}
		c = inner
	}
}
