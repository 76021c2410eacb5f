package proxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// relayChunk is how much one copy step moves before the idle deadline is pushed forward.
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
	if len(pending) > 0 {
		_ = ru.SetWriteDeadline(time.Now().Add(idle))
		if _, err := ru.Write(pending); err != nil {
			return
		}
	}
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pipe(ru, rc, idle, &last, abort)
	}()
	pipe(rc, ru, idle, &last, abort)
	<-done
}

// pipe copies src to dst in chunks, each under a fresh deadline. A timeout counts as a stall
// only when neither direction moved for idle; a long download with a quiet request side lives.
func pipe(dst, src net.Conn, idle time.Duration, last *atomic.Int64, abort func()) {
	for {
		now := time.Now()
		_ = src.SetReadDeadline(now.Add(idle))
		_ = dst.SetWriteDeadline(now.Add(idle))
		lr := &io.LimitedReader{R: src, N: relayChunk}
		n, err := io.Copy(dst, lr)
		if n > 0 {
			last.Store(time.Now().UnixNano())
		}
		switch {
		case err == nil && lr.N > 0: // EOF from src
			halfClose(dst, abort)
			return
		case err == nil:
			continue
		case isTimeout(err) && time.Since(time.Unix(0, last.Load())) < idle:
			continue
		default:
			abort()
			return
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
